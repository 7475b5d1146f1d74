#!/usr/bin/env bash
# Regenerates the tshark -z outputs the stats test
# (cmd/rdmashark/stats_test.go) compares `rdmashark stats` with, for the
# rxe and siw NFS captures in testdata/pcaps: io,stat,1 (frames and bytes
# per second), rpc,srt for NFSv3, NFSv4 and NFSACL v3 (calls, min, max,
# sum per procedure), and on the iWARP (siw) captures conv,tcp (an iWARP
# connection is a TCP conversation). One pass, as tshark -z runs.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
for name in rxe-nfs3 rxe-nfs41 rxe-nfs42-small siw-nfs3 siw-nfs41 siw-nfs42-small; do
	out=$here/$name.stats.txt
	z=(-z io,stat,1 -z rpc,srt,100003,3 -z rpc,srt,100003,4 -z rpc,srt,100227,3)
	case $name in siw-*) z+=(-z conv,tcp) ;; esac
	tshark -n -q -r "$pcaps/$name.pcap" "${z[@]}" 2>/dev/null > "$out"
	echo "$(basename "$out"): $(wc -l < "$out") lines"
done
