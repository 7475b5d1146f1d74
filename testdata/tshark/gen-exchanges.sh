#!/usr/bin/env bash
# Regenerates the tshark reference the `exchanges` test
# (cmd/rdmashark/exchanges_test.go) compares with: for the rxe and siw
# NFSv3 captures, every frame in which tshark shows an RPC message, with
# its XID(s) and message type(s) (0 Call, 1 Reply; several, comma-separated,
# when a frame carries more than one). Frames of RPC over plain TCP (mount,
# portmap) are listed too: rdmashark does not decode those, and the test
# looks up only the XIDs of its exchanges.
#
# Needs tshark (Debian package `tshark`); the outputs are committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
for name in rxe-nfs3 siw-nfs3; do
	tshark -n -r "$pcaps/$name.pcap" -Y rpc -T fields -e frame.number -e rpc.xid -e rpc.msgtyp 2>/dev/null > "$here/$name.rpc-xid.tsv"
	echo "$name.rpc-xid.tsv: $(wc -l < "$here/$name.rpc-xid.tsv") frames"
done
