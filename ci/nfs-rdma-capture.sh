#!/bin/sh
# usage: nfs-rdma-capture.sh OUT.pcap WORKLOAD-SCRIPT
#
# Runs an NFS-over-RDMA server (knfsd) and client on ONE host, joined by a veth
# pair with a soft RDMA device on each end, runs WORKLOAD-SCRIPT on the mount
# and captures every frame between the two ends into OUT.pcap.
#
# Both ends stay in the initial network namespace: Soft-RoCE (rdma_rxe) opens
# its UDP 4791 socket in the initial namespace only (up to at least Linux 6.1;
# drivers/infiniband/sw/rxe/rxe_net.c, rxe_net_init: rxe_setup_udp_tunnel(&init_net, ...)),
# so rxe on a veth end moved into another namespace never receives a RoCE
# packet and RDMA-CM fails ("mount.nfs: Network is unreachable"). Two addresses
# of one namespace would normally talk through the loopback device and put
# nothing on the wire; policy routing sends the traffic of each end to the
# other end's address out of its own veth instead, and accept_local lets the
# other end take it in:
#   ip rule 50, 51: what arrives on vsrv or vcli -> the local table (delivered)
#   ip rule 100: to SERVER -> table 100: SERVER dev vcli (the client's way out)
#   ip rule 101: to CLIENT -> table 101: CLIENT dev vsrv (the server's way out)
#   the "local" table's rule moves from preference 0 to 1000, behind them.
# (RDMA-CM checks on the server that the route back to the client leaves by
# the netdev the CM REQ came in on: rule 101 makes it so.)
#
# env: RDMA_TYPE=rxe (RoCEv2, default) or siw (iWARP, needs the siw module:
#      Debian's kernels lack it), CI_NET=198.51.100 (the /24 used on the pair:
#      choose one that is not on the host), NFS_VERS=4.2.
# exit: the workload's status; 3 when this host cannot run the recipe (a
#      module, a tool or RDMA between the two ends is missing), with a message
#      that says which; never an empty capture with status 0.
set -eu
out=$1 workload=$2
type=${RDMA_TYPE:-rxe}
net=${CI_NET:-198.51.100}
srv=$net.1 cli=$net.2
vers=${NFS_VERS:-4.2}
mnt=/mnt/nfsrdma
export_dir=/srv/export

die() { echo "nfs-rdma-capture: $*" >&2; exit 3; }

case $type in
rxe) mod=rdma_rxe filter='udp port 4791' ;;
siw) mod=siw filter='tcp port 20049' ;;
*) die "RDMA_TYPE must be rxe or siw, not '$type'" ;;
esac
[ "$(id -u)" = 0 ] || die "needs root (modprobe, ip rule, knfsd, mount)"
for t in ip rdma tcpdump exportfs rpc.nfsd rpc.mountd mount.nfs modprobe; do
	command -v $t >/dev/null 2>&1 ||
		die "'$t' is missing: install iproute2, rdma-core, tcpdump, nfs-kernel-server, nfs-common, kmod"
done
modprobe $mod 2>/dev/null ||
	die "this kernel ($(uname -r)) has no $mod module: no soft RDMA device to test with (CONFIG_RDMA_RXE / CONFIG_RDMA_SIW)"
modprobe rpcrdma 2>/dev/null || { modprobe xprtrdma && modprobe svcrdma; } 2>/dev/null ||
	die "this kernel ($(uname -r)) has no NFS/RDMA modules (rpcrdma, or xprtrdma and svcrdma)"
modprobe rdma_ucm 2>/dev/null || true
ip addr show | grep -q " $net\." && die "$net.0/24 is already used on this host: set CI_NET to a free /24"
ip link show vsrv >/dev/null 2>&1 && die "a veth vsrv exists already (an earlier run that did not clean up?): ip link delete vsrv"

