#!/bin/sh
# usage: nfs-workload.sh MOUNTPOINT
# The workload of the bundled captures (testdata/pcaps/README.md): small,
# large and odd-sized writes (inline, Read chunks), a long symlink target
# (READLINK's Reply chunk), reads back (Write chunks), a 200-entry directory
# listing (READDIR's Reply chunk), removal. Replace it with your own tests.
set -eu
m=$1
head -c 100 /dev/urandom > "$m/small"
head -c 1048576 /dev/urandom > "$m/large"
head -c 300001 /dev/urandom > "$m/odd"
target=$(head -c 700 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 934)
ln -s "$target" "$m/link"
readlink "$m/link" > /dev/null
stat "$m/link" > /dev/null
sync
cat "$m/small" "$m/large" "$m/odd" > /dev/null
mkdir "$m/dir"
i=0
while [ $i -lt 200 ]; do : > "$m/dir/f$i"; i=$((i + 1)); done
ls -l "$m/dir" > /dev/null
rm -rf "$m/small" "$m/large" "$m/odd" "$m/link" "$m/dir"
