package roce

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Extended transport headers (IBA Vol 1 §9.3, XRCETH Annex A14, FETH IBTA
// 1.5, CNP body Annex A17.9.2). The BTH decoder fills them in place as
// value fields of BTH (see BTH.Has); each is also a complete gopacket layer
// of its own, usable alone with DecodeFromBytes / SerializeTo and added as a
// separate layer by the gopacket.NewPacket decoder of BTH.
//
// When filled by BTH, Contents is the header's own bytes and Payload the
// bytes after it up to the end of the message payload (the following
// extended headers, if any, and the payload; never the pad or the ICRC).

// Wire lengths of the extended headers.
const (
	RDETHLen        = 4
	DETHLen         = 8
	XRCETHLen       = 4
	FETHLen         = 4
	RETHLen         = 16
	AtomicETHLen    = 28
	AETHLen         = 4
	AtomicAckETHLen = 8
	ImmDtLen        = 4
	IETHLen         = 4
	CNPLen          = 16
)

func be24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func putBE24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// prepend reserves n bytes in front of the buffer.
func prepend(b gopacket.SerializeBuffer, n int) ([]byte, error) { return b.PrependBytes(n) }

// RDETH is the Reliable Datagram Extended Transport Header (§9.3.1):
// 8 reserved bits and the 24-bit EE-Context.
type RDETH struct {
	layers.BaseLayer
	Reserved uint8
	EECnxt   uint32 // 24 bits
}

func (h *RDETH) decode(d []byte) {
	h.Reserved, h.EECnxt = d[0], be24(d[1:4])
}

func (h *RDETH) LayerType() gopacket.LayerType     { return LayerTypeRDETH }
func (h *RDETH) CanDecode() gopacket.LayerClass    { return LayerTypeRDETH }
func (h *RDETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < RDETHLen {
		df.SetTruncated()
		return shortError("RDETH", len(data), RDETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:RDETHLen], Payload: data[RDETHLen:]}
	return nil
}

func (h *RDETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, RDETHLen)
	if err != nil {
		return err
	}
	d[0] = h.Reserved
	putBE24(d[1:], h.EECnxt)
	return nil
}

// DETH is the Datagram Extended Transport Header (§9.3.2): Q_Key,
// 8 reserved bits and the 24-bit source QP.
type DETH struct {
	layers.BaseLayer
	QKey     uint32
	Reserved uint8
	SrcQP    uint32 // 24 bits
}

func (h *DETH) decode(d []byte) {
	h.QKey, h.Reserved, h.SrcQP = binary.BigEndian.Uint32(d), d[4], be24(d[5:8])
}

func (h *DETH) LayerType() gopacket.LayerType     { return LayerTypeDETH }
func (h *DETH) CanDecode() gopacket.LayerClass    { return LayerTypeDETH }
func (h *DETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < DETHLen {
		df.SetTruncated()
		return shortError("DETH", len(data), DETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:DETHLen], Payload: data[DETHLen:]}
	return nil
}

func (h *DETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, DETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, h.QKey)
	d[4] = h.Reserved
	putBE24(d[5:], h.SrcQP)
	return nil
}

// XRCETH is the XRC Extended Transport Header (Annex A14): 8 reserved bits
// and the 24-bit XRC shared receive queue number.
type XRCETH struct {
	layers.BaseLayer
	Reserved uint8
	XRCSRQ   uint32 // 24 bits
}

func (h *XRCETH) decode(d []byte) {
	h.Reserved, h.XRCSRQ = d[0], be24(d[1:4])
}

func (h *XRCETH) LayerType() gopacket.LayerType     { return LayerTypeXRCETH }
func (h *XRCETH) CanDecode() gopacket.LayerClass    { return LayerTypeXRCETH }
func (h *XRCETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *XRCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < XRCETHLen {
		df.SetTruncated()
		return shortError("XRCETH", len(data), XRCETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:XRCETHLen], Payload: data[XRCETHLen:]}
	return nil
}

