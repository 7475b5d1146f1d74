# nvmeof-mix with a quarter of the data (fio --size=1M instead of 4M, a 1 MiB dd instead of 4 MiB), so
# that the capture stays small (the full mix writes and reads ~24 MiB: a ~27 MB capture). Otherwise
# as the lab's nvmeof-mix.sh: NVMe over Fabrics on RDMA with a larger I/O mix (target set-up from nvmeof.sh: nvmet-rdma,
# 64 MiB file-backed namespace, port 4420). Host, in order:
#  - a Connect to a subsystem NQN the target does not have (the Fabrics Connect fails: EXPECTED-FAIL);
#  - nvme discover (discovery controller, Get Log Page);
#  - the real controller with 3 I/O queues on 1 vCPU: nr_io_queues=1, nr_write_queues=1,
#    nr_poll_queues=1 (+ the admin queue: 4 RDMA-CM connections), queue_size=32;
#  - fio: 128 KiB sequential writes + verify reads, 4 KiB/128 KiB random writes + verify
#    (writes over 4 KiB use keyed SGLs: the target pulls the data with RDMA Read; 4 KiB writes go
#    in-capsule), polled 4 KiB random reads on the poll queue (io_uring --hipri), reads come back by
#    RDMA Write;
#  - Dataset Management (blkdiscard) and Write Zeroes (blkdiscard -z), Flush, admin commands
#    (id-ctrl, smart-log); a 1 MiB dd write/read-back compared with cmp; delete the controller.
source /lab/guest/scenarios/nvmeof.sh
scenario_client() {
  modprobe nvme-rdma
  echo "transport=rdma,traddr=$LAB_PEER,trsvcid=4420,nqn=nqn.2026-11.lab:no-such-subsystem" > /dev/nvme-fabrics
  rc=$?; [ $rc = 0 ] && echo "UNEXPECTED-SUCCESS wrong-nqn" || echo "EXPECTED-FAIL wrong-nqn rc=$rc"
  sleep 1
  nvme discover -t rdma -a $LAB_PEER -s 4420; echo "discover rc=$?"
  echo "transport=rdma,traddr=$LAB_PEER,trsvcid=4420,nqn=$NQN,nr_io_queues=1,nr_write_queues=1,nr_poll_queues=1,queue_size=32" > /dev/nvme-fabrics
  echo "connect rc=$?"
  sleep 3
  nvme list
  for c in /sys/class/nvme/nvme*; do echo "$c: $(cat $c/transport) queue_count=$(cat $c/queue_count 2>/dev/null) sqsize=$(cat $c/sqsize 2>/dev/null)"; done
  dev=$(ls /dev/nvme*n1 | head -1)
  F="--filename=$dev --direct=1 --ioengine=libaio --group_reporting"
  fio --name=seq128k $F --rw=write --bs=128k --size=1M --offset=0 --iodepth=4 --verify=crc32c --do_verify=1; echo "FIO-RESULT seq128k rc=$?"
  fio --name=rand4k128k $F --rw=randwrite --bssplit=4k/50:128k/50 --size=1M --offset=8M --iodepth=8 --verify=crc32c --do_verify=1; echo "FIO-RESULT rand4k128k rc=$?"
  fio --name=pollread --filename=$dev --direct=1 --ioengine=io_uring --hipri --rw=randread --bs=4k --size=1M --offset=0 --iodepth=4 --number_ios=64; echo "FIO-RESULT pollread rc=$?"
  blkdiscard -o 16M -l 1M $dev; echo "discard rc=$?"
  blkdiscard -z -o 17M -l 1M $dev; echo "write-zeroes rc=$?"
  nvme flush $dev -n 1; echo "flush rc=$?"
  nvme id-ctrl /dev/nvme0 | grep -E '^(mn|subnqn|ioccsz|iorcsz|sgls|mdts) '; nvme smart-log /dev/nvme0 | head -5
  dd if=/dev/urandom of=/tmp/data bs=1M count=1
  dd if=/tmp/data of=$dev bs=512k seek=48 oflag=direct
  dd if=$dev of=/tmp/back bs=512k skip=48 count=2 iflag=direct
  cmp /tmp/data /tmp/back && echo NVME-READBACK-OK
  for c in /sys/class/nvme/nvme*; do echo 1 > $c/delete_controller; done
  sleep 1
}
