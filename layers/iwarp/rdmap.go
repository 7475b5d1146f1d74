package iwarp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// RDMAPVersion1 is the RDMA Version (RV) of RFC 5040 (section 4.2: "MUST be
// set to 01b").
const RDMAPVersion1 = 1

// RDMAP header sizes after the DDP header.
const (
	ReadRequestHeaderLen    = 28 // RFC 5040 section 4.4
	TerminateControlLen     = 4  // RFC 5040 section 4.8
	AtomicRequestHeaderLen  = 52 // RFC 7306 (as Wireshark lays it out)
	AtomicResponseHeaderLen = 12 // RFC 7306
)

// Opcode is the RDMAP message type (RFC 5040 section 4.2; RFC 7306 adds
// 1000b-1011b).
type Opcode uint8

// RDMAP opcodes.
const (
	OpRDMAWrite               Opcode = 0x0 // tagged
	OpRDMAReadRequest         Opcode = 0x1 // untagged, QN 1
	OpRDMAReadResponse        Opcode = 0x2 // tagged
	OpSend                    Opcode = 0x3 // untagged, QN 0
	OpSendWithInvalidate      Opcode = 0x4 // untagged, QN 0, Invalidate STag
	OpSendWithSE              Opcode = 0x5 // untagged, QN 0
	OpSendWithSEAndInvalidate Opcode = 0x6 // untagged, QN 0, Invalidate STag
	OpTerminate               Opcode = 0x7 // untagged, QN 2
	OpImmediateData           Opcode = 0x8 // RFC 7306, untagged
	OpImmediateDataWithSE     Opcode = 0x9 // RFC 7306, untagged
	OpAtomicRequest           Opcode = 0xa // RFC 7306, untagged
	OpAtomicResponse          Opcode = 0xb // RFC 7306, untagged
)

var opcodeNames = [...]string{
	OpRDMAWrite:               "RDMA Write",
	OpRDMAReadRequest:         "RDMA Read Request",
	OpRDMAReadResponse:        "RDMA Read Response",
	OpSend:                    "Send",
	OpSendWithInvalidate:      "Send with Invalidate",
	OpSendWithSE:              "Send with SE",
	OpSendWithSEAndInvalidate: "Send with SE and Invalidate",
	OpTerminate:               "Terminate",
	OpImmediateData:           "Immediate Data",
	OpImmediateDataWithSE:     "Immediate Data with SE",
	OpAtomicRequest:           "Atomic Request",
	OpAtomicResponse:          "Atomic Response",
}

func (o Opcode) String() string {
	if int(o) < len(opcodeNames) {
		return opcodeNames[o]
	}
	return fmt.Sprintf("Reserved opcode 0x%x", uint8(o))
}

// Tagged reports whether the opcode rides the DDP tagged buffer model (RDMA
// Write and RDMA Read Response, RFC 5040 section 4.3).
func (o Opcode) Tagged() bool { return o == OpRDMAWrite || o == OpRDMAReadResponse }

// Known reports whether RFC 5040 or RFC 7306 defines the opcode.
func (o Opcode) Known() bool { return o <= OpAtomicResponse }

// HasInvalidateSTag reports whether the untagged RsvdULP word carries an
// Invalidate STag (RFC 5040 section 4.3: Send with Invalidate and Send with
// Solicited Event and Invalidate).
func (o Opcode) HasInvalidateSTag() bool {
	return o == OpSendWithInvalidate || o == OpSendWithSEAndInvalidate
}

// IsSend reports whether the opcode is one of the four Send messages.
func (o Opcode) IsSend() bool { return o >= OpSend && o <= OpSendWithSEAndInvalidate }

// Untagged queue numbers used by RDMAP (RFC 5040 section 4.3, the QN column).
const (
	QNSend        = 0 // Send messages
	QNReadRequest = 1 // RDMA Read Requests
	QNTerminate   = 2 // Terminate
)

// ErrOpcodeBufferModel reports an opcode on the wrong DDP buffer model.
var ErrOpcodeBufferModel = errors.New("iwarp: RDMAP opcode on the wrong DDP buffer model")

// ReadRequest is the RDMA Read Request header (RFC 5040 section 4.4).
type ReadRequest struct {
	SinkSTag            uint32
	SinkTaggedOffset    uint64
	RDMAReadMessageSize uint32
	SourceSTag          uint32
	SourceTaggedOffset  uint64
}

// TermLayer is the layer a Terminate reports an error for (RFC 5040 section 4.8).
type TermLayer uint8

// Terminate layers.
const (
	TermLayerRDMAP TermLayer = 0
	TermLayerDDP   TermLayer = 1
	TermLayerLLP   TermLayer = 2 // MPA
)

