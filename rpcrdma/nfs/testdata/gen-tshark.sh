#!/bin/sh
# Regenerates the tshark reference files the nfs tests compare against.
# Made with TShark 4.0.17 (Debian bookworm), two-pass (-2) so that Wireshark
# rebuilds messages moved by RDMA Write (Reply chunks, Write chunks) before
# dissecting them. Run from this directory.
set -e
P=../../../testdata/pcaps
for c in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	tshark -2 -r $P/$c.pcap -Y 'rpc.program == 100003 || rpc.program == 100005 || rpc.program == 100227' \
		-T fields -E occurrence=a \
		-e frame.number -e rpc.xid -e rpc.msgtyp -e rpc.program -e rpc.programversion \
		-e rpc.procedure -e nfs.opcode -e nfs.nfsstat4 -e nfs.status \
		>$c.nfs.tsv 2>/dev/null
done
