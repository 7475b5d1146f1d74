#!/usr/bin/env bash
# Speed and memory of rdmashark against tshark on large captures built from
# the real ones (issue 14). Not a test: the numbers depend on the machine
# and on what else runs on it. Prints, per command: the median wall-clock
# time of REPS runs, MB/s of capture, the median CPU time (user+sys, which
# a busy machine disturbs less), peak RSS, and the ratio to tshark on the
# same file. The commands of a file run in turn, one run of each per round
# (REPS rounds), so that a change of load disturbs them alike.
#
#   bench/run.sh                  # rxe-nfs3 x20 and x200, siw-nfs3 x20
#   BENCH_COMPRESSED=1 BENCH_LOSSY=1 BENCH_FILES=- bench/run.sh
#                                   # only the compressed copies of x20
#                                   # (gzip, zstd, lz4) and the lossy
#                                   # captures x10
#   REPS=3 BENCH_4G=1 bench/run.sh  # also rxe-nfs3 x800 (3.9 GB) for RSS
#   REPS=1 BENCH_10G=1 BENCH_FILES=rxe-nfs3-x2100.pcap bench/run.sh
#                                   # rxe-nfs3 x2100 (10 GB, 4,200
#                                   # connections: past the 4096-entry
#                                   # connection table, the most memory
#                                   # the closed connections' summaries take)
#
# One capture on two cores: `analyze`, `check` and `dissect -T fields` run
# with the default --pipeline (auto: the reading and the CRCs on a second
# goroutine when there is more than one CPU) and with --pipeline off (one
# goroutine); compare their wall-clock columns on an idle machine (the load
# average is printed before and after), their CPU columns for the price.
#
# Environment: BENCH_DIR (default /tmp/rdmashark-bench) holds the built
# files, which are kept between runs and never belong in the repository
# (symbolic links to files built elsewhere will do);
# REPS (default 5); IDLE_WAIT=1 starts each run only once the machine is
# idle (see wait_idle); BENCH_FILES (e.g. "rxe-nfs3-x20.pcap", default: all
# three) the files measured; TSHARK_BIG=1 runs tshark on the 1 GB file too
# (about a minute per run here); BENCH_FLOOR=0 skips the floors (below).
# Needs tshark and GNU time (/usr/bin/time).
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
if [ "${BENCH_10G:-}" = 1 ]; then
	build rxe-nfs3-x2100.pcap testdata/pcaps/rxe-nfs3.pcap 2100
	files+=(rxe-nfs3-x2100.pcap)
fi
# Compressed copies of rxe-nfs3 x20 (BENCH_COMPRESSED=1): as gzip -6, zstd
# -3 with a 1 MiB window (so that it cannot find the 20 copies in one
# another: a capture does not repeat itself) and lz4 -1; tshark reads the
# three too.
if [ "${BENCH_COMPRESSED:-}" = 1 ]; then
	x20=$dir/rxe-nfs3-x20.pcap
	[ -s "$dir/rxe-nfs3-x20.pcap.gz" ] || gzip -6 -c "$x20" > "$dir/rxe-nfs3-x20.pcap.gz"
	[ -s "$dir/rxe-nfs3-x20-w20.pcap.zst" ] || zstd -q -3 --zstd=wlog=20 -o "$dir/rxe-nfs3-x20-w20.pcap.zst" "$x20"
	[ -s "$dir/rxe-nfs3-x20-l1.pcap.lz4" ] || lz4 -q -1 "$x20" "$dir/rxe-nfs3-x20-l1.pcap.lz4"
	files+=(rxe-nfs3-x20.pcap.gz rxe-nfs3-x20-w20.pcap.zst rxe-nfs3-x20-l1.pcap.lz4)
fi
# The lossy captures (BENCH_LOSSY=1), 10 copies each: retransmissions,
# NAKs, duplicates and reordering for the loss analysis.
if [ "${BENCH_LOSSY:-}" = 1 ]; then
	for l in rxe-nfs3-lossy rxe-nfs3-lossreorder rxe-ib_write_bw-lossy siw-nfs3-lossy; do
		src=testdata/pcaps/lossy/$l.pcap
		[ -f "$src" ] || src=../shared/pcaps/lossy/$l.pcap
		build "$l-x10.pcap" "$src" 10
		files+=("$l-x10.pcap")
	done
fi
if [ "${BENCH_FILES:-}" = - ]; then
	files=("${files[@]:3}") # all but the three default files
elif [ -n "${BENCH_FILES:-}" ]; then
	read -r -a files <<< "$BENCH_FILES"
fi

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rdmashark $(git describe --always --dirty), $(go version | cut -d' ' -f3), tshark $(tshark --version 2> /dev/null | head -1 | awk '{print $3}'); $reps runs each, in turn"

# wait_idle: with IDLE_WAIT=1, each run waits until the CPUs were less than
# 10% busy over 0.3 s (at most 30 s; on a shared machine, what others run
# disturbs wall-clock times far more than anything measured here).
wait_idle() {
	local a b c d e f g h t0 t1 i0 i1 n=0
	while ((n++ < 100)); do
		read -r _ a b c d e f g h _ < /proc/stat
		t0=$((a + b + c + d + e + f + g + h)) i0=$((d + e))
		sleep 0.3
		read -r _ a b c d e f g h _ < /proc/stat
		t1=$((a + b + c + d + e + f + g + h)) i1=$((d + e))
		(((t1 - t0 - (i1 - i0)) * 10 < t1 - t0)) && return 0
	done
	return 0
}