func (l TermLayer) String() string {
	switch l {
	case TermLayerRDMAP:
		return "RDMA"
	case TermLayerDDP:
		return "DDP"
	case TermLayerLLP:
		return "LLP"
	}
	return fmt.Sprintf("Reserved layer 0x%x", uint8(l))
}

// RDMAPEType is an error type of layer RDMAP (RFC 5040 section 4.8).
type RDMAPEType uint8

// RDMAP error types.
const (
	RDMAPLocalCatastrophic RDMAPEType = 0
	RDMAPRemoteProtection  RDMAPEType = 1
	RDMAPRemoteOperation   RDMAPEType = 2
)

func (e RDMAPEType) String() string {
	switch e {
	case RDMAPLocalCatastrophic:
		return "Local Catastrophic Error"
	case RDMAPRemoteProtection:
		return "Remote Protection Error"
	case RDMAPRemoteOperation:
		return "Remote Operation Error"
	}
	return fmt.Sprintf("Reserved RDMAP error type 0x%x", uint8(e))
}

// RDMAPErrorCode is an RDMAP layer error code (RFC 5040 section 4.8).
type RDMAPErrorCode uint8

// RDMAP error codes.
const (
	RDMAPInvalidSTag          RDMAPErrorCode = 0x00
	RDMAPBaseOrBounds         RDMAPErrorCode = 0x01
	RDMAPAccessRights         RDMAPErrorCode = 0x02
	RDMAPSTagNotAssociated    RDMAPErrorCode = 0x03
	RDMAPTOWrap               RDMAPErrorCode = 0x04
	RDMAPInvalidVersion       RDMAPErrorCode = 0x05
	RDMAPUnexpectedOpcode     RDMAPErrorCode = 0x06
	RDMAPCatastrophicStream   RDMAPErrorCode = 0x07
	RDMAPCatastrophicGlobal   RDMAPErrorCode = 0x08
	RDMAPSTagCannotInvalidate RDMAPErrorCode = 0x09
	RDMAPUnspecified          RDMAPErrorCode = 0xff
)

func (c RDMAPErrorCode) String() string {
	switch c {
	case RDMAPInvalidSTag:
		return "Invalid STag"
	case RDMAPBaseOrBounds:
		return "Base or bounds violation"
	case RDMAPAccessRights:
		return "Access rights violation"
	case RDMAPSTagNotAssociated:
		return "STag not associated with RDMAP Stream"
	case RDMAPTOWrap:
		return "TO wrap"
	case RDMAPInvalidVersion:
		return "Invalid RDMAP version"
	case RDMAPUnexpectedOpcode:
		return "Unexpected OpCode"
	case RDMAPCatastrophicStream:
		return "Catastrophic error, localized to RDMAP Stream"
	case RDMAPCatastrophicGlobal:
		return "Catastrophic error, global"
	case RDMAPSTagCannotInvalidate:
		return "STag cannot be Invalidated"
	case RDMAPUnspecified:
		return "Unspecified Error"
	}
	return fmt.Sprintf("Reserved RDMAP error code 0x%02x", uint8(c))
}

// DDPEType is an error type of layer DDP (RFC 5040 section 4.8, RFC 5041 section 7).
type DDPEType uint8

// DDP error types.
const (
	DDPLocalCatastrophic DDPEType = 0
	DDPTaggedBuffer      DDPEType = 1
	DDPUntaggedBuffer    DDPEType = 2
	DDPReservedForLLP    DDPEType = 3
)

func (e DDPEType) String() string {
	switch e {
	case DDPLocalCatastrophic:
		return "Local Catastrophic Error"
	case DDPTaggedBuffer:
		return "Tagged Buffer Error"
	case DDPUntaggedBuffer:
		return "Untagged Buffer Error"
	case DDPReservedForLLP:
		return "Reserved for the use by the LLP"
	}
	return fmt.Sprintf("Reserved DDP error type 0x%x", uint8(e))
}

// DDPTaggedErrorCode is a DDP tagged buffer error code (RFC 5041 section 7).
type DDPTaggedErrorCode uint8

// DDP tagged buffer error codes.
const (
	DDPTaggedInvalidSTag       DDPTaggedErrorCode = 0x00
	DDPTaggedBaseOrBounds      DDPTaggedErrorCode = 0x01
	DDPTaggedSTagNotAssociated DDPTaggedErrorCode = 0x02
	DDPTaggedTOWrap            DDPTaggedErrorCode = 0x03
	DDPTaggedInvalidVersion    DDPTaggedErrorCode = 0x04
)