func (h *XRCETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, XRCETHLen)
	if err != nil {
		return err
	}
	d[0] = h.Reserved
	putBE24(d[1:], h.XRCSRQ)
	return nil
}

// FETH is the FLUSH Extended Transport Header (IBTA Vol 1 Release 1.5,
// RDMA FLUSH): bits 31-6 reserved, bits 5-4 the selectivity level, bits 3-0
// the placement type.
type FETH struct {
	layers.BaseLayer
	Reserved uint32 // 26 bits
	SEL      uint8  // selectivity level, 2 bits
	PLT      uint8  // placement type, 4 bits
}

func (h *FETH) decode(d []byte) {
	v := binary.BigEndian.Uint32(d)
	h.Reserved, h.SEL, h.PLT = v>>6, uint8(v>>4)&0x3, uint8(v)&0xF
}

func (h *FETH) LayerType() gopacket.LayerType     { return LayerTypeFETH }
func (h *FETH) CanDecode() gopacket.LayerClass    { return LayerTypeFETH }
func (h *FETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < FETHLen {
		df.SetTruncated()
		return shortError("FETH", len(data), FETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:FETHLen], Payload: data[FETHLen:]}
	return nil
}

func (h *FETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, FETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, h.Reserved<<6|uint32(h.SEL&0x3)<<4|uint32(h.PLT&0xF))
	return nil
}

// RETH is the RDMA Extended Transport Header (§9.3.3): virtual address,
// R_Key and DMA length.
type RETH struct {
	layers.BaseLayer
	VA     uint64
	RKey   uint32
	DMALen uint32
}

func (h *RETH) decode(d []byte) {
	h.VA = binary.BigEndian.Uint64(d)
	h.RKey = binary.BigEndian.Uint32(d[8:])
	h.DMALen = binary.BigEndian.Uint32(d[12:])
}

func (h *RETH) LayerType() gopacket.LayerType     { return LayerTypeRETH }
func (h *RETH) CanDecode() gopacket.LayerClass    { return LayerTypeRETH }
func (h *RETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < RETHLen {
		df.SetTruncated()
		return shortError("RETH", len(data), RETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:RETHLen], Payload: data[RETHLen:]}
	return nil
}

func (h *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, RETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.VA)
	binary.BigEndian.PutUint32(d[8:], h.RKey)
	binary.BigEndian.PutUint32(d[12:], h.DMALen)
	return nil
}

// AtomicETH is the Atomic Extended Transport Header (§9.3.4): virtual
// address, R_Key, swap (or add) data and compare data.
type AtomicETH struct {
	layers.BaseLayer
	VA     uint64
	RKey   uint32
	SwapDt uint64 // swap data (CompareSwap) or add data (FetchAdd)
	CmpDt  uint64
}

func (h *AtomicETH) decode(d []byte) {
	h.VA = binary.BigEndian.Uint64(d)
	h.RKey = binary.BigEndian.Uint32(d[8:])
	h.SwapDt = binary.BigEndian.Uint64(d[12:])
	h.CmpDt = binary.BigEndian.Uint64(d[20:])
}

func (h *AtomicETH) LayerType() gopacket.LayerType     { return LayerTypeAtomicETH }
func (h *AtomicETH) CanDecode() gopacket.LayerClass    { return LayerTypeAtomicETH }
func (h *AtomicETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AtomicETHLen {
		df.SetTruncated()
		return shortError("AtomicETH", len(data), AtomicETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:AtomicETHLen], Payload: data[AtomicETHLen:]}
	return nil
}

func (h *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, AtomicETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.VA)
	binary.BigEndian.PutUint32(d[8:], h.RKey)
	binary.BigEndian.PutUint64(d[12:], h.SwapDt)
	binary.BigEndian.PutUint64(d[20:], h.CmpDt)
	return nil
}

// AETH is the ACK Extended Transport Header (§9.3.5): the syndrome and the
// 24-bit message sequence number.
type AETH struct {
	layers.BaseLayer
	Syndrome Syndrome
	MSN      uint32 // 24 bits
}

