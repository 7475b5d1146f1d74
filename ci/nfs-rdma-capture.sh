#!/bin/sh
# usage: nfs-rdma-capture.sh OUT.pcap WORKLOAD-SCRIPT
set -eu
out=$1 workload=$2
modprobe rdma_rxe; modprobe rpcrdma; modprobe svcrdma 2>/dev/null || true
ip netns add srv; ip netns add cli
ip link add vsrv type veth peer name vcli
ip link set vsrv netns srv; ip link set vcli netns cli
ip -n srv addr add 192.0.2.1/24 dev vsrv; ip -n srv link set vsrv up; ip -n srv link set lo up
ip -n cli addr add 192.0.2.2/24 dev vcli; ip -n cli link set vcli up; ip -n cli link set lo up
ip netns exec srv rdma link add rxe_srv type rxe netdev vsrv
ip netns exec cli rdma link add rxe_cli type rxe netdev vcli

# The server: knfsd in its namespace, exporting over RDMA on port 20049 (RFC 8267 section 8).
mkdir -p /srv/export && chmod 777 /srv/export
echo '/srv/export 192.0.2.0/24(rw,no_root_squash,insecure,fsid=1)' > /etc/exports
ip netns exec srv sh -c 'mount -t nfsd nfsd /proc/fs/nfsd 2>/dev/null || true
  exportfs -ra && rpc.nfsd 8 && echo "rdma 20049" > /proc/fs/nfsd/portlist'

# Capture on the client's end of the pair: every frame between the two.
ip netns exec cli tcpdump -i vcli -s 0 -U -w "$out" 'udp port 4791' &
dump=$!
sleep 2
mkdir -p /mnt/nfsrdma
# One `ip netns exec` for mount, workload and umount: each invocation gets
# its own mount namespace.
status=0
ip netns exec cli sh -c "mount -t nfs -o rdma,port=20049,vers=4.2 192.0.2.1:/srv/export /mnt/nfsrdma &&
  $workload /mnt/nfsrdma; s=\$?; umount /mnt/nfsrdma; exit \$s" || status=$?   # your tests: any NFS I/O
sleep 1
kill -INT "$dump"; wait "$dump" || true
exit "$status"