func (c DDPTaggedErrorCode) String() string {
	switch c {
	case DDPTaggedInvalidSTag:
		return "Invalid STag"
	case DDPTaggedBaseOrBounds:
		return "Base or bounds violation"
	case DDPTaggedSTagNotAssociated:
		return "STag not associated with DDP Stream"
	case DDPTaggedTOWrap:
		return "TO wrap"
	case DDPTaggedInvalidVersion:
		return "Invalid DDP version"
	}
	return fmt.Sprintf("Reserved DDP tagged error code 0x%02x", uint8(c))
}

// DDPUntaggedErrorCode is a DDP untagged buffer error code (RFC 5041 section 7).
type DDPUntaggedErrorCode uint8

// DDP untagged buffer error codes.
const (
	DDPUntaggedInvalidQN       DDPUntaggedErrorCode = 0x01
	DDPUntaggedInvalidMSNNoBuf DDPUntaggedErrorCode = 0x02
	DDPUntaggedInvalidMSNRange DDPUntaggedErrorCode = 0x03
	DDPUntaggedInvalidMO       DDPUntaggedErrorCode = 0x04
	DDPUntaggedMessageTooLong  DDPUntaggedErrorCode = 0x05
	DDPUntaggedInvalidVersion  DDPUntaggedErrorCode = 0x06
)

func (c DDPUntaggedErrorCode) String() string {
	switch c {
	case DDPUntaggedInvalidQN:
		return "Invalid QN"
	case DDPUntaggedInvalidMSNNoBuf:
		return "Invalid MSN - no buffer available"
	case DDPUntaggedInvalidMSNRange:
		return "Invalid MSN - MSN range is not valid"
	case DDPUntaggedInvalidMO:
		return "Invalid MO"
	case DDPUntaggedMessageTooLong:
		return "DDP Message too long for available buffer"
	case DDPUntaggedInvalidVersion:
		return "Invalid DDP version"
	}
	return fmt.Sprintf("Reserved DDP untagged error code 0x%02x", uint8(c))
}

// LLPErrorCode is an MPA error code, error type 0 of layer LLP (RFC 5040
// section 4.8 table; 0x05-0x07 were added by RFC 6581 for enhanced
// connection establishment).
type LLPErrorCode uint8

// MPA (LLP) error codes.
const (
	LLPStreamLost        LLPErrorCode = 0x01
	LLPCRCError          LLPErrorCode = 0x02
	LLPMarkerMismatch    LLPErrorCode = 0x03
	LLPInvalidReqRep     LLPErrorCode = 0x04
	LLPLocalCatastrophic LLPErrorCode = 0x05
	LLPInsufficientIRD   LLPErrorCode = 0x06
	LLPNoMatchingRTR     LLPErrorCode = 0x07
)

func (c LLPErrorCode) String() string {
	switch c {
	case LLPStreamLost:
		return "TCP connection closed, terminated or lost"
	case LLPCRCError:
		return "MPA CRC Error"
	case LLPMarkerMismatch:
		return "MPA Marker and ULPDU Length field mismatch"
	case LLPInvalidReqRep:
		return "Invalid MPA Request Frame or MPA Response Frame"
	case LLPLocalCatastrophic:
		return "Local Catastrophic Error"
	case LLPInsufficientIRD:
		return "Insufficient IRD Resources"
	case LLPNoMatchingRTR:
		return "No Matching RTR Option"
	}
	return fmt.Sprintf("Reserved MPA error code 0x%02x", uint8(c))
}

// Terminate is the RDMAP Terminate header (RFC 5040 section 4.8):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| Layer | EType |  Error Code   |M|D|R|        Reserved         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  DDP Segment Length (if any)  |  Terminated DDP Header ...    |
//	~              Terminated RDMA Header (if any)                  ~
//
// M: the DDP Segment Length is valid; D: the DDP header of the offending
// segment is included; R: its RDMAP header is included. The DDP Segment
// Length and the terminated DDP header are present together when D is set:
// they are the offending FPDU's MPA ULPDU_Length slot and DDP header as
// received (Linux siw copies them that way). The terminated DDP header is 14
// or 18 octets by its own T bit. The RDMA header is the 28-octet RDMA Read
// Request header; siw sets R for a bad Send with no RDMA header at all, so
// up to 28 octets are taken.
//
// Layer, EType, ErrorCode, M, D, R and Reserved are the Terminate Control as
// RFC 5040 lays it out (what tshark shows). When that reading is impossible
// (TermControl.Meaningful) but another implementation's layout of the same
// four octets gives a meaningful one, AltOrder names that layout and Alt
// holds its reading; the optional parts then follow Alt's D and R, because
// that implementation wrote them by those.
type Terminate struct {
	Layer                TermLayer
	EType                uint8 // meaning depends on Layer: RDMAPEType, DDPEType or 0 for MPA
	ErrorCode            uint8 // meaning depends on Layer and EType
	M                    bool
	D                    bool
	R                    bool
	Reserved             uint16 // 13 bits
	DDPSegmentLength     uint16
	TerminatedDDPHeader  []byte
	TerminatedRDMAHeader []byte
	// AltOrder is TermOrderRFC unless the Terminate Control reads
	// meaningfully only in another layout; Alt is that reading.
	AltOrder TermOrder
	Alt      TermControl
}

