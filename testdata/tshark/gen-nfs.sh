#!/usr/bin/env bash
# Regenerates the tshark reference outputs the NFS golden test
# (cmd/rdmashark/golden_nfs_test.go) compares with: for the rxe and siw NFS
# captures in testdata/pcaps, `tshark -2 -T fields` with the fields of
# fields-nfs.txt, all occurrences, tab-separated — exactly what
# `rdmashark dissect -T fields` prints for the same -e list — plus two
# context columns that are not compared: whether tshark marked the frame
# malformed, and the frame's protocols (RPC over plain TCP, which rdmashark
# does not decode, has no rpcordma).
#
# Two passes (-2): on these captures tshark puts every NFS message on the
# same frame in one pass and in two — the frame where the RPC message is
# whole, as rdmashark does — but in one pass it dissects each NFS READ
# reply whose data went by RDMA Write twice and marks it malformed
# (rpcrdma/testdata/README.md; KD-RPC-READ-REPLY-TWICE), doubling every
# nfs field there. The second pass has the rebuilt reply and shows each
# field once. It also writes *.nfs-calls.tsv: the program, procedure and
# COMPOUND operation names of every Call over RDMA, from tshark's -V tree.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-nfs.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e _ws.malformed -e frame.protocols)
for name in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	out=$here/$name.nfs.tsv
	tshark -n -2 -r "$pcaps/$name.pcap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
tshark --version | head -1 > "$here/TSHARK-VERSION"
# The names tshark gives every RPC Call over RDMA (program, procedure, and
# the operations of an NFSv4 COMPOUND), read from its -V tree, for the
# transactions test (cmd/rdmashark/golden_nfs_test.go): frame, XID,
# program, procedure, operations.
for name in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	out=$here/$name.nfs-calls.tsv
	tshark -n -r "$pcaps/$name.pcap" -Y 'rpc.msgtyp == 0 && (infiniband || iwarp_ddp)' -V 2>/dev/null | python3 -c '
import re, sys
rows, cur = [], None
for line in sys.stdin:
    if line.startswith("Frame "):
        frame = line.split()[1].rstrip(":")
    m = re.match(r"Remote Procedure Call, Type:Call XID:(0x[0-9a-f]+)", line)
    if m:
        cur = [frame, m.group(1), "", "", ""]
        rows.append(cur)
        continue
    if cur is None:
        continue
    m = re.match(r"    Program: (\S+) \(\d+\)", line)
    if m and not cur[2]:
        cur[2] = m.group(1)
    m = re.match(r"    Procedure: (\S+) \(\d+\)", line)
    if m and not cur[3]:
        cur[3] = m.group(1)
    m = re.match(r"    Operations \(count: \d+\): (.*)", line)
    if m and not cur[4]:
        cur[4] = m.group(1).replace(" ", "")
for r in rows:
    print("\t".join(r))' > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") calls"
done
