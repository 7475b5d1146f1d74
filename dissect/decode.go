package dissect

import (
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// DefaultRoCEPort is the IANA-assigned UDP port of RoCEv2 (layers/roce
// defines it).
const DefaultRoCEPort = uint16(roce.UDPPortRoCEv2)

// EtherTypeRoCEv1 is the EtherType of RoCE version 1 (IBA Annex A16;
// layers/roce defines it).
const EtherTypeRoCEv1 = roce.EthernetTypeRoCEv1

// Decoder turns a captured frame into a Packet. It dispatches on link type,
// EtherType, IP protocol and port itself, decoding into the Packet's reused
// layer values, so a packet costs no allocation.
type Decoder struct {
	// RoCEPort is the UDP destination port that carries RoCEv2.
	RoCEPort uint16
	// icrc holds the masked headers of the invariant CRC (crc.go).
	icrc roce.ICRC
	// pre, during decodePre, has the CRC verdicts the pipeline's reading
	// goroutine computed from the same bytes (pipeline.go).
	pre *preDecoded
}

// errorf records a decoding error on the packet and returns it.
func (p *Packet) fail(layer string, err error) {
	if p.Err == nil {
		p.Err = fmt.Errorf("%s: %w", layer, err)
	}
}

// Decode decodes data, the frame of p, by p.LinkType. It fills p and never
// fails: what it could not decode is recorded in p.Err.
func (d *Decoder) Decode(p *Packet, data []byte) {
	p.reset()
	p.Data = data
	switch p.LinkType {
	case layers.LinkTypeEthernet:
		d.ethernet(p, data)
	case layers.LinkTypeLinuxSLL:
		if err := p.SLL.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("Linux SLL", err)
			return
		}
		p.decoded(layers.LayerTypeLinuxSLL)
		d.etherType(p, p.SLL.EthernetType, p.SLL.Payload)
	case layers.LinkTypeLinuxSLL2:
		if err := p.SLL2.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("Linux SLL2", err)
			return
		}
		p.decoded(layers.LayerTypeLinuxSLL2)
		d.etherType(p, p.SLL2.ProtocolType, p.SLL2.Payload)
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		d.rawIP(p, data)
	case linkTypeInfiniBand:
		d.lrh(p, data)
	case linkTypeERF:
		d.erf(p, data)
	case linkTypeIPoIB:
		d.ipoib(p, data)
	default:
		p.fail("link", fmt.Errorf("link type %d is not supported", p.LinkType))
	}
}

const (
	linkTypeInfiniBand layers.LinkType = 247
	linkTypeIPoIB      layers.LinkType = 242
	linkTypeERF        layers.LinkType = 197
)

func (d *Decoder) ethernet(p *Packet, data []byte) {
	if err := p.Eth.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("Ethernet", err)
		return
	}
	p.decoded(layers.LayerTypeEthernet)
	d.etherType(p, p.Eth.EthernetType, p.Eth.Payload)
}

func (d *Decoder) etherType(p *Packet, et layers.EthernetType, data []byte) {
	for et == layers.EthernetTypeDot1Q || et == layers.EthernetTypeQinQ {
		if p.NVLAN == len(p.VLAN) {
			p.fail("802.1Q", errors.New("more VLAN tags than rdmashark reads"))
			return
		}
		v := &p.VLAN[p.NVLAN]
		if err := v.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("802.1Q", err)
			return
		}
		p.NVLAN++
		p.decoded(layers.LayerTypeDot1Q)
		et, data = v.Type, v.Payload
	}
	switch et {
	case layers.EthernetTypeIPv4:
		d.ipv4(p, data)
	case layers.EthernetTypeIPv6:
		d.ipv6(p, data)
	case EtherTypeRoCEv1:
		p.Encap = EncapRoCEv1
		d.grh(p, data, data)
	case layers.EthernetTypeARP:
		p.decoded(layers.LayerTypeARP)
	case pfc.EtherTypeMACControl:
		// PAUSE and PFC frames (health.go counts them).
		if err := p.PFC.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("MAC Control", err)
			return
		}
		p.decoded(pfc.LayerTypeMACControl)
	}
}

func (d *Decoder) rawIP(p *Packet, data []byte) {
	if len(data) == 0 {
		p.fail("IP", errors.New("empty packet"))
		return
	}
	switch data[0] >> 4 {
	case 4:
		d.ipv4(p, data)
	case 6:
		d.ipv6(p, data)
	default:
		p.fail("IP", fmt.Errorf("IP version %d", data[0]>>4))
	}
}

func (d *Decoder) ipv4(p *Packet, data []byte) {
	if err := p.IPv4.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("IPv4", err)
		return
	}
	p.decoded(layers.LayerTypeIPv4)
	if p.IPv4.Flags&layers.IPv4MoreFragments != 0 || p.IPv4.FragOffset != 0 {
		return // fragments are not reassembled; RoCE and iWARP never fragment
	}
	ip := data[:len(p.IPv4.Contents)+len(p.IPv4.Payload)]
	d.transport(p, p.IPv4.Protocol, p.IPv4.Payload, ip)
}

func (d *Decoder) ipv6(p *Packet, data []byte) {
	if err := p.IPv6.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("IPv6", err)
		return
	}
	p.decoded(layers.LayerTypeIPv6)
	ip := data[:len(p.IPv6.Contents)+len(p.IPv6.Payload)]
	d.transport(p, p.IPv6.NextHeader, p.IPv6.Payload, ip)
}

