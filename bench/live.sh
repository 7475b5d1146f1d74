#!/usr/bin/env bash
# Live capture against tcpdump (issue 30). Not a test: the numbers depend
# on the machine and on what else runs on it. Needs root, iproute2,
# tcpreplay and tcpdump (apt-get install tcpreplay tcpdump).
#
# A veth pair inj0–cap0 in a network namespace of its own; a real capture
# (rxe-nfs3.pcap × COPIES, default 20: 145k frames, 95 MB) replayed into
# inj0 with tcpreplay at fixed rates; `rdmashark capture -q -w` (the full
# analysis running) and `tcpdump -w` on cap0 at the same time, same
# filter, side by side in one run. Per rate and buffer setting: the rate
# tcpreplay achieved, the frames each wrote and the drops each counted,
# the frames rdmashark wrote but did not analyse (its analysis fell behind
# by half the ring), the CPU time each used, and whether their files hold
# the same frames (compared frame for frame with tcpdump -r -xx, without
# timestamps, when neither dropped). rdmashark's CPU time includes its
# capture process's (--reader process).
#
#   bench/live.sh                          # rates 500 1000 2000 4000 Mbit/s and top speed
#   RATES="1000 2000" COPIES=5 bench/live.sh
#   RATES="top" BUFS=2048 RUNS=5 bench/live.sh           # only the equal 2 MiB rings, 5 times
#   RDMASHARK="/tmp/old /tmp/new" BUFS=2048 bench/live.sh  # two builds, runs interleaved
#   RDMASHARK="tcpdump /tmp/new" BUFS=2048 bench/live.sh   # a second tcpdump as control
#
# Buffer settings (BUFS): each tool's default (tcpdump: libpcap's 2 MiB
# ring; rdmashark: 32 MiB), then both at 2 MiB, then both at 32 MiB
# ("default 2048 32768"; a number is KiB for both). RUNS repeats the whole
# set (default 1), rates and buffers interleaved, so that a change of the
# machine's load falls on every configuration alike. RDMASHARK names
# rdmashark binaries to run in turn instead of building this tree's (a
# column then says which). The name tcpdump there runs a second tcpdump
# in rdmashark's place (its columns filled from its own counts): how
# often one tcpdump drops more than another beside it, under the same
# load, is what "no more than tcpdump" can be held to. BENCH_DIR
# (default /tmp/rdmashark-live-bench) and BENCH_NS (default
# rdmashark-live-bench) keep two runs of the script on one machine apart.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/live.sh: needs root (network namespace, packet sockets)" >&2; exit 1; }
for t in ip tcpreplay tcpdump; do
	command -v "$t" >/dev/null || { echo "bench/live.sh: needs $t" >&2; exit 1; }
done
RATES=${RATES:-"500 1000 2000 4000 top"}
COPIES=${COPIES:-20}
BUFS=${BUFS:-"default 2048 32768"}
RUNS=${RUNS:-1}
DIR=${BENCH_DIR:-/tmp/rdmashark-live-bench}
NS=${BENCH_NS:-rdmashark-live-bench}
FILTER='udp port 4791 or tcp port 20049 or ether proto 0x8915'
mkdir -p "$DIR"

if [ -z "${RDMASHARK:-}" ]; then
	CGO_ENABLED=0 go build -o "$DIR/rdmashark" ./cmd/rdmashark
	BINS=$DIR/rdmashark
else
	BINS=$RDMASHARK
fi
SRC=testdata/pcaps/rxe-nfs3.pcap
IN="$DIR/rxe-nfs3-x$COPIES.pcap"
if [ ! -s "$IN" ]; then
	# pcap: one file header, then the records COPIES times.
	{ head -c 24 "$SRC"; for _ in $(seq "$COPIES"); do tail -c +25 "$SRC"; done; } >"$IN.tmp"
	mv "$IN.tmp" "$IN"
fi
FRAMES=$(tcpdump -r "$IN" -n 2>/dev/null | wc -l)
KEPT=$(tcpdump -r "$IN" -n "$FILTER" 2>/dev/null | wc -l)

