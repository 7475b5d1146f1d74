package rpcrdma

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// HType is the version 2 rdma_htype (draft-ietf-nfsv4-rpcrdma-version-two-07,
// "Transport Header Types"). These are the -03..-07 code points; drafts -00..-02
// numbered differently (RDMA2_MSG=0, RDMA2_NOMSG=1, RDMA2_ERROR=4,
// RDMA2_CONNPROP=5, RDMA2_GRANT=6, and a 20-octet prefix with rdma_flags),
// which this package does not decode. Values 0..3 are v1's procedures and are
// not defined in v2.
type HType uint32

const (
	HTypeError         HType = 4  // RDMA2_ERROR: report a transport error; no RPC message
	HTypeGrant         HType = 5  // RDMA2_GRANT: credit update only; prefix, no body
	HTypeConnPropMid   HType = 6  // RDMA2_CONNPROP_MIDDLE: properties, more to follow
	HTypeConnPropFinal HType = 7  // RDMA2_CONNPROP_FINAL: last properties message
	HTypeCallExternal  HType = 8  // RDMA2_CALL_EXTERNAL: Call moves in the Call chunk
	HTypeCallMiddle    HType = 9  // RDMA2_CALL_MIDDLE: first/middle part of a continued Call
	HTypeCallInline    HType = 10 // RDMA2_CALL_INLINE: only or final part of a Call
	HTypeReplyExternal HType = 11 // RDMA2_REPLY_EXTERNAL: Reply moves in the Reply chunk
	HTypeReplyMiddle   HType = 12 // RDMA2_REPLY_MIDDLE: first/middle part of a continued Reply
	HTypeReplyInline   HType = 13 // RDMA2_REPLY_INLINE: only or final part of a Reply
)

var htypeNames = [...]string{
	HTypeError:         "RDMA2_ERROR",
	HTypeGrant:         "RDMA2_GRANT",
	HTypeConnPropMid:   "RDMA2_CONNPROP_MIDDLE",
	HTypeConnPropFinal: "RDMA2_CONNPROP_FINAL",
	HTypeCallExternal:  "RDMA2_CALL_EXTERNAL",
	HTypeCallMiddle:    "RDMA2_CALL_MIDDLE",
	HTypeCallInline:    "RDMA2_CALL_INLINE",
	HTypeReplyExternal: "RDMA2_REPLY_EXTERNAL",
	HTypeReplyMiddle:   "RDMA2_REPLY_MIDDLE",
	HTypeReplyInline:   "RDMA2_REPLY_INLINE",
}

