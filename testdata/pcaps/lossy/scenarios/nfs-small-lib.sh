# The smaller NFS workload of the lossy NFS scenarios (sourced after
# nfs-lib.sh, which mounts): a 100-byte, a 256 KiB and a 30001-byte file
# written, the export remounted with the page cache dropped, the files read
# back and their md5 compared (READBACK-OK), the 200-entry directory listed.
# Copy it into the lab's guest/scenarios/ with the scenarios that source it.
scenario_client() {
  mkdir -p /mnt/nfs
  for i in 1 2 3 4 5; do nfs_mount && break; sleep 2; done
  cd /mnt/nfs || return 1
  echo "Hello from the NFS over RDMA capture lab. This file is one hundred bytes long, padded here....." > small.txt
  dd if=/dev/urandom of=big-256KiB.bin bs=256k count=1 conv=fsync
  head -c 30001 /dev/urandom > odd-30001.bin; sync
  md5sum small.txt big-256KiB.bin odd-30001.bin > /tmp/md5.before
  cd /
  umount /mnt/nfs
  echo 3 > /proc/sys/vm/drop_caches
  sleep 1
  nfs_mount
  cd /mnt/nfs
  md5sum small.txt big-256KiB.bin odd-30001.bin > /tmp/md5.after
  diff /tmp/md5.before /tmp/md5.after && echo "READBACK-OK"
  ls -l dir200 | wc -l
  rm -f small.txt big-256KiB.bin odd-30001.bin
  cd /
  umount /mnt/nfs
}
