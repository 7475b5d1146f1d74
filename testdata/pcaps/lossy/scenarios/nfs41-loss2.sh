# NFSv4.1 over RDMA, smaller workload, netem delay 1ms loss 2% each way
NETEM="delay 1ms loss 2%"
source /lab/guest/scenarios/netem-lib.sh
NFS_VERS=4.1
NFS_EXTRA_OPTS=
source /lab/guest/scenarios/nfs-lib.sh
source /lab/guest/scenarios/nfs-small-lib.sh
