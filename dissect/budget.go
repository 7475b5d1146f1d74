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
// and Read buffers (iwarp_ops.go) and of the iWARP Send reassemblers
// (layers/iwarp.Reassembler), in use or kept for reuse. (The
// chunk data held to rebuild RPC messages has its own bound,
// MaxRebuildBytes, and iWARP's out-of-order TCP data gopacket's page
// limits; both are reported with it in Retained.)
//
// When a packet takes the total past the budget, buffers kept for reuse are
// let go first; then the largest message or operation in progress, of any
// connection, is handed up as it is — truncated, as at the end of a
// capture — and its buffer let go, until the total is within the budget
// again (an iWARP Send is dropped instead, as its reassembler's own limits
// drop one). ReassemblyStats.BudgetCuts counts the items cut.

// DefaultMaxBufferedBytes is the default buffer budget.
const DefaultMaxBufferedBytes = 256 << 20

// bufBudget is the budget's bookkeeping.
type bufBudget struct {
	held, max int
}

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
	if b.held > b.max {
		e.freeSpareBuffers()
		for b.held > b.max && e.cutLargest() {
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
			for _, pt := range s.spareM {
				b.grew(cap(pt.data), 0)
				pt.data = nil
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
		bi  = -1 // index of a Read in bs.reads; -1: a message
		bm  = -1 // index of a message in bs.msgs
		bst *iwStream
		bop *iwOp
		bra *iwarp.Reassembler
	)
	for _, c := range e.Conns.Connections() {
		if rc := e.rxs.conns[c]; rc != nil {
			for d := range rc.dir {
				s := &rc.dir[d]
				for i, pt := range s.msgs {
					if n := cap(pt.data); n > best {
						best, bc, bs, bi, bm, bst = n, c, s, -1, i, nil
					}
				}
				for i, ro := range s.reads {
					if n := cap(ro.data); n > best {
						best, bc, bs, bi, bst = n, c, s, i, nil
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
						best, bst, bop, bra, bs = n, st, op, nil, nil
					}
				}
				for _, op := range hf.reads {
					if n := cap(op.data); n > best {
						best, bst, bop, bra, bs = n, st, op, nil, nil
					}
				}
				if hf.reasm != nil {
					if n := hf.reasm.Largest(); n > best {
						best, bst, bop, bra, bs = n, st, nil, hf.reasm, nil
					}
				}
			}
		}
	}
	switch {
	case best == 0:
		return false
	case bra != nil:
		// An iWARP Send: dropped, as its reassembler's limits do.
		held := bra.Buffered()
		bra.DropLargest()
		e.buf.grew(held, bra.Buffered())
	case bst != nil:
		bst.cutOp(bop)
		e.freeSpareBuffers()
	case bi < 0:
		// Handed up in PSN order: it and the messages before it.
		for i := 0; i <= bm; i++ {
			bs.msgs[i].ready = true
		}
		e.drain(nil, bc, bs)
		for _, pt := range bs.spareM {
			e.buf.grew(cap(pt.data), 0)
			pt.data = nil
		}
	default:
		e.finishRead(nil, bc, bs, bi)
		ro := bs.spare[len(bs.spare)-1]
		e.buf.grew(cap(ro.data), 0)
		ro.data = nil
	}
	return true
}
