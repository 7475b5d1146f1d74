package fields

import (
	"net/netip"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// More of Wireshark's Ethernet, IPv4, IPv6, UDP and TCP fields, the ones
// display filters on addresses, ports, ECN and TCP flags need; named, typed
// and printed as tshark 4.0 prints them (tshark -G fields; compared on the
// real captures by cmd/rdmashark's golden tests).

func netTable() *Table {
	F := new(Table)
	eth := hasLayer(layers.LayerTypeEthernet)
	ip4 := hasLayer(layers.LayerTypeIPv4)
	ip6 := hasLayer(layers.LayerTypeIPv6)
	udp := hasLayer(layers.LayerTypeUDP)
	tcp := hasLayer(layers.LayerTypeTCP)
	both := func(has func(*dissect.Packet) bool, a, b func(p *dissect.Packet) Value) func(*dissect.Packet, func(Value)) {
		return func(p *dissect.Packet, emit func(Value)) {
			if has(p) {
				emit(a(p))
				emit(b(p))
			}
		}
	}
	ip6addr := func(ip []byte) Value { a, _ := netip.AddrFromSlice(ip); return Value{Addr: a} }
	// tcpFlag is one of the TCP flags as the 12-bit tcp.flags holds them
	// (RFC 9293 section 3.1, RFC 3168 section 6.1 for ECE and CWR, RFC 3540 for NS).
	tcpFlags := func(t *layers.TCP) uint64 {
		var f uint64
		for i, set := range []bool{t.FIN, t.SYN, t.RST, t.PSH, t.ACK, t.URG, t.ECE, t.CWR, t.NS} {
			if set {
				f |= 1 << i
			}
		}
		return f
	}
	tcpFlag := func(name, label string, bit uint) *Field {
		return &Field{Name: "tcp.flags." + name, Label: label, Type: FTBoolean, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(tcpFlags(&p.TCP) >> bit & 1) })}
	}
	F.Register(
		// eth.addr is both addresses, destination first, as Wireshark adds them.
		&Field{Name: "eth.addr", Label: "Address", Type: FTEther, Parent: "eth", Hidden: true,
			Get: both(eth, func(p *dissect.Packet) Value { return Value{B: p.Eth.DstMAC} },
				func(p *dissect.Packet) Value { return Value{B: p.Eth.SrcMAC} })},

		// Wireshark's IPv6 dissector adds ip.version too (6), so that
		// "ip.version == 6" finds IPv6; it is not a sign of IPv4
		// (filter.go leaves it out of the protocol "ip").
		&Field{Name: "ip.version", Label: "Version", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if ip4(p) {
					emit(u(uint64(p.IPv4.Version)))
				}
				if ip6(p) {
					emit(u(uint64(p.IPv6.Version)))
				}
			}},
		&Field{Name: "ip.hdr_len", Label: "Header Length", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.IHL) * 4) })},
		// RFC 2474 section 3 (DSCP) and RFC 3168 section 5 (ECN) split the TOS byte.
		&Field{Name: "ip.dsfield", Label: "Differentiated Services Field", Type: FTUint8, Base: BaseHex, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.TOS)) })},
		&Field{Name: "ip.dsfield.dscp", Label: "Differentiated Services Codepoint", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.TOS >> 2)) })},
		&Field{Name: "ip.dsfield.ecn", Label: "Explicit Congestion Notification", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.TOS & 3)) })},
		&Field{Name: "ip.id", Label: "Identification", Type: FTUint16, Base: BaseHex, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.Id)) })},
		&Field{Name: "ip.flags", Label: "Flags", Type: FTUint8, Base: BaseHex, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.Flags)) })},
		&Field{Name: "ip.flags.rb", Label: "Reserved bit", Type: FTBoolean, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return boolValue(p.IPv4.Flags&layers.IPv4EvilBit != 0) })},
		&Field{Name: "ip.flags.df", Label: "Don't fragment", Type: FTBoolean, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return boolValue(p.IPv4.Flags&layers.IPv4DontFragment != 0) })},
		&Field{Name: "ip.flags.mf", Label: "More fragments", Type: FTBoolean, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return boolValue(p.IPv4.Flags&layers.IPv4MoreFragments != 0) })},
		&Field{Name: "ip.frag_offset", Label: "Fragment Offset", Type: FTUint16, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.FragOffset) * 8) })},
		&Field{Name: "ip.checksum", Label: "Header Checksum", Type: FTUint16, Base: BaseHex, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.Checksum)) })},
		// ip.addr is both addresses, source first.
		&Field{Name: "ip.addr", Label: "Source or Destination Address", Type: FTIPv4, Parent: "ip", Hidden: true,
			Get: both(ip4, func(p *dissect.Packet) Value { return addrOf(p.IPv4.SrcIP) },
				func(p *dissect.Packet) Value { return addrOf(p.IPv4.DstIP) })},

		&Field{Name: "ipv6.version", Label: "Version", Type: FTUint8, Base: BaseDec, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.Version)) })},
		&Field{Name: "ipv6.tclass", Label: "Traffic Class", Type: FTUint32, Base: BaseHex, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.TrafficClass)) })},
		&Field{Name: "ipv6.tclass.ecn", Label: "Explicit Congestion Notification", Type: FTUint32, Base: BaseDec, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.TrafficClass & 3)) })},
		&Field{Name: "ipv6.flow", Label: "Flow Label", Type: FTUint24, Base: BaseHex, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.FlowLabel)) })},
		&Field{Name: "ipv6.plen", Label: "Payload Length", Type: FTUint16, Base: BaseDec, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.Length)) })},
		&Field{Name: "ipv6.hlim", Label: "Hop Limit", Type: FTUint8, Base: BaseDec, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.HopLimit)) })},
		&Field{Name: "ipv6.addr", Label: "Source or Destination Address", Type: FTIPv6, Parent: "ipv6", Hidden: true,
			Get: both(ip6, func(p *dissect.Packet) Value { return ip6addr(p.IPv6.SrcIP) },
				func(p *dissect.Packet) Value { return ip6addr(p.IPv6.DstIP) })},

		&Field{Name: "udp.port", Label: "Source or Destination Port", Type: FTUint16, Base: BaseDec, Parent: "udp", Hidden: true,
			Get: both(udp, func(p *dissect.Packet) Value { return u(uint64(p.UDP.SrcPort)) },
				func(p *dissect.Packet) Value { return u(uint64(p.UDP.DstPort)) })},

		&Field{Name: "tcp.port", Label: "Source or Destination Port", Type: FTUint16, Base: BaseDec, Parent: "tcp", Hidden: true,
			Get: both(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.SrcPort)) },
				func(p *dissect.Packet) Value { return u(uint64(p.TCP.DstPort)) })},
		&Field{Name: "tcp.ack_raw", Label: "Acknowledgment number (raw)", Type: FTUint32, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.Ack)) })},
		&Field{Name: "tcp.hdr_len", Label: "Header Length", Type: FTUint8, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.DataOffset) * 4) })},
		&Field{Name: "tcp.flags", Label: "Flags", Type: FTUint16, Base: BaseHex, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(tcpFlags(&p.TCP)) })},
		tcpFlag("fin", "Fin", 0), tcpFlag("syn", "Syn", 1), tcpFlag("reset", "Reset", 2),
		tcpFlag("push", "Push", 3), tcpFlag("ack", "Acknowledgment", 4), tcpFlag("urg", "Urgent", 5),
		tcpFlag("ece", "ECN-Echo", 6), tcpFlag("cwr", "Congestion Window Reduced", 7),
		&Field{Name: "tcp.window_size_value", Label: "Window", Type: FTUint16, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.Window)) })},
		&Field{Name: "tcp.checksum", Label: "Checksum", Type: FTUint16, Base: BaseHex, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.Checksum)) })},
		&Field{Name: "tcp.urgent_pointer", Label: "Urgent Pointer", Type: FTUint16, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.Urgent)) })},
	)
	return F
}

func streamTable() *Table {
	F := new(Table)
	tcp := hasLayer(layers.LayerTypeTCP)
	F.Register(
		&Field{Name: "frame.time_delta", Label: "Time delta from previous captured frame", Type: FTRelTime, Parent: "frame",
			Get: func(p *dissect.Packet, emit func(Value)) { emit(u(uint64(max(p.TimeDelta, 0)))) }},
		&Field{Name: "tcp.stream", Label: "Stream index", Type: FTUint32, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(max(p.TCPStream, 0))) })},
	)
	return F
}

func commentTable() *Table {
	F := new(Table)
	F.Register(
		// One occurrence per pcapng opt_comment of the packet's record.
		&Field{Name: "frame.comment", Label: "Comment", Type: FTString, Parent: "frame",
			Get: func(p *dissect.Packet, emit func(Value)) {
				for _, c := range p.Comments {
					emit(Value{S: string(c)})
				}
			}},
	)
	return F
}
