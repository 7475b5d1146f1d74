package synth

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Link types of the frames built here (the pcap LINKTYPE_ numbers).
const (
	LinkEthernet   = layers.LinkTypeEthernet  // 1
	LinkRaw        = layers.LinkTypeRaw       // 101: raw IPv4 or IPv6
	LinkSLL        = layers.LinkTypeLinuxSLL  // 113
	LinkERF        = layers.LinkType(197)     // ERF records
	LinkIPv4       = layers.LinkTypeIPv4      // 228
	LinkIPv6       = layers.LinkTypeIPv6      // 229
	LinkInfiniBand = layers.LinkType(247)     // LRH first
	LinkSLL2       = layers.LinkTypeLinuxSLL2 // 276
)

// Encap is how the InfiniBand transport is carried.
type Encap uint8

const (
	RoCEv2   Encap = iota // IPv4 or IPv6 (by the nodes' addresses), UDP 4791, BTH (Annex A17)
	RoCEv1                // EtherType 0x8915, GRH, BTH (Annex A16)
	IBLocal               // LRH (LNH 2), BTH, ICRC, VCRC (IBA Vol 1 7.7)
	IBGlobal              // LRH (LNH 3), GRH, BTH, ICRC, VCRC
)

func (e Encap) String() string {
	switch e {
	case RoCEv2:
		return "RoCEv2"
	case RoCEv1:
		return "RoCEv1"
	case IBLocal:
		return "IB"
	case IBGlobal:
		return "IB+GRH"
	}
	return fmt.Sprintf("Encap(%d)", uint8(e))
}

// Node is one end node: its MAC (Ethernet, SLL), IP address (RoCEv2; its
// 16-octet form is the GID of RoCEv1 and of an IB GRH), LID (native IB) and
// CA GUID (CM messages).
type Node struct {
	MAC  net.HardwareAddr
	IP   netip.Addr
	LID  uint16
	GUID uint64
}

// GID returns the node's address as a 16-octet GID (IPv4 addresses
// IPv4-mapped, as RoCE GIDs of IPv4 addresses are; Annex A17.4.5.1).
func (n Node) GID() [16]byte { return n.IP.As16() }

// Options say how to build a frame. The zero value is RoCEv2 in Ethernet
// without VLAN tags.
type Options struct {
	// LinkType is the capture's link type; 0 means Ethernet.
	LinkType layers.LinkType
	Encap    Encap
	// VLANs are the 802.1Q VLAN IDs, outermost first (Ethernet, SLL, SLL2
	// and ERF Ethernet records). With two tags the outer one is an IEEE
	// 802.1ad service tag (EtherType 0x88a8), the inner one a customer tag.
	VLANs []uint16
	// ERFType is the ERF record type for LinkERF: erf.TypeInfiniBand (21)
	// for IB encapsulations and erf.TypeEth (2) for Ethernet ones when 0.
	ERFType erf.Type
	// TClass is the IPv4 TOS / IPv6 and GRH traffic class, FlowLabel the
	// IPv6 and GRH flow label, HopLimit the IPv4 TTL / IPv6 hop limit / GRH
	// HopLmt (0 means 64). The ICRC masks all of them.
	TClass    uint8
	FlowLabel uint32
	HopLimit  uint8
	// UDPSrcPort (default 0xC000) and UDPDstPort (default 4791) of RoCEv2.
	UDPSrcPort, UDPDstPort uint16
	// SL and VL of the LRH.
	SL, VL uint8
	// Outgoing marks SLL/SLL2 frames as sent by the capturing host.
	Outgoing bool
	// CorruptICRC flips the low bit of the ICRC's last byte after computing
	// it (the VCRC and UDP checksum are computed over the corrupted ICRC,
	// so only the ICRC is wrong). CorruptVCRC does the same to the VCRC.
	CorruptICRC, CorruptVCRC bool
	// Snap, when positive, keeps only the first Snap bytes of the frame;
	// the frame's wire Length stays whole.
	Snap int
}

// Frame is one built frame, as a capture records it.
type Frame struct {
	LinkType layers.LinkType
	// Data is what the capture holds: the whole frame, or its first
	// Options.Snap bytes.
	Data []byte
	// Length is the frame's length on the wire.
	Length int
	Time   time.Time
	// Interface is the pcapng interface the frame is recorded on.
	Interface int
}

