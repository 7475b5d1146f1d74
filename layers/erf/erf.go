// Package erf decodes the Extensible Record Format header that Endace DAG
// cards and Mellanox's ibdump put in front of every captured packet, as
// pcap and pcapng carry it under LINKTYPE_ERF (197).
//
// A record is a 16-byte header, zero or more 8-byte extension headers, and,
// for the Ethernet record types, 2 bytes of offset and padding; then the
// packet. This package reads the layout of the "Endace ERF Types" reference
// (EDM11-01) as Wireshark's wiretap/erf_record.h and epan/dissectors/
// packet-erf.c use it, checked against a real ibdump-style capture.
//
// ERF is a gopacket layer (LayerTypeERF). Its NextLayerType is
// layers.LayerTypeEthernet for Ethernet records and layers.LayerTypeIPv4 or
// IPv6 for IP records. For InfiniBand records (type 21, the packet starts
// with the Local Route Header) it returns InfiniBandLayerType, a variable
// this package cannot fill itself: the InfiniBand layers live in a package
// a leaf layer may not import. A program that decodes InfiniBand sets it
// once before decoding starts, e.g. erf.InfiniBandLayerType =
// roce.LayerTypeLRH; until then it is gopacket.LayerTypePayload. Callers
// that dispatch themselves use Type.IsInfiniBand and Type.IsEthernet.
package erf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LayerTypeERF is the ERF record header.
var LayerTypeERF = gopacket.RegisterLayerType(1770, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: gopacket.DecodeFunc(decodeERF)})

// Layers that follow InfiniBand records. Set them once, before decoding
// starts (they are read without synchronisation).
var (
	// InfiniBandLayerType decodes the payload of TypeInfiniBand records, a
	// packet from its Local Route Header (IBA Vol 1 7.7) to its VCRC.
	InfiniBandLayerType = gopacket.LayerTypePayload
	// InfiniBandLinkLayerType decodes the payload of TypeInfiniBandLink
	// records, InfiniBand link packets such as flow control (IBA 7.9.4).
	InfiniBandLinkLayerType = gopacket.LayerTypePayload
)

// Lengths (ERF types reference, "ERF record header").
const (
	HeaderLength          = 16 // the fixed header
	ExtensionHeaderLength = 8  // each extension header
	EthernetPadLength     = 2  // offset and pad in front of an Ethernet frame
	// MaxExtensions is how many extension headers DecodeFromBytes keeps in
	// Extensions; further ones are skipped, their count in ExtraExtensions.
	MaxExtensions = 16
)

// Type is the ERF record type, the low 7 bits of the header's type byte.
type Type uint8

// Record types (wiretap/erf_record.h).
const (
	TypeLegacy          Type = 0
	TypeHDLCPOS         Type = 1
	TypeEth             Type = 2
	TypeATM             Type = 3
	TypeAAL5            Type = 4
	TypeMCHDLC          Type = 5
	TypeMCRaw           Type = 6
	TypeMCATM           Type = 7
	TypeMCRawChannel    Type = 8
	TypeMCAAL5          Type = 9
	TypeColorHDLCPOS    Type = 10
	TypeColorEth        Type = 11
	TypeMCAAL2          Type = 12
	TypeIPCounter       Type = 13
	TypeTCPFlowCounter  Type = 14
	TypeDSMColorHDLCPOS Type = 15
	TypeDSMColorEth     Type = 16
	TypeColorMCHDLCPOS  Type = 17
	TypeAAL2            Type = 18
	TypeColorHashPOS    Type = 19
	TypeColorHashEth    Type = 20
	TypeInfiniBand      Type = 21 // packet from the LRH on; what ibdump writes
	TypeIPv4            Type = 22
	TypeIPv6            Type = 23
	TypeRawLink         Type = 24
	TypeInfiniBandLink  Type = 25
	TypeMeta            Type = 27 // provenance metadata, no packet
	TypeOPASNC          Type = 28
	TypeOPA9B           Type = 29
	TypeInternal0       Type = 32 // 32-47 are for local use
	TypeInternal15      Type = 47
	TypePad             Type = 48 // padding, no packet
)

