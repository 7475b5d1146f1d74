package rpcordma

import (
	"slices"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// The seam for the upper-layer protocols carried in RPC: the RPC-over-RDMA
// layer hands each RPC message whose body it holds to the engine's
// rpcrdma.UpperLayerBinding (Options.ULP; the NFS binding of RFC 8267 is
// rpcrdma/nfs.NewBinding, wired by the command) and keeps what it reports in
// RPCRecord.ULP — names for the summary and the transactions, the
// DDP-eligible items (which the checks read), and where a Reply's Write
// chunk data goes back (RFC 8166 section 3.4.6 leaves where to the
// Upper-Layer Binding). Without a binding no RPC body is decoded.

// ULPQuery is one RPC message body handed to the binding.
type ULPQuery = rpcrdma.ULBQuery

// ULPInfo is what the binding reports.
type ULPInfo = rpcrdma.ULBInfo

// ULPFunc makes a function an rpcrdma.UpperLayerBinding.
type ULPFunc func(q *ULPQuery, out *ULPInfo)

// Decode implements rpcrdma.UpperLayerBinding.
func (f ULPFunc) Decode(q *ULPQuery, out *ULPInfo) { f(q, out) }

// RPC-over-RDMA as a ULP of the seam (dissect/ulp.go). One ULP value serves
// one engine and holds RPC-over-RDMA's engine-wide state (Engine: pools,
// the rebuild budget, RPCCounters); a session is a handle on it for one
// connection.

// Name is RPC-over-RDMA's ULP name, tshark's protocol name.
const Name = "rpcordma"

// NFSRDMAPort is the nfsrdma port (RFC 8267 section 8); a program names
// the ports its binding carries (cmd/rdmashark: rpcrdma/nfs.RDMAPort).
const NFSRDMAPort = 20049

// New returns the RPC-over-RDMA ULP (RFC 8166, RFC 8167, the version 2
// draft) for one engine: binding decodes the RPC bodies (nil: none), and
// ports are the service ports that carry RPC-over-RDMA (the binding's:
// nfsrdma's 20049, RFC 8267 section 8).
func New(binding rpcrdma.UpperLayerBinding, ports ...uint16) dissect.ULP {
	u := &rpcULP{binding: binding, ports: ports}
	u.e.opts.ULP = binding
	return u
}

type rpcULP struct {
	binding rpcrdma.UpperLayerBinding
	ports   []uint16
	e       Engine
	// hdr and rpc are Sender's scratch headers, reused (their chunk
	// lists keep their room): it is asked on the per-packet path.
	hdr rpcrdma.Message
	rpc oncrpc.Header
}

func (u *rpcULP) Name() string    { return Name }
func (u *rpcULP) Ports() []uint16 { return u.ports }

// Counters returns a copy of the engine-wide counters
// (dissect.ULPCounters): an RPCCounters.
func (u *rpcULP) Counters() any {
	c := u.e.RPC
	c.UnattachedOps = slices.Clone(c.UnattachedOps)
	return c
}

// Retained says what the sessions hold (dissect.ULPRetainer).
func (u *rpcULP) Retained() (conns, open, rebuildBytes int) {
	for _, rc := range u.e.rpcs.conns {
		conns++
		open += len(rc.out)
	}
	return conns, open, u.e.RPC.RebuildBytes
}

// OnTransaction makes fn hear every transaction of the RPC-over-RDMA ULP
// among ulps once it is over (Reply processed, evicted, or the capture
// ended without a Reply), before a TxnObserver does. The engine reuses
// the Transaction afterwards: fn copies what it keeps (Transaction.Clone).
func OnTransaction(ulps []dissect.ULP, fn func(*Transaction)) {
	for _, l := range ulps {
		if u, ok := l.(*rpcULP); ok {
			u.e.opts.Transaction = fn
			u.e.setWant()
		}
	}
}

// Claim says Yes to a connection to one of the ULP's ports, or whose
// set-up carried an RFC 8797 Format Identifier (valid or not), Maybe to
// any other: its first Sends are probed.
func (u *rpcULP) Claim(c *dissect.Connection) dissect.Verdict {
	for _, p := range u.ports {
		if c.ServicePort == p {
			return dissect.Yes
		}
	}
	if HasIdentifier(c) {
		return dissect.Yes
	}
	return dissect.Maybe
}

// Probe says Yes to a Send whose transport header decodes and whose RPC
// message, if inline, is a plausible Call or Reply of its XID; Maybe
// otherwise (the engine stops at MaxProbes).
func (u *rpcULP) Probe(c *dissect.Connection, m *dissect.Message) dissect.Verdict {
	var h rpcrdma.Message
	if h.DecodeFromBytes(m.Data) != nil {
		return dissect.Maybe
	}
	v := viewOf(&h)
	var rpc oncrpc.Header
	rpcOK := len(v.rpc) > 0 && rpc.DecodeFromBytes(v.rpc) == nil
	if !plausible(&v, rpcOK, &rpc) {
		return dissect.Maybe
	}
	return dissect.Yes
}

// Sender says which side sent a Send starting a message on a connection
// whose set-up the capture lacks (dissect.Orienter): one that starts a
// Call is the client's, one that starts a Reply or an RDMA_ERROR the
// server's. The engine orients an RDMA Read or Write itself: only the
// responder — the server — initiates them (RFC 8166 section 3.4.3;
// version 2 alike).
func (u *rpcULP) Sender(op roce.OpCode, payload []byte) dissect.Side {
	h := &u.hdr
	if h.DecodeFromBytes(payload) != nil {
		return dissect.SideUnknown
	}
	v := viewOf(h)
	rpc := &u.rpc
	rpcOK := len(v.rpc) > 0 && rpc.DecodeFromBytes(v.rpc) == nil
	if !plausible(&v, rpcOK, rpc) {
		return dissect.SideUnknown
	}
	if v.kind == kindUnknown && rpcOK && !v.long {
		// An RDMA_MSG: its RPC header says Call or Reply (the session
		// reads it so too).
		v.kind = kindReply
		if rpc.MsgType == oncrpc.Call {
			v.kind = kindCall
		}
	}
	switch v.kind {
	case kindCall:
		if rpcOK && rpc.MsgType == oncrpc.Call && rpc.Prog >= transientProgs && rpc.Prog < transientProgsEnd {
			// A program number of the transient range (RFC 5531
			// section 8): NFSv4's callback program (RFC 8881 section
			// 18.36, Linux's 0x40000000), whose Calls the server sends
			// on the backchannel (RFC 8167).
			return dissect.SideUnknown
		}
		return dissect.SideClient
	case kindReply, kindError:
		// (A backchannel Reply is the client's, RFC 8167; the first
		// Reply a capture holds of a connection is, but for a capture
		// that starts in the middle of a callback, the server's.)
		return dissect.SideServer
	}
	return dissect.SideUnknown
}

// The transient program numbers (RFC 5531 section 8: "20000000 -
// 3fffffff defined by user, 40000000 - 5fffffff transient"), where
// NFSv4's callback programs are.
const (
	transientProgs    oncrpc.Program = 0x40000000
	transientProgsEnd oncrpc.Program = 0x60000000
)

func (u *rpcULP) Start(c *dissect.Connection, env *dissect.Env) dissect.Session {
	e := &u.e
	e.lend(env)
	s := e.rpc()
	if s.ulp == nil {
		s.ulp = u.binding
	}
	return &rpcSession{e: e, c: c}
}

// rpcSession is RPC-over-RDMA on one connection.
type rpcSession struct {
	e *Engine
	c *dissect.Connection
}

func (s *rpcSession) Message(p *dissect.Packet, m *dissect.Message) {
	if m.Duplicate {
		s.e.duplicateSend(p, m)
		return
	}
	s.e.rpcMessage(p, m)
}

func (s *rpcSession) RDMAOp(p *dissect.Packet, op *dissect.RDMAOp) { s.e.rpcRDMAOp(p, op) }

// Close ends the connection's open transactions, in the order their Calls
// came, and drops its RPC state.
func (s *rpcSession) Close() { s.e.releaseRPC(s.c) }

// RPC-over-RDMA's neutral view of its transactions (exchange.go).

// outcome is t's neutral outcome.
func (o TxnOutcome) outcome() dissect.Outcome {
	switch o {
	case TxnReplied:
		return dissect.Responded
	case TxnNoReply:
		return dissect.NoResponse
	case TxnEvicted:
		return dissect.Evicted
	case TxnSuperseded:
		return dissect.Superseded
	case TxnReplyNoCall:
		return dissect.ResponseWithoutRequest
	}
	return 0
}

// exchange fills x, RPC-over-RDMA's neutral view of t.
func (t *Transaction) exchange(x *dissect.Exchange) {
	*x = dissect.Exchange{ULP: Name, Conn: t.Conn, Key: uint64(t.XID), Initiator: t.callDir,
		Name: t.ProcedureName, ReadBytes: t.ReadBytes, WriteBytes: t.WriteBytes, Outcome: t.Outcome.outcome(),
		Latency: t.Latency, Detail: t,
		Object: dissect.ExchangeObject{HasHandle: t.HasFH, Handle: t.FHHash, Name: t.Name,
			HasReplyHandle: t.ReplyHasFH, ReplyHandle: t.ReplyFHHash}}
	if t.Call != nil {
		x.RequestPacket, x.RequestTime = t.call.callFrame()
	}
	if r := t.Reply; r != nil {
		x.ResponsePacket, x.ResponseTime = r.RPCPacket, r.RPCTime
		if x.ResponsePacket == 0 {
			x.ResponsePacket, x.ResponseTime = dissect.LastPacket(r.Packets), r.Time
		}
		x.Invalidated, x.InvalidatedSTag = r.Invalidate, r.InvalidatedSTag
		if r.HasStatus {
			x.Status, x.StatusCode, x.OK = r.statusName()
		}
	}
}

// statusName is a Reply's reply_stat, or its accept_stat when accepted
// (RFC 5531 section 9), with its number and whether it is SUCCESS.
func (sd *RPCSide) statusName() (string, uint32, bool) {
	if sd.ReplyStat != oncrpc.MsgAccepted {
		return sd.ReplyStat.String(), uint32(sd.ReplyStat), false
	}
	return sd.AcceptStat.String(), uint32(sd.AcceptStat), sd.AcceptStat == oncrpc.Success
}