// TermOrder is a layout of the four Terminate Control octets.
type TermOrder uint8

// Terminate Control layouts.
const (
	// TermOrderRFC is RFC 5040 section 4.8: Layer in the high nibble of
	// the first octet, EType in its low nibble, Error Code, then M, D, R
	// as the three high bits of the third octet.
	TermOrderRFC TermOrder = iota
	// TermOrderSiwLE is Linux siw's struct iwarp_terminate
	// (drivers/infiniband/sw/siw/iwarp.h) on a little-endian host: C bit
	// fields (__LITTLE_ENDIAN_BITFIELD) fill each octet from its low bit,
	// so layer is the first octet's low nibble, etype its high nibble,
	// ecode the second octet, and flag_m, flag_d, flag_r the third
	// octet's bits 0, 1, 2 — DDP/untagged/no buffer with M and D goes
	// out as 21 02 03 00 where RFC 5040 writes 12 02 c0 00.
	TermOrderSiwLE
	// TermOrderSiwBE is the same struct on a big-endian host
	// (__BIG_ENDIAN_BITFIELD: reserved:13, flag_r, flag_d, flag_m, ecode,
	// etype, layer from the high bit of the 32-bit word): the four octets
	// of the RFC word reversed in their order, with layer and etype still
	// swapped in their octet — 00 03 02 21 for the example above.
	TermOrderSiwBE
)

func (o TermOrder) String() string {
	switch o {
	case TermOrderRFC:
		return "RFC 5040"
	case TermOrderSiwLE:
		return "Linux siw (struct iwarp_terminate bit fields, little-endian host)"
	case TermOrderSiwBE:
		return "Linux siw (struct iwarp_terminate bit fields, big-endian host)"
	}
	return fmt.Sprintf("Terminate order %d", uint8(o))
}

// TermControl is one reading of the Terminate Control field.
type TermControl struct {
	Layer     TermLayer
	EType     uint8
	ErrorCode uint8
	M, D, R   bool
	Reserved  uint16 // 13 bits
}

// ReadTermControl reads the four Terminate Control octets b in layout o.
func ReadTermControl(b [4]byte, o TermOrder) TermControl {
	var layer, etype, code uint8
	var flags uint8 // M, D, R as bits 2, 1, 0
	var rsv uint16
	switch o {
	case TermOrderSiwLE:
		layer, etype, code = b[0]&0x0f, b[0]>>4, b[1]
		flags = (b[2]&1)<<2 | (b[2]>>1&1)<<1 | b[2]>>2&1
		rsv = uint16(b[2]>>3) | uint16(b[3])<<5
	case TermOrderSiwBE:
		w := binary.BigEndian.Uint32(b[:])
		layer, etype, code = uint8(w&0xf), uint8(w>>4&0xf), uint8(w>>8)
		flags = uint8(w>>16&1)<<2 | uint8(w>>17&1)<<1 | uint8(w>>18&1)
		rsv = uint16(w >> 19)
	default:
		hc := binary.BigEndian.Uint16(b[2:4])
		layer, etype, code = b[0]>>4, b[0]&0x0f, b[1]
		flags = uint8(hc >> 13)
		rsv = hc & 0x1fff
	}
	return TermControl{Layer: TermLayer(layer), EType: etype, ErrorCode: code,
		M: flags&4 != 0, D: flags&2 != 0, R: flags&1 != 0, Reserved: rsv}
}

// Meaningful reports whether the layer, error type and error code are a
// combination RFC 5040 section 7 (with RFC 5041 section 7 and RFC 6581's
// MPA codes) defines, with the reserved bits zero. RDMAP's Local
// Catastrophic Error takes any defined RDMAP code (RFC 5040 gives 0x00;
// Linux siw sends 0xff, Unspecified).
func (c TermControl) Meaningful() bool {
	if c.Reserved != 0 {
		return false
	}
	switch c.Layer {
	case TermLayerRDMAP:
		known := c.ErrorCode <= 0x09 || c.ErrorCode == 0xff
		switch RDMAPEType(c.EType) {
		case RDMAPLocalCatastrophic:
			return known
		case RDMAPRemoteProtection:
			return known && (c.ErrorCode <= 0x04 || c.ErrorCode == 0x09 || c.ErrorCode == 0xff)
		case RDMAPRemoteOperation:
			return known && (c.ErrorCode >= 0x05 || c.ErrorCode == 0xff)
		}
	case TermLayerDDP:
		switch DDPEType(c.EType) {
		case DDPLocalCatastrophic:
			return c.ErrorCode == 0
		case DDPTaggedBuffer:
			return c.ErrorCode <= 0x04
		case DDPUntaggedBuffer:
			return c.ErrorCode >= 0x01 && c.ErrorCode <= 0x06
		}
	case TermLayerLLP:
		return c.EType == 0 && c.ErrorCode >= 0x01 && c.ErrorCode <= 0x07
	}
	return false
}

