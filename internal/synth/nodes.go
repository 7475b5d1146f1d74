package synth

import (
	"net"
	"net/netip"
)

// The two hosts of the synthetic captures, numbered as the real captures of
// testdata/pcaps number theirs (server 192.0.2.1, client 192.0.2.2; RFC 5737
// and RFC 3849 documentation addresses).

// Client is the active side: the node that sends the CM REQ.
func Client() Node {
	return Node{MAC: net.HardwareAddr{0x52, 0x54, 0, 0, 2, 2}, IP: netip.MustParseAddr("192.0.2.2"),
		LID: 2, GUID: 0x505400fffe000202}
}

// Server is the passive side.
func Server() Node {
	return Node{MAC: net.HardwareAddr{0x52, 0x54, 0, 0, 2, 1}, IP: netip.MustParseAddr("192.0.2.1"),
		LID: 1, GUID: 0x505400fffe000201}
}

// WithIP returns n with another address (an IPv6 one for RoCEv2 over IPv6,
// a GID for RoCEv1).
func (n Node) WithIP(ip string) Node {
	n.IP = netip.MustParseAddr(ip)
	return n
}

// ClientV6 and ServerV6 are the hosts with IPv6 addresses.
func ClientV6() Node { return Client().WithIP("2001:db8::2") }

// ServerV6: see ClientV6.
func ServerV6() Node { return Server().WithIP("2001:db8::1") }

// ClientGID and ServerGID are the hosts with the link-local GIDs a RoCEv1
// port derives from its MAC (modified EUI-64, RFC 4291 appendix A), as
// RoCEv1 GID index 0 is.
func ClientGID() Node { return Client().WithIP("fe80::5054:ff:fe00:202") }

// ServerGID: see ClientGID.
func ServerGID() Node { return Server().WithIP("fe80::5054:ff:fe00:201") }