// Build builds one frame carrying the BTH h (with the extended headers its
// OpCode implies, taken from h's value fields) and payload, sent from src to
// dst. h is not modified.
func Build(o Options, src, dst Node, h roce.BTH, payload []byte) (Frame, error) {
	lt := o.LinkType
	if lt == 0 {
		lt = LinkEthernet
	}
	if err := checkCombination(lt, o); err != nil {
		return Frame{}, err
	}
	buf := gopacket.NewSerializeBuffer()
	if len(payload) > 0 {
		p, err := buf.PrependBytes(len(payload))
		if err != nil {
			return Frame{}, err
		}
		copy(p, payload)
	}
	if err := h.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		return Frame{}, err
	}
	var etherType layers.EthernetType
	var err error
	switch o.Encap {
	case RoCEv2:
		etherType, err = roceV2(buf, o, src, dst)
	case RoCEv1:
		etherType, err = roceV1(buf, o, src, dst)
	case IBLocal, IBGlobal:
		err = nativeIB(buf, o, src, dst)
	default:
		err = fmt.Errorf("synth: unknown encapsulation %v", o.Encap)
	}
	if err != nil {
		return Frame{}, err
	}
	if err := link(buf, lt, o, src, dst, etherType); err != nil {
		return Frame{}, err
	}
	data := append([]byte(nil), buf.Bytes()...)
	f := Frame{LinkType: lt, Data: data, Length: len(data)}
	if o.Snap > 0 && o.Snap < len(data) {
		f.Data = data[:o.Snap]
	}
	return f, nil
}

func checkCombination(lt layers.LinkType, o Options) error {
	ib := o.Encap == IBLocal || o.Encap == IBGlobal
	switch lt {
	case LinkEthernet, LinkSLL, LinkSLL2:
		if ib {
			return fmt.Errorf("synth: %v cannot be carried by link type %d", o.Encap, lt)
		}
	case LinkRaw, LinkIPv4, LinkIPv6:
		if o.Encap != RoCEv2 {
			return fmt.Errorf("synth: raw IP link type %d carries only RoCEv2", lt)
		}
	case LinkInfiniBand:
		if !ib {
			return fmt.Errorf("synth: link type 247 carries native InfiniBand only")
		}
	case LinkERF:
		t := erfType(o)
		if t.IsInfiniBand() != ib || (!ib && !t.IsEthernet()) {
			return fmt.Errorf("synth: ERF type %d cannot carry %v", t, o.Encap)
		}
	default:
		return fmt.Errorf("synth: link type %d is not built here", lt)
	}
	return nil
}

func erfType(o Options) erf.Type {
	switch {
	case o.ERFType != 0:
		return o.ERFType
	case o.Encap == IBLocal || o.Encap == IBGlobal:
		return erf.TypeInfiniBand
	}
	return erf.TypeEth
}

func hopLimit(o Options) uint8 {
	if o.HopLimit == 0 {
		return 64
	}
	return o.HopLimit
}

// roceV2 prepends UDP and the IP header to the BTH..ICRC in buf, then
// computes the ICRC (Annex A17.3.3) and, for IPv6, the UDP checksum (RFC
// 8200 section 8.1 forbids a zero one; over IPv4 it is zero, as Linux rxe
// sends it).
func roceV2(buf gopacket.SerializeBuffer, o Options, src, dst Node) (layers.EthernetType, error) {
	sport, dport := o.UDPSrcPort, o.UDPDstPort
	if sport == 0 {
		sport = 0xC000
	}
	if dport == 0 {
		dport = uint16(roce.UDPPortRoCEv2)
	}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	fix := gopacket.SerializeOptions{FixLengths: true}
	if err := udp.SerializeTo(buf, fix); err != nil {
		return 0, err
	}
	var et layers.EthernetType
	v6 := false
	switch {
	case src.IP.Is4() && dst.IP.Is4():
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: o.TClass, TTL: hopLimit(o), Flags: layers.IPv4DontFragment,
			Protocol: layers.IPProtocolUDP, SrcIP: src.IP.AsSlice(), DstIP: dst.IP.AsSlice()}
		if err := ip.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}); err != nil {
			return 0, err
		}
		et = layers.EthernetTypeIPv4
	case src.IP.Is6() && dst.IP.Is6():
		ip := &layers.IPv6{Version: 6, TrafficClass: o.TClass, FlowLabel: o.FlowLabel, HopLimit: hopLimit(o),
			NextHeader: layers.IPProtocolUDP, SrcIP: src.IP.AsSlice(), DstIP: dst.IP.AsSlice()}
		if err := ip.SerializeTo(buf, fix); err != nil {
			return 0, err
		}
		et, v6 = layers.EthernetTypeIPv6, true
	default:
		return 0, fmt.Errorf("synth: RoCEv2 needs two IPv4 or two IPv6 addresses, not %v and %v", src.IP, dst.IP)
	}
	pkt := buf.Bytes()
	if err := roce.FixICRCv2(pkt); err != nil {
		return 0, err
	}
	if o.CorruptICRC {
		pkt[len(pkt)-1] ^= 1
	}
	if v6 {
		putUDPv6Checksum(pkt)
	}
	return et, nil
}

