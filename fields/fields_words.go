package fields

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/ipoib"
	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// The words tshark users type every day that are not RDMA (issue 31):
// ARP, ICMP and ICMPv6, "data", the expert info (_ws.expert,
// _ws.malformed), tshark's names of the TCP analysis rdmashark computes
// under rdmashark.analysis (tcp.analysis.*), and rdmashark.connection, the
// connection number analyze prints. Named, typed and printed as tshark 4.0
// (tshark -G fields); the frames each selects are compared with tshark -2 -Y
// by cmd/rdmashark/golden_words_test.go.

// arpBytes returns the ARP message of p (RFC 826): the payload of the
// header in front of it.
func arpBytes(p *dissect.Packet) []byte {
	if !p.Has(layers.LayerTypeARP) {
		return nil
	}
	var prev gopacket.LayerType
	for _, t := range p.Decoded {
		if t == layers.LayerTypeARP {
			break
		}
		prev = t
	}
	switch prev {
	case layers.LayerTypeEthernet:
		return p.Eth.Payload
	case layers.LayerTypeDot1Q:
		if p.NVLAN > 0 {
			return p.VLAN[p.NVLAN-1].Payload
		}
	case layers.LayerTypeLinuxSLL:
		return p.SLL.Payload
	case layers.LayerTypeLinuxSLL2:
		return p.SLL2.Payload
	case ipoib.LayerTypeIPoIB:
		return p.IPoIB.Payload
	}
	// IPoIB in a UD Send: after the 4-octet encapsulation header (RFC 4391
	// section 6).
	if p.Has(roce.LayerTypeBTH) && len(p.BTH.Payload) >= 4 {
		return p.BTH.Payload[4:]
	}
	return nil
}

// arpMsg is an ARP message's fields; ok is false when the message is
// shorter than its own sizes say.
type arpMsg struct {
	htype, ptype uint16
	hlen, plen   uint8
	op           uint16
	sha, spa     []byte
	tha, tpa     []byte
}

func parseARP(b []byte) (m arpMsg, ok bool) {
	if len(b) < 8 {
		return m, false
	}
	m.htype, m.ptype = binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	m.hlen, m.plen = b[4], b[5]
	m.op = binary.BigEndian.Uint16(b[6:])
	h, pl := int(m.hlen), int(m.plen)
	if len(b) < 8+2*h+2*pl {
		return m, false
	}
	o := 8
	m.sha, o = b[o:o+h], o+h
	m.spa, o = b[o:o+pl], o+pl
	m.tha, o = b[o:o+h], o+h
	m.tpa = b[o : o+pl]
	return m, true
}

// arpIPv4 tells whether the protocol addresses are IPv4 ones.
func (m *arpMsg) ipv4() bool { return m.ptype == 0x0800 && m.plen == 4 }

// mac tells whether the hardware addresses are MAC addresses (tshark's
// arp.*.hw_mac: six octets, whatever the hardware type).
func (m *arpMsg) mac() bool { return m.hlen == 6 }

func ipv4Value(b []byte) Value { a, _ := netip.AddrFromSlice(b); return Value{Addr: a} }

// icmpBytes returns the ICMP (v6: false) or ICMPv6 (v6: true) message of p.
func icmpBytes(p *dissect.Packet, v6 bool) []byte {
	if !v6 && p.Has(layers.LayerTypeIPv4) && p.IPv4.Protocol == layers.IPProtocolICMPv4 &&
		p.IPv4.FragOffset == 0 {
		return p.IPv4.Payload
	}
	if v6 && p.Has(layers.LayerTypeIPv6) && p.IPv6.NextHeader == layers.IPProtocolICMPv6 {
		return p.IPv6.Payload
	}
	return nil
}

// isEcho tells whether an ICMP message is an echo request or reply (RFC 792;
// ICMPv6: RFC 4443 section 4), whose identifier and sequence number tshark
// shows.
func isEcho(b []byte, v6 bool) bool {
	if len(b) < 8 {
		return false
	}
	if v6 {
		return b[0] == 128 || b[0] == 129
	}
	return b[0] == 0 || b[0] == 8
}

