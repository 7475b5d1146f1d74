package iwarp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// MPA Request and Reply keys (RFC 5044 section 7.1).
const (
	MPAKeyReq = "MPA ID Req Frame"
	MPAKeyRep = "MPA ID Rep Frame"
)

// MPA Request/Reply sizes (RFC 5044 section 7.1, RFC 6581 section 5).
const (
	MPAReqRepHeaderLen   = 20  // Key (16) + flags/Res (1) + Rev (1) + PD_Length (2)
	MPAMaxPrivateDataLen = 512 // "PD_Length ... MUST NOT be larger than 512"
	EnhancedDataLen      = 4   // RFC 6581 IRD/ORD field at the front of the private data
)

// MPA Request/Reply flag bits, in the octet after the key (RFC 5044 section 7.1).
const (
	mpaFlagM        = 0x80 // M: the sender wants markers on the FPDUs it receives
	mpaFlagC        = 0x40 // C: the sender wants CRC32c
	mpaFlagR        = 0x20 // R: the Reply rejects the connection
	mpaFlagEnhanced = 0x10 // RFC 6581 enhanced connection establishment (see MPAReqRep.Enhanced)
	mpaResMask      = 0x0f // the rest of Res, zero on transmit
)

// MPA revisions (RFC 5044 section 7.1: Rev 1; RFC 6581 section 5: Rev 2).
const (
	MPARevision1 = 1
	MPARevision2 = 2
)

// Errors of MPA Request/Reply decoding. They are wrapped with the offending
// values; test with errors.Is.
var (
	ErrTruncated         = errors.New("iwarp: truncated")
	ErrNotMPAKey         = errors.New("iwarp: not an MPA Request/Reply key")
	ErrPrivateDataTooBig = errors.New("iwarp: MPA PD_Length larger than 512")
)

// IsMPAKey reports whether b begins with the 16-octet key of an MPA Request
// or Reply frame (RFC 5044 section 7.1). MPA has no well-known TCP port, so
// this is how a dissector recognises iWARP on an arbitrary TCP connection:
// the first payload octets of each direction are the Request or the Reply.
func IsMPAKey(b []byte) bool {
	if len(b) < 16 {
		return false
	}
	return string(b[:16]) == MPAKeyReq || string(b[:16]) == MPAKeyRep
}

// MPAReqRepLen returns the length of the MPA Request/Reply frame at the front
// of b (20 + PD_Length), and false when b is too short to tell or does not
// start with an MPA key.
func MPAReqRepLen(b []byte) (int, bool) {
	if len(b) < MPAReqRepHeaderLen || !IsMPAKey(b) {
		return 0, false
	}
	return MPAReqRepHeaderLen + int(binary.BigEndian.Uint16(b[18:20])), true
}

// EnhancedData is the RFC 6581 "Enhanced RDMA Connection Establishment Data":
// the first four octets of the private data of an MPA Rev 2 Request/Reply
// (RFC 6581 section 5):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A|B|           IRD             |C|D|           ORD             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// A selects the peer-to-peer connection model; B, C and D name the message
// the initiator sends as its "ready to receive" (RTR) first FPDU in
// peer-to-peer mode: a zero-length Send (B), a zero-length RDMA Write (C) or a
// zero-length RDMA Read (D). The same bit positions are in Linux siw
// (MPA_V2_PEER_TO_PEER, MPA_V2_ZERO_LENGTH_RTR, MPA_V2_RDMA_WRITE_RTR,
// MPA_V2_RDMA_READ_RTR), cxgb4 and i40iw.
type EnhancedData struct {
	A   bool   // peer-to-peer connection model
	B   bool   // RTR: zero-length Send (FPDU)
	IRD uint16 // Inbound RDMA Read Queue Depth, 14 bits
	C   bool   // RTR: zero-length RDMA Write
	D   bool   // RTR: zero-length RDMA Read
	ORD uint16 // Outbound RDMA Read Queue Depth, 14 bits
}

// PeerToPeer reports the A flag.
func (e EnhancedData) PeerToPeer() bool { return e.A }