// putUDPv6Checksum computes the UDP checksum of an IPv6 packet without
// extension headers (RFC 8200 section 8.1: the pseudo-header is the source
// and destination addresses, the upper-layer length and the next header).
func putUDPv6Checksum(pkt []byte) {
	udp := pkt[40:]
	udp[6], udp[7] = 0, 0
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(pkt[8:40])
	sum += uint32(len(udp))
	sum += uint32(layers.IPProtocolUDP)
	add(udp)
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	c := ^uint16(sum)
	if c == 0 {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(udp[6:], c)
}

func grh(o Options, src, dst Node) *roce.GRH {
	return &roce.GRH{IPVer: 6, TClass: o.TClass, FlowLabel: o.FlowLabel, NxtHdr: roce.NxtHdrIBA, HopLmt: hopLimit(o),
		SGID: src.GID(), DGID: dst.GID()}
}

// roceV1 prepends the GRH and computes the ICRC (Annex A16).
func roceV1(buf gopacket.SerializeBuffer, o Options, src, dst Node) (layers.EthernetType, error) {
	if err := grh(o, src, dst).SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		return 0, err
	}
	pkt := buf.Bytes()
	if err := roce.FixICRCv1(pkt); err != nil {
		return 0, err
	}
	if o.CorruptICRC {
		pkt[len(pkt)-1] ^= 1
	}
	return roce.EthernetTypeRoCEv1, nil
}

// nativeIB prepends the LRH (and GRH) and computes ICRC and VCRC (IBA Vol 1
// 7.8).
func nativeIB(buf gopacket.SerializeBuffer, o Options, src, dst Node) error {
	fix := gopacket.SerializeOptions{FixLengths: true}
	lrh := &roce.LRH{VL: o.VL, SL: o.SL, LNH: roce.LNHLocal, DLID: dst.LID, SLID: src.LID}
	if o.Encap == IBGlobal {
		lrh.LNH = roce.LNHGlobal
		if err := grh(o, src, dst).SerializeTo(buf, fix); err != nil {
			return err
		}
	}
	if err := lrh.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}); err != nil {
		return err
	}
	pkt := buf.Bytes()
	end := int(lrh.PktLen) * 4 // the ICRC ends here, the VCRC follows
	if o.CorruptICRC {
		pkt[end-1] ^= 1
		if err := roce.FixVCRC(pkt); err != nil {
			return err
		}
	}
	if o.CorruptVCRC {
		pkt[end+1] ^= 1
	}
	return nil
}

// link prepends the link-layer framing.
func link(buf gopacket.SerializeBuffer, lt layers.LinkType, o Options, src, dst Node, et layers.EthernetType) error {
	switch lt {
	case LinkEthernet:
		return ethernet(buf, o, src, dst, et)
	case LinkSLL:
		return sll(buf, o, src, et)
	case LinkSLL2:
		return sll2(buf, o, src, et)
	case LinkERF:
		e := &erf.ERF{Type: erfType(o), Flags: erf.FlagVarLen}
		if e.Type.IsEthernet() {
			if err := ethernet(buf, o, src, dst, et); err != nil {
				return err
			}
		}
		return e.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true})
	}
	return nil // raw IP and InfiniBand: the packet is the frame
}

// vlanTags prepends the 802.1Q tags and returns the EtherType in front of
// them.
func vlanTags(buf gopacket.SerializeBuffer, o Options, et layers.EthernetType) (layers.EthernetType, error) {
	if len(o.VLANs) > 2 {
		return 0, errors.New("synth: at most two VLAN tags")
	}
	for i := len(o.VLANs) - 1; i >= 0; i-- {
		tag := &layers.Dot1Q{VLANIdentifier: o.VLANs[i], Priority: 3, Type: et}
		if err := tag.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			return 0, err
		}
		et = layers.EthernetTypeDot1Q
		if i == 0 && len(o.VLANs) == 2 {
			et = layers.EthernetTypeQinQ // IEEE 802.1ad S-tag outside
		}
	}
	return et, nil
}

