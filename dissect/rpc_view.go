package dissect

// The RPC-over-RDMA model as the layers above the engine read it (the
// checks, the reports): every message of an RPC-over-RDMA connection comes
// to the Observer with its RPCRecord (Message.RPC) — the decoded transport
// header, what the message is (RPCKind), and the Transaction it opened,
// continued or ended — and every RDMA Read and Write with its attachment
// (RDMAOp.Attach): the Call segment it served, or why none explains it.
// The engine decides all of it once (rpc_engine.go, rpc_rebuild.go):
// whether a connection carries RPC-over-RDMA, whether an RDMA_NOMSG is a
// Call or a Reply, which Call a Reply answers, which segment an operation
// targets. Nobody else decodes or classifies.

// TxnObserver is an Observer that also hears every transaction when it is
// over (Reply processed, evicted, superseded, or the input or its
// connection ended without a Reply), after Options.Transaction: its Call
// and Reply sides with their chunks, and the RDMA operations attached to
// each segment. The engine reuses the Transaction afterwards: copy what
// must be kept (Transaction.Clone).
type TxnObserver interface {
	Observer
	Transaction(t *Transaction)
}

// RPCKind is what an RPC-over-RDMA message conveys.
type RPCKind uint8

const (
	// RPCKindUnknown: the transport header did not decode.
	RPCKindUnknown RPCKind = iota
	RPCKindCall            // an RPC Call (inline, chunked, or a Long Call)
	RPCKindReply           // an RPC Reply (inline, chunked, or a Long Reply)
	RPCKindError           // RDMA_ERROR / RDMA2_ERROR: a transport error answering a Call
	RPCKindControl         // RDMA_DONE, RDMA_MSGP without RPC, version 2 control messages
)

func (k RPCKind) String() string {
	switch k {
	case RPCKindCall:
		return "Call"
	case RPCKindReply:
		return "Reply"
	case RPCKindError:
		return "RDMA_ERROR"
	case RPCKindControl:
		return "control message"
	}
	return "message"
}

// UnattachedReason says why no Call segment explains an RDMA operation.
type UnattachedReason uint8

const (
	// Attached: the operation moved bytes of a segment (RDMAOp.Attach.Txn).
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
	// UnattachedNotRPC: the connection does not carry RPC-over-RDMA.
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

// OpAttachment is what the RPC-over-RDMA layer made of an RDMA operation:
// the Call segment it moved bytes of, or why none. It is valid only during
// the Observer call.
type OpAttachment struct {
	// Txn is the transaction whose Call advertised the segment (nil when
	// Reason is not Attached); Chunk and Segment index Txn.Call.Chunks.
	Txn            *Transaction
	Chunk, Segment int
	Reason         UnattachedReason
	// For UnattachedAfterReply: the answered Call's XID and the last
	// packet of its Reply (of another ULP: the request's key and the
	// response's packet).
	XID         uint32
	ReplyPacket int
	// GapPacket, for UnattachedCaptureGap, is the packet that revealed
	// what the capture lost.
	GapPacket int
	// Owner is another ULP's request the operation served (Reason
	// Attached), its own type.
	Owner any
}

// AttachedSegment returns the segment the operation moved bytes of, nil
// when it is not attached.
func (a *OpAttachment) AttachedSegment() *Segment {
	if a.Txn == nil || a.Txn.Call == nil || a.Chunk >= len(a.Txn.Call.Chunks) {
		return nil
	}
	ch := &a.Txn.Call.Chunks[a.Chunk]
	if a.Segment >= len(ch.Segments) {
		return nil
	}
	return &ch.Segments[a.Segment]
}

// InlineRPCOK tells whether the RPC message carried inline in the Send
// decoded into r.RPC (as opposed to one rebuilt from chunks, or none).
func (r *RPCRecord) InlineRPCOK() bool { return r.inlineRPC && r.RPCErr == nil }

// InlineXID returns the XID of the RPC message carried inline, when the
// Send carries at least four octets of one and starts it (a later piece
// of a continued version 2 message starts mid-message).
func (r *RPCRecord) InlineXID() (uint32, bool) {
	if r.HeaderErr != nil || r.Continued {
		return 0, false
	}
	in := r.Header.RPCMessage()
	if len(in) < 4 {
		return 0, false
	}
	return uint32(in[0])<<24 | uint32(in[1])<<16 | uint32(in[2])<<8 | uint32(in[3]), true
}
