#!/bin/sh
# gen.sh: tshark's macc.* fields of mac-control.pcap (made by gen.py),
# one line per frame, the reference fields' TestMACControlEqualsTshark reads.
set -e
cd "$(dirname "$0")"
python3 gen.py
F="_ws.col.Protocol _ws.col.Info macc.opcode macc.pause_time macc.cbfc.enbv"
for i in 0 1 2 3 4 5 6 7; do F="$F macc.cbfc.enbv.c$i"; done
for i in 0 1 2 3 4 5 6 7; do F="$F macc.cbfc.pause_time.c$i"; done
args=""
for f in $F; do args="$args -e $f"; done
{ echo "# $(tshark -v | head -1)"; echo "$F" | tr ' ' '\t'; tshark -r mac-control.pcap -T fields $args; } > macc.tsv
