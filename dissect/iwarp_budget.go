package dissect

import (
	"time"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// The iWARP engine's side of the engine-wide seams: its buffers as a
// bufferHolder (budget.go) and its streams as a connReleaser (release.go).
// What it keeps (pools, streams, halves) stays private to it.

var (
	_ bufferHolder = (*iwarpEngine)(nil)
	_ connReleaser = (*iwarpEngine)(nil)
)

// freeSpare lets go of the RDMA operation buffers and Send reassemblers'
// spare capacity kept for reuse.
func (ie *iwarpEngine) freeSpare(b *bufBudget) {
	for _, op := range ie.freeOps {
		b.grew(cap(op.data), 0)
		op.data = nil
	}
	free := func(ra *iwarp.Reassembler) {
		held := ra.Buffered()
		ra.FreeSpare()
		b.grew(held, ra.Buffered())
	}
	for _, st := range ie.order {
		for h := range st.half {
			if ra := st.half[h].reasm; ra != nil {
				free(ra)
			}
			if st.half[h].framer != nil {
				st.half[h].framer.FreeSpare()
				st.syncFramer(h)
			}
		}
	}
	for _, ra := range ie.freeReasm {
		free(ra)
	}
}

// largest finds the largest RDMA Write or Read buffer, Send in
// reassembly, or partial FPDU held by a framer.
func (ie *iwarpEngine) largest() (int, func(*bufBudget)) {
	best := 0
	var (
		bst *iwStream
		bop *iwOp
		bra *iwarp.Reassembler
		bfh = -1 // the half of bst whose framer holds a partial FPDU
	)
	for _, st := range ie.order {
		for h := range st.half {
			hf := &st.half[h]
			for _, op := range hf.writes {
				if n := cap(op.data); n > best {
					best, bst, bop, bra, bfh = n, st, op, nil, -1
				}
			}
			for _, op := range hf.reads {
				if n := cap(op.data); n > best {
					best, bst, bop, bra, bfh = n, st, op, nil, -1
				}
			}
			if hf.reasm != nil {
				if n := hf.reasm.Largest(); n > best {
					best, bst, bop, bra, bfh = n, st, nil, hf.reasm, -1
				}
			}
			if hf.framer != nil && hf.framer.Buffered() > 0 {
				if n := hf.framer.Held(); n > best {
					best, bst, bop, bra, bfh = n, st, nil, nil, h
				}
			}
		}
	}
	switch {
	case best == 0:
		return 0, nil
	case bfh >= 0:
		return best, func(*bufBudget) {
			// A partial FPDU (one that spans segments, or waits behind a
			// hole): given up, and with it the direction's framing, which
			// starts again at a segment that starts an FPDU. (syncFramer
			// tells the budget.)
			err := bst.half[bfh].framer.DropPartial("buffer budget (--max-buffered)")
			bst.syncFramer(bfh)
			bst.lost(bfh, err)
		}
	case bra != nil:
		return best, func(b *bufBudget) {
			// An iWARP Send: dropped, as its reassembler's limits do.
			held := bra.Buffered()
			bra.DropLargest()
			b.grew(held, bra.Buffered())
		}
	}
	return best, func(b *bufBudget) {
		bst.cutOp(bop)
		ie.e.freeSpareBuffers()
	}
}

// closeIdle closes the streams whose connection saw no packet since
// cutoff, marking the connection Idle.
func (ie *iwarpEngine) closeIdle(cutoff time.Time) {
	for i := 0; i < len(ie.order); i++ {
		s := ie.order[i]
		if c := s.conn; c != nil && c.rel.state == relLive && c.rel.last.Before(cutoff) {
			c.Idle = true
			ie.close(s) // takes s out of order
			i--
		}
	}
}

// release drops the stream of a connection that left the grace window.
func (ie *iwarpEngine) release(c *Connection) {
	if s := c.rel.stream; s != nil {
		ie.drop(s)
		c.rel.stream = nil
	}
}

// retained adds the streams and their TCP keys.
func (ie *iwarpEngine) retained(r *Retained) {
	r.IWARPStreams = len(ie.order)
	r.IWARPKeys = len(ie.streams)
}