old_rpf=$(sysctl -n net.ipv4.conf.all.rp_filter)
dump= mounted= added_port= fresh=0
cleanup() {
	set +e
	[ -n "$dump" ] && kill -INT "$dump" 2>/dev/null && wait "$dump"
	[ -n "$mounted" ] && umount "$mnt" 2>/dev/null
	[ -n "$added_port" ] && echo "-rdma 20049" > /proc/fs/nfsd/portlist 2>/dev/null
	[ "$fresh" = 1 ] && rpc.nfsd 0 2>/dev/null # the knfsd this script started
	exportfs -u "$net.0/24:$export_dir" 2>/dev/null
	rdma link delete "${type}_cli" 2>/dev/null
	rdma link delete "${type}_srv" 2>/dev/null
	ip link delete vsrv 2>/dev/null
	ip rule del pref 50 2>/dev/null
	ip rule del pref 51 2>/dev/null
	ip rule del pref 100 2>/dev/null
	ip rule del pref 101 2>/dev/null
	ip rule show | grep -q '^0:.*lookup local' || ip rule add pref 0 lookup local
	ip rule del pref 1000 lookup local 2>/dev/null
	ip route flush table 100 2>/dev/null
	ip route flush table 101 2>/dev/null
	sysctl -qw net.ipv4.conf.all.rp_filter="$old_rpf"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The pair, both ends in this namespace, each address only on its own end.
ip link add vsrv type veth peer name vcli
for d in vsrv vcli; do
	sysctl -qw net.ipv4.conf.$d.accept_local=1 net.ipv4.conf.$d.rp_filter=0
	ip link set $d up
done
sysctl -qw net.ipv4.conf.all.rp_filter=0
ip addr add $srv/32 dev vsrv
ip addr add $cli/32 dev vcli
ip route add $srv dev vcli src $cli table 100
ip route add $cli dev vsrv src $srv table 101
ip rule add pref 50 iif vsrv lookup local
ip rule add pref 51 iif vcli lookup local
ip rule add pref 100 to $srv lookup 100
ip rule add pref 101 to $cli lookup 101
ip rule add pref 1000 lookup local
ip rule del pref 0 lookup local
ip neigh replace $srv lladdr "$(cat /sys/class/net/vsrv/address)" dev vcli nud permanent
ip neigh replace $cli lladdr "$(cat /sys/class/net/vcli/address)" dev vsrv nud permanent
rdma link add "${type}_srv" type $type netdev vsrv || die "rdma link add ${type}_srv type $type netdev vsrv failed"
rdma link add "${type}_cli" type $type netdev vcli || die "rdma link add ${type}_cli type $type netdev vcli failed"

# The server: knfsd exporting over RDMA on port 20049 (RFC 8267 section 8).
mkdir -p "$export_dir" && chmod 777 "$export_dir"
mkdir -p /var/lib/nfs/rpc_pipefs /run/rpcbind
mount -t nfsd nfsd /proc/fs/nfsd 2>/dev/null || true
if [ "$(cat /proc/fs/nfsd/threads 2>/dev/null || echo 0)" = 0 ]; then
	# a fresh knfsd: a short NFSv4 grace period, so the workload's opens do not wait 90 s
	echo 10 > /proc/fs/nfsd/nfsv4gracetime 2>/dev/null || true
	echo 10 > /proc/fs/nfsd/nfsv4leasetime 2>/dev/null || true
	fresh=1
else
	fresh=0
fi
exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=1 "$net.0/24:$export_dir"
pgrep -x rpc.mountd >/dev/null || rpc.mountd
pgrep -x rpcbind >/dev/null || rpcbind -w 2>/dev/null || true
[ $fresh = 1 ] && rpc.nfsd 8
if ! grep -q '^rdma 20049' /proc/fs/nfsd/portlist; then
	echo "rdma 20049" > /proc/fs/nfsd/portlist ||
		die "knfsd cannot listen for NFS/RDMA on port 20049 (svcrdma)"
	added_port=1
fi

# Capture on the client's end of the pair: every frame between the two.
tcpdump -i vcli -n -s 0 -U -w "$out" "$filter" &
dump=$!
sleep 2
[ $fresh = 1 ] && case $vers in 4*) sleep 10 ;; esac # the grace period
mkdir -p "$mnt"
ok=0
for i in 1 2 3; do
	if timeout 120 mount -t nfs -o rdma,port=20049,vers="$vers" "$srv:$export_dir" "$mnt"; then ok=1; break; fi
	sleep 2
done
[ $ok = 1 ] ||
	die "mount over RDMA ($type) between $cli and $srv failed on $(uname -r): this kernel cannot carry $type between the two ends of the veth pair"
mounted=1
status=0
"$workload" "$mnt" || status=$? # your tests: any NFS I/O
umount "$mnt" && mounted=
sleep 1
kill -INT "$dump"
wait "$dump" || true
dump=
[ -s "$out" ] && [ "$(tcpdump -n -r "$out" 2>/dev/null | head -n 1 | wc -l)" = 1 ] ||
	die "captured no $type packets on vcli: the NFS traffic did not cross the veth pair"
exit "$status"
