package rpcordma

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Call is the Call of a transaction as the transaction rules see it: a view
// of the engine's Transaction (its Call side's chunk lists, in the
// rpcrdma types the rules compare Replies with). The engine keeps the
// transactions and pairs Calls with Replies; the runner only reshapes the
// one a Reply answers, into a reused Call.
type Call struct {
	XID uint32
	// Packets are the Call's packets (the last completes the Send).
	Packets []int
	// Known: the transport header decoded, so the chunk lists below are
	// complete (always, for a Call the engine holds).
	Known bool
	Vers  uint32 // rdma_vers
	Proc  rpcrdma.MsgType
	// InvHandle is a version 2 Call's rdma_inv_handle (0: no remote
	// invalidation solicited; draft-07 "Remote Invalidation").
	InvHandle uint32
	// CallChunk is a version 2 RDMA2_CALL_EXTERNAL's Call chunk: the Read
	// chunk holding the whole Call (draft-07 "Special Format").
	CallChunk []rpcrdma.Segment
	// Reads, Writes and Reply are the Call's chunk lists.
	Reads    []rpcrdma.ReadSegment
	Writes   []rpcrdma.WriteChunk
	HasReply bool
	Reply    []rpcrdma.Segment
	// Prog, ProgVers and ProcNum identify the procedure when the Call's
	// RPC header decoded (HasProc).
	Prog, ProgVers, ProcNum uint32
	HasProc                 bool
}

// callView reshapes transactions into a reused Call.
type callView struct {
	k      Call
	writes [][]rpcrdma.Segment
}

// of returns t's Call side as a Call, valid until the next call.
func (v *callView) of(t *Transaction) *Call {
	k := &v.k
	sd := t.Call
	*k = Call{XID: t.XID, Packets: sd.Packets, Known: true, Vers: sd.Vers, Proc: rpcrdma.MsgType(sd.Proc),
		InvHandle: sd.InvHandle, CallChunk: k.CallChunk[:0],
		Reads: k.Reads[:0], Writes: k.Writes[:0], Reply: k.Reply[:0],
		Prog: t.Program, ProgVers: t.Version, ProcNum: t.Procedure, HasProc: t.HasProgram}
	nw := 0
	for i := range sd.Chunks {
		ch := &sd.Chunks[i]
		switch ch.Kind {
		case ChunkCall:
			for _, sg := range ch.Segments {
				k.CallChunk = append(k.CallChunk, wireSeg(sg))
			}
		case ChunkRead:
			for _, sg := range ch.Segments {
				k.Reads = append(k.Reads, rpcrdma.ReadSegment{Position: sg.Position, Segment: wireSeg(sg)})
			}
		case ChunkWrite:
			if nw == len(v.writes) {
				v.writes = append(v.writes, nil)
			}
			w := v.writes[nw][:0]
			for _, sg := range ch.Segments {
				w = append(w, wireSeg(sg))
			}
			v.writes[nw] = w
			nw++
			k.Writes = append(k.Writes, rpcrdma.WriteChunk{Segments: w})
		case ChunkReply:
			k.HasReply = true
			for _, sg := range ch.Segments {
				k.Reply = append(k.Reply, wireSeg(sg))
			}
		}
	}
	return k
}

func wireSeg(sg Segment) rpcrdma.Segment {
	return rpcrdma.Segment{Handle: sg.Handle, Length: sg.Length, Offset: sg.Offset}
}

// Handles tells whether the Call advertised handle h in any chunk list
// (version 2: its Call chunk too).
func (c *Call) Handles(h uint32) bool {
	for _, s := range c.CallChunk {
		if s.Handle == h {
			return true
		}
	}
	for _, s := range c.Reads {
		if s.Handle == h {
			return true
		}
	}
	for _, w := range c.Writes {
		for _, s := range w.Segments {
			if s.Handle == h {
				return true
			}
		}
	}
	for _, s := range c.Reply {
		if s.Handle == h {
			return true
		}
	}
	return false
}

// replyCall returns the Call a Reply (or RDMA_ERROR) m answers, or nil after
// marking the current rule not evaluated: the capture does not hold the Call
// (it started mid-transaction) or could not decode it.
func replyCall(c *check.Conn, m *Msg) *Call {
	switch k := m.Call; {
	case k != nil:
		return k
	case m.Rec.CallUndecoded:
		c.Skip(check.ReasonCallUnknown)
	default:
		c.Skip(check.ReasonMidTransaction)
	}
	return nil
}
