# SRP login rejected (rdmashark issue 32: SRP_LOGIN_REJ): the lab's srp.sh (ib_srpt target on
# RDMA/CM port 5555, ib_srp initiator) with the target port's only ACL for an address no initiator
# has (192.0.2.99), so that srpt finds no node ACL for the initiator's login and refuses it
# (srpt_cm_req_recv: "Rejected login for initiator ...": an SRP_LOGIN_REJ in the private data of a
# CM REJ with reason 28, consumer defined, sent by rdma_reject). ib_srp's add_target then fails.
# rxe only (siw: see srp.sh, an IPv4 login there is refused before srpt sees it).
source /lab/guest/scenarios/srp.sh
scenario_server() {
  mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
  modprobe target_core_mod; modprobe target_core_file
  modprobe ib_srpt srp_max_req_size=8260 dyndbg=+p
  truncate -s 64M /root/srp.img
  C=/sys/kernel/config/target
  mkdir -p $C/core/fileio_0/disk0
  echo "fd_dev_name=/root/srp.img,fd_dev_size=67108864" > $C/core/fileio_0/disk0/control
  echo 1 > $C/core/fileio_0/disk0/enable
  mkdir -p $C/srpt
  [ -e $C/srpt/discovery_auth/rdma_cm_port ] && echo 5555 > $C/srpt/discovery_auth/rdma_cm_port
  gid=$(cat /sys/class/infiniband/$RDMA_DEV/ports/1/gids/0); echo "port GID $gid"
  if [ "${gid#fe8}" != "$gid" ]; then P=${gid#fe80:0000:0000:0000:}; else P=0x${gid//:}; fi
  mkdir $C/srpt/$P && mkdir $C/srpt/$P/$P && mkdir $C/srpt/$P/$P/lun/lun_0 && ln -s $C/core/fileio_0/disk0 $C/srpt/$P/$P/lun/lun_0/disk0
  # The only ACL: an address no initiator here has.
  ini=192.0.2.99
  mkdir $C/srpt/$P/$P/acls/$ini && mkdir $C/srpt/$P/$P/acls/$ini/lun_0 && ln -s $C/srpt/$P/$P/lun/lun_0 $C/srpt/$P/$P/acls/$ini/lun_0/lun_0
  echo 1 > $C/srpt/$P/$P/enable
  cat /sys/module/ib_srpt/parameters/srpt_service_guid > /ctl/srpt-service-guid
  touch /ctl/server-ready
}
scenario_client() {
  modprobe sd_mod
  modprobe ib_srp
  g=$(cat /ctl/srpt-service-guid); g=${g#0x}
  gid=$(cat /sys/class/infiniband/$RDMA_DEV/ports/1/gids/0); gid=${gid//:}
  for p in /sys/class/infiniband_srp/srp-$RDMA_DEV-*; do
    echo "id_ext=$g,initiator_ext=${gid:0:16},ioc_guid=$g,dest=$SRP_DEST" > $p/add_target; echo "add_target rc=$? (a refused login fails)"
  done
  sleep 2
  ls /sys/class/srp_remote_ports/ 2>/dev/null
  dmesg | grep -iE 'srp|rej' | tail
}
