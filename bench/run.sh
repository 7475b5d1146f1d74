#!/usr/bin/env bash
# Speed and memory of rdmashark against tshark on large captures built from
# the real ones (issue 14). Not a test: the numbers depend on the machine
# and on what else runs on it. Prints, per command: the median wall-clock
# time of REPS runs run in turn, MB/s of capture, the median CPU time
# (user+sys, which a busy machine disturbs less), peak RSS, and the ratio
# to tshark on the same file.
#
#   bench/run.sh                  # rxe-nfs3 x20 and x200, siw-nfs3 x20
#   REPS=3 BENCH_4G=1 bench/run.sh  # also rxe-nfs3 x800 (3.9 GB) for RSS
#
# Environment: BENCH_DIR (default /tmp/rdmashark-bench) holds the built
# files, which are kept between runs and never belong in the repository
# (symbolic links to files built elsewhere will do);
# REPS (default 5); TSHARK_BIG=1 runs tshark on the 1 GB file too (about a
# minute per run here). Needs tshark and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/rdmashark-bench}
reps=${REPS:-5}
mkdir -p "$dir"
go build -o "$dir/rdmashark" ./cmd/rdmashark
bin=$dir/rdmashark

# build NAME SRC N: N copies of SRC's records after one file header (the
# copies repeat timestamps and connections, which the tools take as new
# connections with the same addresses).
build() {
	local out=$dir/$1 src=$2 n=$3
	if [ -s "$out" ]; then return; fi
	{
		cat "$src"
		for ((i = 1; i < n; i++)); do tail -c +25 "$src"; done
	} > "$out.tmp"
	mv "$out.tmp" "$out"
}
build rxe-nfs3-x20.pcap testdata/pcaps/rxe-nfs3.pcap 20
build rxe-nfs3-x200.pcap testdata/pcaps/rxe-nfs3.pcap 200
build siw-nfs3-x20.pcap testdata/pcaps/siw-nfs3.pcap 20
files=(rxe-nfs3-x20.pcap siw-nfs3-x20.pcap rxe-nfs3-x200.pcap)
if [ "${BENCH_4G:-}" = 1 ]; then
	build rxe-nfs3-x800.pcap testdata/pcaps/rxe-nfs3.pcap 800
	files+=(rxe-nfs3-x800.pcap)
fi

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rdmashark $(git describe --always --dirty), $(go version | cut -d' ' -f3), tshark $(tshark --version 2> /dev/null | head -1 | awk '{print $3}'); $reps runs each, in turn"

# measure NAME CMD...: median wall s, median user+sys s, max peak RSS KiB.
measure() {
	local name=$1
	shift
	local walls=() cpus=() rss=0
	for ((i = 0; i < reps; i++)); do
		/usr/bin/time -o "$dir/time" -f '%e %U %S %M' "$@" > /dev/null 2> "$dir/stderr" || true
		read -r e u s m < <(tail -1 "$dir/time")
		walls+=("$e")
		cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')")
		((m > rss)) && rss=$m
	done
	local wall cpu
	wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	echo "$name|$wall|$cpu|$rss"
}

fields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.invariant.crc)
for f in "${files[@]}"; do
	path=$dir/$f
	size=$(stat -L -c %s "$path")
	results=()
	results+=("$(measure "analyze" "$bin" analyze "$path")")
	results+=("$(measure "analyze --pipeline off" "$bin" --pipeline off analyze "$path")")
	results+=("$(measure "check" "$bin" check "$path")")
	results+=("$(measure "dissect -T fields (5 fields)" "$bin" dissect -T fields "${fields[@]}" "$path")")
	results+=("$(measure "dissect (text)" "$bin" dissect "$path")")
	results+=("$(measure "transactions" "$bin" transactions "$path")")
	results+=("$(measure "transactions --format json" "$bin" transactions --format json "$path")")
	tsx= tsf= tsxc= tsfc=
	if [[ $f != *x200* && $f != *x800* ]] || [ "${TSHARK_BIG:-}" = 1 ]; then
		r=$(measure "tshark -Y rpcordma -T fields -e rpcordma.xid" tshark -n -r "$path" -Y rpcordma -T fields -e rpcordma.xid)
		results+=("$r")
		tsx=$(cut -d'|' -f2 <<< "$r") tsxc=$(cut -d'|' -f3 <<< "$r")
		if [[ $f == rxe* ]]; then
			r=$(measure "tshark -T fields (5 fields)" tshark -n -r "$path" -T fields "${fields[@]}")
			results+=("$r")
			tsf=$(cut -d'|' -f2 <<< "$r") tsfc=$(cut -d'|' -f3 <<< "$r")
		fi
	fi
	echo
	echo "$f: $size bytes, $(capinfos -c -M "$path" 2> /dev/null | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}') packets"
	# × tshark: tshark's median over rdmashark's, of wall-clock time and
	# of CPU time (analyze and check against tshark -Y rpcordma, dissect
	# -T fields against tshark -T fields of the same fields).
	printf '%-46s %8s %9s %8s %9s %10s %10s\n' command "wall s" "MB/s" "CPU s" "RSS MiB" "× (wall)" "× (CPU)"
	for r in "${results[@]}"; do
		IFS='|' read -r name wall cpu rss <<< "$r"
		rw="" rc=""
		case $name in
		analyze* | check) [ -n "$tsx" ] && rw=$(awk -v t="$tsx" -v w="$wall" 'BEGIN { printf "%.1f", t / w }') && rc=$(awk -v t="$tsxc" -v w="$cpu" 'BEGIN { printf "%.1f", t / w }') ;;
		"dissect -T fields"*) [ -n "$tsf" ] && rw=$(awk -v t="$tsf" -v w="$wall" 'BEGIN { printf "%.1f", t / w }') && rc=$(awk -v t="$tsfc" -v w="$cpu" 'BEGIN { printf "%.1f", t / w }') ;;
		esac
		awk -v n="$name" -v w="$wall" -v c="$cpu" -v k="$rss" -v b="$size" -v rw="$rw" -v rc="$rc" \
			'BEGIN { printf "%-46s %8.2f %9.0f %8.2f %9.0f %10s %10s\n", n, w, b / w / 1e6, c, k / 1024, rw, rc }'
	done
done
