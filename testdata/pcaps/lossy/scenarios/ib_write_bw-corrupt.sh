# perftest ib_write_bw, 20 iterations of 64 KiB, netem "delay 1ms corrupt 2%" each way
NETEM="delay 1ms corrupt 2%"
source /lab/guest/scenarios/netem-lib.sh
PERF_TOOL=ib_write_bw
PERF_SIZES=65536
PERF_ITERS=20
source /lab/guest/scenarios/perftest-lib.sh
