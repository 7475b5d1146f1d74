package check

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// The runner's own record of a connection's RPC transactions: the chunks
// each Call advertised, kept from the Call until its Reply (and a while
// after, for RDMA-AFTER-REPLY). It holds what the transaction rules need and
// no more, bounded per connection (maxOpenCalls, maxDoneCalls).
//
// Calls are matched to Replies by XID within a channel: the forward channel
// (the client's Calls, the server's Replies) and the NFSv4.1 backchannel
// (the server's Calls, the client's Replies).

const (
	maxOpenCalls = 4096
	maxDoneCalls = 256
)

// Call is one RPC Call as the transaction rules see it.
type Call struct {
	XID uint32
	// Packets are the Call's packets (the last completes the Send).
	Packets []int
	// Known: the transport header decoded, so the chunk lists below are
	// complete.
	Known bool
	Vers  uint32 // rdma_vers
	Proc  rpcrdma.MsgType
	// Reads, Writes and Reply are copies of the Call's chunk lists.
	Reads    []rpcrdma.ReadSegment
	Writes   []rpcrdma.WriteChunk
	HasReply bool
	Reply    []rpcrdma.Segment
	// InlineLen is the length of the RPC message carried inline.
	InlineLen int
	// Prog, ProgVers and ProcNum identify the procedure when the inline
	// RPC header decoded (HasProc).
	Prog, ProgVers, ProcNum uint32
	HasProc                 bool
	// ReplyPacket is the last packet of the Reply, 0 while outstanding.
	ReplyPacket int
}

// Handles tells whether the Call advertised handle h in any chunk list.
func (c *Call) Handles(h uint32) bool {
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

// segKind says which list a matched segment came from.
type segKind uint8

const (
	segRead segKind = iota + 1
	segWrite
	segReply
)

// contains tells whether the RDMA operation's memory lies inside one of the
// Call's segments of the kinds asked for.
func (c *Call) contains(op *dissect.RDMAOp, read bool) bool {
	in := func(s rpcrdma.Segment) bool {
		return s.Handle == op.STag && op.Offset >= s.Offset &&
			op.Offset+uint64(op.Length) <= s.Offset+uint64(s.Length)
	}
	if read {
		for _, s := range c.Reads {
			if in(s.Segment) {
				return true
			}
		}
		return false
	}
	for _, w := range c.Writes {
		for _, s := range w.Segments {
			if in(s) {
				return true
			}
		}
	}
	for _, s := range c.Reply {
		if in(s) {
			return true
		}
	}
	return false
}

// touches tells whether the operation's STag is one of the Call's handles
// of the kind asked for (for RDMA-AFTER-REPLY, where the exact range
// matters less than the memory being the Call's).
func (c *Call) touches(op *dissect.RDMAOp, read bool) bool {
	if read {
		for _, s := range c.Reads {
			if s.Handle == op.STag {
				return true
			}
		}
		return false
	}
	for _, w := range c.Writes {
		for _, s := range w.Segments {
			if s.Handle == op.STag {
				return true
			}
		}
	}
	for _, s := range c.Reply {
		if s.Handle == op.STag {
			return true
		}
	}
	return false
}

type callTable struct {
	open    map[uint32]*Call
	done    []*Call // answered, oldest first
	spare   *Call   // the last pushed out of done, for newCall
	dropped int     // Calls not kept: table full
	// granted is the last credit limit the responder granted.
	granted    uint32
	hasGrant   bool
	overrunNow bool
}

func (t *callTable) outstanding() int { return len(t.open) }

// addCall records a Call (after the message rules ran on it).
func (c *Conn) addCall(g *Msg) {
	t := &c.calls[g.Dir.Index()]
	if t.open == nil {
		t.open = map[uint32]*Call{}
	}
	if len(t.open) >= maxOpenCalls {
		t.dropped++
		return
	}
	k := t.newCall()
	k.XID, k.Vers, k.Proc = g.Common.XID, g.Common.Vers, g.Proc()
	if n := len(g.Packets); n > 4 { // first and last few are enough to name it
		k.Packets = append(append(k.Packets, g.Packets[:2]...), g.Packets[n-2:]...)
	} else {
		k.Packets = append(k.Packets, g.Packets...)
	}
	if ch := g.Chunks(); ch != nil && !g.Truncated {
		k.Known = true
		k.Reads = append(k.Reads, ch.ReadList...)
		for i, w := range ch.WriteList {
			var segs []rpcrdma.Segment
			if i < cap(k.Writes) {
				segs = k.Writes[:i+1][i].Segments[:0] // a recycled Call's
			}
			k.Writes = append(k.Writes, rpcrdma.WriteChunk{Segments: append(segs, w.Segments...)})
		}
		k.HasReply = ch.HasReplyChunk
		if ch.HasReplyChunk {
			k.Reply = append(k.Reply, ch.ReplyChunk.Segments...)
		}
		k.InlineLen = len(g.Inline())
	}
	if g.HasRPC {
		k.Prog, k.ProgVers, k.ProcNum, k.HasProc = uint32(g.RPC.Prog), g.RPC.Vers, g.RPC.Proc, true
	}
	t.open[k.XID] = k
}

// newCall returns an empty Call: the one answer last pushed out of the
// answered ones, with its slices' room, or a new one. In steady state each
// Reply pushes one out and each Call takes it, so the table allocates
// nothing per transaction.
func (t *callTable) newCall() *Call {
	k := t.spare
	if k == nil {
		return new(Call)
	}
	t.spare = nil
	*k = Call{Packets: k.Packets[:0], Reads: k.Reads[:0], Writes: k.Writes[:0], Reply: k.Reply[:0]}
	return k
}

// matchCall finds the Call a Reply or RDMA_ERROR answers.
func (c *Conn) matchCall(g *Msg) *Call {
	t := &c.calls[1-g.Dir.Index()]
	return t.open[g.Common.XID]
}

// answer moves the Call to the answered ones and notes the credit grant.
func (c *Conn) answer(g *Msg) {
	t := &c.calls[1-g.Dir.Index()]
	t.granted, t.hasGrant = g.Common.Credit, true
	k := t.open[g.Common.XID]
	if k == nil {
		return
	}
	delete(t.open, g.Common.XID)
	if n := len(g.Packets); n > 0 {
		k.ReplyPacket = g.Packets[n-1]
	}
	if len(t.done) >= maxDoneCalls {
		// The oldest answered Call goes; the slice keeps its array.
		t.spare = t.done[0]
		copy(t.done, t.done[1:])
		t.done[len(t.done)-1] = k
		return
	}
	t.done = append(t.done, k)
}
