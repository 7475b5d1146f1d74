package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LRHLen is the length of the Local Route Header (IBA Vol 1 §7.7).
const LRHLen = 8

// VCRCLen is the length of the variant CRC after the ICRC (IBA Vol 1 §7.8.2).
const VCRCLen = 2

// LNH is the Link Next Header field of the LRH (IBA Vol 1 §7.7): what
// follows the LRH.
type LNH uint8

// LNH values.
const (
	LNHRaw    LNH = 0 // raw packet: RWH (EtherType) follows
	LNHIPv6   LNH = 1 // IP non-IBA transport: a raw IPv6 datagram follows
	LNHLocal  LNH = 2 // IBA local: BTH follows
	LNHGlobal LNH = 3 // IBA global: GRH follows
)

func (n LNH) String() string {
	switch n {
	case LNHRaw:
		return "Raw"
	case LNHIPv6:
		return "IPv6"
	case LNHLocal:
		return "IBA local"
	case LNHGlobal:
		return "IBA global"
	}
	return fmt.Sprintf("LNH(%d)", uint8(n))
}

// LRH is the InfiniBand Local Route Header (IBA Vol 1 §7.7):
//
//	byte 0     VL(4) LVer(4)
//	byte 1     SL(4) Rsv2(2) LNH(2)
//	bytes 2-3  DLID
//	bytes 4-5  Rsv5(5) PktLen(11)
//	bytes 6-7  SLID
//
// PktLen counts 4-byte words from the first byte of the LRH through the
// ICRC (§7.7); the 2-byte VCRC follows (§7.8.2). Contents is the 8 LRH
// bytes, Payload the bytes after it up to and including the ICRC (or up to
// the end of the data if the capture cut it; then Truncated is set).
type LRH struct {
	layers.BaseLayer
	VL     uint8 // virtual lane, 4 bits
	LVer   uint8 // link version, 4 bits
	SL     uint8 // service level, 4 bits
	Rsv2   uint8 // 2 reserved bits
	LNH    LNH
	DLID   uint16
	Rsv5   uint8  // 5 reserved bits
	PktLen uint16 // 11 bits, in 4-byte words
	SLID   uint16

	// VCRC as the 2 wire bytes read big-endian, the way tshark shows
	// infiniband.variant.crc; valid only if HasVCRC.
	VCRC    uint16
	HasVCRC bool
	// Truncated: the data ends before PktLen*4 + VCRC bytes.
	Truncated bool
}

func (l *LRH) LayerType() gopacket.LayerType  { return LayerTypeLRH }
func (l *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// NextLayerType follows LNH: BTH for IBA local, GRH for IBA global, IPv6 for
// raw IPv6, payload for raw packets.
func (l *LRH) NextLayerType() gopacket.LayerType {
	switch l.LNH {
	case LNHLocal:
		return LayerTypeBTH
	case LNHGlobal:
		return LayerTypeGRH
	case LNHIPv6:
		return layers.LayerTypeIPv6
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the LRH and bounds the payload by PktLen. It calls
// df.SetTruncated if the data ends before the ICRC's end (a missing VCRC
// alone only clears HasVCRC and sets l.Truncated).
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*l = LRH{}
	if len(data) < LRHLen {
		df.SetTruncated()
		return shortError("LRH", len(data), LRHLen)
	}
	l.VL = data[0] >> 4
	l.LVer = data[0] & 0xF
	l.SL = data[1] >> 4
	l.Rsv2 = (data[1] >> 2) & 0x3
	l.LNH = LNH(data[1] & 0x3)
	l.DLID = binary.BigEndian.Uint16(data[2:4])
	w := binary.BigEndian.Uint16(data[4:6])
	l.Rsv5 = uint8(w >> 11)
	l.PktLen = w & 0x7FF
	l.SLID = binary.BigEndian.Uint16(data[6:8])

	end := int(l.PktLen) * 4
	if end < LRHLen {
		return fmt.Errorf("roce: LRH: PktLen %d words is less than the LRH itself: %w", l.PktLen, ErrBadLength)
	}
	switch {
	case len(data) >= end+VCRCLen:
		l.VCRC = binary.BigEndian.Uint16(data[end:])
		l.HasVCRC = true
	case len(data) >= end:
		l.Truncated = true
	default:
		l.Truncated = true
		df.SetTruncated()
		end = len(data)
	}
	l.BaseLayer = layers.BaseLayer{Contents: data[:LRHLen], Payload: data[LRHLen:end]}
	return nil
}

// SerializeTo prepends the LRH to the buffer (which holds everything up to
// the ICRC) and appends the VCRC. With FixLengths, PktLen is set from the
// buffer. With ComputeChecksums, the ICRC (for LNH local/global) and then
// the VCRC are computed over the finished packet; otherwise l.VCRC is
// written as is.
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		n := len(b.Bytes()) + LRHLen
		if n%4 != 0 || n/4 > 0x7FF {
			return fmt.Errorf("roce: LRH: packet of %d bytes cannot be described by PktLen: %w", n, ErrBadLength)
		}
		l.PktLen = uint16(n / 4)
	}
	d, err := b.PrependBytes(LRHLen)
	if err != nil {
		return err
	}
	d[0] = l.VL<<4 | l.LVer&0xF
	d[1] = l.SL<<4 | (l.Rsv2&0x3)<<2 | uint8(l.LNH)&0x3
	binary.BigEndian.PutUint16(d[2:], l.DLID)
	binary.BigEndian.PutUint16(d[4:], uint16(l.Rsv5)<<11|l.PktLen&0x7FF)
	binary.BigEndian.PutUint16(d[6:], l.SLID)
	if opts.ComputeChecksums && (l.LNH == LNHLocal || l.LNH == LNHGlobal) {
		if err := FixICRCIB(b.Bytes()); err != nil {
			return err
		}
	}
	t, err := b.AppendBytes(VCRCLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(t, l.VCRC)
	if opts.ComputeChecksums {
		if err := FixVCRC(b.Bytes()); err != nil {
			return err
		}
		l.VCRC = binary.BigEndian.Uint16(b.Bytes()[int(l.PktLen)*4:])
	}
	return nil
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	l := &LRH{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return p.NextDecoder(l.NextLayerType())
}
