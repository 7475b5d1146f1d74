#!/usr/bin/env bash
# Regenerates the tshark reference of dissect/loss_capture_test.go's
# TestIWARPTCPAnalysisMatchesTshark: for every lossy soft-iWARP capture, the
# frames tshark's TCP analysis flags as retransmission or out-of-order
# (rdmashark.analysis.retransmission: data at or below the highest sequence
# number sent) and as duplicate ACK (rdmashark.analysis.duplicate).
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for cap in "$here"/../pcaps/lossy/siw-*.pcap; do
	b=$(basename "$cap" .pcap)
	tshark -n -r "$cap" -Y 'tcp.analysis.retransmission || tcp.analysis.out_of_order' -T fields -e frame.number 2>/dev/null > "$here/$b.tcp-retrans.txt"
	tshark -n -r "$cap" -Y 'tcp.analysis.duplicate_ack' -T fields -e frame.number 2>/dev/null > "$here/$b.tcp-dupack.txt"
	echo "$b: $(wc -l < "$here/$b.tcp-retrans.txt") retransmitted, $(wc -l < "$here/$b.tcp-dupack.txt") duplicate ACKs"
done