// DecodeEnhancedData reads the four-octet RFC 6581 IRD/ORD field.
func DecodeEnhancedData(b []byte) (EnhancedData, error) {
	if len(b) < EnhancedDataLen {
		return EnhancedData{}, fmt.Errorf("%w: RFC 6581 IRD/ORD needs 4 octets, have %d", ErrTruncated, len(b))
	}
	ird := binary.BigEndian.Uint16(b[0:2])
	ord := binary.BigEndian.Uint16(b[2:4])
	return EnhancedData{
		A: ird&0x8000 != 0, B: ird&0x4000 != 0, IRD: ird & 0x3fff,
		C: ord&0x8000 != 0, D: ord&0x4000 != 0, ORD: ord & 0x3fff,
	}, nil
}

// Append appends the four-octet wire form of e. IRD and ORD are cut to 14 bits.
func (e EnhancedData) Append(b []byte) []byte {
	ird := e.IRD & 0x3fff
	ord := e.ORD & 0x3fff
	if e.A {
		ird |= 0x8000
	}
	if e.B {
		ird |= 0x4000
	}
	if e.C {
		ord |= 0x8000
	}
	if e.D {
		ord |= 0x4000
	}
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, ird), ord)
}

// LegacyIRDORDLen is the length of the legacy IRD/ORD negotiate header.
const LegacyIRDORDLen = 8

// SMBDirectPort is the TCP port of SMB Direct over iWARP ([MS-SMBD] 1.9,
// IANA "smbdirect"), where the legacy IRD/ORD header is sent.
const SMBDirectPort = 5445

// LegacyIRDORD is the "IRD/ORD Negotiate Header" that iWARP providers
// without RFC 6581 send as the first 8 octets of the MPA private data of a
// connection to port 5445 for SMB Direct ([MS-SMBD] section 6.1, "for iWARP
// providers that do not support [RFC6581] negotiation"; the Windows Server
// 2012 providers of the Wireshark wiki's SMB-Direct-over-iWARP capture send
// it in MPA revision 1; Wireshark 4.6 shows it as iwarp_mpa.legacy):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                              IRD                              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                              ORD                              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// IRD and ORD are the Incoming and Outgoing RDMA Read Depths the sender
// uses on the connection, 32 bits each in network byte order (the wiki
// capture: 00 00 00 10 / 00 00 00 00 is IRD 16, ORD 0). Some stacks wrote
// them little-endian (Wireshark 4.6's iwarp_mpa.broken_le_legacy):
// LittleEndian says the values read that way are the plausible ones.
type LegacyIRDORD struct {
	IRD, ORD     uint32
	LittleEndian bool
}

// legacyMax bounds a plausible legacy IRD or ORD: RFC 6581 has 14 bits,
// and no device offers more than 16 bits' worth of outstanding Reads.
const legacyMax = 0xffff

// DecodeLegacyIRDORD reads the legacy IRD/ORD header at the front of the
// private data b. It reports false when b is shorter than 8 octets or
// neither byte order gives two plausible depths (both at most 65535).
func DecodeLegacyIRDORD(b []byte) (LegacyIRDORD, bool) {
	if len(b) < LegacyIRDORDLen {
		return LegacyIRDORD{}, false
	}
	ird, ord := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if ird <= legacyMax && ord <= legacyMax {
		return LegacyIRDORD{IRD: ird, ORD: ord}, true
	}
	ird, ord = binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	if ird <= legacyMax && ord <= legacyMax {
		return LegacyIRDORD{IRD: ird, ORD: ord, LittleEndian: true}, true
	}
	return LegacyIRDORD{}, false
}

// DecodeLegacy reads the legacy IRD/ORD header ([MS-SMBD] 6.1) from the
// private data of a revision 1 frame without the RFC 6581 field, and makes
// it part of the layer's contents; the caller says when it applies (a
// connection to port 5445: SMBDirectPort). It reports whether it decoded.
func (m *MPAReqRep) DecodeLegacy() bool {
	m.HasLegacyIRDORD = false
	m.LegacyIRDORD = LegacyIRDORD{}
	if m.Rev != MPARevision1 || m.HasEnhancedData {
		return false
	}
	l, ok := DecodeLegacyIRDORD(m.PrivateData)
	if !ok {
		return false
	}
	m.HasLegacyIRDORD, m.LegacyIRDORD = true, l
	if n := len(m.Contents); n == MPAReqRepHeaderLen && len(m.Payload) >= LegacyIRDORDLen {
		m.Contents = m.Contents[: n+LegacyIRDORDLen : n+LegacyIRDORDLen]
		m.Payload = m.Payload[LegacyIRDORDLen:]
	}
	return true
}

