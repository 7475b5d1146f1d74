#!/bin/bash
# compare.sh BEFORE AFTER: the snapshot.sh outputs that differ between two
# runs, once the keys a change only added are set aside (issue 11 added
# "items_not_evaluated" to check's per-rule results). Prints one line per
# differing file; nothing when the outputs agree.
set -u
A=${1:?usage: compare.sh BEFORE AFTER}
B=${2:?usage: compare.sh BEFORE AFTER}
added='"items_not_evaluated"'
diff -rq "$A" "$B" | awk '{print $2}' | while read -r f; do
	b=$(basename "$f")
	if ! diff -q <(grep -v "$added" "$A/$b" | sed 's/,$//') <(grep -v "$added" "$B/$b" | sed 's/,$//') >/dev/null; then
		echo "$b"
	fi
done
