package nvme

import (
	"errors"
	"strconv"
)

// ErrTruncated is what every decoder's error wraps when the buffer is
// shorter than the structure.
var ErrTruncated = errors.New("nvme: truncated")

// TruncatedError says which structure was cut short. It wraps
// ErrTruncated. The decoders return preallocated values (a failed decode
// allocates nothing either), so it does not hold the length given: the
// caller has it.
type TruncatedError struct {
	What string // the structure, e.g. "submission queue entry"
	Need int    // octets the structure needs
}

func (e *TruncatedError) Error() string {
	return "nvme: " + e.What + " truncated: fewer than " + strconv.Itoa(e.Need) + " octets"
}

// Unwrap returns ErrTruncated.
func (e *TruncatedError) Unwrap() error { return ErrTruncated }

// Sentinel truncation errors of the decoders, preallocated so that a
// failed decode does not allocate either. errors.Is(err, ErrTruncated)
// holds for all of them.
var (
	errShortCMReq      = &TruncatedError{What: "RDMA_CM_REQUEST private data", Need: CMRequestLen}
	errShortCMRep      = &TruncatedError{What: "RDMA_CM_REPLY private data", Need: CMReplyMinLen}
	errShortCMRej      = &TruncatedError{What: "RDMA_CM_REJECT private data", Need: CMRejectLen}
	errShortSQE        = &TruncatedError{What: "submission queue entry", Need: SQELen}
	errShortCQE        = &TruncatedError{What: "completion queue entry", Need: CQELen}
	errShortSGL        = &TruncatedError{What: "SGL descriptor", Need: SGLDescriptorLen}
	errShortConnect    = &TruncatedError{What: "Connect data", Need: ConnectDataLen}
	errShortIdentCtrl  = &TruncatedError{What: "Identify Controller data", Need: IdentifyDataLen}
	errShortIdentNS    = &TruncatedError{What: "Identify Namespace data", Need: identifyNSMinLen}
	errShortDiscHeader = &TruncatedError{What: "Discovery log page header", Need: discoveryHeaderMinLen}
	errShortDiscEntry  = &TruncatedError{What: "Discovery log page entry", Need: DiscoveryLogEntryLen}
	errShortDSMRange   = &TruncatedError{What: "Dataset Management range", Need: DSMRangeLen}
)

// ErrInCapsuleData is returned by Capsule.DecodeFromBytes when the command's
// SGL describes in-capsule data (data block, subtype Offset) that does not
// lie inside the capsule.
var ErrInCapsuleData = errors.New("nvme: in-capsule data descriptor points outside the capsule")