var typeNames = [...]string{
	TypeLegacy: "LEGACY", TypeHDLCPOS: "HDLC_POS", TypeEth: "ETH", TypeATM: "ATM", TypeAAL5: "AAL5",
	TypeMCHDLC: "MC_HDLC", TypeMCRaw: "MC_RAW", TypeMCATM: "MC_ATM", TypeMCRawChannel: "MC_RAW_CHANNEL",
	TypeMCAAL5: "MC_AAL5", TypeColorHDLCPOS: "COLOR_HDLC_POS", TypeColorEth: "COLOR_ETH", TypeMCAAL2: "MC_AAL2",
	TypeIPCounter: "IP_COUNTER", TypeTCPFlowCounter: "TCP_FLOW_COUNTER", TypeDSMColorHDLCPOS: "DSM_COLOR_HDLC_POS",
	TypeDSMColorEth: "DSM_COLOR_ETH", TypeColorMCHDLCPOS: "COLOR_MC_HDLC_POS", TypeAAL2: "AAL2",
	TypeColorHashPOS: "COLOR_HASH_POS", TypeColorHashEth: "COLOR_HASH_ETH", TypeInfiniBand: "INFINIBAND",
	TypeIPv4: "IPV4", TypeIPv6: "IPV6", TypeRawLink: "RAW_LINK", TypeInfiniBandLink: "INFINIBAND_LINK",
	TypeMeta: "META", TypeOPASNC: "OPA_SNC", TypeOPA9B: "OPA_9B",
}

