package fields

import (
	"net"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// The frame, link, IP and transport fields, named and typed as Wireshark's.

func addrOf(ip net.IP) Value {
	a, _ := netip.AddrFromSlice(ip)
	return Value{Addr: a.Unmap()}
}

func u(v uint64) Value { return Value{U: v} }

func boolValue(b bool) Value {
	if b {
		return Value{U: 1}
	}
	return Value{}
}

// when returns a Get that emits get(p) only when layer t was decoded.
func when(has func(p *dissect.Packet) bool, get func(p *dissect.Packet) Value) func(*dissect.Packet, func(Value)) {
	return func(p *dissect.Packet, emit func(Value)) {
		if has(p) {
			emit(get(p))
		}
	}
}

func hasLayer(t gopacket.LayerType) func(p *dissect.Packet) bool {
	return func(p *dissect.Packet) bool { return p.Has(t) }
}

func linkTable() *Table {
	F := new(Table)
	F.Group("frame", "Frame")
	F.Group("eth", "Ethernet II")
	F.Group("vlan", "802.1Q Virtual LAN")
	F.Group("sll", "Linux cooked capture")
	F.Group("ip", "Internet Protocol Version 4")
	F.Group("ipv6", "Internet Protocol Version 6")
	F.Group("udp", "User Datagram Protocol")
	F.Group("tcp", "Transmission Control Protocol")
	always := func(*dissect.Packet) bool { return true }
	eth := hasLayer(layers.LayerTypeEthernet)
	ip4 := hasLayer(layers.LayerTypeIPv4)
	ip6 := hasLayer(layers.LayerTypeIPv6)
	udp := hasLayer(layers.LayerTypeUDP)
	tcp := hasLayer(layers.LayerTypeTCP)
	F.Register(
		&Field{Name: "frame.number", Label: "Frame Number", Type: FTUint32, Base: BaseDec, Parent: "frame",
			Get: when(always, func(p *dissect.Packet) Value { return u(uint64(p.Number)) })},
		&Field{Name: "frame.time_relative", Label: "Time since first frame", Type: FTRelTime, Parent: "frame",
			Get: when(always, func(p *dissect.Packet) Value { return u(uint64(p.RelTime)) })},
		&Field{Name: "frame.time_epoch", Label: "Epoch Time", Type: FTRelTime, Parent: "frame",
			Get: when(always, func(p *dissect.Packet) Value { return u(uint64(p.Timestamp.UnixNano())) })},
		&Field{Name: "frame.len", Label: "Frame length on the wire", Type: FTUint32, Base: BaseDec, Parent: "frame",
			Get: when(always, func(p *dissect.Packet) Value { return u(uint64(p.Length)) })},
		&Field{Name: "frame.cap_len", Label: "Frame length stored into the capture file", Type: FTUint32, Base: BaseDec, Parent: "frame",
			Get: when(always, func(p *dissect.Packet) Value { return u(uint64(p.CaptureLength)) })},

		&Field{Name: "eth.dst", Label: "Destination", Type: FTEther, Parent: "eth",
			Get: when(eth, func(p *dissect.Packet) Value { return Value{B: p.Eth.DstMAC} })},
		&Field{Name: "eth.src", Label: "Source", Type: FTEther, Parent: "eth",
			Get: when(eth, func(p *dissect.Packet) Value { return Value{B: p.Eth.SrcMAC} })},
		&Field{Name: "eth.type", Label: "Type", Type: FTUint16, Base: BaseHex, Parent: "eth",
			Get: when(eth, func(p *dissect.Packet) Value { return u(uint64(p.Eth.EthernetType)) })},
		&Field{Name: "vlan.id", Label: "ID", Type: FTUint16, Base: BaseDec, Parent: "vlan",
			Get: func(p *dissect.Packet, emit func(Value)) {
				for i := 0; i < p.NVLAN; i++ {
					if isDot1Q(p, i) { // an 802.1ad S-tag is not "vlan" in Wireshark
						emit(u(uint64(p.VLAN[i].VLANIdentifier)))
					}
				}
			}},
		&Field{Name: "vlan.etype", Label: "Type", Type: FTUint16, Base: BaseHex, Parent: "vlan",
			Get: func(p *dissect.Packet, emit func(Value)) {
				for i := 0; i < p.NVLAN; i++ {
					if isDot1Q(p, i) { // an 802.1ad S-tag is not "vlan" in Wireshark
						emit(u(uint64(p.VLAN[i].Type)))
					}
				}
			}},
		&Field{Name: "sll.etype", Label: "Protocol", Type: FTUint16, Base: BaseHex, Parent: "sll",
			Get: func(p *dissect.Packet, emit func(Value)) {
				switch {
				case p.Has(layers.LayerTypeLinuxSLL):
					emit(u(uint64(p.SLL.EthernetType)))
				case p.Has(layers.LayerTypeLinuxSLL2):
					emit(u(uint64(p.SLL2.ProtocolType)))
				}
			}},

		&Field{Name: "ip.len", Label: "Total Length", Type: FTUint16, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.Length)) })},
		&Field{Name: "ip.ttl", Label: "Time to Live", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.TTL)) })},
		&Field{Name: "ip.proto", Label: "Protocol", Type: FTUint8, Base: BaseDec, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return u(uint64(p.IPv4.Protocol)) })},
		&Field{Name: "ip.src", Label: "Source Address", Type: FTIPv4, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return addrOf(p.IPv4.SrcIP) })},
		&Field{Name: "ip.dst", Label: "Destination Address", Type: FTIPv4, Parent: "ip",
			Get: when(ip4, func(p *dissect.Packet) Value { return addrOf(p.IPv4.DstIP) })},
		&Field{Name: "ipv6.nxt", Label: "Next Header", Type: FTUint8, Base: BaseDec, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { return u(uint64(p.IPv6.NextHeader)) })},
		&Field{Name: "ipv6.src", Label: "Source Address", Type: FTIPv6, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { a, _ := netip.AddrFromSlice(p.IPv6.SrcIP); return Value{Addr: a} })},
		&Field{Name: "ipv6.dst", Label: "Destination Address", Type: FTIPv6, Parent: "ipv6",
			Get: when(ip6, func(p *dissect.Packet) Value { a, _ := netip.AddrFromSlice(p.IPv6.DstIP); return Value{Addr: a} })},

		&Field{Name: "udp.srcport", Label: "Source Port", Type: FTUint16, Base: BaseDec, Parent: "udp",
			Get: when(udp, func(p *dissect.Packet) Value { return u(uint64(p.UDP.SrcPort)) })},
		&Field{Name: "udp.dstport", Label: "Destination Port", Type: FTUint16, Base: BaseDec, Parent: "udp",
			Get: when(udp, func(p *dissect.Packet) Value { return u(uint64(p.UDP.DstPort)) })},
		&Field{Name: "udp.length", Label: "Length", Type: FTUint16, Base: BaseDec, Parent: "udp",
			Get: when(udp, func(p *dissect.Packet) Value { return u(uint64(p.UDP.Length)) })},
		&Field{Name: "udp.checksum", Label: "Checksum", Type: FTUint16, Base: BaseHex, Parent: "udp",
			Get: when(udp, func(p *dissect.Packet) Value { return u(uint64(p.UDP.Checksum)) })},
		&Field{Name: "tcp.srcport", Label: "Source Port", Type: FTUint16, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.SrcPort)) })},
		&Field{Name: "tcp.dstport", Label: "Destination Port", Type: FTUint16, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.DstPort)) })},
		&Field{Name: "tcp.seq_raw", Label: "Sequence Number (raw)", Type: FTUint32, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(p.TCP.Seq)) })},
		&Field{Name: "tcp.len", Label: "TCP Segment Len", Type: FTUint32, Base: BaseDec, Parent: "tcp",
			Get: when(tcp, func(p *dissect.Packet) Value { return u(uint64(len(p.TCP.Payload))) })},
	)
	return F
}
