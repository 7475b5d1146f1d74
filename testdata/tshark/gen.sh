#!/usr/bin/env bash
# Regenerates the tshark reference outputs the golden test compares with:
# for every RoCE/IB capture in testdata/pcaps, `tshark -T fields` with the
# fields of fields.txt, all occurrences, tab-separated — exactly what
# `rdmashark dissect -T fields` prints for the same -e list.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
# One more column, not compared: whether tshark marked the frame malformed
# (a dissector threw), which some known differences depend on.
args+=(-e _ws.malformed)
for cap in "$pcaps"/rxe-*.pcap "$pcaps"/public/montybeatnik-*.pcap "$pcaps"/public/srinivaskoritala-*.pcap; do
	out=$here/$(basename "$cap" .pcap).fields.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
tshark --version | head -1 > "$here/TSHARK-VERSION"
