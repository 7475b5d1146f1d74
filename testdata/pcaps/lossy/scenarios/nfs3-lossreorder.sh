# NFSv3 over RDMA, a smaller workload (a 256 KiB and a 30001-byte file written, read back after
# a remount, md5 compared), netem "delay 1ms loss 1% reorder 25% 50%" each way
NETEM="delay 1ms loss 1% reorder 25% 50%"
source /lab/guest/scenarios/netem-lib.sh
NFS_VERS=3
NFS_EXTRA_OPTS=nolock
source /lab/guest/scenarios/nfs-lib.sh
source /lab/guest/scenarios/nfs-small-lib.sh
