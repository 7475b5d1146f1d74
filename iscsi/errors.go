package iscsi

import (
	"errors"
	"strconv"
)

// ErrTruncated is what every decoder's error wraps when the buffer is
// shorter than the structure.
var ErrTruncated = errors.New("iscsi: truncated")

// TruncatedError says which structure was cut short; it wraps
// ErrTruncated. The decoders return preallocated values, so a failed
// decode allocates nothing.
type TruncatedError struct {
	What string // the structure, e.g. "basic header segment"
	Need int    // octets the structure needs
}

func (e *TruncatedError) Error() string {
	return "iscsi: " + e.What + " truncated: fewer than " + strconv.Itoa(e.Need) + " octets"
}

// Unwrap returns ErrTruncated.
func (e *TruncatedError) Unwrap() error { return ErrTruncated }

var (
	errShortISER       = &TruncatedError{What: "iSER header", Need: ISERHeaderLen}
	errShortHello      = &TruncatedError{What: "iSER Hello message", Need: HelloLen}
	errShortCM         = &TruncatedError{What: "iSER CM private data", Need: CMPrivateDataLen}
	errShortBHS        = &TruncatedError{What: "basic header segment", Need: BHSLen}
	errShortAHS        = errors.New("iscsi: TotalAHSLength runs past the PDU")
	errShortDataSeg    = errors.New("iscsi: DataSegmentLength runs past the PDU")
	errUnknownISEROp   = errors.New("iscsi: unknown iSER opcode")
	errISERNotHello    = errors.New("iscsi: not an iSER Hello or HelloReply")
	errReservedISERBit = errors.New("iscsi: reserved iSER flag bits set")
)

// ErrDataSegment is returned (wrapped by nothing: compare with ==) when
// the BHS's TotalAHSLength or DataSegmentLength says more octets follow
// than the PDU holds. The BHS itself is decoded.
var ErrDataSegment = errShortDataSeg

// ErrAHS: see ErrDataSegment, for TotalAHSLength.
var ErrAHS = errShortAHS
