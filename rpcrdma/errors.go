package rpcrdma

import (
	"fmt"
	"strconv"
)

// Reason says why a transport header did not decode. Reason values are errors
// themselves, so callers can test with errors.Is(err, rpcrdma.ErrTruncated).
type Reason uint8

const (
	// ErrTruncated: the header ends before a field the XDR requires.
	ErrTruncated Reason = iota + 1
	// ErrBadDiscriminator: an XDR optional-data discriminator (chunk list entry
	// or Reply chunk present flag) is neither 0 nor 1 (RFC 4506 section 4.19).
	ErrBadDiscriminator
	// ErrBadVersion: rdma_vers is not the version this decoder handles.
	ErrBadVersion
	// ErrUnknownProc: a version 1 rdma_proc outside RDMA_MSG..RDMA_ERROR.
	ErrUnknownProc
	// ErrUnknownErrCode: a version 1 RDMA_ERROR whose rdma_err is neither
	// ERR_VERS nor ERR_CHUNK (the rpc_rdma_error union has no default arm).
	ErrUnknownErrCode
	// ErrUnknownHType: a version 2 rdma_htype that draft-07 does not define;
	// its body cannot be parsed (draft-07 "Transport Header Types").
	ErrUnknownHType
	// ErrTooManySegments: more segments than the decoder's MaxSegments cap.
	ErrTooManySegments
	// ErrTooManyChunks: more Write chunks than the decoder's MaxSegments cap
	// (empty chunks hold no segment but still cost an entry).
	ErrTooManyChunks
	// ErrCountTooLarge: a counted array's element count (Write/Reply chunk
	// segment count, property count, opaque length) needs more bytes than the
	// header has left: the length field lies.
	ErrCountTooLarge
	// ErrTooManyProperties: more transport properties than MaxProperties.
	ErrTooManyProperties
	// ErrBadPropertyValue: a known transport property's rdma_data does not hold
	// its XDR type (draft-07 "Transport Properties Model": RDMA2_ERR_BAD_PROPVAL).
	ErrBadPropertyValue
)

var reasonNames = [...]string{
	ErrTruncated:         "truncated",
	ErrBadDiscriminator:  "bad optional-data discriminator",
	ErrBadVersion:        "unsupported rdma_vers",
	ErrUnknownProc:       "unknown rdma_proc",
	ErrUnknownErrCode:    "unknown rdma_err",
	ErrUnknownHType:      "unknown rdma_htype",
	ErrTooManySegments:   "too many segments",
	ErrTooManyChunks:     "too many chunks",
	ErrCountTooLarge:     "count exceeds the bytes left",
	ErrTooManyProperties: "too many transport properties",
	ErrBadPropertyValue:  "bad transport property value",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

func (r Reason) Error() string { return "rpcrdma: " + r.String() }

// Part names the piece of a transport header a DecodeError is about.
type Part uint8

const (
	PartPrefix     Part = iota + 1 // rpcrdma_common: xid, vers, credit, proc/htype
	PartPadding                    // RDMA_MSGP rdma_align and rdma_thresh
	PartReadList                   // rdma_reads
	PartWriteList                  // rdma_writes / rdma_provisional_writes
	PartReplyChunk                 // rdma_reply / rdma_provisional_reply
	PartError                      // rpc_rdma_error / rpcrdma2_hdr_error body
	PartCallList                   // v2 rdma_call (CALL_EXTERNAL)
	PartInvHandle                  // v2 rdma_inv_handle
	PartRemaining                  // v2 rdma_remaining (CALL_MIDDLE/REPLY_MIDDLE)
	PartProperties                 // v2 rpcrdma2_propset
	PartRPCMessage                 // v2 rdma_rpc_first_word: the RPC message
)

var partNames = [...]string{
	PartPrefix:     "transport header prefix",
	PartPadding:    "rdma_align/rdma_thresh",
	PartReadList:   "read list",
	PartWriteList:  "write list",
	PartReplyChunk: "reply chunk",
	PartError:      "error body",
	PartCallList:   "call chunk list",
	PartInvHandle:  "rdma_inv_handle",
	PartRemaining:  "rdma_remaining",
	PartProperties: "property set",
	PartRPCMessage: "RPC message",
}

func (p Part) String() string {
	if int(p) < len(partNames) && partNames[p] != "" {
		return partNames[p]
	}
	return "part(" + strconv.Itoa(int(p)) + ")"
}

// DecodeError describes a transport header that does not parse.
type DecodeError struct {
	Vers    uint32 // rdma_vers of the header (0 when the prefix itself is short)
	Type    uint32 // rdma_proc (v1) or rdma_htype (v2)
	Part    Part   // where in the header
	Chunk   int    // chunk or list-entry index within Part, -1 when not applicable
	Segment int    // segment index within the chunk, -1 when not applicable
	Offset  int    // byte offset from the start of the header
	Reason  Reason
	Value   uint32 // the offending value (discriminator, count, proc...), when there is one
	Need    int    // bytes needed (ErrTruncated, ErrCountTooLarge)
	Have    int    // bytes left at Offset
}

func (e *DecodeError) Error() string {
	where := e.Part.String()
	if e.Chunk >= 0 {
		switch e.Part {
		case PartReadList, PartCallList:
			where += " entry " + strconv.Itoa(e.Chunk)
		case PartProperties:
			where += " property " + strconv.Itoa(e.Chunk)
		default:
			where += " chunk " + strconv.Itoa(e.Chunk)
		}
	}
	if e.Segment >= 0 {
		where += " segment " + strconv.Itoa(e.Segment)
	}
	typ := ""
	switch e.Vers {
	case Version1:
		typ = " " + MsgType(e.Type).String()
	case Version2:
		typ = " " + HType(e.Type).String()
	}
	var msg string
	if e.Vers == 0 && e.Part == PartPrefix && e.Reason == ErrTruncated {
		// A Send shorter than the prefix: it holds no rdma_vers to name.
		msg = fmt.Sprintf("rpcrdma: %s at offset %d: %s", where, e.Offset, e.Reason)
	} else {
		msg = fmt.Sprintf("rpcrdma v%d%s: %s at offset %d: %s", e.Vers, typ, where, e.Offset, e.Reason)
	}
	switch e.Reason {
	case ErrTruncated:
		msg += fmt.Sprintf(" (need %d bytes, have %d)", e.Need, e.Have)
	case ErrCountTooLarge:
		msg += fmt.Sprintf(" (count %d needs %d bytes, have %d)", e.Value, e.Need, e.Have)
	case ErrBadDiscriminator, ErrUnknownProc, ErrUnknownErrCode, ErrUnknownHType, ErrBadVersion, ErrBadPropertyValue:
		msg += fmt.Sprintf(" (value %d)", e.Value)
	case ErrTooManySegments, ErrTooManyChunks, ErrTooManyProperties:
		msg += fmt.Sprintf(" (limit %d)", e.Value)
	}
	return msg
}

// Unwrap returns the Reason, so errors.Is(err, ErrTruncated) works.
func (e *DecodeError) Unwrap() error { return e.Reason }
