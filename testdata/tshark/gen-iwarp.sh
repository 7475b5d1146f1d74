#!/usr/bin/env bash
# Regenerates the tshark reference outputs the iWARP golden test
# (cmd/rdmashark/golden_iwarp_test.go) compares with: for every soft-iWARP
# capture in testdata/pcaps, `tshark -T fields` with the fields of
# fields-iwarp.txt, all occurrences, tab-separated — exactly what
# `rdmashark dissect -T fields` prints for the same -e list — plus two
# context columns that are not compared: whether tshark marked the frame
# malformed, and its expert messages.
#
# tshark's MPA dissector uses TCP reassembly (tcp_dissect_pdus) and shows an
# FPDU in the frame that completes it, as rdmashark does.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-iwarp.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e _ws.malformed -e _ws.expert.message)
for cap in "$pcaps"/siw-*.pcap; do
	out=$here/$(basename "$cap" .pcap).iwarp.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
# The Wireshark wiki's public iWARP captures (testdata/pcaps/public/README.md):
# a 2008 implementation with markers and CRC32c, a rejection, and SMB Direct
# over iWARP from Windows Server 2012 (cmd/rdmashark/public_iwarp_test.go).
for cap in "$pcaps"/public/wireshark-wiki-*.pcap; do
	out=$here/$(basename "$cap" .pcap).iwarp.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
# The synthetic captures of dissect/iwarp_golden_test.go (markers, CRC32c,
# Terminate, MPA revision 2 peer-to-peer and rejection), written by the test
# itself so that the frames it compares are built by the same code.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$here/../.." && go test ./dissect -run '^TestIWARPWriteSynthetic$' -count=1 -iwarp-synthetic "$tmp" >/dev/null)
for cap in "$tmp"/iwarp-*.pcap; do
	out=$here/$(basename "$cap" .pcap).iwarp.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
tshark --version | head -1 > "$here/TSHARK-VERSION"
