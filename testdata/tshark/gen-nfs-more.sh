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
# Display filters on the new fields (the frames tshark -2 -Y selects), for
# TestTsharkFiltersNFSValues: capture, filter, comma-separated frames.
filters=(
	'nfs.fh.hash == 0xa38fe1a1'
	'nfs.fhandle'
	'nfs.fh.hash == 0xceeab11c && rpc.msgtyp == 0'
	'nfs.name == "small.txt"'
	'nfs.pathname.component contains "small"'
	'nfs.offset3 > 0'
	'nfs.count4 >= 65536'
	'nfs.stable_how4 == 2'
	'nfs.write.stable == 2'
	'nfs.stateid.hash == 0x002d'
	'nfs.slotid == 0 && nfs.high_slotid > 0'
	'nfs.fattr3.size > 4096'
	'nfs.fattr4.size > 4096'
	'nfs.seqid == 0x00000016'
	'nfs.session_id4'
)
out=$here/nfs-more-filters.tsv
: > "$out"
for name in rxe-nfs3 rxe-nfs41 siw-nfs42-small; do
	for f in "${filters[@]}"; do
		frames=$(tshark -n -2 -r "$pcaps/$name.pcap" -Y "$f" -T fields -e frame.number 2>/dev/null | paste -sd, -)
		printf '%s\t%s\t%s\n' "$name" "$f" "$frames" >> "$out"
	done
done
echo "$(basename "$out"): $(wc -l < "$out") filters"
