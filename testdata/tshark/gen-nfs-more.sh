#!/usr/bin/env bash
# Regenerates the tshark reference outputs of the NFS value fields
# (cmd/rdmashark/golden_nfs_more_test.go): for the rxe and siw NFS captures
# in testdata/pcaps, `tshark -n -2 -T fields` with the fields of
# fields-nfs-more.txt, all occurrences joined by ",", tab-separated —
# exactly what `rdmashark dissect -T fields` prints for the same -e list —
# plus two context columns that are not compared: whether tshark marked the
# frame malformed, and the frame's protocols. Two passes for the reason
# gen-nfs.sh gives (tshark's one pass dissects each NFS READ reply whose
# data went by RDMA Write twice). TZ=UTC: nfs.atime, nfs.mtime and
# nfs.ctime are printed in local time, by tshark as by rdmashark; the test
# runs with TZ=UTC.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
mapfile -t fields < <(grep -v '^#' "$here/fields-nfs-more.txt" | grep -v '^$')
args=()
for f in "${fields[@]}"; do args+=(-e "$f"); done
args+=(-e _ws.malformed -e frame.protocols)
for name in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	out=$here/$name.nfs-more.tsv
	TZ=UTC tshark -n -2 -r "$pcaps/$name.pcap" -T fields -E occurrence=a -E separator=/t -E aggregator=, "${args[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") packets"
done
