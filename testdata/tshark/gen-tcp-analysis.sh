#!/usr/bin/env bash
# Regenerates the tshark reference of dissect/loss_capture_test.go's
# TestIWARPTCPAnalysisMatchesTshark: for every lossy soft-iWARP capture, the
# frames tshark's TCP analysis flags as retransmission (with fast and spurious
# ones: rdmashark.analysis.retransmission), as out-of-order
# (rdmashark.analysis.out_of_order) and as duplicate ACK
# (rdmashark.analysis.duplicate), and the frames whose IPv4 header or TCP
# checksum tshark finds bad when asked to check them (the segments the
# receiver discards: Packet.TCPDiscarded).
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for cap in "$here"/../pcaps/lossy/siw-*.pcap; do
	b=$(basename "$cap" .pcap)
	# Only the iWARP connections (the TCP streams that carry MPA): the NFS
	# captures also hold the MOUNT protocol's plain TCP.
	iw="tcp.stream in {$(tshark -n -r "$cap" -Y iwarp_mpa -T fields -e tcp.stream 2>/dev/null | sort -un | paste -sd,)}"
	tshark -n -r "$cap" -Y "tcp.analysis.retransmission && $iw" -T fields -e frame.number 2>/dev/null > "$here/$b.tcp-retrans.txt"
	tshark -n -r "$cap" -Y "tcp.analysis.out_of_order && $iw" -T fields -e frame.number 2>/dev/null > "$here/$b.tcp-ooo.txt"
	tshark -n -r "$cap" -Y "tcp.analysis.duplicate_ack && $iw" -T fields -e frame.number 2>/dev/null > "$here/$b.tcp-dupack.txt"
	tshark -n -r "$cap" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -Y "(ip.checksum.status == 0 || tcp.checksum.status == 0) && $iw" \
		-T fields -e frame.number 2>/dev/null > "$here/$b.tcp-badsum.txt"
	echo "$b: $(wc -l < "$here/$b.tcp-retrans.txt") retransmitted, $(wc -l < "$here/$b.tcp-ooo.txt") out of order, $(wc -l < "$here/$b.tcp-dupack.txt") duplicate ACKs, $(wc -l < "$here/$b.tcp-badsum.txt") bad checksums"
done
