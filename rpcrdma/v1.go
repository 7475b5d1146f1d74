package rpcrdma

import (
	"errors"
	"strconv"
)

// Protocol versions carried in rdma_vers (RFC 8166 section 4.2.2; draft-07
// "Initial Connection State").
const (
	Version1 uint32 = 1
	Version2 uint32 = 2
)

// PrefixLen is the length of the transport header prefix every version shares:
// rdma_xid, rdma_vers, rdma_credit, rdma_proc/rdma_htype (RFC 8166 section 4.2).
const PrefixLen = 16

// MsgType is the version 1 rdma_proc (RFC 8166 section 4.2.4, XDR enum rdma_proc).
type MsgType uint32

const (
	RDMAMsg   MsgType = 0 // RDMA_MSG: chunk lists, then the RPC message inline
	RDMANoMsg MsgType = 1 // RDMA_NOMSG: chunk lists only; the RPC message moves by RDMA
	RDMAMsgp  MsgType = 2 // RDMA_MSGP: padded RDMA_MSG; no longer supported (RFC 8166 section 4.6.1)
	RDMADone  MsgType = 3 // RDMA_DONE: no longer supported (RFC 8166 section 4.6.2)
	RDMAError MsgType = 4 // RDMA_ERROR (RFC 8166 section 4.5)
)

var msgTypeNames = [...]string{"RDMA_MSG", "RDMA_NOMSG", "RDMA_MSGP", "RDMA_DONE", "RDMA_ERROR"}