func (t HType) String() string {
	if int(t) < len(htypeNames) && htypeNames[t] != "" {
		return htypeNames[t]
	}
	return "RDMA2_HTYPE(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Known tells whether draft-07 defines t.
func (t HType) Known() bool { return t >= HTypeError && t <= HTypeReplyInline }

// CarriesRPC tells whether (part of) the RPC message follows the header in the
// same Send: the *_MIDDLE and *_INLINE types (draft-07 table "Msg" column).
func (t HType) CarriesRPC() bool {
	switch t {
	case HTypeCallMiddle, HTypeCallInline, HTypeReplyMiddle, HTypeReplyInline:
		return true
	}
	return false
}

// IsCall and IsReply tell the direction of the RPC message a header conveys.
func (t HType) IsCall() bool  { return t >= HTypeCallExternal && t <= HTypeCallInline }
func (t HType) IsReply() bool { return t >= HTypeReplyExternal && t <= HTypeReplyInline }

// IsControl tells whether t is a control-plane type (ERROR, GRANT, CONNPROP_*),
// which a Responder never sends With Invalidate (draft-07 "Remote Invalidation").
func (t HType) IsControl() bool { return t >= HTypeError && t <= HTypeConnPropFinal }

// ErrCode2 is the version 2 rdma_err (draft-07 "RDMA2_ERROR", "Error Handling").
type ErrCode2 uint32

const (
	Err2Vers          ErrCode2 = 1   // RDMA2_ERR_VERS: carries rdma_vers_low/high
	Err2BadXDR        ErrCode2 = 2   // RDMA2_ERR_BAD_XDR
	Err2BadPropVal    ErrCode2 = 3   // RDMA2_ERR_BAD_PROPVAL
	Err2InvalHType    ErrCode2 = 4   // RDMA2_ERR_INVAL_HTYPE
	Err2InvalCont     ErrCode2 = 5   // RDMA2_ERR_INVAL_CONT
	Err2ReadChunks    ErrCode2 = 6   // RDMA2_ERR_READ_CHUNKS: carries rdma_max_chunks
	Err2WriteChunks   ErrCode2 = 7   // RDMA2_ERR_WRITE_CHUNKS: carries rdma_max_chunks
	Err2Segments      ErrCode2 = 8   // RDMA2_ERR_SEGMENTS: carries rdma_max_segments
	Err2WriteResource ErrCode2 = 9   // RDMA2_ERR_WRITE_RESOURCE: carries rdma_chunk_index, rdma_length_needed
	Err2ReplyResource ErrCode2 = 10  // RDMA2_ERR_REPLY_RESOURCE: carries rdma_length_needed
	Err2VersMismatch  ErrCode2 = 11  // RDMA2_ERR_VERS_MISMATCH (added in draft -05)
	Err2System        ErrCode2 = 100 // RDMA2_ERR_SYSTEM
)

var errCode2Names = map[ErrCode2]string{
	Err2Vers: "RDMA2_ERR_VERS", Err2BadXDR: "RDMA2_ERR_BAD_XDR", Err2BadPropVal: "RDMA2_ERR_BAD_PROPVAL",
	Err2InvalHType: "RDMA2_ERR_INVAL_HTYPE", Err2InvalCont: "RDMA2_ERR_INVAL_CONT",
	Err2ReadChunks: "RDMA2_ERR_READ_CHUNKS", Err2WriteChunks: "RDMA2_ERR_WRITE_CHUNKS",
	Err2Segments: "RDMA2_ERR_SEGMENTS", Err2WriteResource: "RDMA2_ERR_WRITE_RESOURCE",
	Err2ReplyResource: "RDMA2_ERR_REPLY_RESOURCE", Err2VersMismatch: "RDMA2_ERR_VERS_MISMATCH",
	Err2System: "RDMA2_ERR_SYSTEM",
}

func (c ErrCode2) String() string {
	if s, ok := errCode2Names[c]; ok {
		return s
	}
	return "RDMA2_ERR(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// PropID identifies a version 2 transport property (draft-07 rpcrdma2_propid,
// "Current Transport Properties").
type PropID uint32

const (
	PropMaxSendSize    PropID = 1 // RDMA2_PROPID_SBSIZ: uint32, default 4096
	PropRecvBufSize    PropID = 2 // RDMA2_PROPID_RBSIZ: uint32, default 4096
	PropMaxSegmentSize PropID = 3 // RDMA2_PROPID_RSSIZ: uint32, default 1048576
	PropMaxSegments    PropID = 4 // RDMA2_PROPID_RCSIZ: uint32, default 16
	PropReverseDir     PropID = 5 // RDMA2_PROPID_BRS: uint32 (ReverseDirection), default NONE
	PropHostAuth       PropID = 6 // RDMA2_PROPID_HOSTAUTH: opaque<>, no default
)

var propNames = [...]string{
	PropMaxSendSize:    "RDMA2_PROPID_SBSIZ",
	PropRecvBufSize:    "RDMA2_PROPID_RBSIZ",
	PropMaxSegmentSize: "RDMA2_PROPID_RSSIZ",
	PropMaxSegments:    "RDMA2_PROPID_RCSIZ",
	PropReverseDir:     "RDMA2_PROPID_BRS",
	PropHostAuth:       "RDMA2_PROPID_HOSTAUTH",
}

func (p PropID) String() string {
	if int(p) < len(propNames) && propNames[p] != "" {
		return propNames[p]
	}
	return "RDMA2_PROPID(" + strconv.FormatUint(uint64(p), 10) + ")"
}

// Known tells whether draft-07 defines p. Receivers skip unknown properties
// without error (draft-07 "Transport Properties Model").
func (p PropID) Known() bool { return p >= PropMaxSendSize && p <= PropHostAuth }

// Default returns a uint32 property's default value (draft-07 table of
// current transport properties); ok is false for HOSTAUTH and unknown IDs.
func (p PropID) Default() (v uint32, ok bool) {
	switch p {
	case PropMaxSendSize, PropRecvBufSize:
		return 4096, true
	case PropMaxSegmentSize:
		return 1048576, true
	case PropMaxSegments:
		return 16, true
	case PropReverseDir:
		return uint32(RvrsDirNone), true
	}
	return 0, false
}

// ReverseDirection is the value of RDMA2_PROPID_BRS (draft-07
// "Reverse-Direction Support"; the body calls the constants RDMA_RVRSDIR_*,
// the appendix RDMA2_RVRSDIR_*; draft -03 had CONT = 1, fixed in -04).
type ReverseDirection uint32

const (
	RvrsDirNone   ReverseDirection = 0 // no reverse-direction operation
	RvrsDirSimple ReverseDirection = 1 // Simple Format without data item chunks only
	RvrsDirCont   ReverseDirection = 2 // Simple or Continued Format without data item chunks
	RvrsDirGenl   ReverseDirection = 3 // same as forward direction
)

func (r ReverseDirection) String() string {
	switch r {
	case RvrsDirNone:
		return "RDMA2_RVRSDIR_NONE"
	case RvrsDirSimple:
		return "RDMA2_RVRSDIR_SIMPLE"
	case RvrsDirCont:
		return "RDMA2_RVRSDIR_CONT"
	case RvrsDirGenl:
		return "RDMA2_RVRSDIR_GENL"
	}
	return "RDMA2_RVRSDIR(" + strconv.FormatUint(uint64(r), 10) + ")"
}

// Property is one rpcrdma2_propval: the property ID and the XDR encoding of its
// value, kept opaque (Data points into the decoded input). An empty Data means
// the property's default value (draft-07 "Transport Properties Model").
type Property struct {
	Which PropID // rdma_which
	Data  []byte // rdma_data
}

// Uint32 decodes a uint32-typed property (SBSIZ, RBSIZ, RSSIZ, RCSIZ, BRS):
// the default value when Data is empty, else Data must hold exactly one XDR
// uint32. Any other length, or a non-uint32 property, yields a *DecodeError
// with Reason ErrBadPropertyValue (RDMA2_ERR_BAD_PROPVAL).
func (p Property) Uint32() (uint32, error) {
	def, ok := p.Which.Default()
	if !ok {
		return 0, &DecodeError{Vers: Version2, Part: PartProperties, Chunk: -1, Segment: -1, Reason: ErrBadPropertyValue, Value: uint32(p.Which)}
	}
	switch len(p.Data) {
	case 0:
		return def, nil
	case 4:
		return binary.BigEndian.Uint32(p.Data), nil
	}
	return 0, &DecodeError{Vers: Version2, Part: PartProperties, Chunk: -1, Segment: -1, Reason: ErrBadPropertyValue, Value: uint32(p.Which), Need: 4, Have: len(p.Data)}
}

// ReverseDirection decodes RDMA2_PROPID_BRS.
func (p Property) ReverseDirection() (ReverseDirection, error) {
	if p.Which != PropReverseDir {
		return 0, &DecodeError{Vers: Version2, Part: PartProperties, Chunk: -1, Segment: -1, Reason: ErrBadPropertyValue, Value: uint32(p.Which)}
	}
	v, err := p.Uint32()
	return ReverseDirection(v), err
}

// HostAuth decodes RDMA2_PROPID_HOSTAUTH: rdma_data holds an XDR opaque<>
// (length, bytes, padding); the returned slice points into Data.
func (p Property) HostAuth() ([]byte, error) {
	bad := func(need int) error {
		return &DecodeError{Vers: Version2, Part: PartProperties, Chunk: -1, Segment: -1, Reason: ErrBadPropertyValue, Value: uint32(p.Which), Need: need, Have: len(p.Data)}
	}
	if p.Which != PropHostAuth || len(p.Data) < 4 {
		return nil, bad(4)
	}
	n := uint64(binary.BigEndian.Uint32(p.Data))
	if 4+pad4(n) != uint64(len(p.Data)) {
		return nil, bad(int(min(4+pad4(n), 1<<31)))
	}
	return p.Data[4 : 4+n], nil
}

// Uint32Property builds a uint32-typed property value.
func Uint32Property(id PropID, v uint32) Property {
	return Property{Which: id, Data: binary.BigEndian.AppendUint32(nil, v)}
}

// HostAuthProperty builds an RDMA2_PROPID_HOSTAUTH property holding msg.
func HostAuthProperty(msg []byte) Property {
	return Property{Which: PropHostAuth, Data: appendOpaque(nil, msg)}
}

func pad4(n uint64) uint64 { return (n + 3) &^ 3 }

func appendOpaque(b, data []byte) []byte {
	b = appendU32(b, uint32(len(data)))
	b = append(b, data...)
	for i := len(data); i%4 != 0; i++ {
		b = append(b, 0)
	}
	return b
}

// DefaultMaxProperties is the property cap a Header2 uses when its
// MaxProperties is 0.
const DefaultMaxProperties = 256

// Header2 is an RPC-over-RDMA version 2 transport header
// (draft-ietf-nfsv4-rpcrdma-version-two-07): the rpcrdma_common prefix and the
// body its HType selects. Reuse one Header2 across packets.
type Header2 struct {
	XID    uint32 // rdma_xid (unused in RDMA2_GRANT: senders set 0)
	Vers   uint32 // rdma_vers: 2
	Credit uint32 // rdma_credit: a running credit limit in v2 (draft-07 "Flow Control")
	HType  HType  // rdma_htype

	// RDMA2_ERROR (rpcrdma2_hdr_error). Unknown codes take the union's void
	// default arm and decode without error.
	Err          ErrCode2 // rdma_err
	VersLow      uint32   // rdma_vers_low (RDMA2_ERR_VERS)
	VersHigh     uint32   // rdma_vers_high (RDMA2_ERR_VERS)
	MaxChunks    uint32   // rdma_max_chunks (RDMA2_ERR_READ_CHUNKS, RDMA2_ERR_WRITE_CHUNKS)
	MaxSegs      uint32   // rdma_max_segments (RDMA2_ERR_SEGMENTS)
	ChunkIndex   uint32   // rdma_chunk_index (RDMA2_ERR_WRITE_RESOURCE)
	LengthNeeded uint32   // rdma_length_needed (RDMA2_ERR_WRITE_RESOURCE, RDMA2_ERR_REPLY_RESOURCE)

	// RDMA2_CONNPROP_MIDDLE / RDMA2_CONNPROP_FINAL (rpcrdma2_hdr_connprop).
	Props []Property // rdma_props

	// RDMA2_CALL_EXTERNAL and RDMA2_CALL_INLINE: the handle the Responder may
	// invalidate with Send With Invalidate; 0 asks for plain Send (draft-07
	// "Remote Invalidation").
	InvHandle uint32 // rdma_inv_handle

	// RDMA2_CALL_EXTERNAL: the Call chunk (rdma_call), the body chunk holding
	// the whole RPC Call, as a read list.
	CallList []ReadSegment

	// Data item chunks: ReadList (rdma_reads, CALL_*), WriteList
	// (rdma_provisional_writes in CALL_*, rdma_writes in REPLY_*), ReplyChunk
	// (rdma_provisional_reply in CALL_*, rdma_reply in REPLY_EXTERNAL).
	ChunkLists

	// RDMA2_CALL_MIDDLE / RDMA2_REPLY_MIDDLE: bytes of the RPC message still to
	// be sent after this one.
	Remaining uint32 // rdma_remaining

	// HeaderLen is the transport header's length: for the *_MIDDLE and
	// *_INLINE types the offset where the RPC message (rdma_rpc_first_word) starts.
	HeaderLen int

	// MaxSegments caps the segments of all chunk lists (0: DefaultMaxSegments);
	// MaxProperties the property set (0: DefaultMaxProperties).
	MaxSegments   int
	MaxProperties int

	contents, payload []byte
}

// Contents returns the header bytes; Payload the bytes after it.
func (h *Header2) Contents() []byte { return h.contents }
func (h *Header2) Payload() []byte  { return h.payload }

// Property returns the first property with the given ID.
func (h *Header2) Property(id PropID) (Property, bool) {
	for _, p := range h.Props {
		if p.Which == id {
			return p, true
		}
	}
	return Property{}, false
}

func (h *Header2) resetBody() {
	h.Err, h.VersLow, h.VersHigh, h.MaxChunks, h.MaxSegs, h.ChunkIndex, h.LengthNeeded = 0, 0, 0, 0, 0, 0, 0
	h.Props = h.Props[:0]
	h.InvHandle = 0
	h.CallList = h.CallList[:0]
	h.ChunkLists.reset()
	h.Remaining = 0
	h.HeaderLen = 0
	h.contents, h.payload = nil, nil
}

// DecodeFromBytes decodes a version 2 transport header from the start of data.
// It returns a *DecodeError when data is not a valid draft-07 header (including
// an rdma_htype draft-07 does not define: the prefix fields are set then).
func (h *Header2) DecodeFromBytes(data []byte) error {
	h.resetBody()
	c, d, err := startDecode(data, h.MaxSegments, Version2)
	h.XID, h.Vers, h.Credit, h.HType = c.XID, c.Vers, c.Credit, HType(c.Type)
	if err != nil {
		return err
	}
	if err := h.decodeBody(&d); err != nil {
		return err
	}
	h.HeaderLen = d.off
	h.contents, h.payload = data[:d.off], data[d.off:]
	if h.HType.CarriesRPC() && d.left() < 4 {
		// rdma_rpc_first_word is part of the XDR of these types.
		return d.fail(PartRPCMessage, -1, -1, ErrTruncated, 0, 4)
	}
	return nil
}

func (h *Header2) decodeBody(d *decoder) error {
	var err error
	switch h.HType {
	case HTypeError:
		return h.decodeError(d)
	case HTypeGrant:
		return nil
	case HTypeConnPropMid, HTypeConnPropFinal:
		return h.decodeProps(d)
	case HTypeCallExternal:
		if h.InvHandle, err = d.u32(PartInvHandle, -1, -1); err != nil {
			return err
		}
		if err = d.readList(PartCallList, &h.CallList); err != nil {
			return err
		}
		return d.chunkLists(&h.ChunkLists)
	case HTypeCallInline:
		if h.InvHandle, err = d.u32(PartInvHandle, -1, -1); err != nil {
			return err
		}
		return d.chunkLists(&h.ChunkLists)
	case HTypeCallMiddle, HTypeReplyMiddle:
		h.Remaining, err = d.u32(PartRemaining, -1, -1)
		return err
	case HTypeReplyExternal:
		if err = d.writeList(&h.ChunkLists, PartWriteList); err != nil {
			return err
		}
		rs, err := d.replyChunk(&h.ChunkLists, PartReplyChunk)
		if err != nil {
			return err
		}
		h.link(rs)
		return nil
	case HTypeReplyInline:
		if err = d.writeList(&h.ChunkLists, PartWriteList); err != nil {
			return err
		}
		h.link(span{})
		return nil
	}
	d.off = 12
	return d.fail(PartPrefix, -1, -1, ErrUnknownHType, uint32(h.HType), 0)
}

func (h *Header2) decodeError(d *decoder) error {
	v, err := d.u32(PartError, -1, -1)
	if err != nil {
		return err
	}
	h.Err = ErrCode2(v)
	one := func(dst *uint32) error {
		*dst, err = d.u32(PartError, -1, -1)
		return err
	}
	switch h.Err {
	case Err2Vers:
		if err = one(&h.VersLow); err != nil {
			return err
		}
		return one(&h.VersHigh)
	case Err2ReadChunks, Err2WriteChunks:
		return one(&h.MaxChunks)
	case Err2Segments:
		return one(&h.MaxSegs)
	case Err2WriteResource:
		if err = one(&h.ChunkIndex); err != nil {
			return err
		}
		return one(&h.LengthNeeded)
	case Err2ReplyResource:
		return one(&h.LengthNeeded)
	}
	return nil // default: void
}

func (h *Header2) decodeProps(d *decoder) error {
	n, err := d.u32(PartProperties, -1, -1)
	if err != nil {
		return err
	}
	// Each rpcrdma2_propval takes at least 8 bytes (rdma_which, length).
	if uint64(n)*8 > uint64(d.left()) {
		return d.fail(PartProperties, -1, -1, ErrCountTooLarge, n, int(min(uint64(n)*8, 1<<31)))
	}
	maxp := h.MaxProperties
	if maxp <= 0 {
		maxp = DefaultMaxProperties
	}
	if int(n) > maxp {
		return d.fail(PartProperties, -1, -1, ErrTooManyProperties, uint32(maxp), 0)
	}
	for i := 0; i < int(n); i++ {
		which, err := d.u32(PartProperties, i, -1)
		if err != nil {
			return err
		}
		l, err := d.u32(PartProperties, i, -1)
		if err != nil {
			return err
		}
		if pad4(uint64(l)) > uint64(d.left()) {
			return d.fail(PartProperties, i, -1, ErrCountTooLarge, l, int(min(pad4(uint64(l)), 1<<31)))
		}
		h.Props = append(h.Props, Property{Which: PropID(which), Data: d.b[d.off : d.off+int(l) : d.off+int(l)]})
		d.off += int(pad4(uint64(l)))
	}
	return nil
}

// AppendBinary appends the header's XDR encoding to b (encoding.BinaryAppender).
// For the *_MIDDLE and *_INLINE types the RPC message (starting with
// rdma_rpc_first_word) is not included: append it after.
func (h *Header2) AppendBinary(b []byte) ([]byte, error) {
	b = appendU32(b, h.XID)
	b = appendU32(b, h.Vers)
	b = appendU32(b, h.Credit)
	b = appendU32(b, uint32(h.HType))
	switch h.HType {
	case HTypeError:
		b = appendU32(b, uint32(h.Err))
		switch h.Err {
		case Err2Vers:
			b = appendU32(b, h.VersLow)
			b = appendU32(b, h.VersHigh)
		case Err2ReadChunks, Err2WriteChunks:
			b = appendU32(b, h.MaxChunks)
		case Err2Segments:
			b = appendU32(b, h.MaxSegs)
		case Err2WriteResource:
			b = appendU32(b, h.ChunkIndex)
			b = appendU32(b, h.LengthNeeded)
		case Err2ReplyResource:
			b = appendU32(b, h.LengthNeeded)
		}
		return b, nil
	case HTypeGrant:
		return b, nil
	case HTypeConnPropMid, HTypeConnPropFinal:
		b = appendU32(b, uint32(len(h.Props)))
		for _, p := range h.Props {
			b = appendU32(b, uint32(p.Which))
			b = appendOpaque(b, p.Data)
		}
		return b, nil
	case HTypeCallExternal:
		b = appendU32(b, h.InvHandle)
		b = appendReadList(b, h.CallList)
		return h.appendChunkLists(b), nil
	case HTypeCallInline:
		b = appendU32(b, h.InvHandle)
		return h.appendChunkLists(b), nil
	case HTypeCallMiddle, HTypeReplyMiddle:
		return appendU32(b, h.Remaining), nil
	case HTypeReplyExternal:
		b = appendWriteList(b, h.WriteList)
		return appendReplyChunk(b, h.HasReplyChunk, h.ReplyChunk), nil
	case HTypeReplyInline:
		return appendWriteList(b, h.WriteList), nil
	}
	return b, errors.New("rpcrdma: cannot encode rdma_htype " + h.HType.String())
}

// MarshalBinary returns the header's XDR encoding (encoding.BinaryMarshaler).
func (h *Header2) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }
