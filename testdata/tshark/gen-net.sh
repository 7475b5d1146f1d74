#!/usr/bin/env bash
# Regenerates the tshark reference of the Ethernet/IP/UDP/TCP field golden
# test (cmd/rdmashark/golden_net_test.go): `tshark -T fields` with the
# fields of fields-net.txt, all occurrences, on every capture — exactly what
# `rdmashark dissect -T fields` prints for the same -e list — plus the
# frame's protocols, not compared (tshark decodes the IP header inside an
# ICMP error too).
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-net.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e frame.protocols)
for cap in "$pcaps"/rxe-*.pcap "$pcaps"/siw-*.pcap "$pcaps"/public/montybeatnik-*.pcap "$pcaps"/public/srinivaskoritala-*.pcap; do
	out=$here/$(basename "$cap" .pcap).net.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