// String returns the type's name as Wireshark shows it ("INFINIBAND").
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	switch {
	case t >= TypeInternal0 && t <= TypeInternal15:
		return fmt.Sprintf("INTERNAL%d", t-TypeInternal0)
	case t == TypePad:
		return "PAD"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// IsEthernet reports whether records of type t carry an Ethernet frame
// after the 2-byte offset and pad (packet-erf.c decodes these four alike).
func (t Type) IsEthernet() bool {
	switch t {
	case TypeEth, TypeColorEth, TypeDSMColorEth, TypeColorHashEth:
		return true
	}
	return false
}

// IsInfiniBand reports whether records of type t carry an InfiniBand packet
// starting with its Local Route Header.
func (t Type) IsInfiniBand() bool { return t == TypeInfiniBand }

// Flags is the header's flags byte.
type Flags uint8

// Flag bits (wiretap/erf_record.h, ERF_HDR_*_MASK).
const (
	FlagCapLow    Flags = 0x03 // capture interface, bits 0-1
	FlagVarLen    Flags = 0x04 // varying record length: rlen is not fixed
	FlagTruncated Flags = 0x08 // the record was cut for lack of buffer
	FlagRxError   Flags = 0x10 // the link reported an error in the packet
	FlagDSError   Flags = 0x20 // internal (data stream) error
	FlagCapHigh   Flags = 0x40 // capture interface, bit 2
	FlagReserved  Flags = 0x80
)

// Interface returns the capture interface (port) number, 0-7: bits 0-1 of
// the flags and, in newer cards, bit 6 as its third bit.
func (f Flags) Interface() uint8 {
	return uint8(f&FlagCapLow) | uint8(f&FlagCapHigh)>>4
}

// ExtType is the type of an extension header, its first byte's low 7 bits.
type ExtType uint8

// Extension header types (wiretap/erf_record.h, ERF_EXT_HDR_TYPE_*).
const (
	ExtClassification ExtType = 3
	ExtInterceptID    ExtType = 4
	ExtRawLink        ExtType = 5
	ExtBFS            ExtType = 6
	ExtChannelised    ExtType = 12
	ExtSignature      ExtType = 14
	ExtPacketID       ExtType = 15
	ExtFlowID         ExtType = 16
	ExtHostID         ExtType = 17
	ExtAnchorID       ExtType = 18
	ExtEntropy        ExtType = 19
)

func (t ExtType) String() string {
	switch t {
	case ExtClassification:
		return "Classification"
	case ExtInterceptID:
		return "InterceptID"
	case ExtRawLink:
		return "Raw Link"
	case ExtBFS:
		return "BFS Filter/Hash"
	case ExtChannelised:
		return "Channelised"
	case ExtSignature:
		return "Signature"
	case ExtPacketID:
		return "Packet ID"
	case ExtFlowID:
		return "Flow ID"
	case ExtHostID:
		return "Host ID"
	case ExtAnchorID:
		return "Anchor ID"
	case ExtEntropy:
		return "Entropy"
	}
	return fmt.Sprintf("ExtType(%d)", uint8(t))
}

// ExtensionHeader is one 8-byte extension header.
type ExtensionHeader struct {
	Type ExtType
	More bool   // another extension header follows (bit 7 of the first byte)
	Raw  uint64 // all 8 bytes, big-endian, type byte included
}

// ERF is an ERF record header. DecodeFromBytes fills it in place: a value
// can be reused for every packet without allocating.
type ERF struct {
	layers.BaseLayer
	// Timestamp is the 64-bit fixed-point time, little-endian on the wire:
	// seconds since 1970 in the high 32 bits, the binary fraction of a
	// second in the low 32. Time converts it.
	Timestamp uint64
	// Type is the record type; HasExtensions is the type byte's bit 7.
	Type          Type
	HasExtensions bool
	Flags         Flags
	RLen          uint16 // record length: header, extensions, packet and padding
	// LCtr is the loss counter (records lost before this one), or for the
	// COLOR types the color: the same 16 bits.
	LCtr uint16
	WLen uint16 // wire length of the packet
	// Extensions are the extension headers, up to MaxExtensions of them.
	Extensions      []ExtensionHeader
	ExtraExtensions int // extension headers skipped beyond MaxExtensions
	// EthOffset and EthPad are the two bytes before an Ethernet frame.
	EthOffset, EthPad uint8
}

// Errors of DecodeFromBytes; they wrap ErrTruncated.
var ErrTruncated = errors.New("ERF record truncated")

// LayerType returns LayerTypeERF.
func (e *ERF) LayerType() gopacket.LayerType { return LayerTypeERF }

// CanDecode returns LayerTypeERF.
func (e *ERF) CanDecode() gopacket.LayerClass { return LayerTypeERF }

// NextLayerType returns the layer of the record's packet: Ethernet, IPv4 or
// IPv6 by type, InfiniBandLayerType or InfiniBandLinkLayerType for the
// InfiniBand types, nothing for padding and metadata records, and
// gopacket.LayerTypePayload for the others.
func (e *ERF) NextLayerType() gopacket.LayerType {
	switch {
	case e.Type.IsEthernet():
		return layers.LayerTypeEthernet
	case e.Type == TypeInfiniBand:
		return InfiniBandLayerType
	case e.Type == TypeInfiniBandLink:
		return InfiniBandLinkLayerType
	case e.Type == TypeIPv4:
		return layers.LayerTypeIPv4
	case e.Type == TypeIPv6:
		return layers.LayerTypeIPv6
	case e.Type == TypePad, e.Type == TypeMeta:
		return gopacket.LayerTypeZero
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes an ERF record. Payload is the packet: the bytes
// after the header, extension headers and Ethernet offset/pad, cut to WLen
// when the record holds more (record padding, as libpcap's DAG reader cuts
// it); a record cut short keeps what it has. Contents and Payload point
// into data.
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < HeaderLength {
		df.SetTruncated()
		return fmt.Errorf("%w: %d bytes, the header needs %d", ErrTruncated, len(data), HeaderLength)
	}
	e.Timestamp = binary.LittleEndian.Uint64(data[0:8])
	e.Type = Type(data[8] & 0x7f)
	e.HasExtensions = data[8]&0x80 != 0
	e.Flags = Flags(data[9])
	e.RLen = binary.BigEndian.Uint16(data[10:12])
	e.LCtr = binary.BigEndian.Uint16(data[12:14])
	e.WLen = binary.BigEndian.Uint16(data[14:16])
	e.Extensions = e.Extensions[:0]
	e.ExtraExtensions = 0
	e.EthOffset, e.EthPad = 0, 0
	n := HeaderLength
	for more := e.HasExtensions; more; {
		if len(data)-n < ExtensionHeaderLength {
			df.SetTruncated()
			return fmt.Errorf("%w: extension header %d at byte %d needs %d bytes, %d left",
				ErrTruncated, len(e.Extensions)+e.ExtraExtensions+1, n, ExtensionHeaderLength, len(data)-n)
		}
		raw := binary.BigEndian.Uint64(data[n:])
		more = data[n]&0x80 != 0
		if len(e.Extensions) < MaxExtensions {
			e.Extensions = append(e.Extensions, ExtensionHeader{Type: ExtType(data[n] & 0x7f), More: more, Raw: raw})
		} else {
			e.ExtraExtensions++
		}
		n += ExtensionHeaderLength
	}
	if e.Type.IsEthernet() {
		if len(data)-n < EthernetPadLength {
			df.SetTruncated()
			return fmt.Errorf("%w: the Ethernet offset and pad at byte %d need %d bytes, %d left", ErrTruncated, n, EthernetPadLength, len(data)-n)
		}
		e.EthOffset, e.EthPad = data[n], data[n+1]
		n += EthernetPadLength
	}
	payload := data[n:]
	if e.WLen > 0 && int(e.WLen) < len(payload) && e.carriesPacket() {
		payload = payload[:e.WLen]
	}
	e.Contents = data[:n]
	e.Payload = payload
	return nil
}

// carriesPacket reports whether WLen is the length of the payload.
func (e *ERF) carriesPacket() bool {
	switch e.Type {
	case TypeInfiniBand, TypeInfiniBandLink, TypeIPv4, TypeIPv6:
		return true
	}
	return e.Type.IsEthernet()
}

// Time converts Timestamp, rounding the binary fraction to the nearest
// nanosecond as Wireshark and libpcap do.
func (e *ERF) Time() time.Time {
	sec := int64(e.Timestamp >> 32)
	ns := int64(((e.Timestamp&0xffffffff)*1e9 + 1<<31) >> 32)
	return time.Unix(sec, ns).UTC()
}

// SerializeTo writes the header, extension headers and Ethernet offset/pad
// in front of the payload already in b. With opts.FixLengths, RLen becomes
// the whole record's length, WLen the payload's, HasExtensions and the
// extension headers' More bits follow Extensions, and the first byte of
// each extension's Raw is rewritten from Type and More.
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	payload := len(b.Bytes())
	n := HeaderLength + ExtensionHeaderLength*len(e.Extensions)
	if e.Type.IsEthernet() {
		n += EthernetPadLength
	}
	if opts.FixLengths {
		if n+payload > 0xffff {
			return fmt.Errorf("ERF record of %d bytes does not fit RLen", n+payload)
		}
		e.RLen = uint16(n + payload)
		e.WLen = uint16(payload)
		e.HasExtensions = len(e.Extensions) > 0
		for i := range e.Extensions {
			x := &e.Extensions[i]
			x.More = i < len(e.Extensions)-1
			first := uint64(x.Type & 0x7f)
			if x.More {
				first |= 0x80
			}
			x.Raw = x.Raw&^(0xff<<56) | first<<56
		}
	}
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(h[0:8], e.Timestamp)
	h[8] = uint8(e.Type & 0x7f)
	if e.HasExtensions {
		h[8] |= 0x80
	}
	h[9] = uint8(e.Flags)
	binary.BigEndian.PutUint16(h[10:12], e.RLen)
	binary.BigEndian.PutUint16(h[12:14], e.LCtr)
	binary.BigEndian.PutUint16(h[14:16], e.WLen)
	i := HeaderLength
	for _, x := range e.Extensions {
		binary.BigEndian.PutUint64(h[i:], x.Raw)
		i += ExtensionHeaderLength
	}
	if e.Type.IsEthernet() {
		h[i], h[i+1] = e.EthOffset, e.EthPad
	}
	return nil
}

func decodeERF(data []byte, p gopacket.PacketBuilder) error {
	e := &ERF{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	next := e.NextLayerType()
	if next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(next)
}
