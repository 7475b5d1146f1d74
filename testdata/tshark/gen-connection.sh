#!/usr/bin/env bash
# Regenerates connections.tsv, the tshark reference of
# cmd/rdmashark/golden_words_test.go's TestConnectionCarvesTshark: for each
# connection analyze numbers, the frames of it as tshark selects them — an
# iWARP connection is its TCP stream; a RoCE connection its QP's packets both
# ways and its CM MADs (on QP 1; the CM exchange of each connection picked
# by frame numbers read off `tshark -Y 'infiniband.bth.destqp == 1'`, since
# tshark 4.0 has no field linking a MAD to its connection).
# One line per connection: CAPTURE <tab> CONNECTION <tab> TSHARK FILTER <tab> FRAMES.
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/connections.tsv
: > "$out"
while IFS='|' read -r cap conn filter; do
	frames=$(tshark -n -2 -r "$here/../pcaps/$cap" -Y "$filter" -T fields -e frame.number 2>/dev/null | paste -sd, -)
	printf '%s\t%s\t%s\t%s\n' "$cap" "$conn" "$filter" "$frames" >> "$out"
done <<'LIST'
siw-rping.pcap|1|tcp.stream == 0
siw-rping-any-sll.pcap|1|tcp.stream == 0
siw-nfs41.pcap|1|tcp.stream == 0
siw-nfs41.pcap|2|tcp.stream == 1
rxe-rping-any-sll2.pcap|1|infiniband.bth.destqp == 0x11 || infiniband.bth.destqp == 1
rxe-nfs3.pcap|1|infiniband.bth.destqp == 0x11 || (infiniband.bth.destqp == 1 && frame.number <= 3013)
rxe-nfs3.pcap|2|infiniband.bth.destqp == 0x12 || (infiniband.bth.destqp == 1 && frame.number >= 3036)
LIST
echo "connections.tsv: $(wc -l < "$out") lines"
