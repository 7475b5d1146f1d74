package rpcordma

import "github.com/rdmashark/rdmashark/dissect"

// The RPC-over-RDMA model as the layers above the engine read it (the
// checks, the reports): every message of an RPC-over-RDMA connection comes
// to the Observer with its RPCRecord (Message.ULP, Record) — the decoded transport
// header, what the message is (RPCKind), and the Transaction it opened,
// continued or ended — and every RDMA Read and Write with its attachment
// (RDMAOp.Attach): the Call segment it served, or why none explains it.
// The session decides all of it once (rpc_engine.go, rpc_rebuild.go):
// whether a connection carries RPC-over-RDMA, whether an RDMA_NOMSG is a
// Call or a Reply, which Call a Reply answers, which segment an operation
// targets. Nobody else decodes or classifies.

// TxnObserver is an Observer that also hears every transaction when it is
// over (Reply processed, evicted, superseded, or the input or its
// connection ended without a Reply), after OnTransaction's callback: its Call
// and Reply sides with their chunks, and the RDMA operations attached to
// each segment. The engine reuses the Transaction afterwards: copy what
// must be kept (Transaction.Clone).
type TxnObserver interface {
	dissect.Observer
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

// AttachedSegment returns the segment the operation moved bytes of, nil
// when it is not attached.
func AttachedSegment(a *dissect.OpAttachment) *Segment {
	t := Txn(a)
	if t == nil || t.Call == nil || a.I >= len(t.Call.Chunks) {
		return nil
	}
	ch := &t.Call.Chunks[a.I]
	if a.J >= len(ch.Segments) {
		return nil
	}
	return &ch.Segments[a.J]
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