func ethernet(buf gopacket.SerializeBuffer, o Options, src, dst Node, et layers.EthernetType) error {
	et, err := vlanTags(buf, o, et)
	if err != nil {
		return err
	}
	eth := &layers.Ethernet{SrcMAC: src.MAC, DstMAC: dst.MAC, EthernetType: et}
	return eth.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true})
}

// Linux cooked-capture packet types (tcpdump.org LINKTYPE_LINUX_SLL).
const (
	sllHost     = 0 // sent to us
	sllOutgoing = 4 // sent by us
	arphrdEther = 1
)

func sllPacketType(o Options) uint8 {
	if o.Outgoing {
		return sllOutgoing
	}
	return sllHost
}

// sll prepends the 16-byte LINKTYPE_LINUX_SLL header: packet type (2),
// ARPHRD type (2), link-layer address length (2), address (8, zero padded),
// protocol type (2).
func sll(buf gopacket.SerializeBuffer, o Options, src Node, et layers.EthernetType) error {
	et, err := vlanTags(buf, o, et)
	if err != nil {
		return err
	}
	h, err := buf.PrependBytes(16)
	if err != nil {
		return err
	}
	clear(h)
	binary.BigEndian.PutUint16(h[0:], uint16(sllPacketType(o)))
	binary.BigEndian.PutUint16(h[2:], arphrdEther)
	binary.BigEndian.PutUint16(h[4:], uint16(len(src.MAC)))
	copy(h[6:14], src.MAC)
	binary.BigEndian.PutUint16(h[14:], uint16(et))
	return nil
}

// sll2 prepends the 20-byte LINKTYPE_LINUX_SLL2 header: protocol type (2),
// reserved (2), interface index (4), ARPHRD type (2), packet type (1),
// address length (1), address (8, zero padded).
func sll2(buf gopacket.SerializeBuffer, o Options, src Node, et layers.EthernetType) error {
	et, err := vlanTags(buf, o, et)
	if err != nil {
		return err
	}
	h, err := buf.PrependBytes(20)
	if err != nil {
		return err
	}
	clear(h)
	binary.BigEndian.PutUint16(h[0:], uint16(et))
	binary.BigEndian.PutUint32(h[4:], 2) // interface index
	binary.BigEndian.PutUint16(h[8:], arphrdEther)
	h[10] = sllPacketType(o)
	h[11] = uint8(len(src.MAC))
	copy(h[12:20], src.MAC)
	return nil
}

// ERFRecord wraps packet in an ERF record header of type t (with the 2-byte
// offset and pad of the Ethernet types), for record types Build does not
// make, such as erf.TypeInfiniBandLink (25).
func ERFRecord(t erf.Type, packet []byte) (Frame, error) {
	buf := gopacket.NewSerializeBuffer()
	p, err := buf.PrependBytes(len(packet))
	if err != nil {
		return Frame{}, err
	}
	copy(p, packet)
	e := &erf.ERF{Type: t, Flags: erf.FlagVarLen}
	if err := e.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		return Frame{}, err
	}
	data := append([]byte(nil), buf.Bytes()...)
	return Frame{LinkType: LinkERF, Data: data, Length: len(data)}, nil
}

// FlowControlPacket builds an InfiniBand link-layer flow control packet (IBA
// Vol 1 7.9.4): Op (4 bits; 0 normal, 1 initialization), FCTBS (12), VL
// (4), FCCL (12), then the 16-bit LPCRC over those four bytes, computed as
// the VCRC is (CRC-16, polynomial 0x100B, 7.8.2 and 7.9.4.2).
func FlowControlPacket(op, vl uint8, fctbs, fccl uint16) []byte {
	b := make([]byte, 6)
	binary.BigEndian.PutUint16(b[0:], uint16(op&0xF)<<12|fctbs&0xFFF)
	binary.BigEndian.PutUint16(b[2:], uint16(vl&0xF)<<12|fccl&0xFFF)
	binary.BigEndian.PutUint16(b[4:], crc16IB(b[:4]))
	return b
}

// crc16IB is the CRC-16 of the VCRC: polynomial 0x100B, bit-reflected
// (0xD008), initial value 0xFFFF, result inverted, sent least significant
// byte first.
func crc16IB(d []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range d {
		c ^= uint16(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
	}
	c = ^c
	return c<<8 | c>>8
}