func (d *Decoder) transport(p *Packet, proto layers.IPProtocol, data, ip []byte) {
	switch proto {
	case layers.IPProtocolUDP:
		if err := p.UDP.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("UDP", err)
			return
		}
		p.decoded(layers.LayerTypeUDP)
		// RoCE inside RoCE (IP carried by IPoIB in an IB datagram) is not
		// followed: one transport header per packet.
		if uint16(p.UDP.DstPort) == d.RoCEPort && p.Encap == EncapNone {
			p.Encap = EncapRoCEv2
			d.bth(p, p.UDP.Payload, int(p.UDP.Length)-8, ip)
		}
	case layers.IPProtocolTCP:
		if err := p.TCP.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			p.fail("TCP", err)
			return
		}
		p.decoded(layers.LayerTypeTCP)
	}
}

func (d *Decoder) erf(p *Packet, data []byte) {
	if err := p.ERF.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("ERF", err)
		return
	}
	p.decoded(erf.LayerTypeERF)
	// As Wireshark's wiretap does, the ERF header is the record's
	// pseudo-header: the packet is what follows it, its wire length the
	// header's WLen.
	p.CaptureLength = len(p.ERF.Payload)
	if wl := int(p.ERF.WLen); wl >= p.CaptureLength {
		p.Length = wl
	} else {
		p.Length = p.CaptureLength
	}
	switch {
	case p.ERF.Type.IsInfiniBand():
		d.lrh(p, p.ERF.Payload)
	case p.ERF.Type.IsEthernet():
		d.ethernet(p, p.ERF.Payload)
	}
}

// lrh decodes native InfiniBand from the Local Route Header (IBA 7.7).
func (d *Decoder) lrh(p *Packet, data []byte) {
	p.Encap = EncapIB
	if err := p.LRH.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("LRH", err)
		return
	}
	p.decoded(roce.LayerTypeLRH)
	d.checkVCRC(p, data)
	switch p.LRH.NextLayerType() {
	case roce.LayerTypeGRH:
		d.grh(p, p.LRH.Payload, data)
	case roce.LayerTypeBTH:
		d.bth(p, p.LRH.Payload, int(p.LRH.PktLen)*4-8, data)
	}
}

// grh decodes the Global Route Header (IBA 8.3), first on RoCEv1. whole is
// where the ICRC's coverage starts: the GRH itself on RoCEv1, the LRH on IB.
func (d *Decoder) grh(p *Packet, data, whole []byte) {
	if err := p.GRH.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("GRH", err)
		return
	}
	p.decoded(roce.LayerTypeGRH)
	if p.GRH.NextLayerType() != roce.LayerTypeBTH {
		return
	}
	d.bth(p, p.GRH.Payload, int(p.GRH.PayLen), whole)
}

// bth decodes the Base Transport Header, its extended headers and what they
// carry. wireLen is the length of the BTH..ICRC bytes on the wire, as the
// header in front says it; whole is the packet from the header the ICRC starts at (IP header,
// GRH or LRH) to its end.
func (d *Decoder) bth(p *Packet, data []byte, wireLen int, whole []byte) {
	if err := p.BTH.DecodeWithLength(data, wireLen, gopacket.NilDecodeFeedback); err != nil {
		p.fail("BTH", err)
		return
	}
	p.decoded(roce.LayerTypeBTH)
	d.checkICRC(p, whole)
	switch {
	case p.BTH.NextLayerType() == roce.LayerTypeMAD:
		d.mad(p, p.BTH.Payload)
	case p.BTH.OpCode.Transport() == roce.TransportUD && p.BTH.OpCode.IsSend():
		d.ipoibDatagram(p, p.BTH.Payload)
	}
}

// ipoibDatagram decodes IP over InfiniBand carried in a UD Send (RFC 4391
// section 6): a 4-octet encapsulation header — the EtherType and two
// reserved zero octets — then the IP packet or ARP message. Like
// Wireshark, it goes by the header's look, since the IPoIB QPN is not known
// from the packet alone.
func (d *Decoder) ipoibDatagram(p *Packet, data []byte) {
	if len(data) < 4 || data[2] != 0 || data[3] != 0 {
		return
	}
	switch et := layers.EthernetType(uint16(data[0])<<8 | uint16(data[1])); et {
	case layers.EthernetTypeIPv4, layers.EthernetTypeIPv6, layers.EthernetTypeARP:
		d.etherType(p, et, data[4:])
	}
}

func (d *Decoder) mad(p *Packet, data []byte) {
	if err := p.MAD.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("MAD", err)
		return
	}
	p.decoded(roce.LayerTypeMAD)
	next := p.MAD.NextLayerType()
	var l gopacket.DecodingLayer
	switch next {
	case roce.LayerTypeClassPortInfo:
		l = &p.CM.ClassPortInfo
	case roce.LayerTypeCMREQ:
		l = &p.CM.REQ
	case roce.LayerTypeCMMRA:
		l = &p.CM.MRA
	case roce.LayerTypeCMREJ:
		l = &p.CM.REJ
	case roce.LayerTypeCMREP:
		l = &p.CM.REP
	case roce.LayerTypeCMRTU:
		l = &p.CM.RTU
	case roce.LayerTypeCMDREQ:
		l = &p.CM.DREQ
	case roce.LayerTypeCMDREP:
		l = &p.CM.DREP
	case roce.LayerTypeCMSIDRREQ:
		l = &p.CM.SIDRREQ
	case roce.LayerTypeCMSIDRREP:
		l = &p.CM.SIDRREP
	case roce.LayerTypeCMLAP:
		l = &p.CM.LAP
	case roce.LayerTypeCMAPR:
		l = &p.CM.APR
	default:
		return
	}
	if err := l.DecodeFromBytes(p.MAD.Payload, gopacket.NilDecodeFeedback); err != nil {
		p.fail(next.String(), err)
		return
	}
	p.CM.Attr = next
	p.decoded(next)
}
