#!/usr/bin/env bash
# Regenerates tshark's reading of `rdmashark check --annotate` on
# rxe-nfs3.pcap (annotate-rxe-nfs3.tsv: every frame's number and comments,
# joined by "^"), which cmd/rdmashark/annotate_test.go compares with check's
# findings. Needs tshark and a built rdmashark on PATH (or RDMASHARK=path).
# Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rdmashark=${RDMASHARK:-rdmashark}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rdmashark" check --annotate "$tmp/out.pcapng" "$here/../pcaps/rxe-nfs3.pcap" > /dev/null || true
tshark -n -r "$tmp/out.pcapng" -T fields -E aggregator=^ -e frame.number -e frame.comment -e frame.len \
	2>/dev/null > "$here/annotate-rxe-nfs3.tsv"
echo "annotate-rxe-nfs3.tsv: $(wc -l < "$here/annotate-rxe-nfs3.tsv") frames"
