# srp-small.sh, then a SCSI device reset through the sd device (the SG_SCSI_RESET ioctl,
# 0x2284, with SG_SCSI_RESET_DEVICE, from perl: the base image has no sg3-utils), which the SCSI
# error handler hands to ib_srp's eh_device_reset_handler: an SRP_TSK_MGMT LOGICAL UNIT RESET
# (drivers/infiniband/ulp/srp/ib_srp.c, srp_reset_device), answered by an SRP_RSP with response
# data; then one more 4 KiB read, and the remote port removed.
source /lab/guest/scenarios/srp-small.sh
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
  dd if=/dev/urandom of=/tmp/small bs=4k count=2 2>/dev/null
  dd if=/tmp/small of=$dev bs=4k oflag=direct
  perl -e 'open(my $f, "<", $ARGV[0]) or die "open: $!"; my $a = pack("i", 1); my $r = ioctl($f, 0x2284, $a); print "SG_SCSI_RESET ", (defined $r ? "ok" : "failed: $!"), "\n"' $dev
  dmesg | grep -iE 'srp|reset' | tail -5
  dd if=$dev of=/tmp/small-back bs=4k count=2 iflag=direct
  cmp /tmp/small /tmp/small-back && echo "SRP-READBACK-OK"
  for p in /sys/class/srp_remote_ports/*; do [ -e $p/delete ] && echo 1 > $p/delete; done
  sleep 2
}
