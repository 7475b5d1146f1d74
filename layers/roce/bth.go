package roce

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// BTHLen is the length of the Base Transport Header (IBA Vol 1 §9.2).
const BTHLen = 12

// ICRCLen is the length of the invariant CRC that ends every IBA transport
// packet (IBA Vol 1 §7.8.1).
const ICRCLen = 4

// BTH is the Base Transport Header (IBA Vol 1 §9.2) together with every
// extended transport header its OpCode implies (§9.3), the message payload,
// the pad and the ICRC (§7.8.1).
//
// Its input is the bytes from the BTH through the ICRC inclusive: the UDP
// payload for RoCEv2 (Annex A17), the GRH payload for RoCEv1 (Annex A16),
// the LRH payload (or GRH payload) for native InfiniBand.
//
// Layout of the first 12 bytes (§9.2):
//
//	byte 0     OpCode
//	byte 1     SE(1) M(1) PadCnt(2) TVer(4)
//	bytes 2-3  P_Key
//	byte 4     Resv8a: FECN(1) BECN(1) reserved(6) (FECN/BECN: Annex A10)
//	bytes 5-7  DestQP
//	byte 8     AckReq(1) Resv7(7)
//	bytes 9-11 PSN
//
// The opcode, not the bytes, says which extended headers follow, so
// DecodeFromBytes decodes them all into the value fields below and records
// them in Ext (test with Has). Contents is the 12 BTH bytes; Payload is the
// message payload, without extended headers, pad and ICRC.
type BTH struct {
	layers.BaseLayer
	OpCode OpCode
	SE     bool  // solicited event
	M      bool  // MigReq
	PadCnt uint8 // pad bytes before the ICRC, 0-3
	TVer   uint8 // transport header version, 0
	PKey   uint16
	FECN   bool   // forward explicit congestion notification (Resv8a bit 7)
	BECN   bool   // backward explicit congestion notification (Resv8a bit 6)
	Resv6  uint8  // the other 6 bits of Resv8a
	DestQP uint32 // 24 bits
	AckReq bool
	Resv7  uint8
	PSN    uint32 // 24 bits

	// Ext is the set of extended headers decoded (those the opcode implies).
	Ext          ExtHeaders
	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	FETH         FETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	CNP          CNP

	// Pad is the PadCnt bytes between payload and ICRC (nil if cut off).
	Pad []byte
	// ICRC is the invariant CRC as the 4 wire bytes read big-endian, which
	// is how tshark shows infiniband.invariant.crc (e.g. 0xbca0d3eb). It is
	// the byte-reversed CRC-32 value; compare it with ICRCv2 and friends,
	// which return the same representation. Valid only if HasICRC.
	ICRC    uint32
	HasICRC bool
	// Truncated is set when the capture cut the packet after the headers:
	// the payload may be incomplete and the ICRC is missing ("not
	// verifiable").
	Truncated bool
	// PayloadLen is the payload length on the wire; it equals len(Payload)
	// unless Truncated, and is -1 when truncated and the real length is
	// unknown (see DecodeWithLength).
	PayloadLen int
}

func (b *BTH) LayerType() gopacket.LayerType  { return LayerTypeBTH }
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// Has reports whether the extended header(s) x were decoded.
func (b *BTH) Has(x ExtHeaders) bool { return b.Ext.Has(x) }

