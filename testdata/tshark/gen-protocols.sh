#!/usr/bin/env bash
# Regenerates frame-protocols.tsv, the tshark reference of
# cmd/rdmashark/golden_protocols_test.go: frame.protocols of every frame of
# the real captures, as `tshark -2` lists them (two passes, as rdmashark
# reassembles). One line per capture and list: CAPTURE <tab> PROTOCOLS
# <tab> FRAMES, the frames as comma-separated ranges (1-3,7).
#
# Needs tshark (Debian package `tshark`); the output is committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
out=$here/frame-protocols.tsv
: > "$out"
for cap in rxe-ib_send_bw.pcap rxe-ib_write_bw.pcap rxe-nfs3.pcap rxe-nfs41.pcap rxe-nfs42-small.pcap \
	rxe-rping.pcap rxe-rping-any-sll2.pcap siw-ib_read_bw.pcap siw-ib_send_bw.pcap siw-nfs3.pcap \
	siw-nfs41.pcap siw-nfs42-small.pcap siw-rping.pcap siw-rping-any-sll.pcap \
	public/montybeatnik-rdma-roce-lab-roce_capture_read-write-ecn.pcap public/montybeatnik-rdma-roce-lab-test.pcap \
	public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap public/tcpdump-tests-ipoib.pcap; do
	tshark -n -2 -r "$pcaps/$cap" -T fields -e frame.number -e frame.protocols 2>/dev/null |
		awk -F'\t' -v cap="$cap" '
		{ if (!($2 in first)) { order[++n]=$2; first[$2]=1 }
		  if (last[$2] == $1-1 && $2 in start) { last[$2]=$1 } else { if ($2 in start) r[$2]=r[$2] sep($2) rng($2); start[$2]=$1; last[$2]=$1 } }
		function rng(k) { return start[k]==last[k] ? start[k] : start[k] "-" last[k] }
		function sep(k) { return r[k]=="" ? "" : "," }
		END { for (i=1;i<=n;i++) { k=order[i]; r[k]=r[k] sep(k) rng(k); print cap "\t" k "\t" r[k] } }' >> "$out"
done
echo "frame-protocols.tsv: $(wc -l < "$out") lines"