func (h *AETH) decode(d []byte) {
	h.Syndrome, h.MSN = Syndrome(d[0]), be24(d[1:4])
}

func (h *AETH) LayerType() gopacket.LayerType     { return LayerTypeAETH }
func (h *AETH) CanDecode() gopacket.LayerClass    { return LayerTypeAETH }
func (h *AETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AETHLen {
		df.SetTruncated()
		return shortError("AETH", len(data), AETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:AETHLen], Payload: data[AETHLen:]}
	return nil
}

func (h *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, AETHLen)
	if err != nil {
		return err
	}
	d[0] = uint8(h.Syndrome)
	putBE24(d[1:], h.MSN)
	return nil
}

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header
// (§9.3.6): the original remote data.
type AtomicAckETH struct {
	layers.BaseLayer
	OrigRemDt uint64
}

func (h *AtomicAckETH) decode(d []byte) { h.OrigRemDt = binary.BigEndian.Uint64(d) }

func (h *AtomicAckETH) LayerType() gopacket.LayerType     { return LayerTypeAtomicAckETH }
func (h *AtomicAckETH) CanDecode() gopacket.LayerClass    { return LayerTypeAtomicAckETH }
func (h *AtomicAckETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AtomicAckETHLen {
		df.SetTruncated()
		return shortError("AtomicAckETH", len(data), AtomicAckETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:AtomicAckETHLen], Payload: data[AtomicAckETHLen:]}
	return nil
}

func (h *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, AtomicAckETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.OrigRemDt)
	return nil
}

// ImmDt is the Immediate Data Extended Transport Header (§9.3.7).
type ImmDt struct {
	layers.BaseLayer
	Data uint32
}

func (h *ImmDt) decode(d []byte) { h.Data = binary.BigEndian.Uint32(d) }

func (h *ImmDt) LayerType() gopacket.LayerType     { return LayerTypeImmDt }
func (h *ImmDt) CanDecode() gopacket.LayerClass    { return LayerTypeImmDt }
func (h *ImmDt) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ImmDtLen {
		df.SetTruncated()
		return shortError("ImmDt", len(data), ImmDtLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:ImmDtLen], Payload: data[ImmDtLen:]}
	return nil
}

func (h *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, ImmDtLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, h.Data)
	return nil
}

// IETH is the Invalidate Extended Transport Header (§9.3.8): the R_Key
// the responder invalidates.
type IETH struct {
	layers.BaseLayer
	RKey uint32
}

func (h *IETH) decode(d []byte) { h.RKey = binary.BigEndian.Uint32(d) }

func (h *IETH) LayerType() gopacket.LayerType     { return LayerTypeIETH }
func (h *IETH) CanDecode() gopacket.LayerClass    { return LayerTypeIETH }
func (h *IETH) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < IETHLen {
		df.SetTruncated()
		return shortError("IETH", len(data), IETHLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:IETHLen], Payload: data[IETHLen:]}
	return nil
}

func (h *IETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, IETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, h.RKey)
	return nil
}

// CNP is the body of a RoCEv2 Congestion Notification Packet (opcode 0x81,
// Annex A17.9.2): 16 reserved bytes between the BTH and the ICRC.
type CNP struct {
	layers.BaseLayer
	Reserved [16]byte
}

func (h *CNP) decode(d []byte) { copy(h.Reserved[:], d[:CNPLen]) }

func (h *CNP) LayerType() gopacket.LayerType     { return LayerTypeCNP }
func (h *CNP) CanDecode() gopacket.LayerClass    { return LayerTypeCNP }
func (h *CNP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

func (h *CNP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < CNPLen {
		df.SetTruncated()
		return shortError("CNP", len(data), CNPLen)
	}
	h.decode(data)
	h.BaseLayer = layers.BaseLayer{Contents: data[:CNPLen], Payload: data[CNPLen:]}
	return nil
}

func (h *CNP) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := prepend(b, CNPLen)
	if err != nil {
		return err
	}
	copy(d, h.Reserved[:])
	return nil
}