// Expert info severities and groups, tshark's values (epan/proto.h
// PI_SEVERITY_MASK and PI_GROUP_MASK: -T fields prints the numbers).
const (
	sevChat  = 0x00200000
	sevNote  = 0x00400000
	sevWarn  = 0x00600000
	sevError = 0x00800000

	grpChecksum  = 0x01000000
	grpSequence  = 0x02000000
	grpMalformed = 0x07000000
	grpProtocol  = 0x09000000
)

// expertItem is one expert info item of a packet.
type expertItem struct {
	severity, group uint64
	msg             string
	// port, when set, is printed after msg (tshark's TCP SYN items name the
	// server port).
	port uint16
	text func() string
}

// eachExpert calls f for each expert info item of p, in tree order: the
// TCP connection's chat (SYN, FIN, RST) and analysis as tshark's TCP
// dissector adds them, then what rdmashark finds in the packet itself: the
// RC transport analysis, a bad CRC, a malformed packet.
func eachExpert(p *dissect.Packet, f func(it expertItem)) {
	tcp := p.Has(layers.LayerTypeTCP)
	if tcp {
		t := &p.TCP
		switch {
		case t.SYN && !t.ACK:
			f(expertItem{severity: sevChat, group: grpSequence, msg: "Connection establish request (SYN): server port ", port: uint16(t.DstPort)})
		case t.SYN:
			f(expertItem{severity: sevChat, group: grpSequence, msg: "Connection establish acknowledge (SYN+ACK): server port ", port: uint16(t.SrcPort)})
		}
		if t.FIN {
			f(expertItem{severity: sevChat, group: grpSequence, msg: "Connection finish (FIN)"})
		}
		if t.RST {
			f(expertItem{severity: sevWarn, group: grpSequence, msg: "Connection reset (RST)"})
		}
	}
	if a := &p.Analysis; a.Valid {
		if tcp {
			// tshark's words (packet-tcp.c's expert fields).
			if a.LostSegment > 0 {
				f(expertItem{severity: sevWarn, group: grpSequence, msg: "Previous segment(s) not captured (common at capture start)"})
			}
			if a.Retransmission {
				f(expertItem{severity: sevNote, group: grpSequence, msg: "This frame is a (suspected) retransmission"})
			}
			if a.OutOfOrder {
				f(expertItem{severity: sevWarn, group: grpSequence, msg: "This frame is a (suspected) out-of-order segment"})
			}
			if a.Duplicate {
				f(expertItem{severity: sevNote, group: grpSequence, msg: "Duplicate ACK"})
			}
		} else {
			if a.LostSegment > 0 {
				f(expertItem{severity: sevWarn, group: grpSequence, msg: "PSNs missing before this packet (not captured or lost)"})
			}
			switch {
			case a.Reissue:
				f(expertItem{severity: sevNote, group: grpSequence, msg: "RDMA Read Request re-issued for the part still missing"})
			case a.Retransmission && a.Duplicate:
				f(expertItem{severity: sevNote, group: grpSequence, msg: "Duplicate: a resend already acknowledged"})
			case a.Retransmission:
				f(expertItem{severity: sevNote, group: grpSequence, msg: "Retransmission: a PSN already seen in this direction"})
			case a.Duplicate:
				f(expertItem{severity: sevNote, group: grpSequence, msg: "Duplicate: a repeated Read Response or ACK"})
			case a.OutOfOrder:
				f(expertItem{severity: sevWarn, group: grpSequence, msg: "Out of order: fills a PSN gap"})
			}
			if a.NAK {
				sev := uint64(sevWarn)
				if a.RNR {
					sev = sevNote
				}
				f(expertItem{severity: sev, group: grpProtocol, msg: "NAK: ", text: func() string {
					if a.RNR {
						return "RNR NAK, timer " + a.RNRTimer.String()
					}
					return a.NAKCode.String()
				}})
			}
		}
		if a.PayloadDiffers {
			f(expertItem{severity: sevWarn, group: grpSequence, msg: "Retransmission differs from its original"})
		}
	}
	if p.ICRC.Status == dissect.CRCBad {
		f(expertItem{severity: sevError, group: grpChecksum, msg: "Bad ICRC"})
	}
	if p.VCRC.Status == dissect.CRCBad {
		f(expertItem{severity: sevError, group: grpChecksum, msg: "Bad VCRC"})
	}
	if p.Err != nil {
		f(expertItem{severity: sevError, group: grpMalformed, msg: "Malformed Packet: ", text: p.Err.Error})
	}
}

