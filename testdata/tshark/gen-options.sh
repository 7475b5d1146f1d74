#!/usr/bin/env bash
# Regenerates tshark's output of `-T fields` with -E options on rxe-rping.pcap
# (options.tsv: one block per option set, "## OPTIONS" then the output),
# which cmd/rdmashark/fieldopts_test.go requires byte for byte from
# `rdmashark dissect -T fields` with the same options.
# Needs tshark; made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cap=$here/../pcaps/rxe-rping.pcap
fields=(-e frame.number -e ip.src -e ip.addr -e eth.addr -e infiniband.bth.opcode -e infiniband.reth.va)
out=$here/options.tsv
: > "$out"
while IFS= read -r opts; do
	echo "## $opts" >> "$out"
	# shellcheck disable=SC2086
	tshark -n -r "$cap" -T fields $opts "${fields[@]}" 2>/dev/null >> "$out"
done <<'LIST'
-E header=y
-E header=y -E quote=d -E separator=,
-E occurrence=l -E aggregator=/s -E separator=/s
-E occurrence=f -E separator=ab
-E bom=y -E header=y -E quote=s -E aggregator=;
-E occurrence=a -E header=n -E separator=|
LIST
