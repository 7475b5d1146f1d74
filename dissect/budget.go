package dissect

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
		b.max = e.opts.MaxBufferedBytes // NewEngine filled the default
	}
	return b
}

// A bufferHolder is a sub-tracker whose buffers count against the budget:
// the IB/RoCE reassembly (roceBuffers, below) and the iWARP engine
// (iwarp_budget.go). The budget talks to them only through this.
type bufferHolder interface {
	// freeSpare lets go of the buffers kept for reuse, telling b.
	freeSpare(b *bufBudget)
	// largest returns the capacity of the largest buffer of an item in
	// progress, and how to cut that item: hand it up truncated (or drop
	// it) and let go of its buffer, telling b. 0 and nil when it holds
	// none.
	largest() (int, func(b *bufBudget))
}

// holders are the engine's buffer holders.
func (e *Engine) holders() []bufferHolder {
	hs := e.holderBuf[:0]
	hs = append(hs, roceBuffers{e})
	if e.iw != nil {
		hs = append(hs, e.iw)
	}
	return hs
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
	for _, h := range e.holders() {
		h.freeSpare(&e.buf)
	}
}

// cutLargest hands up the largest item in progress of any holder,
// truncated, and lets go of its buffer; false when nothing holds a buffer.
func (e *Engine) cutLargest() bool {
	best := 0
	var cut func(*bufBudget)
	for _, h := range e.holders() {
		if n, c := h.largest(); n > best {
			best, cut = n, c
		}
	}
	if cut == nil {
		return false
	}
	cut(&e.buf)
	return true
}

// roceBuffers is the IB/RoCE reassembly (reassembly.go) as a bufferHolder:
// the Send and RDMA Write buffer of each request stream and its RDMA Read
// response buffers.
type roceBuffers struct{ e *Engine }

func (r roceBuffers) freeSpare(b *bufBudget) {
	for _, rc := range r.e.rxs.conns {
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
}

func (r roceBuffers) largest() (int, func(*bufBudget)) {
	e := r.e
	best := 0
	var (
		bc *Connection
		bs *reqStream
		bi = -1 // index of a Read in bs.reads; -1: a message
		bm = -1 // index of a message in bs.msgs
	)
	for _, c := range e.Conns.Connections() {
		if rc := e.rxs.conns[c]; rc != nil {
			for d := range rc.dir {
				s := &rc.dir[d]
				for i, pt := range s.msgs {
					if n := cap(pt.data); n > best {
						best, bc, bs, bi, bm = n, c, s, -1, i
					}
				}
				for i, ro := range s.reads {
					if n := cap(ro.data); n > best {
						best, bc, bs, bi = n, c, s, i
					}
				}
			}
		}
	}
	if best == 0 {
		return 0, nil
	}
	return best, func(b *bufBudget) {
		if bi < 0 {
			// Handed up in PSN order: it and the messages before it.
			for i := 0; i <= bm; i++ {
				bs.msgs[i].ready = true
			}
			e.drain(nil, bc, bs)
			for _, pt := range bs.spareM {
				b.grew(cap(pt.data), 0)
				pt.data = nil
			}
			return
		}
		ro := bs.reads[bi]
		e.finishRead(nil, bc, bs, bi)
		if n := len(bs.spare); n > 0 && bs.spare[n-1] == ro {
			b.grew(cap(ro.data), 0)
			ro.data = nil
		} // else finishRead let it go already
	}
}
