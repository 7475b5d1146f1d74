# perftest ib_send_bw with a receive queue one deep (-r 1: RNR NAKs), 50 iterations of 4 KiB, netem "delay 1ms loss 1%" each way
NETEM="delay 1ms loss 1%"
source /lab/guest/scenarios/netem-lib.sh
PERF_TOOL="ib_send_bw -r 1"
PERF_SIZES=4096
PERF_ITERS=50
source /lab/guest/scenarios/perftest-lib.sh
