package rpcordma

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// MsgKind is what an RPC-over-RDMA message conveys: the engine's decision
// (RPCKind), which the rules only read.
type MsgKind = RPCKind

const (
	KindUnknown = RPCKindUnknown
	KindCall    = RPCKindCall
	KindReply   = RPCKindReply
	KindError   = RPCKindError
	KindOther   = RPCKindControl
)

// Msg is one reassembled Send as the message rules see it: a view of the
// engine's Message and the RPCRecord the engine made of it (its transport
// header, its inline RPC header, its kind, its transaction). Nothing is
// decoded or classified here. Everything in it is valid only during the
// call.
type Msg struct {
	*dissect.Message
	// Rec is the engine's record of the message.
	Rec *RPCRecord
	// HasPrefix: the 16-octet prefix decoded; Common holds rdma_xid,
	// rdma_vers, rdma_credit and rdma_proc/htype.
	HasPrefix bool
	Common    rpcrdma.Common
	// Hdr is the decoded transport header; HdrErr is its decoding error
	// (fields before the error are set).
	Hdr    *rpcrdma.Message
	HdrErr error
	// RPC is the ONC RPC header carried inline (RDMA_MSG); HasRPC tells
	// whether it decoded, RPCErr why not. RPCXID/HasRPCXID hold the inline
	// XID even when the rest did not decode.
	RPC       *oncrpc.Header
	HasRPC    bool
	RPCErr    error
	RPCXID    uint32
	HasRPCXID bool
	// Kind is what the message conveys.
	Kind MsgKind
	// Call is the Call a Reply or RDMA_ERROR answers, when the capture
	// holds it (nil otherwise: the capture started mid-transaction, or
	// lost the Call).
	Call *Call
}

// XID returns rdma_xid.
func (m *Msg) XID() uint32 { return m.Common.XID }

// Chunks returns the header's chunk lists, nil when the header did not
// decode or carries none.
func (m *Msg) Chunks() *rpcrdma.ChunkLists {
	if m.HdrErr != nil || !m.HasPrefix {
		return nil
	}
	switch m.Common.Vers {
	case rpcrdma.Version1:
		switch rpcrdma.MsgType(m.Common.Type) {
		case rpcrdma.RDMAMsg, rpcrdma.RDMANoMsg, rpcrdma.RDMAMsgp:
			return &m.Hdr.V1.ChunkLists
		}
	case rpcrdma.Version2:
		return &m.Hdr.V2.ChunkLists
	}
	return nil
}

// Proc returns the version 1 rdma_proc.
func (m *Msg) Proc() rpcrdma.MsgType { return rpcrdma.MsgType(m.Common.Type) }

// Inline returns the RPC message carried in the Send after the header (nil
// when none, or when the header did not decode).
func (m *Msg) Inline() []byte {
	if m.HdrErr != nil {
		return nil
	}
	return m.Hdr.RPCMessage()
}

// view fills the runner's reused Msg from the engine's record of m.
func (r *runState) view(m *dissect.Message) *Msg {
	rec := Record(m)
	g := &r.m
	*g = Msg{Message: m, Rec: rec, Hdr: &rec.Header, RPC: &rec.RPC,
		HasPrefix: rec.PrefixOK, Common: rec.Common, HdrErr: rec.HeaderErr, Kind: rec.Kind}
	if rec.HeaderErr == nil && len(rec.Header.RPCMessage()) > 0 {
		g.RPCErr = rec.RPCErr
		g.HasRPC = rec.InlineRPCOK()
	}
	g.RPCXID, g.HasRPCXID = rec.InlineXID()
	if (g.Kind == KindReply || g.Kind == KindError) && rec.Txn != nil && rec.Txn.Call != nil {
		g.Call = r.call.of(rec.Txn)
	}
	return g
}

// account adds the message to the connection's summaries.
func (c *connState) account(g *Msg) {
	s := &c.Chunks
	switch g.Kind {
	case KindCall:
		s.Calls++
		if g.Common.Vers == rpcrdma.Version2 && g.HdrErr == nil && g.Hdr.V2.InvHandle != 0 {
			c.Usage.SolicitingCalls++
		}
		if g.Common.Vers == rpcrdma.Version1 && g.Proc() == rpcrdma.RDMANoMsg {
			s.LongCalls++
		}
	case KindReply:
		s.Replies++
		c.Usage.Replies++
		if g.Invalidate {
			c.Usage.RepliesWithInvalidate++
		}
		if g.Common.Vers == rpcrdma.Version1 && g.Proc() == rpcrdma.RDMANoMsg {
			s.LongReplies++
		}
	case KindError:
		s.Errors++
	}
	if ch := g.Chunks(); ch != nil {
		s.Segments += ch.SegmentCount()
		if g.Kind == KindCall {
			for _, rc := range ch.ReadChunks {
				if rc.Position != 0 {
					s.ReadChunks++
				}
			}
			s.WriteChunks += len(ch.WriteList)
			if ch.HasReplyChunk {
				s.ReplyChunks++
			}
		}
	}
}