// ETypeString names EType for the reading's layer.
func (c TermControl) ETypeString() string {
	switch c.Layer {
	case TermLayerRDMAP:
		return RDMAPEType(c.EType).String()
	case TermLayerDDP:
		return DDPEType(c.EType).String()
	case TermLayerLLP:
		if c.EType == 0 {
			return "MPA Error"
		}
	}
	return fmt.Sprintf("Reserved error type 0x%x", c.EType)
}

// ErrorCodeString names ErrorCode for the reading's layer and error type.
func (c TermControl) ErrorCodeString() string {
	switch c.Layer {
	case TermLayerRDMAP:
		return RDMAPErrorCode(c.ErrorCode).String()
	case TermLayerDDP:
		switch DDPEType(c.EType) {
		case DDPTaggedBuffer:
			return DDPTaggedErrorCode(c.ErrorCode).String()
		case DDPUntaggedBuffer:
			return DDPUntaggedErrorCode(c.ErrorCode).String()
		}
	case TermLayerLLP:
		return LLPErrorCode(c.ErrorCode).String()
	}
	return fmt.Sprintf("Error code 0x%02x", c.ErrorCode)
}

// String is the reading in words: layer, error type, error code and the
// flags set.
func (c TermControl) String() string {
	s := fmt.Sprintf("layer %s, error type %s, error code 0x%02x (%s)", c.Layer, c.ETypeString(), c.ErrorCode, c.ErrorCodeString())
	var f []byte
	for _, x := range []struct {
		on bool
		n  byte
	}{{c.M, 'M'}, {c.D, 'D'}, {c.R, 'R'}} {
		if x.on {
			f = append(f, x.n)
		}
	}
	if len(f) > 0 {
		s += ", flags " + string(f)
	}
	if c.Reserved != 0 {
		s += fmt.Sprintf(", reserved bits 0x%04x", c.Reserved)
	}
	return s
}

// RFC returns the RFC 5040 reading of the Terminate Control.
func (t *Terminate) RFC() TermControl {
	return TermControl{Layer: t.Layer, EType: t.EType, ErrorCode: t.ErrorCode, M: t.M, D: t.D, R: t.R, Reserved: t.Reserved}
}

// Control returns the four Terminate Control octets as they were on the
// wire (the RFC 5040 reading written back).
func (t *Terminate) Control() []byte {
	hc := t.Reserved & 0x1fff
	for _, x := range []struct {
		on  bool
		bit uint16
	}{{t.M, 0x8000}, {t.D, 0x4000}, {t.R, 0x2000}} {
		if x.on {
			hc |= x.bit
		}
	}
	return []byte{uint8(t.Layer)<<4 | t.EType&0x0f, t.ErrorCode, uint8(hc >> 8), uint8(hc)}
}

// Meaning returns the reading that makes sense: Alt when AltOrder names
// one, the RFC 5040 reading otherwise.
func (t *Terminate) Meaning() TermControl {
	if t.AltOrder != TermOrderRFC {
		return t.Alt
	}
	return t.RFC()
}

// ETypeString names EType for the Terminate's layer (RFC 5040 reading).
func (t *Terminate) ETypeString() string { return t.RFC().ETypeString() }

// ErrorCodeString names ErrorCode for the Terminate's layer and error type
// (RFC 5040 reading).
func (t *Terminate) ErrorCodeString() string { return t.RFC().ErrorCodeString() }

// TerminatedDDP decodes the terminated DDP header, if there is one.
func (t *Terminate) TerminatedDDP() (DDP, bool) {
	var d DDP
	if len(t.TerminatedDDPHeader) == 0 || d.DecodeFromBytes(t.TerminatedDDPHeader, gopacket.NilDecodeFeedback) != nil {
		return DDP{}, false
	}
	return d, true
}

// AtomicOpcode is the atomic operation of an Atomic Request (RFC 7306).
type AtomicOpcode uint8

// Atomic operations.
const (
	AtomicFetchAdd    AtomicOpcode = 0
	AtomicSwap        AtomicOpcode = 1
	AtomicCompareSwap AtomicOpcode = 2
)