// NextLayerType is LayerTypeMAD for a UD SEND_ONLY to QP0 or QP1 (the
// subnet management and general services interfaces, IBA Vol 1 chapter
// 13), otherwise gopacket.LayerTypePayload.
func (b *BTH) NextLayerType() gopacket.LayerType {
	if b.OpCode == OpUDSendOnly && b.DestQP <= 1 {
		return LayerTypeMAD
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the BTH, its extended headers, the payload, the
// pad and the ICRC. The input is considered cut short by the capture if
// df reports so (a gopacket.DecodingLayerParser whose earlier layer called
// SetTruncated, or a packet whose metadata says Truncated); then the
// payload is everything after the headers and there is no ICRC. It returns
// an error if the BTH or an extended header the opcode implies is cut.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	err := b.decode(data, -1, feedbackTruncated(df))
	if errors.Is(err, ErrTooShort) {
		df.SetTruncated()
	}
	return err
}

// DecodeWithLength is DecodeFromBytes for callers that know the wire length
// of the BTH..ICRC bytes (UDP Length - 8, GRH PayLen, LRH PktLen*4 - 8) —
// the way to get exact payload/pad/ICRC positions from a packet cut by the
// snap length. Bytes beyond wireLen are ignored; fewer bytes than wireLen
// mean truncated.
func (b *BTH) DecodeWithLength(data []byte, wireLen int, df gopacket.DecodeFeedback) error {
	if wireLen < 0 {
		return fmt.Errorf("roce: BTH: negative wire length %d: %w", wireLen, ErrBadLength)
	}
	err := b.decode(data, wireLen, false)
	if err == nil && b.Truncated {
		df.SetTruncated()
	}
	return err
}

// feedbackTruncated finds out whether an earlier layer has reported the
// packet truncated.
func feedbackTruncated(df gopacket.DecodeFeedback) bool {
	switch f := df.(type) {
	case *gopacket.DecodingLayerParser:
		return f.Truncated
	case interface {
		Metadata() *gopacket.PacketMetadata
	}:
		return f.Metadata().Truncated
	}
	return false
}

func (b *BTH) decode(data []byte, wireLen int, truncated bool) error {
	*b = BTH{}
	if len(data) < BTHLen {
		return shortError("BTH", len(data), BTHLen)
	}
	b.OpCode = OpCode(data[0])
	b.SE = data[1]&0x80 != 0
	b.M = data[1]&0x40 != 0
	b.PadCnt = (data[1] >> 4) & 0x3
	b.TVer = data[1] & 0xF
	b.PKey = binary.BigEndian.Uint16(data[2:4])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.Resv6 = data[4] & 0x3F
	b.DestQP = be24(data[5:8])
	b.AckReq = data[8]&0x80 != 0
	b.Resv7 = data[8] & 0x7F
	b.PSN = be24(data[9:12])

	ext := opTable[b.OpCode].ext
	hdrLen := BTHLen
	// The headers' bits are in wire order (ExtHeaders): visit the set
	// ones only, lowest first, instead of all of extInfo (twice per
	// packet, that loop was half of decode's instructions).
	for x := ext; x != 0; x &= x - 1 {
		i := &extInfo[bits.TrailingZeros16(uint16(x))]
		if len(data) < hdrLen+i.len {
			return fmt.Errorf("roce: %s: %s cut: %d bytes after BTH, need %d: %w",
				b.OpCode, i.name, len(data)-BTHLen, hdrLen-BTHLen+i.len, ErrTooShort)
		}
		hdrLen += i.len
	}

	// Where do payload, pad and ICRC sit?
	if wireLen >= 0 {
		if wireLen < hdrLen+int(b.PadCnt)+ICRCLen {
			return fmt.Errorf("roce: %s: wire length %d too small for %d header bytes, %d pad and ICRC: %w",
				b.OpCode, wireLen, hdrLen, b.PadCnt, ErrBadLength)
		}
		if len(data) >= wireLen {
			data = data[:wireLen]
		} else {
			truncated = true
		}
	} else if !truncated && len(data) < hdrLen+ICRCLen {
		// No room for the ICRC: the capture must have cut it.
		truncated = true
	}
	var payEnd int
	switch {
	case !truncated:
		icrcOff := len(data) - ICRCLen
		payEnd = icrcOff - int(b.PadCnt)
		if payEnd < hdrLen {
			return fmt.Errorf("roce: %s: pad count %d larger than the %d payload bytes: %w",
				b.OpCode, b.PadCnt, icrcOff-hdrLen, ErrBadLength)
		}
		b.Pad = data[payEnd:icrcOff]
		b.ICRC = binary.BigEndian.Uint32(data[icrcOff:])
		b.HasICRC = true
		b.PayloadLen = payEnd - hdrLen
	case wireLen >= 0:
		b.Truncated = true
		wirePayEnd := wireLen - ICRCLen - int(b.PadCnt)
		b.PayloadLen = wirePayEnd - hdrLen
		payEnd = min(len(data), wirePayEnd)
		if len(data) > wirePayEnd {
			b.Pad = data[wirePayEnd:min(len(data), wireLen-ICRCLen)]
		}
	default:
		b.Truncated = true
		b.PayloadLen = -1
		payEnd = len(data)
	}

	// Extended headers, in wire order.
	off := BTHLen
	for x := ext; x != 0; x &= x - 1 {
		i := &extInfo[bits.TrailingZeros16(uint16(x))]
		h, end := data[off:off+i.len], off+i.len
		base := layers.BaseLayer{Contents: h, Payload: data[end:payEnd]}
		switch i.ext {
		case ExtRDETH:
			b.RDETH.decode(h)
			b.RDETH.BaseLayer = base
		case ExtDETH:
			b.DETH.decode(h)
			b.DETH.BaseLayer = base
		case ExtXRCETH:
			b.XRCETH.decode(h)
			b.XRCETH.BaseLayer = base
		case ExtFETH:
			b.FETH.decode(h)
			b.FETH.BaseLayer = base
		case ExtRETH:
			b.RETH.decode(h)
			b.RETH.BaseLayer = base
		case ExtAtomicETH:
			b.AtomicETH.decode(h)
			b.AtomicETH.BaseLayer = base
		case ExtAETH:
			b.AETH.decode(h)
			b.AETH.BaseLayer = base
		case ExtAtomicAckETH:
			b.AtomicAckETH.decode(h)
			b.AtomicAckETH.BaseLayer = base
		case ExtImmDt:
			b.ImmDt.decode(h)
			b.ImmDt.BaseLayer = base
		case ExtIETH:
			b.IETH.decode(h)
			b.IETH.BaseLayer = base
		case ExtCNP:
			b.CNP.decode(h)
			b.CNP.BaseLayer = base
		}
		off = end
	}
	b.Ext = ext
	b.BaseLayer = layers.BaseLayer{Contents: data[:BTHLen], Payload: data[hdrLen:payEnd]}
	return nil
}

// extLayer returns the embedded extended header for one bit of ExtHeaders.
func (b *BTH) extLayer(x ExtHeaders) gopacket.SerializableLayer {
	switch x {
	case ExtRDETH:
		return &b.RDETH
	case ExtDETH:
		return &b.DETH
	case ExtXRCETH:
		return &b.XRCETH
	case ExtFETH:
		return &b.FETH
	case ExtRETH:
		return &b.RETH
	case ExtAtomicETH:
		return &b.AtomicETH
	case ExtAETH:
		return &b.AETH
	case ExtAtomicAckETH:
		return &b.AtomicAckETH
	case ExtImmDt:
		return &b.ImmDt
	case ExtIETH:
		return &b.IETH
	case ExtCNP:
		return &b.CNP
	}
	return nil
}

// SerializeTo writes pad and ICRC after the bytes already in the buffer
// (the message payload) and the BTH with every extended header its OpCode
// implies (from the value fields, whatever Ext says) before them. With
// FixLengths, PadCnt is set from the payload length (§9.2: pad to a 4-byte
// multiple) and the pad is zero bytes; otherwise Pad is written if it has
// PadCnt bytes, else PadCnt zero bytes. The ICRC written is b.ICRC: it
// covers headers outside this layer, so fix it afterwards with FixICRCv2,
// FixICRCv1 or FixICRCIB (GRH and LRH do it themselves when serialized with
// ComputeChecksums).
//
// Do not serialize the separate extended-header layers that
// gopacket.NewPacket produced together with their BTH: the BTH writes them.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	payLen := len(buf.Bytes())
	if opts.FixLengths {
		b.PadCnt = uint8((4 - payLen%4) % 4)
	}
	tail, err := buf.AppendBytes(int(b.PadCnt) + ICRCLen)
	if err != nil {
		return err
	}
	pad := tail[:b.PadCnt]
	if !opts.FixLengths && len(b.Pad) == int(b.PadCnt) {
		copy(pad, b.Pad)
	} else {
		clear(pad)
	}
	binary.BigEndian.PutUint32(tail[b.PadCnt:], b.ICRC)

	ext := b.OpCode.ExtHeaders()
	for i := len(extInfo) - 1; i >= 0; i-- {
		if ext&extInfo[i].ext == 0 {
			continue
		}
		if err := b.extLayer(extInfo[i].ext).SerializeTo(buf, opts); err != nil {
			return err
		}
	}
	d, err := buf.PrependBytes(BTHLen)
	if err != nil {
		return err
	}
	d[0] = uint8(b.OpCode)
	d[1] = (b.PadCnt&0x3)<<4 | b.TVer&0xF
	if b.SE {
		d[1] |= 0x80
	}
	if b.M {
		d[1] |= 0x40
	}
	binary.BigEndian.PutUint16(d[2:], b.PKey)
	d[4] = b.Resv6 & 0x3F
	if b.FECN {
		d[4] |= 0x80
	}
	if b.BECN {
		d[4] |= 0x40
	}
	putBE24(d[5:], b.DestQP)
	d[8] = b.Resv7 & 0x7F
	if b.AckReq {
		d[8] |= 0x80
	}
	putBE24(d[9:], b.PSN)
	return nil
}

