#!/usr/bin/env bash
# Regenerates the tshark reference the display-filter golden test
# (cmd/rdmashark/golden_words_test.go) compares with: for every filter of
# filters-words.txt and every capture its "@" line names, the frames `tshark -2 -Y FILTER`
# selects — two passes, as rdmashark filters after reassembly.
# One line per capture and filter: CAPTURE <tab> FILTER <tab> FRAMES, the
# frame numbers comma-separated (empty when none; "ERROR" when tshark
# refused the filter).
#
# Needs tshark (Debian package `tshark`); the output is committed so the
# tests do not need it. Made with TShark 4.0.17 (Debian bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pcaps=$here/../pcaps
captures=()
out=$here/filters-words.tsv
: > "$out"
while IFS= read -r filter; do
	case "$filter" in '#'* | '') continue ;; '@ '*) read -ra captures <<< "${filter#@ }"; continue ;; esac
	for cap in "${captures[@]}"; do
		if frames=$(tshark -n -2 -r "$pcaps/$cap" -Y "$filter" -T fields -e frame.number 2>/dev/null); then
			frames=$(printf '%s' "$frames" | paste -sd, -)
		else
			frames=ERROR
		fi
		printf '%s\t%s\t%s\n' "$cap" "$filter" "$frames" >> "$out"
	done
done < "$here/filters-words.txt"
echo "filters-words.tsv: $(wc -l < "$out") lines"
