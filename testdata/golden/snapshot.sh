#!/bin/sh
# snapshot.sh BINARY OUTDIR: run every command in every output format on every
# capture under testdata/pcaps (real, public, mutated, lossy, synthetic) and
# save stdout, stderr and the exit status of each run under OUTDIR, so that
# two builds can be compared with `diff -r OUTDIR1 OUTDIR2` (issue 11: the
# golden outputs are the oracle of a refactoring).
set -u
BIN=${1:?usage: snapshot.sh BINARY OUTDIR}
OUT=${2:?usage: snapshot.sh BINARY OUTDIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
# A representative -T fields set: frame, link, transport, RDMA, RPC-over-RDMA, RPC, NFS.
FIELDS="-e frame.number -e frame.len -e eth.type -e ip.src -e udp.dstport -e tcp.dstport
 -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
 -e infiniband.reth.r_key -e infiniband.reth.dmalen -e infiniband.aeth.syndrome
 -e iwarp_rdma.opcode -e iwarp_ddp.msn -e iwarp_ddp.mo -e iwarp_ddp.stag
 -e rpcordma.xid -e rpcordma.msg_type -e rpcordma.flow_control -e rpcordma.reads_count
 -e rpcordma.writes_count -e rpcordma.reply_count -e rpcordma.rdma_handle
 -e rdmashark.rpcordma.retransmission
 -e rpc.xid -e rpc.msgtyp -e rpc.procedure -e rpc.repframe -e nfs.main_opcode -e nfs.status"
run() { # name, args...
	name=$1; shift
	"$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}
cd "$ROOT"
find testdata/pcaps -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.erf' \) | sort | while read -r f; do
	n=$(echo "$f" | sed 's|^testdata/pcaps/||; s|/|__|g')
	run "$n.analyze" analyze "$f"
	run "$n.analyze.json" analyze --format json "$f"
	run "$n.transactions" transactions "$f"
	run "$n.transactions.json" transactions --format json "$f"
	run "$n.check" check -v "$f"
	run "$n.check.json" check --format json "$f"
	run "$n.dissect" dissect "$f"
	run "$n.dissect.V" dissect -V "$f"
	run "$n.dissect.json" dissect -T json "$f"
	# shellcheck disable=SC2086
	run "$n.dissect.fields" dissect -T fields $FIELDS "$f"
done
