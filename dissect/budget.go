package dissect

import "github.com/rdmashark/rdmashark/layers/iwarp"

// The buffer budget: one bound on the payload bytes every reassembly
// buffer of the engine holds across packets, all connections together
// (Options.MaxBufferedBytes). Per-item limits (MaxMessageBytes,
// MaxOutstandingReads, the iWARP Sends and Writes in progress) bound one
// connection; the budget bounds their sum however many connections are
// live, so a stream that opens thousands of connections each with a large
// message in progress cannot grow the heap without bound.
//
// Counted: the capacity of the IB/RoCE Send and RDMA Write buffers and of
// the RDMA Read response buffers (reassembly.go), of the iWARP RDMA Write
// and Read buffers (iwarp_ops.go), of the iWARP Send reassemblers
// (layers/iwarp.Reassembler) and of the MPA framers' partial-FPDU buffers
// (layers/iwarp.Framer, allocated only when an FPDU spans segments), in use
// or kept for reuse; the chunk data held to rebuild RPC messages (which
// MaxRebuildBytes also bounds); and, set aside as a whole, an eighth of the
// budget for gopacket's TCP reassembly pages, from which the assembler's
// page limits (iWARP out-of-order segments) are set (issue 13).
//
// When a packet takes the total past the budget, buffers kept for reuse are
// let go first; then the largest message or operation in progress, of any
// connection, is handed up as it is — truncated, as at the end of a
// capture — and its buffer let go, until the total is within the budget
// again (an iWARP Send is dropped instead, as its reassembler's own limits
// drop one; a partial FPDU is dropped and its direction's framing starts
// again at the next segment that starts an FPDU). Chunk data for RPC
// rebuilding that does not fit is not kept (RPCCounters.RebuildSkipped).
// ReassemblyStats.BudgetCuts counts the items cut.

// DefaultMaxBufferedBytes is the default buffer budget.
const DefaultMaxBufferedBytes = 256 << 20

// bufBudget is the budget's bookkeeping. reserved is the part set aside
// for gopacket's TCP reassembly pages (iWARP out-of-order segments), whose
// page limits are set from it (iwarpEngine.assembler): the other buffers
// have max - reserved.
type bufBudget struct {
	held, max, reserved int
}

// fits reports whether n more bytes stay within the budget.
func (b *bufBudget) fits(n int) bool { return b.held+n <= b.max-b.reserved }

// grew records that a buffer's capacity went from old to now.
func (b *bufBudget) grew(old, now int) { b.held += now - old }

func (e *Engine) budget() *bufBudget {
	b := &e.buf
	if b.max == 0 {
		b.max = e.opts.MaxBufferedBytes
		if b.max <= 0 {
			b.max = DefaultMaxBufferedBytes
		}
	}
	return b
}

// checkBudget cuts what must be cut when the buffers exceed the budget.
func (e *Engine) checkBudget() {
	b := e.budget()
	if !b.fits(0) {
		e.freeSpareBuffers()
		for !b.fits(0) && e.cutLargest() {
			e.Reassembly.BudgetCuts++
		}
	}
	if b.held > e.Reassembly.MaxBufferedHeld {
		e.Reassembly.MaxBufferedHeld = b.held
	}
}

// freeSpareBuffers lets go of the buffers kept for reuse.
func (e *Engine) freeSpareBuffers() {
	b := &e.buf
	for _, rc := range e.rxs.conns {
		for d := range rc.dir {
			s := &rc.dir[d]
			if !s.cur.active {
				b.grew(cap(s.cur.data), 0)
				s.cur.data = nil
			}
			for _, ro := range s.spare {
				b.grew(cap(ro.data), 0)
				ro.data = nil
			}
		}
	}
	if e.iw != nil {
		for _, op := range e.iw.freeOps {
			b.grew(cap(op.data), 0)
			op.data = nil
		}
		free := func(ra *iwarp.Reassembler) {
			held := ra.Buffered()
			ra.FreeSpare()
			b.grew(held, ra.Buffered())
		}
		for _, st := range e.iw.order {
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
		for _, ra := range e.iw.freeReasm {
			free(ra)
		}
	}
}

// cutLargest hands up the largest item in progress, truncated, and lets go
// of its buffer; false when nothing holds a buffer.
func (e *Engine) cutLargest() bool {
	best := 0
	var (
		bc  *Connection
		bs  *reqStream
		bi  = -1 // index of a Read in bs.reads; -1: bs.cur
		bst *iwStream
		bop *iwOp
		bra *iwarp.Reassembler
		bfh = -1 // the half of bst whose framer holds a partial FPDU
	)
	for _, c := range e.Conns.Connections() {
		if rc := e.rxs.conns[c]; rc != nil {
			for d := range rc.dir {
				s := &rc.dir[d]
				if n := cap(s.cur.data); s.cur.active && n > best {
					best, bc, bs, bi, bst, bfh = n, c, s, -1, nil, -1
				}
				for i, ro := range s.reads {
					if n := cap(ro.data); n > best {
						best, bc, bs, bi, bst, bfh = n, c, s, i, nil, -1
					}
				}
			}
		}
	}
	if e.iw != nil {
		for _, st := range e.iw.order {
			for h := range st.half {
				hf := &st.half[h]
				for _, op := range hf.writes {
					if n := cap(op.data); n > best {
						best, bst, bop, bra, bs, bfh = n, st, op, nil, nil, -1
					}
				}
				for _, op := range hf.reads {
					if n := cap(op.data); n > best {
						best, bst, bop, bra, bs, bfh = n, st, op, nil, nil, -1
					}
				}
				if hf.reasm != nil {
					if n := hf.reasm.Largest(); n > best {
						best, bst, bop, bra, bs, bfh = n, st, nil, hf.reasm, nil, -1
					}
				}
				if hf.framer != nil && hf.framer.Buffered() > 0 {
					if n := hf.framer.Held(); n > best {
						best, bst, bop, bra, bs, bfh = n, st, nil, nil, nil, h
					}
				}
			}
		}
	}
	switch {
	case best == 0:
		return false
	case bfh >= 0:
		// A partial FPDU (one that spans segments, or waits behind a
		// hole): given up, and with it the direction's framing, which
		// starts again at a segment that starts an FPDU.
		err := bst.half[bfh].framer.DropPartial("buffer budget (--max-buffered)")
		bst.syncFramer(bfh)
		bst.lost(bfh, err)
	case bra != nil:
		// An iWARP Send: dropped, as its reassembler's limits do.
		held := bra.Buffered()
		bra.DropLargest()
		e.buf.grew(held, bra.Buffered())
	case bst != nil:
		bst.cutOp(bop)
		e.freeSpareBuffers()
	case bi < 0:
		e.flushPartial(nil, bc, bs)
		e.buf.grew(cap(bs.cur.data), 0)
		bs.cur.data = nil
	default:
		e.finishRead(nil, bc, bs, bi)
		ro := bs.spare[len(bs.spare)-1]
		e.buf.grew(cap(ro.data), 0)
		ro.data = nil
	}
	return true
}
