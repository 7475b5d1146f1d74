package dissect

// What a ULP session made of an RDMA operation (RDMAOp.Attach): the request
// whose advertised memory it served, or why none explains it. Memory[O]
// (memory.go) answers both for a session.

// UnattachedReason says why no Call segment explains an RDMA operation.
type UnattachedReason uint8

const (
	// Attached: the operation moved bytes of a region a request
	// advertised (RDMAOp.Attach.Owner).
	Attached UnattachedReason = iota
	// UnattachedNoSegment: no Call outstanding on the connection advertised
	// memory that holds the operation's range (RFC 8166 section 3.4.3).
	UnattachedNoSegment
	// UnattachedAfterReply: the memory is that of a Call already answered
	// (RFC 8166 section 3.6: its memory is invalidated once the Reply is
	// sent).
	UnattachedAfterReply
	// UnattachedCallUnknown: a Call outstanding in the operation's channel
	// has a transport header that did not decode, so its chunk lists are
	// unknown: the operation may well be its.
	UnattachedCallUnknown
	// UnattachedNotRPC: no ULP session looked at the operation: its
	// connection carries no registered ULP (or none yet). Its name, "not
	// rpc", is from when RPC-over-RDMA was the only ULP; the outputs keep
	// it.
	UnattachedNotRPC
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
	case UnattachedNoSegment:
		return "no segment"
	case UnattachedAfterReply:
		return "after reply"
	case UnattachedCallUnknown:
		return "call undecoded"
	case UnattachedNotRPC:
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
	// For UnattachedAfterReply: the answered Call's XID and the last
	// packet of its Reply (of another ULP: the request's key and the
	// response's packet).
	XID         uint32
	ReplyPacket int
	// GapPacket, for UnattachedCaptureGap, is the packet that revealed
	// what the capture lost.
	GapPacket int
	// Owner is the request the operation served (Reason Attached), in
	// its ULP's own type (*rpcordma.Transaction, *nvmeof.Command, ...).
	Owner any
}
