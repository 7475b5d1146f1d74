package dissect

// What a ULP session made of an RDMA operation (RDMAOp.Attach): the request
// whose advertised memory it served, or why none explains it. Memory[O]
// (memory.go) answers both for a session.

// UnattachedReason says why no request's advertised memory explains an
// RDMA operation. Its names in the outputs ("no segment", "after reply",
// "call undecoded", "not rpc") are from when RPC-over-RDMA was the only
// ULP: they are the output contract and stay.
type UnattachedReason uint8

const (
	// Attached: the operation moved bytes of a region a request
	// advertised (RDMAOp.Attach.Owner).
	Attached UnattachedReason = iota
	// UnattachedNoRegion: no request outstanding on the connection
	// advertised memory that holds the operation's range (RPC-over-RDMA:
	// no Call segment, RFC 8166 section 3.4.3).
	UnattachedNoRegion
	// UnattachedAfterResponse: the memory is that of a request already
	// answered (RPC-over-RDMA: RFC 8166 section 3.6, a Call's memory is
	// invalidated once the Reply is sent).
	UnattachedAfterResponse
	// UnattachedRequestUnknown: a request outstanding in the operation's
	// channel did not decode (RPC-over-RDMA: a Call's transport header), so
	// the memory it advertised is unknown: the operation may well be its.
	UnattachedRequestUnknown
	// UnattachedNoULP: no ULP session looked at the operation: its
	// connection carries no registered ULP (or none yet).
	UnattachedNoULP
	// UnattachedCaptureGap: the capture lacks the evidence: the requests
	// that advertise memory lost a stretch before the operation, or the
	// operation itself is incomplete where the capture lost packets
	// (RDMAOp.EvidenceLost; GapPacket names the packet that revealed it).
	UnattachedCaptureGap
)

func (r UnattachedReason) String() string {
	switch r {
	case Attached:
		return "attached"
	case UnattachedNoRegion:
		return "no segment"
	case UnattachedAfterResponse:
		return "after reply"
	case UnattachedRequestUnknown:
		return "call undecoded"
	case UnattachedNoULP:
		return "not rpc"
	case UnattachedCaptureGap:
		return "capture gap"
	}
	return "unknown"
}

// MarshalText makes an UnattachedReason appear by name in JSON.
func (r UnattachedReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// OpAttachment is what the session of the connection's ULP made of an RDMA
// operation: the request whose advertised region it moved bytes of, or why
// none. It is valid only during the Observer call.
type OpAttachment struct {
	// I and J are the ULP's own indexes of the region in Owner's request
	// (RPC-over-RDMA: the chunk and the segment of the Call), when Reason
	// is Attached.
	I, J   int
	Reason UnattachedReason
	// For UnattachedAfterResponse: the answered request's key as the
	// session's Memory keeps it (RPC-over-RDMA: the Call's XID) and the
	// last packet of its response.
	Key            uint32
	ResponsePacket int
	// GapPacket, for UnattachedCaptureGap, is the packet that revealed
	// what the capture lost.
	GapPacket int
	// Owner is the request the operation served (Reason Attached), in
	// its ULP's own type (*rpcordma.Transaction, *nvmeof.Command, ...).
	Owner any
}