// MPAReqRep is an MPA Request or Reply frame (RFC 5044 section 7.1, RFC 6581
// section 5):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Key ("MPA ID Req Frame" or "MPA ID Rep Frame"), 16 octets |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|M|C|R|E|  Res  |     Rev       |          PD_Length            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	~                   Private Data (PD_Length octets)             ~
//
// The layer's contents are the 20-octet header plus, when present, the RFC
// 6581 IRD/ORD field; its payload is the private data that belongs to the
// ULP (for NFS/RDMA, the RFC 8797 private data).
type MPAReqRep struct {
	layers.BaseLayer
	Key [16]byte
	M   bool // markers wanted on the FPDUs this sender receives
	C   bool // CRC32c wanted
	R   bool // connection rejected (Reply)
	// Enhanced is bit 3 of the flags octet, which RFC 5044 had reserved and
	// Rev 2 senders set to say the RFC 6581 enhanced connection
	// establishment data leads the private data (Linux siw
	// MPA_RR_FLAG_ENHANCED, cxgb4 MPA_ENHANCED_RDMA_CONN, i40iw
	// IETF_MPA_V2_FLAG; Wireshark 4.6 iwarp_mpa.enhanced_flag). tshark 4.0
	// still counts it in iwarp_mpa.res.
	Enhanced bool
	Res      uint8 // the remaining reserved bits (mask 0x0f); see ResField for tshark's 5-bit view
	Rev      uint8
	PDLength uint16
	// PrivateData is the whole Private Data field (PD_Length octets),
	// including the RFC 6581 IRD/ORD field when HasEnhancedData.
	PrivateData []byte
	// HasEnhancedData says the first four private data octets are the RFC
	// 6581 IRD/ORD field: Rev 2 with the Enhanced flag and PD_Length >= 4.
	HasEnhancedData bool
	EnhancedData    EnhancedData
	// HasLegacyIRDORD says the first eight private data octets are the
	// legacy IRD/ORD header ([MS-SMBD] 6.1); set by DecodeLegacy only.
	HasLegacyIRDORD bool
	LegacyIRDORD    LegacyIRDORD
}

// LayerType returns LayerTypeMPAReqRep.
func (m *MPAReqRep) LayerType() gopacket.LayerType { return LayerTypeMPAReqRep }

// CanDecode returns LayerTypeMPAReqRep.
func (m *MPAReqRep) CanDecode() gopacket.LayerClass { return LayerTypeMPAReqRep }

// NextLayerType returns gopacket.LayerTypePayload: the ULP private data.
func (m *MPAReqRep) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// IsRequest reports whether the key is "MPA ID Req Frame".
func (m *MPAReqRep) IsRequest() bool { return string(m.Key[:]) == MPAKeyReq }

// IsReply reports whether the key is "MPA ID Rep Frame".
func (m *MPAReqRep) IsReply() bool { return string(m.Key[:]) == MPAKeyRep }

// ResField returns the five reserved bits as RFC 5044 laid them out (mask
// 0x1f, the Enhanced flag included): tshark 4.0's iwarp_mpa.res.
func (m *MPAReqRep) ResField() uint8 {
	r := m.Res & mpaResMask
	if m.Enhanced {
		r |= mpaFlagEnhanced
	}
	return r
}

// ULPPrivateData returns the private data after the RFC 6581 IRD/ORD field
// (all of it when there is none).
func (m *MPAReqRep) ULPPrivateData() []byte {
	if m.HasEnhancedData {
		return m.PrivateData[EnhancedDataLen:]
	}
	if m.HasLegacyIRDORD {
		return m.PrivateData[LegacyIRDORDLen:]
	}
	return m.PrivateData
}

// Len returns the frame length on the wire.
func (m *MPAReqRep) Len() int { return MPAReqRepHeaderLen + len(m.PrivateData) }