# Commands of one file: add NAME CMD... queues one; run_all runs the queue
# REPS rounds, each command once per round, and prints per command
# "NAME|median wall s|median user+sys s|max peak RSS KiB".
names=() cmds=()
add() {
	names+=("$1")
	shift
	local IFS=$'\x1f'
	cmds+=("$*")
}
run_all() {
	local r i e u s m argv t0 t1
	for i in "${!names[@]}"; do : > "$dir/samples.$i"; done
	for ((r = 0; r < reps; r++)); do
		for i in "${!names[@]}"; do
			IFS=$'\x1f' read -r -a argv <<< "${cmds[$i]}"
			[ "${IDLE_WAIT:-}" = 1 ] && wait_idle
			t0=$EPOCHREALTIME
			/usr/bin/time -o "$dir/time" -f '%e %U %S %M' "${argv[@]}" > /dev/null 2> "$dir/stderr" || true
			t1=$EPOCHREALTIME
			read -r e u s m < <(tail -1 "$dir/time")
			# Wall time from the shell's clock (µs; time's %e has 10 ms).
			echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m" >> "$dir/samples.$i"
		done
	done
	for i in "${!names[@]}"; do
		local wall cpu rss
		wall=$(cut -d' ' -f1 "$dir/samples.$i" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
		cpu=$(cut -d' ' -f2 "$dir/samples.$i" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
		rss=$(cut -d' ' -f3 "$dir/samples.$i" | sort -n | tail -1)
		echo "${names[$i]}|$wall|$cpu|$rss"
	done
}

# The floors (BENCH_FLOOR=0 leaves them out): what starting the process
# takes (`rdmashark --version`), and what reading the first file, the
# CRC-32 of every frame and decoding its headers down to the BTH take in
# one goroutine with nothing else (bench/floor): the part of a wall-clock
# budget that no analysis can spend on anything of its own.
if [ "${BENCH_FLOOR:-1}" = 1 ]; then
	go build -o "$dir/floor" ./bench/floor
	add "rdmashark --version" "$bin" --version
	mapfile -t results < <(run_all)
	names=() cmds=()
	echo
	echo "floors: process start (rdmashark --version) $(cut -d'|' -f2 <<< "${results[0]}" | awk '{printf "%.1f ms", $1 * 1000}') median of $reps; bench/floor:"
	"$dir/floor" -n "$reps" "$dir/${files[0]}"
fi

fields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.invariant.crc)
for f in "${files[@]}"; do
	path=$dir/$f
	size=$(stat -L -c %s "$path")
	add "analyze" "$bin" analyze "$path"
	add "analyze --pipeline off" "$bin" --pipeline off analyze "$path"
	add "check" "$bin" check "$path"
	# Compressed and lossy files: analyze and check against tshark only.
	light=
	[[ $f == *.gz || $f == *.zst || $f == *.lz4 || $f == *-loss* ]] && light=1
	[ -z "$light" ] && add "check --pipeline off" "$bin" --pipeline off check "$path"
	[ -z "$light" ] && add "dissect -T fields (5 fields)" "$bin" dissect -T fields "${fields[@]}" "$path"
	if [ -z "$light" ]; then
		add "dissect -T fields --pipeline off" "$bin" --pipeline off dissect -T fields "${fields[@]}" "$path"
		add "dissect (text)" "$bin" dissect "$path"
		add "transactions" "$bin" transactions "$path"
		add "transactions --format json" "$bin" transactions --format json "$path"
	fi
	tsx= tsf= tsxc= tsfc=
	if [[ $f != *x200* && $f != *x800* && $f != *x2100* ]] || [ "${TSHARK_BIG:-}" = 1 ]; then
		add "tshark -Y rpcordma -T fields -e rpcordma.xid" tshark -n -r "$path" -Y rpcordma -T fields -e rpcordma.xid
		if [[ $f == rxe* && -z $light ]]; then
			add "tshark -T fields (5 fields)" tshark -n -r "$path" -T fields "${fields[@]}"
		fi
	fi
	mapfile -t results < <(run_all)
	names=() cmds=()
	for r in "${results[@]}"; do
		case $r in
		"tshark -Y"*) tsx=$(cut -d'|' -f2 <<< "$r") tsxc=$(cut -d'|' -f3 <<< "$r") ;;
		"tshark -T"*) tsf=$(cut -d'|' -f2 <<< "$r") tsfc=$(cut -d'|' -f3 <<< "$r") ;;
		esac
	done
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
		analyze* | check*) [ -n "$tsx" ] && rw=$(awk -v t="$tsx" -v w="$wall" 'BEGIN { printf "%.1f", t / w }') && rc=$(awk -v t="$tsxc" -v w="$cpu" 'BEGIN { printf "%.1f", t / w }') ;;
		"dissect -T fields"*) [ -n "$tsf" ] && rw=$(awk -v t="$tsf" -v w="$wall" 'BEGIN { printf "%.1f", t / w }') && rc=$(awk -v t="$tsfc" -v w="$cpu" 'BEGIN { printf "%.1f", t / w }') ;;
		esac
		awk -v n="$name" -v w="$wall" -v c="$cpu" -v k="$rss" -v b="$size" -v rw="$rw" -v rc="$rc" \
			'BEGIN { printf "%-46s %8.3f %9.0f %8.2f %9.0f %10s %10s\n", n, w, b / w / 1e6, c, k / 1024, rw, rc }'
	done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
