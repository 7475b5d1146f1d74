package rpcrdma

import "encoding/binary"

// Common is the transport header prefix every RPC-over-RDMA version shares
// (draft-07 struct rpcrdma_common; RFC 8166 section 4.2 fixes the positions
// of these four words for all versions).
type Common struct {
	XID    uint32 // rdma_xid
	Vers   uint32 // rdma_vers
	Credit uint32 // rdma_credit
	Type   uint32 // rdma_proc (v1) / rdma_htype (v2)
}

// ParseCommon reads the 16-byte prefix without looking at the body.
func ParseCommon(data []byte) (Common, error) {
	if len(data) < PrefixLen {
		return Common{}, &DecodeError{Part: PartPrefix, Chunk: -1, Segment: -1, Reason: ErrTruncated, Need: PrefixLen, Have: len(data)}
	}
	return Common{
		XID:    binary.BigEndian.Uint32(data),
		Vers:   binary.BigEndian.Uint32(data[4:]),
		Credit: binary.BigEndian.Uint32(data[8:]),
		Type:   binary.BigEndian.Uint32(data[12:]),
	}, nil
}

// startDecode reads the rpcrdma_common prefix both versions share (RFC 8166
// section 4.2; draft-07 rpcrdma_common) and readies a decoder after it. It
// fails when data is shorter than the prefix or rdma_vers is not want; the
// prefix is returned as far as it was read either way.
func startDecode(data []byte, maxSegments int, want uint32) (Common, decoder, error) {
	d := decoder{b: data, max: maxSegments}
	if d.max <= 0 {
		d.max = DefaultMaxSegments
	}
	c, err := ParseCommon(data)
	if err != nil {
		return c, d, d.fail(PartPrefix, -1, -1, ErrTruncated, 0, PrefixLen)
	}
	d.vers, d.typ = c.Vers, c.Type
	if c.Vers != want {
		d.off = 4
		return c, d, d.fail(PartPrefix, -1, -1, ErrBadVersion, c.Vers, 0)
	}
	d.off = PrefixLen
	return c, d, nil
}

// Message decodes an RPC-over-RDMA transport header of either version: it
// reads rdma_vers and decodes into V1 or V2. Reuse one Message across packets.
type Message struct {
	Vers uint32 // rdma_vers of the last decoded header; selects V1 or V2
	V1   Header
	V2   Header2
}

// DecodeFromBytes decodes the header at the start of data (an RDMA Send
// payload). A version other than 1 or 2 yields a *DecodeError with Reason
// ErrBadVersion (Vers is set to the value found) — but for an RDMA_ERROR
// with ERR_VERS, whose layout every version keeps (RFC 8166 section 4: the
// prefix and RDMA_ERROR/ERR_VERS are fixed for all versions, so that a
// Responder can refuse a version in the message it answers; draft-07
// RDMA2_ERROR/RDMA2_ERR_VERS has the same XDR), which decodes into V1 with
// Vers the value found.
func (m *Message) DecodeFromBytes(data []byte) error {
	c, err := ParseCommon(data)
	if err != nil {
		m.Vers = 0
		return err
	}
	m.Vers = c.Vers
	switch c.Vers {
	case Version1:
		return m.V1.DecodeFromBytes(data)
	case Version2:
		return m.V2.DecodeFromBytes(data)
	}
	if c.Type == uint32(RDMAError) && len(data) >= PrefixLen+4 && ErrCode(binary.BigEndian.Uint32(data[PrefixLen:])) == ErrVers {
		return m.V1.decodeAnyVersion(data, c.Vers)
	}
	return &DecodeError{Vers: c.Vers, Type: c.Type, Part: PartPrefix, Chunk: -1, Segment: -1, Offset: 4, Reason: ErrBadVersion, Value: c.Vers, Have: len(data) - 4}
}

// XID returns rdma_xid of the decoded header.
func (m *Message) XID() uint32 {
	if m.Vers == Version2 {
		return m.V2.XID
	}
	return m.V1.XID
}

// Credit returns rdma_credit of the decoded header.
func (m *Message) Credit() uint32 {
	if m.Vers == Version2 {
		return m.V2.Credit
	}
	return m.V1.Credit
}

// Chunks returns the decoded header's chunk lists.
func (m *Message) Chunks() *ChunkLists {
	if m.Vers == Version2 {
		return &m.V2.ChunkLists
	}
	return &m.V1.ChunkLists
}

// HeaderLen returns the decoded header's length.
func (m *Message) HeaderLen() int {
	if m.Vers == Version2 {
		return m.V2.HeaderLen
	}
	return m.V1.HeaderLen
}

// RPCMessage returns the RPC message (or, for v2 *_MIDDLE, the part of it)
// carried in the same Send after the header, or nil for header types that
// carry none.
func (m *Message) RPCMessage() []byte {
	switch m.Vers {
	case Version1:
		if m.V1.Proc.CarriesRPC() {
			return m.V1.payload
		}
	case Version2:
		if m.V2.HType.CarriesRPC() {
			return m.V2.payload
		}
	}
	return nil
}
