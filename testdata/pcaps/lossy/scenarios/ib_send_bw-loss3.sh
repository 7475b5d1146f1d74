# perftest ib_send_bw, 20 iterations of 64 KiB, netem "loss 3%" each way
NETEM="loss 3%"
source /lab/guest/scenarios/netem-lib.sh
PERF_TOOL=ib_send_bw
PERF_SIZES=65536
PERF_ITERS=20
source /lab/guest/scenarios/perftest-lib.sh
