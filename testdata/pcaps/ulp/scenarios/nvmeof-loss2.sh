# NVMe over Fabrics on RDMA, the nvmeof.sh workload (a 4 MiB write in 64 KiB direct I/O, read back
# and compared: NVME-READBACK-OK; 16 reads of 4 KiB; controller deleted), netem delay 1ms loss 2% each way
NETEM="delay 1ms loss 2%"
source /lab/guest/scenarios/netem-lib.sh
source /lab/guest/scenarios/nvmeof.sh