// decodeBTH is the gopacket.NewPacket decoder: it adds the BTH and then
// each extended header as a layer of its own.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{}
	var err error
	if feedbackTruncated(p) {
		if n := lengthHint(p); n >= 0 {
			err = b.decode(data, n, true)
		} else {
			err = b.decode(data, -1, true)
		}
	} else {
		err = b.decode(data, -1, false)
	}
	if err != nil {
		if errors.Is(err, ErrTooShort) {
			p.SetTruncated()
		}
		return err
	}
	p.AddLayer(b)
	if b.Truncated {
		p.SetTruncated()
	}
	for _, i := range extInfo {
		if b.Ext&i.ext != 0 {
			p.AddLayer(b.extLayer(i.ext).(gopacket.Layer))
		}
	}
	return p.NextDecoder(b.NextLayerType())
}

// lengthHint returns the BTH..ICRC wire length the layer before the BTH
// announces (UDP Length, GRH PayLen, LRH PktLen), or -1. During decoding
// the packet's Layers() returns what has been decoded so far, also for lazy
// packets.
func lengthHint(p gopacket.PacketBuilder) int {
	pk, ok := p.(interface{ Layers() []gopacket.Layer })
	if !ok {
		return -1
	}
	ls := pk.Layers()
	if len(ls) == 0 {
		return -1
	}
	switch l := ls[len(ls)-1].(type) {
	case *layers.UDP:
		if l.Length >= 8 {
			return int(l.Length) - 8
		}
	case *GRH:
		return int(l.PayLen)
	case *LRH:
		if l.LNH == LNHLocal && int(l.PktLen)*4 >= LRHLen {
			return int(l.PktLen)*4 - LRHLen
		}
	}
	return -1
}
