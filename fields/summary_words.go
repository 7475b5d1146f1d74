package fields

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// Summary lines of the packets around RDMA — TCP, ARP, ICMP — in tshark
// 4.0's words (compared with `tshark -r` by
// cmd/rdmashark/golden_words_test.go).

// tcpFlagNames are the TCP flags in the order tshark lists them.
var tcpFlagNames = [...]string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR", "NS"}

// tcpInfo: "45552 → 7174 [SYN, ACK] Seq=0 Ack=1 Win=65160 Len=0 MSS=1460
// SACK_PERM TSval=1 TSecr=2 WS=128", sequence numbers relative to the
// stream's base as tshark shows them by default.
func tcpInfo(p *dissect.Packet, b *infoBuf) {
	t := &p.TCP
	b.uint(uint64(t.SrcPort))
	b.WriteString(" → ")
	b.uint(uint64(t.DstPort))
	b.WriteString(" [")
	n := 0
	for i, set := range [...]bool{t.FIN, t.SYN, t.RST, t.PSH, t.ACK, t.URG, t.ECE, t.CWR, t.NS} {
		if set {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tcpFlagNames[i])
			n++
		}
	}
	if n == 0 {
		b.WriteString("<None>")
	}
	b.WriteString("] Seq=")
	b.uint(uint64(t.Seq - p.TCPSeqBase))
	if t.ACK {
		b.WriteString(" Ack=")
		ack := t.Ack
		if p.TCPAckBaseSet {
			ack -= p.TCPAckBase
		}
		b.uint(uint64(ack))
	}
	b.WriteString(" Win=")
	b.uint(uint64(t.Window) << p.TCPWinShift)
	if t.URG {
		b.WriteString(" Urg=")
		b.uint(uint64(t.Urgent))
	}
	b.WriteString(" Len=")
	b.uint(uint64(len(t.Payload)))
	for _, o := range t.Options {
		d := o.OptionData
		switch o.OptionType {
		case layers.TCPOptionKindMSS:
			if len(d) == 2 {
				b.WriteString(" MSS=")
				b.uint(uint64(binary.BigEndian.Uint16(d)))
			}
		case layers.TCPOptionKindSACKPermitted:
			b.WriteString(" SACK_PERM")
		case layers.TCPOptionKindTimestamps:
			if len(d) == 8 {
				b.WriteString(" TSval=")
				b.uint(uint64(binary.BigEndian.Uint32(d)))
				b.WriteString(" TSecr=")
				b.uint(uint64(binary.BigEndian.Uint32(d[4:])))
			}
		case layers.TCPOptionKindWindowScale:
			if len(d) == 1 {
				b.WriteString(" WS=")
				b.uint(1 << min(d[0], 14))
			}
		case layers.TCPOptionKindSACK:
			// SACK blocks (RFC 2018 section 3) acknowledge the other
			// direction's sequence numbers.
			for i := 0; i+8 <= len(d); i += 8 {
				l, r := binary.BigEndian.Uint32(d[i:]), binary.BigEndian.Uint32(d[i+4:])
				if p.TCPAckBaseSet {
					l, r = l-p.TCPAckBase, r-p.TCPAckBase
				}
				b.WriteString(" SLE=")
				b.uint(uint64(l))
				b.WriteString(" SRE=")
				b.uint(uint64(r))
			}
		}
	}
}

// arpInfo: "Who has 192.0.2.1? Tell 192.0.2.2", "192.0.2.1 is at
// 52:54:00:00:02:01" (RFC 826; the probe and gratuitous forms of RFC 5227).
func arpInfo(p *dissect.Packet, b *infoBuf) {
	m, ok := parseARP(arpBytes(p))
	if !ok || !m.ipv4() {
		b.WriteString("ARP")
		return
	}
	spa, _ := netip.AddrFromSlice(m.spa)
	tpa, _ := netip.AddrFromSlice(m.tpa)
	hw := func(a []byte) {
		if m.mac() {
			b.WriteString(formatMAC(a))
			return
		}
		b.b = appendHexBytes(b.b, a)
	}
	switch m.op {
	case 1:
		switch {
		case spa == tpa:
			b.WriteString("Gratuitous ARP for ")
			b.b = spa.AppendTo(b.b)
			b.WriteString(" (Request)")
		case spa.IsUnspecified():
			b.WriteString("Who has ")
			b.b = tpa.AppendTo(b.b)
			b.WriteString("? (ARP Probe)")
		default:
			b.WriteString("Who has ")
			b.b = tpa.AppendTo(b.b)
			b.WriteString("? Tell ")
			b.b = spa.AppendTo(b.b)
		}
	case 2:
		if spa == tpa {
			b.WriteString("Gratuitous ARP for ")
			b.b = spa.AppendTo(b.b)
			b.WriteString(" (Reply)")
			return
		}
		b.b = spa.AppendTo(b.b)
		b.WriteString(" is at ")
		hw(m.sha)
	default:
		b.WriteString("ARP opcode ")
		b.uint(uint64(m.op))
	}
}

