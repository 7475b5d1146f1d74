#!/usr/bin/env bash
# Regenerates the tshark reference outputs for the NFSv4 callback captures
# (backchannel CB_COMPOUND, RFC 8881 section 20; RFC 8167), as gen-nfs.sh
# does for the other NFS captures, which hold no callback:
#
#   NAME.nfs.tsv        `tshark -2 -T fields` with every field of
#                       fields-nfs.txt (nfs.cb_procedure, nfs.cb.operation,
#                       nfs.nfsstat4 among them), all occurrences, plus the
#                       context columns _ws.malformed and frame.protocols;
#                       cmd/rdmashark/golden_nfs_test.go compares it.
#   NAME.nfs-calls.tsv  frame, XID, program, procedure and operations of
#                       every RPC Call over RDMA from tshark's -V tree (the
#                       callback program is "NFS CB" there, with a space).
#   NAME.nfs-cb.tsv     the CB_SEQUENCE and CB_RECALL arguments and results
#                       tshark shows on each CB_COMPOUND frame (frame, XID,
#                       session_id4, seqid, slotid, high_slotid,
#                       target_high_slotid, cachethis4, stateid.seqid,
#                       stateid.other, truncate, fhandle);
#                       rpcrdma/nfs's capture test compares it.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
captures=${CB_CAPTURES:-rxe-nfs-callback}
mapfile -t fields < <(grep -v '^#' "$here/fields-nfs.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e _ws.malformed -e frame.protocols)
for name in $captures; do
	out=$here/$name.nfs.tsv
	tshark -n -2 -r "$pcaps/$name.pcap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"

	out=$here/$name.nfs-cb.tsv
	tshark -n -2 -r "$pcaps/$name.pcap" -Y 'nfs.cb_procedure == 1' -T fields -E occurrence=a -E separator=/t -E aggregator=, \
		-e frame.number -e rpc.xid -e nfs.session_id4 -e nfs.seqid -e nfs.slotid -e nfs.high_slotid \
		-e nfs.target_high_slotid -e nfs.cachethis4 -e nfs.stateid.seqid -e nfs.stateid.other -e nfs.truncate \
		-e nfs.fhandle 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") CB_COMPOUND messages"

	out=$here/$name.nfs-calls.tsv
	tshark -n -r "$pcaps/$name.pcap" -Y 'rpc.msgtyp == 0 && (infiniband || iwarp_ddp)' -V 2>/dev/null | python3 -c '
import re, sys
rows, cur, cb = [], None, False
for line in sys.stdin:
    if line.startswith("Frame "):
        frame = line.split()[1].rstrip(":")
    m = re.match(r"Remote Procedure Call, Type:Call XID:(0x[0-9a-f]+)", line)
    if m:
        cur, cb = [frame, m.group(1), "", "", ""], False
        rows.append(cur)
        continue
    if cur is None:
        continue
    m = re.match(r"    Program: (.+) \(\d+\)$", line)
    if m and not cur[2]:
        cur[2] = m.group(1)
    m = re.match(r"    Procedure: (\S+) \(\d+\)", line)
    if m and not cur[3]:
        cur[3] = m.group(1)
    m = re.match(r"    Operations \(count: \d+\): (.*)", line)
    if m and not cur[4]:
        cur[4] = m.group(1).replace(" ", "")
    # A CB_COMPOUND has no list on its Operations line: one Opcode line
    # per operation under it.
    if re.match(r"    Operations \(count: \d+\)$", line):
        cb = True
        continue
    m = re.match(r"        Opcode: (\S+) \(\d+\)", line)
    if m and cb:
        cur[4] += ("," if cur[4] else "") + m.group(1)
    elif not line.startswith("        "):
        cb = False
for r in rows:
    print("\t".join(r))' > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") calls"
done
