#!/usr/bin/env bash
# Regenerates tshark's -x dump of rxe-rping.pcap (rxe-rping.hex.txt) and its
# time column in every -t format (rxe-rping.time.tsv: format, then the
# _ws.col.Time of each frame), which cmd/rdmashark/hexdump_test.go compares
# with `rdmashark dissect -x` and `-t`. TZ=UTC so that a/ad/adoy are the
# same wherever the test runs (it runs with TZ=UTC too).
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cap=$here/../pcaps/rxe-rping.pcap
export TZ=UTC
tshark -n -r "$cap" -x 2>/dev/null > "$here/rxe-rping.hex.txt"
: > "$here/rxe-rping.time.tsv"
for t in r a ad adoy u ud udoy e d dd; do
	tshark -n -r "$cap" -t "$t" -T fields -e _ws.col.Time 2>/dev/null | sed "s/^/$t\t/" >> "$here/rxe-rping.time.tsv"
done