func (it expertItem) message() string {
	s := it.msg
	if it.port != 0 {
		s += itoa(uint64(it.port))
	}
	if it.text != nil {
		s += it.text()
	}
	return s
}

func itoa(v uint64) string {
	var b infoBuf
	b.uint(v)
	return b.String()
}

// hasData tells whether tshark's "data" protocol is in the packet: its
// frame.protocols list (fields_protocols.go) holds "data".
func hasData(p *dissect.Packet) bool {
	var l protoList
	buildProtocols(p, &l)
	for _, x := range l.p[:l.n] {
		if x == protoData {
			return true
		}
	}
	for _, x := range l.over {
		if x == protoData {
			return true
		}
	}
	return false
}

func wordsTable() *Table {
	F := new(Table)
	F.Group("arp", "Address Resolution Protocol")
	F.Group("icmp", "Internet Control Message Protocol")
	F.Group("icmpv6", "Internet Control Message Protocol v6")
	F.Group("_ws.expert", "Expert Info")
	arpGet := func(get func(m *arpMsg, emit func(Value))) func(*dissect.Packet, func(Value)) {
		return func(p *dissect.Packet, emit func(Value)) {
			if m, ok := parseARP(arpBytes(p)); ok {
				get(&m, emit)
			}
		}
	}
	arpNum := func(name, label string, t FieldType, b Base, get func(m *arpMsg) uint64) *Field {
		return &Field{Name: name, Label: label, Type: t, Base: b, Parent: "arp",
			Get: arpGet(func(m *arpMsg, emit func(Value)) { emit(u(get(m))) })}
	}
	arpAddr := func(name, label string, t FieldType, get func(m *arpMsg) ([]byte, bool)) *Field {
		return &Field{Name: name, Label: label, Type: t, Parent: "arp",
			Get: arpGet(func(m *arpMsg, emit func(Value)) {
				if b, ok := get(m); ok {
					if t == FTIPv4 {
						emit(ipv4Value(b))
					} else {
						emit(Value{B: b})
					}
				}
			})}
	}
	icmpNum := func(v6 bool, name, label string, t FieldType, b Base, echo bool, get func(m []byte) uint64) *Field {
		parent := "icmp"
		if v6 {
			parent = "icmpv6"
		}
		return &Field{Name: parent + "." + name, Label: label, Type: t, Base: b, Parent: parent,
			Get: func(p *dissect.Packet, emit func(Value)) {
				m := icmpBytes(p, v6)
				if len(m) < 4 || echo && !isEcho(m, v6) {
					return
				}
				emit(u(get(m)))
			}}
	}
	be16 := func(off int) func(m []byte) uint64 {
		return func(m []byte) uint64 { return uint64(binary.BigEndian.Uint16(m[off:])) }
	}
	le16 := func(off int) func(m []byte) uint64 {
		return func(m []byte) uint64 { return uint64(binary.LittleEndian.Uint16(m[off:])) }
	}
	expert := func(name, label string, t FieldType, get func(it expertItem) Value) *Field {
		return &Field{Name: name, Label: label, Type: t, Parent: "_ws.expert",
			Get: func(p *dissect.Packet, emit func(Value)) {
				eachExpert(p, func(it expertItem) { emit(get(it)) })
			}}
	}
	F.Register(
		// RFC 826.
		arpNum("arp.hw.type", "Hardware type", FTUint16, BaseDec, func(m *arpMsg) uint64 { return uint64(m.htype) }),
		arpNum("arp.proto.type", "Protocol type", FTUint16, BaseHex, func(m *arpMsg) uint64 { return uint64(m.ptype) }),
		arpNum("arp.hw.size", "Hardware size", FTUint8, BaseDec, func(m *arpMsg) uint64 { return uint64(m.hlen) }),
		arpNum("arp.proto.size", "Protocol size", FTUint8, BaseDec, func(m *arpMsg) uint64 { return uint64(m.plen) }),
		arpNum("arp.opcode", "Opcode", FTUint16, BaseDec, func(m *arpMsg) uint64 { return uint64(m.op) }),
		arpAddr("arp.src.hw_mac", "Sender MAC address", FTEther, func(m *arpMsg) ([]byte, bool) { return m.sha, m.mac() }),
		arpAddr("arp.src.hw", "Sender hardware address", FTBytes, func(m *arpMsg) ([]byte, bool) { return m.sha, !m.mac() }),
		arpAddr("arp.src.proto_ipv4", "Sender IP address", FTIPv4, func(m *arpMsg) ([]byte, bool) { return m.spa, m.ipv4() }),
		arpAddr("arp.dst.hw_mac", "Target MAC address", FTEther, func(m *arpMsg) ([]byte, bool) { return m.tha, m.mac() }),
		arpAddr("arp.dst.hw", "Target hardware address", FTBytes, func(m *arpMsg) ([]byte, bool) { return m.tha, !m.mac() }),
		arpAddr("arp.dst.proto_ipv4", "Target IP address", FTIPv4, func(m *arpMsg) ([]byte, bool) { return m.tpa, m.ipv4() }),

		// RFC 792; ICMPv6: RFC 4443 section 2.1.
		icmpNum(false, "type", "Type", FTUint8, BaseDec, false, func(m []byte) uint64 { return uint64(m[0]) }),
		icmpNum(false, "code", "Code", FTUint8, BaseDec, false, func(m []byte) uint64 { return uint64(m[1]) }),
		icmpNum(false, "checksum", "Checksum", FTUint16, BaseHex, false, be16(2)),
		icmpNum(false, "ident", "Identifier (BE)", FTUint16, BaseDecHex, true, be16(4)),
		icmpNum(false, "ident_le", "Identifier (LE)", FTUint16, BaseDecHex, true, le16(4)),
		icmpNum(false, "seq", "Sequence Number (BE)", FTUint16, BaseDecHex, true, be16(6)),
		icmpNum(false, "seq_le", "Sequence Number (LE)", FTUint16, BaseDecHex, true, le16(6)),
		icmpNum(true, "type", "Type", FTUint8, BaseDec, false, func(m []byte) uint64 { return uint64(m[0]) }),
		icmpNum(true, "code", "Code", FTUint8, BaseDec, false, func(m []byte) uint64 { return uint64(m[1]) }),
		icmpNum(true, "checksum", "Checksum", FTUint16, BaseHex, false, be16(2)),
		icmpNum(true, "echo.identifier", "Identifier", FTUint16, BaseHex, true, be16(4)),
		icmpNum(true, "echo.sequence_number", "Sequence", FTUint16, BaseDec, true, be16(6)),

		// tshark's expert info: what an analyst should look at in the
		// packet. rdmashark's items are listed in docs/display-filters.md.
		expert("_ws.expert.message", "Message", FTString, func(it expertItem) Value { return Value{S: it.message()} }),
		expert("_ws.expert.group", "Group", FTUint32, func(it expertItem) Value { return u(it.group) }),
		expert("_ws.expert.severity", "Severity level", FTUint32, func(it expertItem) Value { return u(it.severity) }),
		&Field{Name: "_ws.malformed", Label: "Malformed Packet", Type: FTNone, Parent: "_ws.malformed",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Err != nil {
					emit(Value{S: ""})
				}
			}},

		// The connection analyze numbers, on every packet placed in it:
		// both directions (both QPs) and its set-up (CM MADs, TCP
		// handshake and MPA).
		&Field{Name: "rdmashark.connection", Label: "Connection (as analyze numbers them)", Type: FTUint32, Base: BaseDec, Parent: "rdmashark",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Conn != nil && p.Conn.ID > 0 {
					emit(u(uint64(p.Conn.ID)))
				}
			}},
	)
	// tshark's names for the TCP analysis rdmashark computes on iWARP's
	// TCP (rdmashark.analysis.*): the same values, on TCP segments only.
	tcpA := func(name, label string, get func(p *dissect.Packet) bool) *Field {
		return &Field{Name: "tcp.analysis." + name, Label: label, Type: FTNone, Parent: "tcp",
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Analysis.Valid && p.Has(layers.LayerTypeTCP) && get(p) {
					emit(Value{})
				}
			}}
	}
	F.Register(
		tcpA("flags", "TCP Analysis Flags", func(p *dissect.Packet) bool {
			a := &p.Analysis
			return a.Retransmission || a.OutOfOrder || a.Duplicate || a.LostSegment > 0
		}),
		tcpA("retransmission", "This frame is a (suspected) retransmission", func(p *dissect.Packet) bool { return p.Analysis.Retransmission }),
		tcpA("out_of_order", "This frame is a (suspected) out-of-order segment", func(p *dissect.Packet) bool { return p.Analysis.OutOfOrder }),
		tcpA("duplicate_ack", "Duplicate ACK", func(p *dissect.Packet) bool { return p.Analysis.Duplicate }),
		tcpA("lost_segment", "Previous segment(s) not captured (common at capture start)", func(p *dissect.Packet) bool { return p.Analysis.LostSegment > 0 }),
		// PFC frames: MAC Control with the PFC opcode (IEEE 802.1Qbb);
		// tshark has no "pfc", rdmashark's word for macc.opcode == 0x0101.
		&Field{Name: "pfc", Label: "Priority-based Flow Control (rdmashark)", Type: FTNone, Parent: "macc", Hidden: true,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Has(pfc.LayerTypeMACControl) && p.PFC.Opcode == pfc.OpPFC {
					emit(Value{})
				}
			}},
	)
	return F
}

