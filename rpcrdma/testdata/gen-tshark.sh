#!/bin/sh
# Regenerates the tshark reference files the tests compare against.
# Made with TShark 4.0.17 (Debian bookworm). Run from this directory.
set -e
P=../../testdata/pcaps
for c in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	tshark -r $P/$c.pcap -Y rpcordma -T fields -E occurrence=a \
		-e frame.number -e rpcordma.xid -e rpcordma.version -e rpcordma.flow_control \
		-e rpcordma.msg_type -e rpcordma.reads_count -e rpcordma.writes_count \
		-e rpcordma.reply_count -e rpcordma.segment_count -e rpcordma.position \
		-e rpcordma.rdma_handle -e rpcordma.rdma_length -e rpcordma.rdma_offset \
		>$c.rpcordma.tsv 2>/dev/null
	tshark -r $P/$c.pcap -Y rpc -T fields -E occurrence=a \
		-e frame.number -e rpc.xid -e rpc.msgtyp -e rpc.version -e rpc.program \
		-e rpc.programversion -e rpc.procedure -e rpc.auth.flavor -e rpc.auth.length \
		-e rpc.auth.stamp -e rpc.auth.machinename -e rpc.auth.uid -e rpc.auth.gid \
		-e rpc.replystat -e rpc.state_accept -e nfs.fh.length -e nfs.status \
		-e nfs.nfsstat4 -e nfs.tag -e nfs.minorversion \
		>$c.rpc.tsv 2>/dev/null
done