func (a AtomicOpcode) String() string {
	switch a {
	case AtomicFetchAdd:
		return "FetchAdd"
	case AtomicSwap:
		return "Swap"
	case AtomicCompareSwap:
		return "CmpSwap"
	}
	return fmt.Sprintf("Reserved atomic opcode 0x%x", uint8(a))
}

// AtomicRequest is the RFC 7306 Atomic Request header, in the order
// Wireshark decodes it: 28 reserved bits and the 4-bit atomic opcode, Request
// Identifier, Remote STag, Remote Tagged Offset, Add or Swap Data, Add or Swap
// Mask, Compare Data, Compare Mask.
type AtomicRequest struct {
	Reserved           uint32 // 28 bits
	AtomicOpcode       AtomicOpcode
	RequestIdentifier  uint32
	RemoteSTag         uint32
	RemoteTaggedOffset uint64
	AddOrSwapData      uint64
	AddOrSwapMask      uint64
	CompareData        uint64
	CompareMask        uint64
}

// AtomicResponse is the RFC 7306 Atomic Response header.
type AtomicResponse struct {
	OriginalRequestIdentifier uint32
	OriginalRemoteDataValue   uint64
}

// RDMAP is an RDMAP message header (RFC 5040 section 4, RFC 7306). It
// decodes from the whole DDP segment, because the RDMAP control field and the
// Invalidate STag are in DDP's RsvdULP field (RFC 5040 section 4.1):
//
//	DDP control | RV|Rsv|Opcode | Invalidate STag or reserved (untagged) | ...
//
// Contents is the RDMAP header that follows the DDP header (Read Request,
// Terminate, Atomic Request/Response; empty for the other opcodes); Payload
// is the ULP data: the Send payload, or the data an RDMA Write or Read
// Response places.
type RDMAP struct {
	layers.BaseLayer
	RV     uint8 // RDMA Version (2 bits)
	Rsv    uint8 // reserved (2 bits)
	Opcode Opcode
	// Tagged is the DDP T bit of the segment (the buffer model the opcode
	// needs).
	Tagged bool
	// InvalidateSTag is the STag a Send with Invalidate asks the receiver to
	// invalidate (RFC 5040 section 4.3); zero for other opcodes.
	InvalidateSTag uint32
	// Reserved is the untagged RsvdULP word of the other untagged opcodes
	// (tshark iwarp_rdma.reserved).
	Reserved       uint32
	ReadRequest    ReadRequest
	Terminate      Terminate
	AtomicRequest  AtomicRequest
	AtomicResponse AtomicResponse
}

// LayerType returns LayerTypeRDMAP.
func (r *RDMAP) LayerType() gopacket.LayerType { return LayerTypeRDMAP }

// CanDecode returns LayerTypeRDMAP.
func (r *RDMAP) CanDecode() gopacket.LayerClass { return LayerTypeRDMAP }