func appendHexBytes(dst, b []byte) []byte {
	for _, c := range b {
		dst = appendHex(dst, uint64(c), 2)
	}
	return dst
}

// icmpTypes names ICMP types (RFC 792) as tshark's Info column does.
var icmpTypes = map[uint8]string{
	0: "Echo (ping) reply", 3: "Destination unreachable", 4: "Source quench (flow control)", 5: "Redirect",
	8: "Echo (ping) request", 9: "Router advertisement", 10: "Router solicitation", 11: "Time-to-live exceeded",
	12: "Parameter problem", 13: "Timestamp request", 14: "Timestamp reply",
}

// icmpUnreachable names the codes of Destination unreachable (RFC 792,
// RFC 1122, RFC 1812).
var icmpUnreachable = [...]string{"Network unreachable", "Host unreachable", "Protocol unreachable",
	"Port unreachable", "Fragmentation needed", "Source route failed", "Destination network unknown",
	"Destination host unknown", "Source host isolated", "Network administratively prohibited",
	"Host administratively prohibited", "Network unreachable for TOS", "Host unreachable for TOS",
	"Communication administratively filtered", "Host precedence violation", "Precedence cutoff in effect"}

// icmpv6Types names ICMPv6 types (RFC 4443, RFC 4861, RFC 3810).
var icmpv6Types = map[uint8]string{
	1: "Destination Unreachable", 2: "Packet Too Big", 3: "Time Exceeded", 4: "Parameter Problem",
	128: "Echo (ping) request", 129: "Echo (ping) reply", 133: "Router Solicitation", 134: "Router Advertisement",
	135: "Neighbor Solicitation", 136: "Neighbor Advertisement", 137: "Redirect", 143: "Multicast Listener Report Message v2",
}

// icmpInfo: "Echo (ping) request  id=0x00c7, seq=1/256, ttl=64" as tshark
// prints it in one pass: a reply ends with "(request in N)"; a request
// lacks the "(reply in N)" of tshark's second pass.
func icmpInfo(p *dissect.Packet, b *infoBuf, v6 bool) {
	m := icmpBytes(p, v6)
	if len(m) < 4 {
		return
	}
	typ, code := m[0], m[1]
	names := icmpTypes
	if v6 {
		names = icmpv6Types
	}
	name, ok := names[typ]
	if !ok {
		b.WriteString("Type=")
		b.uint(uint64(typ))
		b.WriteString(" Code=")
		b.uint(uint64(code))
		return
	}
	b.WriteString(name)
	if !v6 && typ == 3 && int(code) < len(icmpUnreachable) {
		b.WriteString(" (")
		b.WriteString(icmpUnreachable[code])
		b.WriteByte(')')
	}
	if !v6 && typ == 11 && code <= 1 {
		b.WriteString([...]string{" (Time to live exceeded in transit)", " (Fragment reassembly time exceeded)"}[code])
	}
	if !isEcho(m, v6) {
		return
	}
	id, seq := binary.BigEndian.Uint16(m[4:]), binary.BigEndian.Uint16(m[6:])
	if v6 {
		b.WriteString(" id=")
		b.hex(uint64(id), 4)
		b.WriteString(", seq=")
		b.uint(uint64(seq))
		b.WriteString(", hop limit=")
		b.uint(uint64(p.IPv6.HopLimit))
		return
	}
	// "request" and "reply" padded to one width, as tshark pads them.
	if typ == 0 {
		b.WriteString("  ")
	}
	b.WriteString("  id=")
	b.hex(uint64(id), 4)
	b.WriteString(", seq=")
	b.uint(uint64(seq))
	b.WriteByte('/')
	b.uint(uint64(seq>>8 | seq<<8))
	b.WriteString(", ttl=")
	b.uint(uint64(p.IPv4.TTL))
	if typ == 0 && p.EchoRequestIn > 0 {
		b.WriteString(" (request in ")
		b.uint(uint64(p.EchoRequestIn))
		b.WriteByte(')')
	}
}
