# NFSv4.1 over RDMA (session + backchannel), smaller workload, netem delay 1ms loss 3% each way
NETEM="delay 1ms loss 3%"
source /lab/guest/scenarios/netem-lib.sh
NFS_VERS=4.1
NFS_EXTRA_OPTS=
source /lab/guest/scenarios/nfs-lib.sh
source /lab/guest/scenarios/nfs-small-lib.sh
