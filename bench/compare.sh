#!/usr/bin/env bash
# Times rdmashark against tshark on a large capture made by repeating a real
# one, and prints throughput and peak memory of each. Not a test: numbers
# depend on the machine. Needs tshark and mergecap (Debian: tshark,
# wireshark-common) and GNU time (/usr/bin/time, Debian: time).
#
#   bench/compare.sh [SOURCE.pcap] [REPEATS]
#
# Default: testdata/pcaps/rxe-nfs3.pcap repeated 200 times (~1 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-testdata/pcaps/rxe-nfs3.pcap}
n=${2:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/rdmashark" ./cmd/rdmashark

# Build the big capture by doubling: mergecap -a concatenates.
cp "$src" "$work/big.pcap"
have=1
while [ $((have * 2)) -le "$n" ]; do
	mergecap -F pcap -a -w "$work/next.pcap" "$work/big.pcap" "$work/big.pcap"
	mv "$work/next.pcap" "$work/big.pcap"
	have=$((have * 2))
done
size=$(stat -c %s "$work/big.pcap")
pkts=$(capinfos -c -M "$work/big.pcap" | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')
echo "capture: $src x$have = $size bytes, $pkts packets"

run() { # name, command...
	local name=$1; shift
	/usr/bin/time -o "$work/time" -f '%e %M' "$@" > /dev/null 2> "$work/stderr"
	local out secs kb
	out=$(tail -1 "$work/time")
	secs=${out% *} kb=${out#* }
	awk -v n="$name" -v s="$secs" -v kb="$kb" -v b="$size" -v p="$pkts" \
		'BEGIN { printf "%-44s %7.2f s %8.1f MB/s %9.0f pkt/s %7.0f MB peak RSS\n", n, s, b/s/1e6, p/s, kb/1024 }'
}
fields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.invariant.crc)
run "rdmashark analyze" "$work/rdmashark" analyze "$work/big.pcap"
run "rdmashark analyze (stdin)" sh -c "\"$work/rdmashark\" analyze -r - < \"$work/big.pcap\""
run "rdmashark dissect -T fields (5 fields)" "$work/rdmashark" dissect -T fields "${fields[@]}" "$work/big.pcap"
run "tshark -T fields (5 fields)" tshark -n -r "$work/big.pcap" -T fields "${fields[@]}"
run "tshark -q -z conv,udp (no per-packet output)" tshark -n -q -r "$work/big.pcap" -z conv,udp
