# The lab's srp.sh (ib_srpt target, ib_srp initiator logging in over RDMA/CM to port 5555; on siw
# over IPv6) with a small I/O mix, so that the capture stays small and shows each way SRP moves data:
#  - the SCSI scan (INQUIRY, REPORT LUNS, READ CAPACITY, MODE SENSE, partition-table READs);
#  - 8 writes of 4 KiB (direct I/O): SRP-2 immediate data in the SRP_CMD (4096 + the 68-octet
#    immediate data offset fit the 8260-octet maximum IU);
#  - 4 writes of 64 KiB: a data-out direct descriptor, the target pulls the data by RDMA Read;
#  - the same 96 KiB read back (64 KiB and 4 KiB reads): data-in direct descriptors, filled by the
#    target's RDMA Writes, compared with cmp (SRP-READBACK-OK);
#  - remove the remote port: ib_srp disconnects (CM DREQ/DREP, or a TCP FIN on siw); it sends no
#    SRP_I_LOGOUT (drivers/infiniband/ulp/srp/ib_srp.c, srp_disconnect_target).
source /lab/guest/scenarios/srp.sh
scenario_client() {
  modprobe sd_mod
  modprobe ib_srp
  g=$(cat /ctl/srpt-service-guid); g=${g#0x}
  gid=$(cat /sys/class/infiniband/$RDMA_DEV/ports/1/gids/0); gid=${gid//:}
  for p in /sys/class/infiniband_srp/srp-$RDMA_DEV-*; do
    echo "id_ext=$g,initiator_ext=${gid:0:16},ioc_guid=$g,dest=$SRP_DEST" > $p/add_target; echo "add_target rc=$?"
  done
  for i in $(seq 30); do ls /sys/block | grep -q '^sd' && break; sleep 1; done
  disk=$(ls /sys/block | grep -m1 '^sd'); dev=/dev/$disk
  echo "SRP disk: $disk"
  dd if=/dev/urandom of=/tmp/small bs=4k count=8 2>/dev/null
  dd if=/tmp/small of=$dev bs=4k oflag=direct
  dd if=/dev/urandom of=/tmp/big bs=64k count=4 2>/dev/null
  dd if=/tmp/big of=$dev bs=64k seek=1 oflag=direct
  dd if=$dev of=/tmp/big-back bs=64k skip=1 count=4 iflag=direct
  dd if=$dev of=/tmp/small-back bs=4k count=8 iflag=direct
  cmp /tmp/small /tmp/small-back && cmp /tmp/big /tmp/big-back && echo "SRP-READBACK-OK"
  for p in /sys/class/srp_remote_ports/*; do [ -e $p/delete ] && echo 1 > $p/delete; done
  sleep 2
}