func (t MsgType) String() string {
	if int(t) < len(msgTypeNames) {
		return msgTypeNames[t]
	}
	return "RDMA_PROC(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// CarriesRPC tells whether the RPC message follows the header in the same Send
// (RDMA_MSG and RDMA_MSGP).
func (t MsgType) CarriesRPC() bool { return t == RDMAMsg || t == RDMAMsgp }

// ErrCode is the version 1 rdma_err of an RDMA_ERROR (RFC 8166 section 4.5,
// XDR enum rpc_rdma_errcode).
type ErrCode uint32

const (
	ErrVers  ErrCode = 1 // ERR_VERS: the peer does not support rdma_vers; carries the supported range
	ErrChunk ErrCode = 2 // ERR_CHUNK: the header could not be parsed or its chunks processed
)

func (c ErrCode) String() string {
	switch c {
	case ErrVers:
		return "ERR_VERS"
	case ErrChunk:
		return "ERR_CHUNK"
	}
	return "RDMA_ERR(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Header is an RPC-over-RDMA version 1 transport header (RFC 8166 section 4.1,
// XDR struct rdma_msg). Reuse one Header across packets: DecodeFromBytes keeps
// the backing arrays of its slices.
type Header struct {
	XID    uint32  // rdma_xid: the RPC message's XID
	Vers   uint32  // rdma_vers: 1
	Credit uint32  // rdma_credit: credits requested (Call) or granted (Reply), section 3.3.1
	Proc   MsgType // rdma_proc

	// RDMA_MSGP only (rpc_rdma_header_padded).
	Align  uint32 // rdma_align
	Thresh uint32 // rdma_thresh

	// RDMA_MSG, RDMA_NOMSG and RDMA_MSGP.
	ChunkLists

	// RDMA_ERROR only (rpc_rdma_error).
	Err      ErrCode // rdma_err
	VersLow  uint32  // rdma_vers_low (ERR_VERS)
	VersHigh uint32  // rdma_vers_high (ERR_VERS)

	// HeaderLen is the transport header's length: for RDMA_MSG and RDMA_MSGP
	// the offset where the RPC message starts. (RDMA_MSGP's alignment padding
	// inside the RPC message (RFC 5666 "Padding") is not resolved: the
	// RPC message is taken to start right after the header, as Wireshark does.)
	HeaderLen int

	// MaxSegments caps the segments of all chunk lists; 0 means DefaultMaxSegments.
	MaxSegments int

	contents, payload []byte
}

// Contents returns the header bytes; Payload the bytes after it (the RPC
// message for RDMA_MSG and RDMA_MSGP).
func (h *Header) Contents() []byte { return h.contents }
func (h *Header) Payload() []byte  { return h.payload }

func (h *Header) resetBody() {
	h.Align, h.Thresh = 0, 0
	h.ChunkLists.reset()
	h.Err, h.VersLow, h.VersHigh = 0, 0, 0
	h.HeaderLen = 0
	h.contents, h.payload = nil, nil
}

// DecodeFromBytes decodes a version 1 transport header from the start of data
// (an RDMA Send payload). It returns a *DecodeError when data is not a valid
// version 1 header; the fields decoded before the error stay set.
func (h *Header) DecodeFromBytes(data []byte) error {
	h.resetBody()
	c, d, err := startDecode(data, h.MaxSegments, Version1)
	h.XID, h.Vers, h.Credit, h.Proc = c.XID, c.Vers, c.Credit, MsgType(c.Type)
	if err != nil {
		return err
	}
	if err := h.decodeBody(&d); err != nil {
		return err
	}
	h.HeaderLen = d.off
	h.contents, h.payload = data[:d.off], data[d.off:]
	return nil
}

// decodeAnyVersion decodes data as a version 1 header, whatever its
// rdma_vers (Message: RDMA_ERROR/ERR_VERS of an unknown version).
func (h *Header) decodeAnyVersion(data []byte, vers uint32) error {
	h.resetBody()
	c, d, err := startDecode(data, h.MaxSegments, vers)
	h.XID, h.Vers, h.Credit, h.Proc = c.XID, c.Vers, c.Credit, MsgType(c.Type)
	if err != nil {
		return err
	}
	if err := h.decodeBody(&d); err != nil {
		return err
	}
	h.HeaderLen = d.off
	h.contents, h.payload = data[:d.off], data[d.off:]
	return nil
}

func (h *Header) decodeBody(d *decoder) error {
	switch h.Proc {
	case RDMAMsg, RDMANoMsg:
		return d.chunkLists(&h.ChunkLists)
	case RDMAMsgp:
		var err error
		if h.Align, err = d.u32(PartPadding, -1, -1); err != nil {
			return err
		}
		if h.Thresh, err = d.u32(PartPadding, -1, -1); err != nil {
			return err
		}
		return d.chunkLists(&h.ChunkLists)
	case RDMADone:
		return nil
	case RDMAError:
		v, err := d.u32(PartError, -1, -1)
		if err != nil {
			return err
		}
		h.Err = ErrCode(v)
		switch h.Err {
		case ErrVers:
			if h.VersLow, err = d.u32(PartError, -1, -1); err != nil {
				return err
			}
			h.VersHigh, err = d.u32(PartError, -1, -1)
			return err
		case ErrChunk:
			return nil
		}
		d.off -= 4
		return d.fail(PartError, -1, -1, ErrUnknownErrCode, v, 0)
	}
	d.off = 12
	return d.fail(PartPrefix, -1, -1, ErrUnknownProc, uint32(h.Proc), 0)
}

// AppendBinary appends the header's XDR encoding to b (encoding.BinaryAppender).
// The RPC message, if any, is not included: append it after. Vers is written
// as set, so headers with a wrong version can be built; ReadList (not
// ReadChunks) is encoded.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	b = appendU32(b, h.XID)
	b = appendU32(b, h.Vers)
	b = appendU32(b, h.Credit)
	b = appendU32(b, uint32(h.Proc))
	switch h.Proc {
	case RDMAMsg, RDMANoMsg:
		return h.appendChunkLists(b), nil
	case RDMAMsgp:
		b = appendU32(b, h.Align)
		b = appendU32(b, h.Thresh)
		return h.appendChunkLists(b), nil
	case RDMADone:
		return b, nil
	case RDMAError:
		b = appendU32(b, uint32(h.Err))
		switch h.Err {
		case ErrVers:
			b = appendU32(b, h.VersLow)
			return appendU32(b, h.VersHigh), nil
		case ErrChunk:
			return b, nil
		}
		return b, errors.New("rpcrdma: cannot encode RDMA_ERROR with rdma_err " + h.Err.String())
	}
	return b, errors.New("rpcrdma: cannot encode rdma_proc " + h.Proc.String())
}

// MarshalBinary returns the header's XDR encoding (encoding.BinaryMarshaler).
func (h *Header) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }
