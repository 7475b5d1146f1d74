#!/usr/bin/env bash
# Regenerates the tshark reference outputs the RPC-over-RDMA golden test
# (cmd/rdmashark/golden_rpc_test.go) compares with: for the rxe and siw NFS
# captures in testdata/pcaps, `tshark -T fields` with the fields of
# fields-rpc.txt, all occurrences, tab-separated — exactly what
# `rdmashark dissect -T fields` prints for the same -e list — plus context
# columns that are not compared: whether tshark marked the frame malformed,
# the frame's protocols (RPC over plain TCP, which rdmashark does not
# decode, has no rpcordma), and tshark's expert messages.
#
# One pass, as tshark runs by default and as rdmashark streams: tshark shows
# an RPC message on the frame where it has the whole of it (the Send that
# carried it, or the last RDMA Read Response of its Read chunk).
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-rpc.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e _ws.malformed -e frame.protocols -e _ws.expert.message)
for name in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	out=$here/$name.rpc.tsv
	tshark -n -r "$pcaps/$name.pcap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
	# Two passes: the frame of the Call each Reply answers (rpc.repframe),
	# which tshark prints only once it has seen the whole capture.
	tshark -n -2 -r "$pcaps/$name.pcap" -T fields -e frame.number -e rpc.repframe 2>/dev/null |
		awk -F'\t' '$2 != ""' > "$here/$name.rpc-repframe.tsv"
	# Two passes: the messages tshark reassembles (multi-packet Sends, and
	# RPC messages rebuilt from Read, Write and Reply chunks), as frame,
	# length and SHA-256 of the bytes — the bytes themselves would be
	# megabytes.
	tshark -n -2 -r "$pcaps/$name.pcap" -T fields -e frame.number -e rpcordma.reassembled.length \
		-e rpcordma.reassembled.data 2>/dev/null | awk -F'\t' '$2 != ""' | python3 -c '
import hashlib, sys
for line in sys.stdin:
    frame, length, data = line.rstrip("\n").split("\t")
    b = bytes.fromhex(data.replace(":", ""))
    print(frame, length, hashlib.sha256(b).hexdigest(), sep="\t")' > "$here/$name.rpc-reassembled.tsv"
done
tshark --version | head -1 > "$here/TSHARK-VERSION"
