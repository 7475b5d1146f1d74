#!/usr/bin/env bash
# Regenerates the tshark reference of cmd/rdmashark/golden_compat_test.go:
# `tshark -T fields` with the fields of fields-compat.txt, all occurrences,
# on the RoCE/IB captures, real and synthetic (the synthetic IPv6/QinQ one
# has the only atomics).
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-compat.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
for cap in "$pcaps"/rxe-*.pcap "$pcaps"/public/montybeatnik-*.pcap "$pcaps"/public/srinivaskoritala-*.pcap \
	"$pcaps"/synthetic/rocev2-*.pcap "$pcaps"/synthetic/rocev2-*.pcapng; do
	out=$here/$(basename "$cap" .pcap).compat.tsv
	tshark -n -r "$cap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
