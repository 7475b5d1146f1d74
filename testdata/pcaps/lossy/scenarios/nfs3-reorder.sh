# NFSv3 over RDMA (nolock), smaller workload, netem delay 1ms reorder 25% 50% each way
NETEM="delay 1ms reorder 25% 50%"
source /lab/guest/scenarios/netem-lib.sh
NFS_VERS=3
NFS_EXTRA_OPTS=nolock
source /lab/guest/scenarios/nfs-lib.sh
source /lab/guest/scenarios/nfs-small-lib.sh
