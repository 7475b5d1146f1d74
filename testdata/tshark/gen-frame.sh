#!/usr/bin/env bash
# Regenerates the tshark reference of cmd/rdmashark/golden_frame_test.go:
# `tshark -T fields` with the fields of fields-frame.txt, all occurrences,
# in UTC (frame.time is local time), on every real capture and the
# synthetic ones (the VLAN tags) but ib-native.pcap.
# Needs tshark (Debian package `tshark`); made with TShark 4.0.17.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
export TZ=UTC
mapfile -t fields < <(grep -v '^#' "$here/fields-frame.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e frame.protocols) # context, not compared
for cap in "$pcaps"/rxe-*.pcap "$pcaps"/siw-*.pcap "$pcaps"/public/montybeatnik-*.pcap \
	"$pcaps"/public/srinivaskoritala-*.pcap "$pcaps"/synthetic/*.pcap "$pcaps"/synthetic/*.pcapng; do
	# tshark 4.0 -T fields refuses DLT 247 (native InfiniBand).
	[ "$(basename "$cap")" = ib-native.pcap ] && continue
	out=$here/$(basename "$cap" .pcap).frame.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out" || echo "tshark failed on $(basename "$cap") (kept what it printed)"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