cleanup() {
	[ -n "${TD:-}" ] && kill "$TD" 2>/dev/null || true
	[ -n "${RS:-}" ] && kill "$RS" 2>/dev/null || true
	ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
ip netns del "$NS" 2>/dev/null || true
ip netns add "$NS"
ip netns exec "$NS" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
ip -n "$NS" link add inj0 type veth peer name cap0
ip -n "$NS" link set inj0 mtu 9000 up
ip -n "$NS" link set cap0 mtu 9000 up
sleep 1

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(basename "$IN"): $FRAMES frames, $KEPT kept by the filter ($FILTER); $(tcpdump --version 2>&1 | head -1), $(tcpreplay --version 2>&1 | head -1 | cut -d' ' -f1-3)"
echo
echo "|$([ -z "${RDMASHARK:-}" ] || echo ' rdmashark binary |') offered | achieved (tcpreplay) | buffers KiB (tcpdump / rdmashark) | tcpdump written | tcpdump drops | tcpdump CPU s | rdmashark written | rdmashark drops | not analysed | rdmashark CPU s | same frames | load |"
echo "|$([ -z "${RDMASHARK:-}" ] || echo '---|')---|---|---|---|---|---|---|---|---|---|---|---|"

cpu() { # pid: user+system CPU seconds so far, its child processes' included (rdmashark's capture process)
	local kids
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
	# (the command's name, field 2, has no spaces here)
	awk -v hz="$(getconf CLK_TCK)" '{ t += $14 + $15 } END { printf "%.2f", t / hz }' "/proc/$1/stat" $(for k in $kids; do echo "/proc/$k/stat"; done)
}

waitfor() { # file pattern: until the tool says it listens (10 s at most)
	for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	echo "bench/live.sh: no '$2' in $1" >&2; cat "$1" >&2; return 1
}

run() { # binary rate tcpdumpB rdmasharkB (KiB, "" for the default)
	local bin=$1 rate=$2 tb=$3 rb=$4 speed
	rm -f "$DIR"/td.pcap "$DIR"/rs.pcapng "$DIR"/td.err "$DIR"/rs.out "$DIR"/rs.err
	ip netns exec "$NS" tcpdump -i cap0 -n -w "$DIR/td.pcap" ${tb:+-B "$tb"} "$FILTER" 2>"$DIR/td.err" &
	TD=$!
	if [ "$bin" = tcpdump ]; then
		ip netns exec "$NS" tcpdump -i cap0 -n -w "$DIR/rs.pcapng" ${rb:+-B "$rb"} "$FILTER" >"$DIR/rs.out" 2>"$DIR/rs.err" &
	else
		ip netns exec "$NS" "$bin" capture -i cap0 -q -w "$DIR/rs.pcapng" ${rb:+-B "$rb"} -f "$FILTER" >"$DIR/rs.out" 2>"$DIR/rs.err" &
	fi
	RS=$!
	waitfor "$DIR/td.err" "listening on"
	waitfor "$DIR/rs.err" "listening on"
	if [ "$rate" = top ]; then speed=--topspeed; else speed=--mbps=$rate; fi
	ip netns exec "$NS" tcpreplay -q -i inj0 $speed "$IN" >"$DIR/tr.out" 2>&1
	sleep 2 # the last blocks' timeouts, the analysis catching up
	local td_cpu rs_cpu
	td_cpu=$(cpu "$TD")
	rs_cpu=$(cpu "$RS")
	kill -INT "$TD" "$RS"
	wait "$TD" || true
	wait "$RS" || true
	TD= RS=
	local achieved td_n td_d rs_n rs_d rs_na same
	achieved=$(grep -o 'Rated: .*' "$DIR/tr.out" | sed -E 's/Rated: [0-9.]+ Bps, ([0-9.]+) Mbps, ([0-9.]+) pps/\1 Mbit\/s, \2 frames\/s/')
	td_n=$(sed -nE 's/^([0-9]+) packets captured/\1/p' "$DIR/td.err")
	td_d=$(sed -nE 's/^([0-9]+) packets dropped by kernel/\1/p' "$DIR/td.err")
	rs_n=$(tcpdump -r "$DIR/rs.pcapng" -n 2>/dev/null | wc -l)
	rs_d=$(sed -nE 's/^capture on cap0: .*; ([0-9]+) packets dropped by the kernel/\1/p' "$DIR/rs.out")
	[ "$bin" != tcpdump ] || rs_d=$(sed -nE 's/^([0-9]+) packets dropped by kernel/\1/p' "$DIR/rs.err")
	rs_na=$(sed -nE 's/^([0-9]+) more packets were written to the file but not analysed.*/\1/p' "$DIR/rs.out")
	same=-
	if [ "$td_d" = 0 ] && [ "$rs_d" = 0 ]; then
		if cmp -s <(tcpdump -r "$DIR/td.pcap" -n -t -xx 2>/dev/null) <(tcpdump -r "$DIR/rs.pcapng" -n -t -xx 2>/dev/null); then
			same=yes
		else
			same=NO
		fi
	fi
	local rdef="32768 (default)"
	[ "$bin" != tcpdump ] || rdef="2048 (default)"
	echo "|$([ -z "${RDMASHARK:-}" ] || echo " $bin |") ${rate}$([ "$rate" = top ] || echo ' Mbit/s') | $achieved | ${tb:-2048 (default)} / ${rb:-$rdef} | $td_n | $td_d | $td_cpu | $rs_n | $rs_d | ${rs_na:-0} | $rs_cpu | $same | $(cut -d' ' -f1 /proc/loadavg) |"
}

for _ in $(seq "$RUNS"); do
	for rate in $RATES; do
		for buf in $BUFS; do
			for bin in $BINS; do
				if [ "$buf" = default ]; then
					run "$bin" "$rate" "" ""
				else
					run "$bin" "$rate" "$buf" "$buf"
				fi
			done
		done
	done
done