// NextLayerType returns gopacket.LayerTypePayload.
func (r *RDMAP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// Control returns the RDMAP control octet (the first RsvdULP octet).
func (r *RDMAP) Control() uint8 { return r.RV<<6 | (r.Rsv&3)<<4 | uint8(r.Opcode)&0x0f }

// RsvdULPWord returns the untagged RsvdULP word: the Invalidate STag for the
// opcodes that carry one, Reserved otherwise.
func (r *RDMAP) RsvdULPWord() uint32 {
	if r.Opcode.HasInvalidateSTag() {
		return r.InvalidateSTag
	}
	return r.Reserved
}

// FillDDP writes the RDMAP control field and, for untagged segments, the
// Invalidate STag or reserved word into d.RsvdULP, and sets d.T to the
// opcode's buffer model.
func (r *RDMAP) FillDDP(d *DDP) {
	d.T = r.Opcode.Tagged()
	d.RsvdULP[0] = r.Control()
	if !d.T {
		binary.BigEndian.PutUint32(d.RsvdULP[1:5], r.RsvdULPWord())
	} else {
		d.RsvdULP[1], d.RsvdULP[2], d.RsvdULP[3], d.RsvdULP[4] = 0, 0, 0, 0
	}
}

// DecodeFromBytes decodes the RDMAP header of a DDP segment.
func (r *RDMAP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 2 {
		df.SetTruncated()
		return fmt.Errorf("%w: RDMAP needs the DDP control and RDMAP control octets, have %d", ErrTruncated, len(data))
	}
	r.Tagged = data[0]&ddpFlagT != 0
	hdr := DDPUntaggedHeaderLen
	if r.Tagged {
		hdr = DDPTaggedHeaderLen
	}
	if len(data) < hdr {
		df.SetTruncated()
		return fmt.Errorf("%w: DDP header needs %d octets, have %d", ErrTruncated, hdr, len(data))
	}
	c := data[1]
	r.RV = c >> 6
	r.Rsv = (c >> 4) & 3
	r.Opcode = Opcode(c & 0x0f)
	r.InvalidateSTag, r.Reserved = 0, 0
	if !r.Tagged {
		w := binary.BigEndian.Uint32(data[2:6])
		if r.Opcode.HasInvalidateSTag() {
			r.InvalidateSTag = w
		} else {
			r.Reserved = w
		}
	}
	if r.Opcode.Known() && r.Opcode.Tagged() != r.Tagged {
		return fmt.Errorf("%w: %v with DDP T=%t (RFC 5040 section 4.3)", ErrOpcodeBufferModel, r.Opcode, r.Tagged)
	}
	rest := data[hdr:]
	n := 0
	var err error
	switch r.Opcode {
	case OpRDMAReadRequest:
		n, err = r.decodeReadRequest(rest)
	case OpTerminate:
		n, err = r.Terminate.decode(rest)
	case OpAtomicRequest:
		n, err = r.decodeAtomicRequest(rest)
	case OpAtomicResponse:
		n, err = r.decodeAtomicResponse(rest)
	}
	if err != nil {
		df.SetTruncated()
		return err
	}
	r.Contents = rest[:n]
	r.Payload = rest[n:]
	return nil
}

func (r *RDMAP) decodeReadRequest(b []byte) (int, error) {
	if len(b) < ReadRequestHeaderLen {
		return 0, fmt.Errorf("%w: RDMA Read Request header needs %d octets, have %d", ErrTruncated, ReadRequestHeaderLen, len(b))
	}
	r.ReadRequest = ReadRequest{
		SinkSTag:            binary.BigEndian.Uint32(b[0:4]),
		SinkTaggedOffset:    binary.BigEndian.Uint64(b[4:12]),
		RDMAReadMessageSize: binary.BigEndian.Uint32(b[12:16]),
		SourceSTag:          binary.BigEndian.Uint32(b[16:20]),
		SourceTaggedOffset:  binary.BigEndian.Uint64(b[20:28]),
	}
	return ReadRequestHeaderLen, nil
}

func (t *Terminate) decode(b []byte) (int, error) {
	if len(b) < TerminateControlLen {
		return 0, fmt.Errorf("%w: Terminate control needs %d octets, have %d", ErrTruncated, TerminateControlLen, len(b))
	}
	var raw [4]byte
	copy(raw[:], b)
	rfc := ReadTermControl(raw, TermOrderRFC)
	*t = Terminate{Layer: rfc.Layer, EType: rfc.EType, ErrorCode: rfc.ErrorCode, M: rfc.M, D: rfc.D, R: rfc.R, Reserved: rfc.Reserved}
	if !rfc.Meaningful() {
		for _, o := range []TermOrder{TermOrderSiwLE, TermOrderSiwBE} {
			alt := ReadTermControl(raw, o)
			if !alt.Meaningful() {
				continue
			}
			if n, err := t.optional(b, alt.D, alt.R); err == nil {
				t.AltOrder, t.Alt = o, alt
				return n, nil
			}
			t.DDPSegmentLength, t.TerminatedDDPHeader, t.TerminatedRDMAHeader = 0, nil, nil
		}
	}
	return t.optional(b, t.D, t.R)
}

// optional decodes the DDP Segment Length and the terminated headers that
// follow the Terminate Control when D and R say they are there.
func (t *Terminate) optional(b []byte, d, r bool) (int, error) {
	off := TerminateControlLen
	if d {
		if len(b) < off+3 {
			return 0, fmt.Errorf("%w: Terminate with D set needs the DDP Segment Length and a DDP header", ErrTruncated)
		}
		t.DDPSegmentLength = binary.BigEndian.Uint16(b[off:])
		off += 2
		n := DDPUntaggedHeaderLen
		if b[off]&ddpFlagT != 0 {
			n = DDPTaggedHeaderLen
		}
		if len(b) < off+n {
			return 0, fmt.Errorf("%w: terminated DDP header needs %d octets, have %d", ErrTruncated, n, len(b)-off)
		}
		t.TerminatedDDPHeader = b[off : off+n]
		off += n
	}
	if r {
		n := min(ReadRequestHeaderLen, len(b)-off)
		t.TerminatedRDMAHeader = b[off : off+n]
		off += n
	}
	return off, nil
}

func (t *Terminate) append(b []byte) []byte {
	hc := t.Reserved & 0x1fff
	if t.M {
		hc |= 0x8000
	}
	if t.D {
		hc |= 0x4000
	}
	if t.R {
		hc |= 0x2000
	}
	b = append(b, uint8(t.Layer)<<4|t.EType&0x0f, t.ErrorCode)
	b = binary.BigEndian.AppendUint16(b, hc)
	d, r := t.D, t.R
	if t.AltOrder != TermOrderRFC {
		d, r = t.Alt.D, t.Alt.R
	}
	if d {
		b = binary.BigEndian.AppendUint16(b, t.DDPSegmentLength)
		b = append(b, t.TerminatedDDPHeader...)
	}
	if r {
		b = append(b, t.TerminatedRDMAHeader...)
	}
	return b
}

func (r *RDMAP) decodeAtomicRequest(b []byte) (int, error) {
	if len(b) < AtomicRequestHeaderLen {
		return 0, fmt.Errorf("%w: Atomic Request header needs %d octets, have %d", ErrTruncated, AtomicRequestHeaderLen, len(b))
	}
	w := binary.BigEndian.Uint32(b[0:4])
	r.AtomicRequest = AtomicRequest{
		Reserved:           w >> 4,
		AtomicOpcode:       AtomicOpcode(w & 0x0f),
		RequestIdentifier:  binary.BigEndian.Uint32(b[4:8]),
		RemoteSTag:         binary.BigEndian.Uint32(b[8:12]),
		RemoteTaggedOffset: binary.BigEndian.Uint64(b[12:20]),
		AddOrSwapData:      binary.BigEndian.Uint64(b[20:28]),
		AddOrSwapMask:      binary.BigEndian.Uint64(b[28:36]),
		CompareData:        binary.BigEndian.Uint64(b[36:44]),
		CompareMask:        binary.BigEndian.Uint64(b[44:52]),
	}
	return AtomicRequestHeaderLen, nil
}

func (r *RDMAP) decodeAtomicResponse(b []byte) (int, error) {
	if len(b) < AtomicResponseHeaderLen {
		return 0, fmt.Errorf("%w: Atomic Response header needs %d octets, have %d", ErrTruncated, AtomicResponseHeaderLen, len(b))
	}
	r.AtomicResponse = AtomicResponse{
		OriginalRequestIdentifier: binary.BigEndian.Uint32(b[0:4]),
		OriginalRemoteDataValue:   binary.BigEndian.Uint64(b[4:12]),
	}
	return AtomicResponseHeaderLen, nil
}

// appendHeader appends the RDMAP header that follows the DDP header.
func (r *RDMAP) appendHeader(b []byte) []byte {
	be := binary.BigEndian
	switch r.Opcode {
	case OpRDMAReadRequest:
		q := &r.ReadRequest
		b = be.AppendUint32(b, q.SinkSTag)
		b = be.AppendUint64(b, q.SinkTaggedOffset)
		b = be.AppendUint32(b, q.RDMAReadMessageSize)
		b = be.AppendUint32(b, q.SourceSTag)
		b = be.AppendUint64(b, q.SourceTaggedOffset)
	case OpTerminate:
		b = r.Terminate.append(b)
	case OpAtomicRequest:
		a := &r.AtomicRequest
		b = be.AppendUint32(b, a.Reserved<<4|uint32(a.AtomicOpcode&0x0f))
		b = be.AppendUint32(b, a.RequestIdentifier)
		b = be.AppendUint32(b, a.RemoteSTag)
		b = be.AppendUint64(b, a.RemoteTaggedOffset)
		b = be.AppendUint64(b, a.AddOrSwapData)
		b = be.AppendUint64(b, a.AddOrSwapMask)
		b = be.AppendUint64(b, a.CompareData)
		b = be.AppendUint64(b, a.CompareMask)
	case OpAtomicResponse:
		b = be.AppendUint32(b, r.AtomicResponse.OriginalRequestIdentifier)
		b = be.AppendUint64(b, r.AtomicResponse.OriginalRemoteDataValue)
	}
	return b
}

// SerializeTo prepends the RDMAP header that follows the DDP header (Read
// Request, Terminate, Atomic headers). The control field and Invalidate STag
// belong to the DDP header: call FillDDP on the DDP layer serialized next.
func (r *RDMAP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	var tmp [AtomicRequestHeaderLen + 2*DDPUntaggedHeaderLen + TerminateControlLen + ReadRequestHeaderLen]byte
	h := r.appendHeader(tmp[:0])
	buf, err := b.PrependBytes(len(h))
	if err != nil {
		return err
	}
	copy(buf, h)
	return nil
}

func decodeRDMAP(data []byte, p gopacket.PacketBuilder) error {
	r := &RDMAP{}
	if err := r.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(r)
	return p.NextDecoder(r.NextLayerType())
}