// DecodeFromBytes decodes an MPA Request or Reply frame at the front of data.
// Octets after the frame (the first FPDUs, when TCP carried them in the same
// segment) are not part of the layer.
func (m *MPAReqRep) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MPAReqRepHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("%w: MPA Request/Reply needs %d octets, have %d", ErrTruncated, MPAReqRepHeaderLen, len(data))
	}
	if !IsMPAKey(data) {
		return fmt.Errorf("%w: %q", ErrNotMPAKey, data[:16])
	}
	copy(m.Key[:], data[:16])
	f := data[16]
	m.M = f&mpaFlagM != 0
	m.C = f&mpaFlagC != 0
	m.R = f&mpaFlagR != 0
	m.Enhanced = f&mpaFlagEnhanced != 0
	m.Res = f & mpaResMask
	m.Rev = data[17]
	m.PDLength = binary.BigEndian.Uint16(data[18:20])
	if m.PDLength > MPAMaxPrivateDataLen {
		return fmt.Errorf("%w: PD_Length %d (RFC 5044 section 7.1)", ErrPrivateDataTooBig, m.PDLength)
	}
	end := MPAReqRepHeaderLen + int(m.PDLength)
	if len(data) < end {
		df.SetTruncated()
		return fmt.Errorf("%w: MPA PD_Length %d needs %d octets, have %d", ErrTruncated, m.PDLength, end, len(data))
	}
	m.PrivateData = data[MPAReqRepHeaderLen:end]
	m.HasEnhancedData = false
	m.EnhancedData = EnhancedData{}
	m.HasLegacyIRDORD = false
	m.LegacyIRDORD = LegacyIRDORD{}
	hdr := MPAReqRepHeaderLen
	if m.Rev == MPARevision2 && m.Enhanced && len(m.PrivateData) >= EnhancedDataLen {
		m.EnhancedData, _ = DecodeEnhancedData(m.PrivateData)
		m.HasEnhancedData = true
		hdr += EnhancedDataLen
	}
	m.Contents = data[:hdr]
	m.Payload = data[hdr:end]
	return nil
}

// SerializeTo writes the frame. With opts.FixLengths, PDLength becomes
// len(PrivateData). The Key is written as set (see SetKey).
func (m *MPAReqRep) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if len(m.PrivateData) > MPAMaxPrivateDataLen {
		return fmt.Errorf("%w: %d octets", ErrPrivateDataTooBig, len(m.PrivateData))
	}
	if opts.FixLengths {
		m.PDLength = uint16(len(m.PrivateData))
	}
	buf, err := b.PrependBytes(MPAReqRepHeaderLen + len(m.PrivateData))
	if err != nil {
		return err
	}
	copy(buf[:16], m.Key[:])
	f := m.Res & mpaResMask
	if m.M {
		f |= mpaFlagM
	}
	if m.C {
		f |= mpaFlagC
	}
	if m.R {
		f |= mpaFlagR
	}
	if m.Enhanced {
		f |= mpaFlagEnhanced
	}
	buf[16] = f
	buf[17] = m.Rev
	binary.BigEndian.PutUint16(buf[18:20], m.PDLength)
	copy(buf[20:], m.PrivateData)
	return nil
}

// SetKey sets the key of a Request (request true) or a Reply.
func (m *MPAReqRep) SetKey(request bool) {
	if request {
		copy(m.Key[:], MPAKeyReq)
	} else {
		copy(m.Key[:], MPAKeyRep)
	}
}

func decodeMPAReqRep(data []byte, p gopacket.PacketBuilder) error {
	m := &MPAReqRep{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return p.NextDecoder(m.NextLayerType())
}

// Framing is what MPA does in one direction of a connection in full
// operation: markers and CRC32c on or off.
type Framing struct {
	Markers bool
	CRC     bool
}

// Negotiate returns the framing of each direction once the Request and the
// Reply have crossed (RFC 5044 section 7.1): the M bit asks for markers on the
// FPDUs its sender receives, so the initiator sends markers when the Reply has
// M set and the responder when the Request has; CRC32c is used in both
// directions when either side set C.
func Negotiate(req, rep *MPAReqRep) (initiatorToResponder, responderToInitiator Framing) {
	crc := req.C || rep.C
	return Framing{Markers: rep.M, CRC: crc}, Framing{Markers: req.M, CRC: crc}
}
