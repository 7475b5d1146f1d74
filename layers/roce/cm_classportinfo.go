package roce

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ClassPortInfoLength is the size of the ClassPortInfo attribute (IBA Vol 1
// 13.4.8.1); the rest of the MAD data area is reserved.
const ClassPortInfoLength = 72

// ClassPortInfo is the attribute every management class supports (IBA
// Vol 1 13.4.8.1); the CM serves it as attribute 0x0001 and uses it for
// redirection (the ARI of REJ reasons 24/25, the Additional Information of
// APR status 4 and SIDR_REP status 4). Offsets:
//
//	0  BaseVersion (8)    1  ClassVersion (8)    2  CapabilityMask (16)
//	4  CapabilityMask2 (27) RespTimeValue (5)
//	8  RedirectGID (128)
//	24 RedirectTC (8) RedirectSL (4) RedirectFL (20)
//	28 RedirectLID (16)   30 RedirectP_Key (16)
//	32 Reserved (8) RedirectQP (24)
//	36 RedirectQ_Key (32)
//	40 TrapGID (128)
//	56 TrapTC (8) TrapSL (4) TrapFL (20)
//	60 TrapLID (16)       62 TrapP_Key (16)
//	64 TrapHL (8) TrapQP (24)
//	68 TrapQ_Key (32)
type ClassPortInfo struct {
	layers.BaseLayer
	BaseVersion     uint8
	ClassVersion    uint8
	CapabilityMask  uint16
	CapabilityMask2 uint32 // 27 bits
	RespTimeValue   uint8  // 5 bits, 4.096 µs × 2^v
	RedirectGID     [16]byte
	RedirectTC      uint8
	RedirectSL      uint8  // 4 bits
	RedirectFL      uint32 // 20 bits
	RedirectLID     uint16
	RedirectPKey    uint16
	RedirectQP      uint32 // 24 bits
	RedirectQKey    uint32
	TrapGID         [16]byte
	TrapTC          uint8
	TrapSL          uint8  // 4 bits
	TrapFL          uint32 // 20 bits
	TrapLID         uint16
	TrapPKey        uint16
	TrapHL          uint8
	TrapQP          uint32 // 24 bits
	TrapQKey        uint32
}

// LayerType returns LayerTypeClassPortInfo.
func (c *ClassPortInfo) LayerType() gopacket.LayerType { return LayerTypeClassPortInfo }

// CanDecode returns LayerTypeClassPortInfo.
func (c *ClassPortInfo) CanDecode() gopacket.LayerClass { return LayerTypeClassPortInfo }

// NextLayerType returns gopacket.LayerTypeZero.
func (c *ClassPortInfo) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a ClassPortInfo from at least 72 bytes: the MAD
// data area of a ClassPortInfo MAD, or a REJ ARI / APR or SIDR_REP
// Additional Information that carries one. Contents are at most the 232
// bytes of a MAD data area.
func (c *ClassPortInfo) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ClassPortInfoLength {
		df.SetTruncated()
		return fmt.Errorf("roce: ClassPortInfo: %d bytes, need %d (IBA Vol 1 13.4.8.1): %w", len(data), ClassPortInfoLength, ErrTooShort)
	}
	d := data
	if len(d) > MADDataLength {
		d = d[:MADDataLength]
	}
	c.BaseVersion = d[0]
	c.ClassVersion = d[1]
	c.CapabilityMask = binary.BigEndian.Uint16(d[2:4])
	w := binary.BigEndian.Uint32(d[4:8])
	c.CapabilityMask2 = w >> 5
	c.RespTimeValue = uint8(w & 0x1f)
	copy(c.RedirectGID[:], d[8:24])
	c.RedirectTC = d[24]
	c.RedirectSL = d[25] >> 4
	c.RedirectFL = cmGet24(d[25:28]) & 0xfffff
	c.RedirectLID = binary.BigEndian.Uint16(d[28:30])
	c.RedirectPKey = binary.BigEndian.Uint16(d[30:32])
	c.RedirectQP = cmGet24(d[33:36])
	c.RedirectQKey = binary.BigEndian.Uint32(d[36:40])
	copy(c.TrapGID[:], d[40:56])
	c.TrapTC = d[56]
	c.TrapSL = d[57] >> 4
	c.TrapFL = cmGet24(d[57:60]) & 0xfffff
	c.TrapLID = binary.BigEndian.Uint16(d[60:62])
	c.TrapPKey = binary.BigEndian.Uint16(d[62:64])
	c.TrapHL = d[64]
	c.TrapQP = cmGet24(d[65:68])
	c.TrapQKey = binary.BigEndian.Uint32(d[68:72])
	c.Contents = d
	c.Payload = nil
	return nil
}

// encode writes the 72-byte attribute into b.
func (c *ClassPortInfo) encode(b []byte) {
	b[0] = c.BaseVersion
	b[1] = c.ClassVersion
	binary.BigEndian.PutUint16(b[2:4], c.CapabilityMask)
	binary.BigEndian.PutUint32(b[4:8], (c.CapabilityMask2&0x7ffffff)<<5|uint32(c.RespTimeValue&0x1f))
	copy(b[8:24], c.RedirectGID[:])
	b[24] = c.RedirectTC
	cmPut24(b[25:28], uint32(c.RedirectSL&0xf)<<20|c.RedirectFL&0xfffff)
	binary.BigEndian.PutUint16(b[28:30], c.RedirectLID)
	binary.BigEndian.PutUint16(b[30:32], c.RedirectPKey)
	b[32] = 0
	cmPut24(b[33:36], c.RedirectQP)
	binary.BigEndian.PutUint32(b[36:40], c.RedirectQKey)
	copy(b[40:56], c.TrapGID[:])
	b[56] = c.TrapTC
	cmPut24(b[57:60], uint32(c.TrapSL&0xf)<<20|c.TrapFL&0xfffff)
	binary.BigEndian.PutUint16(b[60:62], c.TrapLID)
	binary.BigEndian.PutUint16(b[62:64], c.TrapPKey)
	b[64] = c.TrapHL
	cmPut24(b[65:68], c.TrapQP)
	binary.BigEndian.PutUint32(b[68:72], c.TrapQKey)
}

// AppendTo appends the 72-byte attribute to b, for building a REJ ARI or an
// APR or SIDR_REP Additional Information.
func (c *ClassPortInfo) AppendTo(b []byte) []byte {
	n := len(b)
	b = append(b, make([]byte, ClassPortInfoLength)...)
	c.encode(b[n:])
	return b
}

// SerializeTo prepends the 232-byte MAD data area holding the attribute,
// reserved bytes zero.
func (c *ClassPortInfo) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := cmPrepend(b)
	if err != nil {
		return err
	}
	c.encode(d)
	return nil
}

func decodeClassPortInfo(data []byte, p gopacket.PacketBuilder) error {
	return cmDecodeLayer(&ClassPortInfo{}, data, p)
}