func init() {
	// The protocols' bytes, for "arp", "icmp", "icmpv6" and "data"
	// (filter.go); "data" is present when frame.protocols says so.
	protocolSpans["arp"] = func(p *dissect.Packet) ([]byte, bool) {
		b := arpBytes(p)
		return b, p.Has(layers.LayerTypeARP)
	}
	protocolSpans["icmp"] = func(p *dissect.Packet) ([]byte, bool) {
		b := icmpBytes(p, false)
		return b, b != nil
	}
	protocolSpans["icmpv6"] = func(p *dissect.Packet) ([]byte, bool) {
		b := icmpBytes(p, true)
		return b, b != nil
	}
	protocolSpans["data"] = func(p *dissect.Packet) ([]byte, bool) { return nil, hasData(p) }
	protocolSpans["_ws.expert"] = func(p *dissect.Packet) ([]byte, bool) {
		found := false
		eachExpert(p, func(expertItem) { found = true })
		return nil, found
	}
	// Names of values, as tshark's value_strings (epan/expert.c).
	valueNames["_ws.expert.severity"] = []valueName{{0x00100000, "Comment"}, {sevChat, "Chat"}, {sevNote, "Note"}, {sevWarn, "Warning"}, {sevError, "Error"}}
	valueNames["_ws.expert.group"] = []valueName{{grpChecksum, "Checksum"}, {grpSequence, "Sequence"},
		{0x03000000, "Response"}, {0x04000000, "Request"}, {0x05000000, "Undecoded"}, {0x06000000, "Reassemble"},
		{grpMalformed, "Malformed"}, {0x08000000, "Debug"}, {grpProtocol, "Protocol"}, {0x0a000000, "Security"},
		{0x0b000000, "Comment"}, {0x0c000000, "Decryption"}, {0x0d000000, "Assumption"}, {0x0e000000, "Deprecated"}}
	valueNames["arp.opcode"] = []valueName{{1, "request"}, {2, "reply"}, {3, "reverse request"}, {4, "reverse reply"},
		{8, "inverse request"}, {9, "inverse reply"}}
}
