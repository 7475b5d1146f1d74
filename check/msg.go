package check

import (
	"encoding/binary"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// NFSRDMAPort is the well-known port of NFS over RDMA (RFC 8267 section 8,
// "nfsrdma"): RDMA-CM service IDs and iWARP server ports carry it.
const NFSRDMAPort = 20049

// MsgKind is what an RPC-over-RDMA message conveys.
type MsgKind uint8

const (
	KindUnknown MsgKind = iota
	KindCall            // an RPC Call (inline, or a Long Call)
	KindReply           // an RPC Reply (inline, or a Long Reply)
	KindError           // RDMA_ERROR: a transport error in answer to a Call
	KindOther           // RDMA_DONE, v2 control messages
)

func (k MsgKind) String() string {
	switch k {
	case KindCall:
		return "Call"
	case KindReply:
		return "Reply"
	case KindError:
		return "RDMA_ERROR"
	case KindOther:
		return "control message"
	}
	return "message"
}

// Msg is one reassembled Send as the message rules see it: the engine's
// Message and its RPC-over-RDMA transport header and ONC RPC header, decoded
// once by the runner. Everything in it is valid only during the call.
type Msg struct {
	*dissect.Message
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

// decode decodes m's headers into the runner's reused Msg.
func (r *Runner) decode(c *Conn, m *dissect.Message) *Msg {
	g := &r.m
	*g = Msg{Message: m, Hdr: &r.hdr, RPC: &r.rpc}
	var err error
	if g.Common, err = rpcrdma.ParseCommon(m.Data); err != nil {
		g.HdrErr = err
		return g
	}
	g.HasPrefix = true
	g.HdrErr = r.hdr.DecodeFromBytes(m.Data)
	if g.HdrErr == nil {
		if in := r.hdr.RPCMessage(); len(in) > 0 {
			if len(in) >= 4 {
				g.RPCXID, g.HasRPCXID = binary.BigEndian.Uint32(in), true
			}
			g.RPCErr = r.rpc.DecodeFromBytes(in)
			g.HasRPC = g.RPCErr == nil
		}
	}
	g.Kind = classify(g, m.Dir)
	return g
}

// classify tells Calls from Replies. The inline RPC message says so when
// there is one; an RDMA_NOMSG carries none, and is a Long Call when the
// client sends it and a Long Reply when the server does (NFSv4.1
// backchannel Calls from the server are always Short messages, RFC 8267
// section 5.5.2 / RFC 8167).
func classify(g *Msg, dir dissect.Direction) MsgKind {
	switch g.Common.Vers {
	case rpcrdma.Version1:
		switch g.Proc() {
		case rpcrdma.RDMAError:
			return KindError
		case rpcrdma.RDMADone:
			return KindOther
		case rpcrdma.RDMANoMsg:
			if dir == dissect.DirClientToServer {
				return KindCall
			}
			return KindReply
		}
	case rpcrdma.Version2:
		t := rpcrdma.HType(g.Common.Type)
		switch {
		case t == rpcrdma.HTypeError:
			return KindError
		case t.IsCall():
			return KindCall
		case t.IsReply():
			return KindReply
		case t.Known():
			return KindOther
		}
		return KindUnknown
	default:
		return KindUnknown
	}
	// RDMA_MSG, RDMA_MSGP: the inline RPC message's msg_type.
	in := g.Inline()
	if len(in) < 8 {
		return KindUnknown
	}
	switch oncrpc.MsgType(binary.BigEndian.Uint32(in[4:])) {
	case oncrpc.Call:
		return KindCall
	case oncrpc.Reply:
		return KindReply
	}
	return KindUnknown
}

// isRPC decides whether the connection carries RPC-over-RDMA: either side's
// private data holds the RFC 8797 identifier, the service port is
// nfsrdma's, or a Send holds a transport header whose inline RPC message
// repeats its XID.
func (c *Conn) isRPC(g *Msg) bool {
	switch c.rpc {
	case rpcYes:
		return true
	case rpcUnknown:
		if c.PrivateData[0].Result.Offset >= 0 && c.PrivateData[0].Seen ||
			c.PrivateData[1].Result.Offset >= 0 && c.PrivateData[1].Seen ||
			c.ServicePort == NFSRDMAPort {
			c.rpc = rpcYes
			return true
		}
	}
	if g.HasPrefix && g.HdrErr == nil && g.HasRPC && g.RPC.XID == g.Common.XID &&
		(g.Common.Vers == rpcrdma.Version1 || g.Common.Vers == rpcrdma.Version2) {
		c.rpc = rpcYes
		return true
	}
	c.rpc = rpcNo
	return false
}

// account adds the message to the connection's summaries.
func (c *Conn) account(g *Msg) {
	s := &c.Chunks
	switch g.Kind {
	case KindCall:
		s.Calls++
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
