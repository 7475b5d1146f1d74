package dissect

import (
	"math/bits"
	"slices"
	"time"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// IB/RoCE message reassembly (IBA Vol 1 §9.4, §9.7).
//
// On a Reliable Connection each side is a requester with its own PSN space:
// its requests — Send, RDMA Write, RDMA Read Request, atomics — carry
// consecutive PSNs (a Read Request takes one PSN per response packet it
// asks for), and the responder's answers travel the other way under the
// requester's PSNs (the Read Responses of a request start at the request's
// PSN). Packets of one message are contiguous in PSN: a requester does not
// interleave messages, so each direction has at most one Send or RDMA Write
// in progress, plus the RDMA Reads it has outstanding.
//
// What each request packet and Read Response is — new, a retransmission
// (go-back-N replay or re-issued Read), a gap fill — is decided once, by the
// RC requester model (rcmodel.go, Packet.Analysis); reassembly follows that
// verdict and never decides it again. Decisions, and what the counters of
// ReassemblyStats say about them:
//
//   - A retransmission (its PSN already seen in its direction) never becomes
//     new data and never opens a second message or operation: counted
//     (Duplicates). A lone retransmitted SEND_ONLY is still decoded for
//     display (RPCRecord.Duplicate) but not handed up. A Read Request seen
//     again — replayed, or re-issued for the part still missing (a PSN
//     inside the original's span) — continues the original Read, whose
//     responses are placed by PSN whichever request they answer.
//   - Packets of a message are placed by PSN (offset = (PSN − first PSN) ×
//     PMTU, FIRST and MIDDLE packets carry exactly one PMTU, §9.4.1), so a
//     packet sent again into a gap lands where it belongs, even after later
//     messages started. Messages are handed up in PSN order, the order the
//     responder executes them in: one still missing packets holds the ones
//     after it, and a PSN gap before a FIRST or ONLY holds what follows
//     until its PSNs are resent (a Write replayed after the Send that
//     followed it is handed up before that Send) or acknowledged.
//   - A message whose FIRST is missing is held, indexed from the gap, when
//     the FIRST may be resent; when the capture began in it, it is dropped
//     (Orphans). A message is handed up with Truncated set and Data holding
//     the bytes before its first hole when the responder acknowledged past
//     the hole without a NAK (the capture lost the packet; nothing will be
//     resent), when the next message starts right after its last packet
//     seen without its LAST, when more than maxHeldMessages wait (HeldCut),
//     and at the end of the capture.
//   - Sends longer than MaxMessageBytes are cut there (TooLong, Truncated);
//     RDMA operations keep at most MaxMessageBytes of data (OpDataCut) while
//     Complete still tells whether every byte went by.
//   - At most MaxOutstandingReads Read Requests per direction wait for their
//     responses; past that the oldest is handed up incomplete (ReadsEvicted).
//     A Read is complete when every response packet of its span arrived,
//     from whichever transmission. One still incomplete is handed up when a
//     retransmission episode starts past it (go-back-N resends from the
//     oldest request not complete, so the requester has all of it) and at
//     the end of the capture.

// Reassembly limits (Options override them).
const (
	DefaultMaxMessageBytes     = 1 << 20
	DefaultMaxOutstandingReads = 256
	// ReadCost is what one outstanding RDMA Read Request counts in the
	// buffer budget (budget.go) while it awaits its responses: about what
	// its record takes (the request, its packet list and response bitmap;
	// ~220 bytes measured, issue 29), its response data counted apart. A
	// new Read that does not fit gives up its own direction's oldest, so
	// that Read Requests no response answers cannot grow past
	// --max-buffered however many connections hold them.
	ReadCost = 256
	psnMask  = 1<<24 - 1
	psnHalf  = 1 << 23
)

// ReassemblyStats counts what Send reassembly and RDMA operation tracking
// did and what their limits cut.
type ReassemblyStats struct {
	Messages    uint64 // Sends handed up
	Truncated   uint64 // of those, handed up with Truncated set
	TooLong     uint64 // Sends cut at MaxMessageBytes
	Orphans     uint64 // message packets whose FIRST was never seen: dropped
	Duplicates  uint64 // request packets with an already consumed PSN, and repeated Read Responses
	Gaps        uint64 // forward PSN jumps on a request stream
	MissingPSNs uint64 // PSNs skipped by those jumps
	Writes      uint64 // RDMA Writes handed up
	Reads       uint64 // RDMA Reads handed up
	// OpsIncomplete counts RDMA operations handed up without every byte.
	OpsIncomplete uint64
	// OpDataCut counts operations longer than MaxMessageBytes: their Data
	// holds the first MaxMessageBytes only.
	OpDataCut    uint64
	ReadsEvicted uint64 // Read Requests given up at MaxOutstandingReads
	// BudgetCuts counts the messages and RDMA operations in progress (IB,
	// RoCE and iWARP) handed up unfinished because the engine's buffers
	// together exceeded MaxBufferedBytes (budget.go); MaxBufferedHeld is
	// the most those buffers held between packets, in bytes (a packet may
	// take them past the budget by one buffer until the cut).
	BudgetCuts      uint64
	MaxBufferedHeld int
	// UnmatchedResponses counts Read Response packets that belong to no
	// Read Request in the capture.
	UnmatchedResponses uint64
	// HeldCut counts Sends and Writes handed up unfinished because more
	// than maxHeldMessages waited behind one still missing packets.
	HeldCut uint64
}

// rxState is the engine's reassembly state.
type rxState struct {
	conns map[*Connection]*roceConn
	// lastConn's state is lastRC (conns[lastConn]), for reassembleRoCE:
	// most packets follow one of the same connection.
	lastConn *Connection
	lastRC   *roceConn
	msg      Message
	op       RDMAOp
	data     RDMAData // one Write packet's part (DataObserver)
	maxMsg   int
	maxReads int
}

func (e *Engine) rx() *rxState {
	r := &e.rxs
	if r.conns == nil {
		r.conns = map[*Connection]*roceConn{}
		r.maxMsg = e.opts.MaxMessageBytes
		if r.maxMsg <= 0 {
			r.maxMsg = DefaultMaxMessageBytes
		}
		r.maxReads = e.opts.MaxOutstandingReads
		if r.maxReads <= 0 {
			r.maxReads = DefaultMaxOutstandingReads
		}
	}
	return r
}

// roceConn is one connection's reassembly state; dir and model are indexed
// by the requester's direction.
type roceConn struct {
	pmtu int // path MTU in bytes, 0 until known
	// ackTimeout is the CM REQ's Local ACK Timeout (IBA 9.7.6.1.3,
	// 12.7.34; Linux ib_cm sets both sides' QP timeout from it), 0 unknown.
	ackTimeout time.Duration
	dir        [2]reqStream
	model      [2]reqModel
}

// maxHeldMessages bounds the Sends and Writes one direction holds while an
// earlier one waits for a resend; past it the oldest is handed up as it is
// (HeldCut).
const maxHeldMessages = 16

// reqStream follows one requester's messages and Reads.
type reqStream struct {
	d Direction // the requester's direction
	// msgs are the Sends and RDMA Writes in progress or waiting, in PSN
	// order; they are handed up in that order (the order the responder
	// executes them in, IBA 9.5), each once whole or given up.
	msgs   []*partial
	spareM []*partial
	reads  []*readOp
	spare  []*readOp
	onePkt [1]int
	// episode is the retransmission episode of the last Read Request
	// resent (rcmodel.go).
	episode int
	// lastPkt is the last new request packet of the stream (a stretch
	// the capture lost after it lies between it and the next).
	lastPkt int
}

// partial is a Send or RDMA Write in progress.
type partial struct {
	// gap: not a message but PSNs the capture has not seen yet (a PSN gap
	// before a FIRST or ONLY), gapN of them from base: the messages after
	// it wait until its PSNs are resent or acknowledged.
	gap     bool
	gapN    uint32
	prevPkt int // the stream's request packet before it (CaptureLoss)
	write   bool
	// base is the PSN packet indexes count from: the FIRST packet's, or for
	// a message whose FIRST is still missing (lost, to be resent) the
	// lowest PSN its FIRST can have.
	base       uint32
	first      uint32 // PSN of the FIRST packet, when firstKnown
	firstKnown bool
	minSeen    uint32 // lowest PSN of a packet of it seen
	maxSeen    uint32 // highest
	unit       int    // the PMTU: payload of FIRST and MIDDLE packets
	lastSeen   bool
	lastPSN    uint32
	ready      bool // whole, or given up: handed up when its turn comes
	got        bitmap
	npkts      int
	packets    []int
	data       []byte
	hi         int // bytes of data written from base, holes included
	truncAt    int // where the first packet cut by the snap length ends (from base), -1 if none
	length     int // message bytes on the wire seen so far
	cut        bool
	start      time.Time
	end        time.Time
	inv        bool
	invSTag    uint32
	imm        bool
	immData    uint32
	stag       uint32
	va         uint64
	dmaLen     uint32
}

// readOp is an RDMA Read Request awaiting its responses.
type readOp struct {
	psn       uint32
	npkts     uint32 // response packets expected; 0 when the PMTU was unknown
	stag      uint32
	va        uint64
	length    uint32
	packets   []int
	data      []byte
	got       bitmap
	bytes     int // response bytes seen (duplicates excluded)
	started   bool
	truncated bool
	retrans   int
	// doomed: a retransmission episode began with a resend past it
	// (readReissued); handed up as it is when the requester sends new
	// data again without having resent it.
	doomed bool
	start  time.Time
	end    time.Time
}

// bitmap marks the packets of a message received, by index from its first
// PSN.
type bitmap []uint64

// set marks i and reports whether it was already marked.
func (b *bitmap) set(i int) bool {
	w := i / 64
	for len(*b) <= w {
		*b = append(*b, 0)
	}
	m := uint64(1) << (i % 64)
	was := (*b)[w]&m != 0
	(*b)[w] |= m
	return was
}

func (b bitmap) has(i int) bool {
	w := i / 64
	return w < len(b) && b[w]&(uint64(1)<<(i%64)) != 0
}

// leadingFrom counts the marks from index i up to the first hole.
func (b bitmap) leadingFrom(i int) int {
	n := 0
	for b.has(i + n) {
		n++
	}
	return n
}

// count returns the number of marks.
func (b bitmap) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// allSet tells whether every index of [from, to] is marked.
func (b bitmap) allSet(from, to int) bool {
	for i := from; i <= to; i++ {
		if !b.has(i) {
			return false
		}
	}
	return true
}

func psnDiff(a, b uint32) uint32 { return (a - b) & psnMask }

// reassembleRoCE runs the requester model on an IB/RoCE packet, then
// reassembles Sends in PSN order and follows RDMA Reads and Writes by its
// verdict, handing each whole message and operation to the RPC-over-RDMA
// layer and the Observer.
func (e *Engine) reassembleRoCE(p *Packet) {
	c := p.Conn
	if c == nil || c.Transport != TransportRoCE || c.rel.state != relLive {
		// (A closed connection's trailing CM messages start nothing:
		// release.go.)
		return
	}
	r := e.rx()
	rc := r.lastRC
	if c != r.lastConn {
		if rc = r.conns[c]; rc == nil {
			rc = &roceConn{}
			rc.dir[0].d, rc.dir[1].d = DirClientToServer, DirServerToClient
			r.conns[c] = rc
		}
		r.lastConn, r.lastRC = c, rc
	}
	if p.CRCDiscarded {
		// Its receiver discarded it (Packet.CRCDiscarded): on the wire, so
		// counted in its direction's packets and bytes, but no request,
		// response or acknowledgement of the connection — the model sees
		// its PSN missing, as the responder did.
		if p.CM.Attr == 0 && p.Dir != DirUnknown {
			e.countDiscarded(p, c)
		}
		return
	}
	if p.CM.Attr == roce.LayerTypeCMREQ {
		if n := p.CM.REQ.PathPacketPayloadMTU.Bytes(); n > 0 {
			rc.pmtu = n
		}
		if t := p.CM.REQ.PrimaryPath.LocalACKTimeout; t != 0 {
			// 0 is "infinite" (IBA 12.7.34).
			rc.ackTimeout = roce.CMTimeout(t)
		}
		return
	}
	if p.CM.Attr != 0 || !p.Has(roce.LayerTypeBTH) {
		return
	}
	op := p.BTH.OpCode
	switch op.Transport() {
	case roce.TransportRC, roce.TransportUC, roce.TransportXRC, roce.TransportCNP:
	default:
		return
	}
	if (op.IsFirst() || op.IsMiddle()) && !p.BTH.Truncated && len(p.BTH.Payload) > 0 {
		// FIRST and MIDDLE packets carry exactly one PMTU (§9.4.1).
		rc.pmtu = len(p.BTH.Payload)
	}
	// The verdict first: one place decides what the packet is.
	e.classify(p, c, rc)
	d := p.Dir.Index()
	switch {
	case op.IsCNP():
	case op.IsRequest():
		e.request(p, c, rc, &rc.dir[d])
	case op.IsReadResponse():
		// Responses travel opposite to their requests.
		e.readResponse(p, c, rc, &rc.dir[1-d])
		if p.BTH.Has(roce.ExtAETH) {
			e.acknowledged(p, c, &rc.dir[1-d], p.BTH.PSN&psnMask)
		}
	case op.IsAck() || op.IsAtomicAck():
		if p.BTH.Has(roce.ExtAETH) {
			s := p.BTH.AETH.Syndrome
			switch {
			case s.IsACK():
				psn := p.BTH.PSN & psnMask
				if m := &rc.model[1-d]; m.init && psnDiff(psn, m.next) < psnHalf {
					// The responder acknowledges requests the capture
					// never showed (IBA Vol 1 9.7.5.1.2: it received
					// them): lost by the capture, whatever they were.
					c.captureLost(dirOfHalf(1-d), rc.dir[1-d].lastPkt)
				}
				e.acknowledged(p, c, &rc.dir[1-d], psn)
			case s.IsNAK() && s.NAKCode() == roce.NAKPSNSequenceError:
				e.acknowledged(p, c, &rc.dir[1-d], (p.BTH.PSN-1)&psnMask)
			}
		}
	}
}

// acknowledged: the responder received every request of s up to psn; a
// message still missing packets there will not be resent (the capture lost
// them), so it is handed up as it is.
func (e *Engine) acknowledged(p *Packet, c *Connection, s *reqStream, psn uint32) {
	gave := false
	for i, pt := range s.msgs {
		if pt.ready {
			continue
		}
		end := pt.maxSeen
		switch {
		case pt.lastSeen || pt.gap:
			if pt.lastSeen {
				end = pt.lastPSN
			}
		default:
			// Its LAST is somewhere before the next message (in a gap
			// between them, maybe).
			j := i + 1
			for j < len(s.msgs) && s.msgs[j].gap {
				j++
			}
			if j == len(s.msgs) {
				continue
			}
			end = (s.msgs[j].base - 1) & psnMask
		}
		if psnDiff(psn, end) < psnHalf {
			pt.ready = true
			gave = true
		}
	}
	if gave {
		e.drain(p, c, s)
	}
}

func (e *Engine) request(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	st := &e.Reassembly
	a := &p.Analysis
	op := p.BTH.OpCode
	if a.Retransmission {
		// Already seen: never new data, never a second message or
		// operation.
		st.Duplicates++
		switch {
		case op.IsReadRequest():
			e.readReissued(p, c, rc, s)
		case op.IsSend() && op.IsOnly():
			e.deliverDuplicate(p)
		}
		return
	}
	if a.Episode == 0 {
		// New data: the episode is over.
		e.finishDoomed(p, c, s)
	}
	if a.LostSegment > 0 && a.LostSegment <= WindowPSNs && (op.IsFirst() || op.IsOnly() || op.IsReadRequest()) && (op.IsSend() || op.IsWrite() || len(s.msgs) > 0) {
		// The missing PSNs may be a message the requester will resend:
		// what follows waits for them.
		pt := s.newPartial()
		pt.gap, pt.gapN = true, a.LostSegment
		pt.base = (p.BTH.PSN - a.LostSegment) & psnMask
		pt.minSeen, pt.maxSeen = pt.base, (p.BTH.PSN-1)&psnMask
		s.insert(pt)
	}
	if a.OutOfOrder {
		n := uint32(1)
		if op.IsReadRequest() {
			if n = readSpan(&p.BTH, rc.pmtu); n == 0 {
				n = 1
			}
		}
		s.fillGaps(p.BTH.PSN&psnMask, n)
	}
	switch {
	case op.IsSend() || op.IsWrite():
		e.messagePacket(p, c, rc, s)
	case op.IsReadRequest():
		e.readRequest(p, c, rc, s)
		e.drain(p, c, s)
	}
	s.lastPkt = p.Number
}

// fillGaps marks [psn, psn+n) received in the gaps s waits on.
func (s *reqStream) fillGaps(psn, n uint32) {
	for _, pt := range s.msgs {
		if !pt.gap || pt.ready {
			continue
		}
		// The part of [psn, psn+n) inside the gap.
		from, k := psnDiff(psn, pt.base), n
		if from >= psnHalf {
			// Starts before the gap.
			skip := psnDiff(pt.base, psn)
			if skip >= k {
				continue
			}
			from, k = 0, k-skip
		}
		for i := from; i < pt.gapN && i-from < k; i++ {
			pt.got.set(int(i))
		}
		if pt.got.allSet(0, int(pt.gapN)-1) {
			pt.ready = true
		}
	}
}

// find returns the message in progress p belongs to, nil if none.
func (s *reqStream) find(psn uint32, op roce.OpCode, gapBefore bool) *partial {
	// A message whose PSN range is known (its FIRST and LAST seen, or a
	// Write's FIRST: its RETH length tells the LAST) and holds psn owns it,
	// before a later message still missing its FIRST can claim it
	// (reordered: lossy/rxe-ib_write_bw-reorder.pcap, packets 112-119,
	// PSNs 16480513-16480520 of the Write from 16480457, after packet 100
	// of the next Write).
	for _, pt := range s.msgs {
		if pt.ready || pt.gap || !pt.firstKnown {
			continue
		}
		off := psnDiff(psn, pt.first)
		switch {
		case pt.lastSeen:
			if off <= psnDiff(pt.lastPSN, pt.first) {
				return pt
			}
		case pt.write && pt.unit > 0:
			if off < writeSpan(pt.dmaLen, pt.unit) {
				return pt
			}
		}
	}
	for i := len(s.msgs) - 1; i >= 0; i-- {
		pt := s.msgs[i]
		if pt.ready || pt.gap {
			continue
		}
		if pt.firstKnown {
			if psnDiff(psn, pt.first) >= psnHalf {
				continue
			}
			if pt.lastSeen && psnDiff(pt.lastPSN, psn) >= psnHalf {
				continue
			}
			if pt.write && pt.unit > 0 && psnDiff(psn, pt.first) >= writeSpan(pt.dmaLen, pt.unit) {
				// Past the LAST the FIRST's RETH length implies (IBA
				// 9.4.1, 9.7.1: a Write of DMA Length bytes takes
				// ceil(length / PMTU) PSNs): a packet of a later message
				// that came before this one's LAST (reordered:
				// lossy/rxe-ib_write_bw-reorder.pcap, packet 100, PSN
				// 16480529 of the Write starting at 16480521, before
				// packet 119, the LAST at 16480520 of the one before).
				continue
			}
			return pt
		}
		// FIRST still missing: a packet before the first one seen belongs
		// to it only if it is its FIRST or a MIDDLE after its base; a LAST
		// there ends the message before.
		if gapBefore && psnDiff(psn, pt.maxSeen) < psnHalf {
			// After a new gap past what it holds: maybe another message.
			// It is held on its own, and joins this one (mergeHeld) when
			// a Write's FIRST tells that both lie in its span.
			return nil
		}
		if psnDiff(psn, pt.minSeen) < psnHalf {
			if pt.lastSeen && psnDiff(pt.lastPSN, psn) >= psnHalf {
				continue
			}
			return pt
		}
		if psnDiff(psn, pt.base) < psnHalf && !op.IsLast() {
			return pt
		}
	}
	return nil
}

// writeSpan is the number of PSNs an RDMA Write of length bytes takes.
func writeSpan(length uint32, unit int) uint32 {
	return max(1, (length+uint32(unit)-1)/uint32(unit))
}

func (s *reqStream) newPartial() *partial {
	var pt *partial
	if n := len(s.spareM); n > 0 {
		pt, s.spareM = s.spareM[n-1], s.spareM[:n-1]
	} else {
		pt = &partial{}
	}
	*pt = partial{got: pt.got[:0], packets: pt.packets[:0], data: pt.data[:0], truncAt: -1, prevPkt: s.lastPkt}
	return pt
}

// insert puts pt in PSN order (by base).
func (s *reqStream) insert(pt *partial) {
	i := len(s.msgs)
	for i > 0 {
		q := s.msgs[i-1]
		// Before q when it starts earlier, or at the same PSN with its
		// FIRST known where q's is not (q's FIRST is then later: q was
		// indexed from the lowest PSN its FIRST could have).
		if d := psnDiff(pt.base, q.base); d < psnHalf && (d != 0 || !pt.firstKnown || q.firstKnown || q.gap) {
			break
		}
		i--
	}
	s.msgs = append(s.msgs, nil)
	copy(s.msgs[i+1:], s.msgs[i:])
	s.msgs[i] = pt
}

// messagePacket adds a new Send or RDMA Write packet (new, or filling a gap)
// to the message it belongs to.
func (e *Engine) messagePacket(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	h := &p.BTH
	op := h.OpCode
	psn := h.PSN & psnMask
	a := &p.Analysis
	write := op.IsWrite()
	if !a.OutOfOrder && a.LostSegment == 0 && (op.IsFirst() || op.IsOnly()) {
		// A new message right after the last packet seen: the message
		// before it, if still without its LAST, never gets it.
		if n := len(s.msgs); n > 0 && !s.msgs[n-1].gap && !s.msgs[n-1].lastSeen && !s.msgs[n-1].ready {
			s.msgs[n-1].ready = true
		}
		e.drain(p, c, s)
	}
	if op.IsOnly() && len(s.msgs) == 0 {
		// A whole message in one packet, nothing waiting before it: handed
		// up from the packet itself.
		e.onlyPacket(p, c, s)
		return
	}
	var pt *partial
	if !op.IsOnly() {
		pt = s.find(psn, op, a.LostSegment > 0)
	}
	if op.IsFirst() && pt != nil && !pt.firstKnown && psnDiff(pt.minSeen, psn) >= psnHalf {
		// A FIRST after the packets of a message whose FIRST is missing
		// starts another message.
		pt = nil
	}
	if write && op.IsFirst() && pt != nil && !pt.firstKnown {
		// A Write's FIRST whose span (its RETH length, IBA 9.4.1, 9.7.1)
		// ends before the packets held for a message without FIRST starts
		// another message: those belong to a later Write
		// (lossy/rxe-nfs3-lossreorder.pcap: packets 2783 and 2784, PSNs
		// 4201601 and 4201610, are the second Write of a READ's chunk,
		// 4201598-617; the first Write's FIRST, 4201578 for 20 PSNs,
		// came after them in packet 2785).
		unit := rc.pmtu
		if !h.Truncated && len(h.Payload) > 0 {
			unit = len(h.Payload)
		}
		if unit > 0 && psnDiff(pt.minSeen, psn) >= writeSpan(h.RETH.DMALen, unit) {
			pt = nil
		}
	}
	switch {
	case op.IsOnly() || (op.IsFirst() && (pt == nil || pt.firstKnown)):
		pt = s.newPartial()
		pt.write, pt.base, pt.minSeen, pt.maxSeen = write, psn, psn, psn
		pt.start = p.Timestamp
		pt.setFirst(p)
		s.insert(pt)
	case op.IsFirst():
		// The FIRST of a message whose later packets came first.
		if pt.write != write {
			e.Reassembly.Orphans++
			return
		}
		pt.setFirst(p)
	case pt == nil && (a.LostSegment > 0 && a.LostSegment <= WindowPSNs || a.OutOfOrder):
		// Its FIRST is missing but will be resent: hold it, indexed from
		// the lowest PSN the FIRST can have.
		pt = s.newPartial()
		base := psn
		if a.LostSegment > 0 {
			base = (psn - a.LostSegment) & psnMask
		}
		pt.write, pt.base, pt.minSeen, pt.maxSeen = write, base, psn, psn
		pt.start = p.Timestamp
		if op.IsMiddle() && !h.Truncated {
			pt.unit = len(h.Payload)
		} else {
			pt.unit = rc.pmtu
		}
		if pt.unit == 0 {
			// Nowhere to place it without the PMTU.
			s.spareM = append(s.spareM, pt)
			e.Reassembly.Orphans++
			return
		}
		s.insert(pt)
	case pt == nil:
		// The capture began inside the message.
		e.Reassembly.Orphans++
		return
	case pt.write != write:
		e.Reassembly.Orphans++
		return
	}
	e.addPacket(p, pt)
	if o := c.dataObserver(); o != nil && write && pt.firstKnown && pt.unit > 0 && psnDiff(psn, pt.first) < psnHalf {
		// Where this packet's payload lies in its Write (IBA 9.7.1:
		// every packet but the LAST carries a PMTU).
		d := &e.rx().data
		*d = RDMAData{Kind: RDMAWrite, Conn: c, Dir: s.d, STag: pt.stag, Offset: pt.va, Length: pt.dmaLen,
			At: uint64(psnDiff(psn, pt.first)) * uint64(pt.unit), Data: h.Payload}
		o.RDMAData(p, d)
	}
	if write && op.IsFirst() {
		e.mergeHeld(s, pt)
	}
	if !write {
		pt = e.mergeContinued(s, pt)
	}
	if pt.whole() {
		pt.ready = true
	}
	e.drain(p, c, s)
	e.checkBudget()
}

// mergeHeld moves into the Write pt, whose FIRST just arrived, the packets
// held apart without a FIRST (after a PSN gap) that lie in its span: a
// Write of DMA Length bytes takes ceil(length / PMTU) PSNs from its FIRST
// (IBA 9.4.1, 9.7.1). On a reordering link the MIDDLE packets of several
// Writes can come before their FIRSTs (lossy/rxe-nfs3-lossreorder.pcap,
// packets 2783-2786: PSNs 4201601, 4201610 of the Write from 4201598 and
// 4201626 of the one from 4201618, before the FIRST at 4201578).
func (e *Engine) mergeHeld(s *reqStream, pt *partial) {
	if !pt.firstKnown || pt.unit == 0 {
		return
	}
	span := writeSpan(pt.dmaLen, pt.unit)
	for i := 0; i < len(s.msgs); i++ {
		q := s.msgs[i]
		if q == pt || q.gap || q.ready || q.firstKnown || !q.write || q.unit != pt.unit || q.npkts == 0 ||
			psnDiff(q.minSeen, pt.first) >= span || psnDiff(q.maxSeen, pt.first) >= span {
			continue
		}
		e.absorb(s, pt, i)
		i--
	}
}

// mergeContinued joins the Send partials that one message's packets were
// split into, once nothing lies between them: held apart after a PSN gap
// (find), the packets after each lost MIDDLE of a multi-packet Send start
// a partial without a FIRST, and the resend that fills the gap lands in
// one of them. The packets of a message carry consecutive PSNs and a new
// message starts only after a LAST or ONLY (IBA Vol 1 9.4.1, 9.7.1), so
// when a partial holds PSN n and no LAST, the partial without a FIRST
// whose lowest PSN is n+1 continues its message
// (lossy/rxe-ib_send_bw-loss3.pcap: the Send from PSN 10581122 lost
// 10581142, 10581152, 10581170 and 10581177, each resent into the part
// after it; the parts were handed up as a 20-packet truncated Send and 44
// orphans). It returns the partial that holds pt's packets now.
func (e *Engine) mergeContinued(s *reqStream, pt *partial) *partial {
	if pt.write || pt.unit == 0 {
		return pt
	}
	continues := func(a, b *partial) bool {
		return a != b && !a.gap && !b.gap && !a.ready && !b.ready && !a.write && !b.write && !a.lastSeen &&
			!b.firstKnown && a.npkts > 0 && b.npkts > 0 && a.unit == b.unit && (a.maxSeen+1)&psnMask == b.minSeen
	}
	for _, a := range s.msgs {
		if continues(a, pt) {
			// pt continues the message of a partial before it.
			if i := slices.Index(s.msgs, pt); i >= 0 {
				e.absorb(s, a, i)
				pt = a
			}
			break
		}
	}
	for merged := true; merged; {
		merged = false
		for i, b := range s.msgs {
			if continues(pt, b) {
				e.absorb(s, pt, i)
				merged = true
				break
			}
		}
	}
	return pt
}

// absorb moves the packets of s.msgs[i], a partial without a FIRST, into
// pt, placing each by its PSN, and removes it from s.msgs.
func (e *Engine) absorb(s *reqStream, pt *partial, i int) {
	q := s.msgs[i]
	r := e.rx()
	from := pt.base
	if pt.firstKnown {
		from = pt.first
	}
	limit := r.maxMsg + int(psnDiff(from, pt.base))*pt.unit
	for k := 0; k < len(q.got)*64; k++ {
		if !q.got.has(k) {
			continue
		}
		idx := int(psnDiff((q.base+uint32(k))&psnMask, pt.base))
		if pt.got.set(idx) {
			e.Reassembly.Duplicates++
			continue
		}
		src := k * q.unit
		end := min(src+q.unit, q.hi, len(q.data))
		if src >= end {
			continue
		}
		off := idx * pt.unit
		n := end - src
		if off+n > limit {
			pt.cut = true
			continue
		}
		if need := off + n; need > len(pt.data) {
			if need > cap(pt.data) {
				grown := make([]byte, need, min(limit, 2*need))
				copy(grown, pt.data)
				e.buf.grew(cap(pt.data), cap(grown))
				pt.data = grown
			}
			pt.data = pt.data[:need]
		}
		copy(pt.data[off:], q.data[src:end])
		pt.hi = max(pt.hi, off+n)
	}
	if q.truncAt >= 0 {
		t := q.truncAt + int(psnDiff(q.base, pt.base))*pt.unit
		if pt.truncAt < 0 || t < pt.truncAt {
			pt.truncAt = t
		}
	}
	pt.packets = append(pt.packets, q.packets...)
	pt.npkts += q.npkts
	pt.length += q.length
	pt.cut = pt.cut || q.cut
	if psnDiff(q.maxSeen, pt.maxSeen) < psnHalf {
		pt.maxSeen = q.maxSeen
	}
	if q.lastSeen {
		pt.lastSeen, pt.lastPSN = true, q.lastPSN
	}
	if q.end.After(pt.end) {
		pt.end = q.end
	}
	if q.imm {
		pt.imm, pt.immData = true, q.immData
	}
	if q.inv {
		pt.inv, pt.invSTag = true, q.invSTag
	}
	copy(s.msgs[i:], s.msgs[i+1:])
	s.msgs[len(s.msgs)-1] = nil
	s.msgs = s.msgs[:len(s.msgs)-1]
	s.spareM = append(s.spareM, q)
}

// setFirst takes what the FIRST (or ONLY) packet tells of its message.
func (pt *partial) setFirst(p *Packet) {
	h := &p.BTH
	pt.first, pt.firstKnown = h.PSN&psnMask, true
	if !h.Truncated && (h.OpCode.IsFirst() || pt.unit == 0) {
		pt.unit = len(h.Payload)
	}
	if psnDiff(pt.first, pt.minSeen) >= psnHalf {
		pt.minSeen = pt.first
	}
	pt.start = p.Timestamp
	if pt.write {
		pt.stag, pt.va, pt.dmaLen = h.RETH.RKey, h.RETH.VA, h.RETH.DMALen
	}
}

// whole tells whether every packet from FIRST to LAST is there.
func (pt *partial) whole() bool {
	if !pt.firstKnown || !pt.lastSeen {
		return false
	}
	f := int(psnDiff(pt.first, pt.base))
	l := int(psnDiff(pt.lastPSN, pt.base))
	return l >= f && l-f < psnHalf && pt.got.allSet(f, l)
}

// addPacket copies a packet's payload into its message, placed by PSN.
func (e *Engine) addPacket(p *Packet, pt *partial) {
	h := &p.BTH
	op := h.OpCode
	r := e.rx()
	psn := h.PSN & psnMask
	idx := int(psnDiff(psn, pt.base))
	if idx >= psnHalf || (idx > 0 && pt.unit == 0) || idx*pt.unit > 1<<30 {
		e.Reassembly.Orphans++
		return
	}
	if psnDiff(psn, pt.maxSeen) < psnHalf {
		pt.maxSeen = psn
	}
	if psnDiff(psn, pt.minSeen) >= psnHalf {
		pt.minSeen = psn
	}
	skip := 0
	if pt.firstKnown {
		skip = int(psnDiff(pt.first, pt.base)) * pt.unit
	}
	if idx*pt.unit >= skip+r.maxMsg+pt.unit {
		// Far past MaxMessageBytes: only counted.
		pt.cut = true
	} else if pt.got.set(idx) {
		e.Reassembly.Duplicates++
		return
	}
	pt.npkts++
	pt.packets = append(pt.packets, p.Number)
	pt.length += wireLen(h)
	off := idx * pt.unit
	max := r.maxMsg + skip
	payload := h.Payload
	if off+len(payload) > max {
		pt.cut = true
		if off >= max {
			payload = nil
		} else {
			payload = payload[:max-off]
		}
	}
	if need := off + len(payload); len(payload) > 0 && need > len(pt.data) {
		if need > cap(pt.data) {
			size := 2 * need
			if size > max {
				size = max
			}
			if size < need {
				size = need
			}
			grown := make([]byte, need, size)
			copy(grown, pt.data)
			e.buf.grew(cap(pt.data), cap(grown))
			pt.data = grown
		}
		pt.data = pt.data[:need]
	}
	if len(payload) > 0 {
		copy(pt.data[off:], payload)
		if end := off + len(payload); end > pt.hi {
			pt.hi = end
		}
	}
	// FIRST and MIDDLE packets carry exactly one PMTU (§9.4.1): one that
	// does not cannot be placed by its PSN with the others, whose bytes
	// after it do not land where they belong. The message ends there for
	// us, as where the capture cut a packet short.
	end := off + len(payload)
	misfit := (op.IsFirst() || op.IsMiddle()) && !h.Truncated && len(h.Payload) != pt.unit
	if misfit {
		end = off + min(len(payload), pt.unit)
	}
	if (h.Truncated || misfit) && (pt.truncAt < 0 || end < pt.truncAt) {
		pt.truncAt = end
	}
	pt.end = p.Timestamp
	if h.Has(roce.ExtIETH) {
		pt.inv, pt.invSTag = true, h.IETH.RKey
	}
	if h.Has(roce.ExtImmDt) {
		pt.imm, pt.immData = true, h.ImmDt.Data
	}
	if op.IsLast() || op.IsOnly() {
		pt.lastSeen, pt.lastPSN = true, psn
	}
}

// drain hands up the messages at the head of s that are ready, in PSN
// order; past maxHeldMessages the oldest goes whatever its state.
func (e *Engine) drain(p *Packet, c *Connection, s *reqStream) {
	for len(s.msgs) > 0 && (s.msgs[0].ready || len(s.msgs) > maxHeldMessages) {
		pt := s.msgs[0]
		if !pt.ready {
			e.Reassembly.HeldCut++
		}
		copy(s.msgs, s.msgs[1:])
		s.msgs[len(s.msgs)-1] = nil
		s.msgs = s.msgs[:len(s.msgs)-1]
		e.flushPartial(p, c, s, pt)
		s.spareM = append(s.spareM, pt)
	}
}

func wireLen(h *roce.BTH) int {
	if h.PayloadLen < 0 {
		return len(h.Payload)
	}
	return h.PayloadLen
}

// onlyPacket hands up a SEND_ONLY or RDMA_WRITE_ONLY without copying it.
func (e *Engine) onlyPacket(p *Packet, c *Connection, s *reqStream) {
	h := &p.BTH
	st := &e.Reassembly
	r := e.rx()
	data := h.Payload
	cut := false
	if len(data) > r.maxMsg {
		data, cut = data[:r.maxMsg], true
	}
	s.onePkt[0] = p.Number
	if h.OpCode.IsWrite() {
		if o := c.dataObserver(); o != nil {
			d := &r.data
			*d = RDMAData{Kind: RDMAWrite, Conn: c, Dir: s.d, STag: h.RETH.RKey, Offset: h.RETH.VA, Length: h.RETH.DMALen, Data: h.Payload}
			o.RDMAData(p, d)
		}
		op := &r.op
		*op = RDMAOp{Kind: RDMAWrite, Conn: c, Dir: s.d, STag: h.RETH.RKey, Offset: h.RETH.VA, Length: h.RETH.DMALen,
			Packets: s.onePkt[:], Data: data, Start: p.Timestamp, End: p.Timestamp}
		op.Complete = !h.Truncated && wireLen(h) == int(op.Length)
		if len(op.Data) > int(op.Length) {
			op.Data = op.Data[:op.Length]
		}
		st.Writes++
		if cut {
			st.OpDataCut++
		}
		if !op.Complete {
			st.OpsIncomplete++
		}
		e.deliverRDMAOp(p, op)
		return
	}
	m := &r.msg
	*m = Message{Conn: c, Dir: s.d, Packets: s.onePkt[:], Data: data, Length: wireLen(h),
		Truncated: h.Truncated || cut, Time: p.Timestamp}
	if h.Has(roce.ExtIETH) {
		m.Invalidate, m.InvalidatedSTag = true, h.IETH.RKey
	}
	if h.Has(roce.ExtImmDt) {
		m.HasImmediate, m.Immediate = true, h.ImmDt.Data
	}
	st.Messages++
	if m.Truncated {
		st.Truncated++
	}
	if cut {
		st.TooLong++
	}
	e.deliverMessage(p, m)
}

// flushPartial hands up pt, whole or not; p is the packet that completed it
// or made it give up (nil at the end of the capture).
func (e *Engine) flushPartial(p *Packet, c *Connection, s *reqStream, pt *partial) {
	st := &e.Reassembly
	r := e.rx()
	if pt.gap {
		if pt.gapN > 0 && !pt.got.allSet(0, int(pt.gapN)-1) {
			// Not all resent: the capture lost those PSNs.
			c.captureLost(s.d, pt.prevPkt)
		}
		return
	}
	if pt.npkts == 0 {
		// Nothing of it was placed (each packet counted where it went).
		return
	}
	if !pt.firstKnown {
		// Its FIRST never came: nothing to hand up.
		st.Orphans += uint64(pt.npkts)
		c.captureLost(s.d, pt.prevPkt)
		return
	}
	f := int(psnDiff(pt.first, pt.base))
	skip := f * pt.unit
	span := -1
	if pt.lastSeen {
		span = int(psnDiff(pt.lastPSN, pt.first)) + 1
	}
	whole := pt.whole() && pt.truncAt < 0
	// Nothing placed at or past the FIRST (its payload and those after it
	// empty, or cut): no data, not a slice past the buffer.
	lo := min(skip, len(pt.data))
	data := pt.data[lo:max(pt.hi, lo)]
	if !whole {
		if n := pt.got.leadingFrom(f) * pt.unit; n < len(data) && (span < 0 || n < span*pt.unit) {
			data = data[:n]
		}
		if pt.truncAt >= 0 && pt.truncAt-skip < len(data) {
			t := pt.truncAt - skip
			if t < 0 {
				t = 0
			}
			data = data[:t]
		}
	}
	npk := pt.npkts
	length := pt.length
	if span > npk {
		length += (span - npk) * pt.unit
	}
	if !whole && length <= len(data) {
		// What followed the last packet seen is unknown: the message is
		// longer than what we hold.
		length = len(data) + 1
	}
	if pt.write {
		op := &r.op
		*op = RDMAOp{Kind: RDMAWrite, Conn: c, Dir: s.d, STag: pt.stag, Offset: pt.va, Length: pt.dmaLen,
			Packets: pt.packets, Data: data, Start: pt.start, End: pt.end}
		op.Complete = whole && pt.length == int(pt.dmaLen)
		if len(op.Data) > int(op.Length) {
			op.Data = op.Data[:op.Length]
		}
		st.Writes++
		if pt.cut {
			st.OpDataCut++
		}
		if !op.Complete {
			st.OpsIncomplete++
		}
		e.deliverRDMAOp(p, op)
		return
	}
	m := &r.msg
	if !whole && pt.truncAt < 0 && len(pt.packets) > 0 {
		// Holes the snap length did not make: packets the capture lost.
		c.captureLost(s.d, pt.packets[0])
	}
	*m = Message{Conn: c, Dir: s.d, Packets: pt.packets, Data: data, Length: length,
		Truncated: !whole || pt.cut, Invalidate: pt.inv, InvalidatedSTag: pt.invSTag,
		HasImmediate: pt.imm, Immediate: pt.immData, Time: pt.end}
	st.Messages++
	if m.Truncated {
		st.Truncated++
	}
	if pt.cut {
		st.TooLong++
	}
	e.deliverMessage(p, m)
}

// flushAll hands up every message s holds, in order.
func (e *Engine) flushAll(p *Packet, c *Connection, s *reqStream) {
	for _, pt := range s.msgs {
		pt.ready = true
	}
	e.drain(p, c, s)
}

func (e *Engine) readRequest(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	h := &p.BTH
	r := e.rx()
	// The oldest is given up at MaxOutstandingReads, or when one more
	// Read's record does not fit the buffer budget (ReadCost).
	if len(s.reads) >= r.maxReads || len(s.reads) > 0 && !e.budget().fits(ReadCost) {
		e.Reassembly.ReadsEvicted++
		e.finishRead(p, c, s, 0)
	}
	e.buf.grew(0, ReadCost)
	var ro *readOp
	if n := len(s.spare); n > 0 {
		ro, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		ro = &readOp{}
	}
	*ro = readOp{psn: h.PSN & psnMask, stag: h.RETH.RKey, va: h.RETH.VA, length: h.RETH.DMALen,
		packets: append(ro.packets[:0], p.Number), data: ro.data[:0], got: ro.got[:0],
		start: p.Timestamp, end: p.Timestamp}
	if rc.pmtu > 0 {
		ro.npkts = readSpan(h, rc.pmtu)
	}
	// In PSN order (a Read Request filling a gap comes late).
	i := len(s.reads)
	for i > 0 && psnDiff(ro.psn, s.reads[i-1].psn) >= psnHalf {
		i--
	}
	s.reads = append(s.reads, nil)
	copy(s.reads[i+1:], s.reads[i:])
	s.reads[i] = ro
}

// readFor returns the index of the Read whose PSN span holds psn, -1 if
// none.
func (e *Engine) readFor(rc *roceConn, s *reqStream, psn uint32) int {
	k := -1
	for i, ro := range s.reads {
		d := psnDiff(psn, ro.psn)
		if d >= psnHalf {
			continue
		}
		if ro.npkts == 0 && rc.pmtu > 0 {
			ro.npkts = 1
			if n := (ro.length + uint32(rc.pmtu) - 1) / uint32(rc.pmtu); n > 1 {
				ro.npkts = n
			}
		}
		if ro.npkts > 0 && d < ro.npkts {
			return i
		}
		if ro.npkts == 0 {
			// Without the PMTU: the last Read at or before psn.
			k = i
		}
	}
	return k
}

// readReissued: a Read Request seen again (go-back-N replay, or re-issued
// for the part still missing) continues its Read. Go-back-N resends from
// the oldest request not complete (9.7.5.1.1; rxe_req.c req_retry): an
// episode whose first resend is past an earlier Read still incomplete says
// the requester has all of that one — the capture lost its missing
// responses — and it is handed up as it is.
func (e *Engine) readReissued(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	psn := p.BTH.PSN & psnMask
	k := e.readFor(rc, s, psn)
	first := p.Analysis.Episode != s.episode
	s.episode = p.Analysis.Episode
	if k < 0 {
		return
	}
	s.reads[k].retrans++
	s.reads[k].doomed = false
	// Not at once: on a reordering link the resends of one episode can
	// come out of order (lossy/rxe-nfs3-lossreorder.pcap: packet 760
	// resends the Read at PSN 10559286, packet 807 the one at 10559266
	// before it, whose 20 responses follow in 842-864). The earlier Reads
	// are given up when the requester sends new data again without
	// having resent them (finishDoomed).
	for i := 0; first && i < k; i++ {
		s.reads[i].doomed = true
	}
}

// finishDoomed hands up, as they are, the Reads at the head of s that a
// retransmission episode passed over without resending.
func (e *Engine) finishDoomed(p *Packet, c *Connection, s *reqStream) {
	for len(s.reads) > 0 && s.reads[0].doomed {
		e.finishRead(p, c, s, 0)
	}
}

// readResponse places a Read Response in the Read Request it answers; s is
// the stream of the requester (the opposite direction).
func (e *Engine) readResponse(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	h := &p.BTH
	op := h.OpCode
	psn := h.PSN & psnMask
	st := &e.Reassembly
	k := e.readFor(rc, s, psn)
	if p.Analysis.Retransmission {
		st.Duplicates++
		if k >= 0 {
			s.reads[k].retrans++
		}
		return
	}
	if k < 0 {
		st.UnmatchedResponses++
		return
	}
	ro := s.reads[k]
	d := psnDiff(psn, ro.psn)
	ro.started = true
	if int(d) > e.rx().maxMsg/256 {
		// Past MaxMessageBytes whatever the PMTU (256 at least): only
		// counted.
	} else if ro.got.set(int(d)) {
		st.Duplicates++
		return
	}
	ro.packets = append(ro.packets, p.Number)
	ro.end = p.Timestamp
	ro.bytes += wireLen(h)
	if h.Truncated {
		ro.truncated = true
	}
	unit := rc.pmtu
	if unit == 0 {
		unit = len(h.Payload)
	}
	off := int(d) * unit
	max := e.rx().maxMsg
	if lim := int(ro.length); lim < max {
		max = lim
	}
	if payload := h.Payload; off < max {
		if off+len(payload) > max {
			payload = payload[:max-off]
		}
		if need := off + len(payload); need > len(ro.data) {
			if need > cap(ro.data) {
				size := int(ro.length)
				if size > e.rx().maxMsg {
					size = e.rx().maxMsg
				}
				if size < need {
					size = need
				}
				grown := make([]byte, need, size)
				copy(grown, ro.data)
				e.buf.grew(cap(ro.data), cap(grown))
				ro.data = grown
			}
			ro.data = ro.data[:need]
		}
		copy(ro.data[off:], payload)
	}
	if ro.bytes >= int(ro.length) && (ro.npkts == 0 || ro.got.allSet(0, int(ro.npkts)-1)) {
		e.finishRead(p, c, s, k)
	} else if ro.npkts == 0 && (op.IsLast() || op.IsOnly()) {
		e.finishRead(p, c, s, k)
	}
	e.checkBudget()
}

// finishRead hands up s.reads[i] and recycles it.
func (e *Engine) finishRead(p *Packet, c *Connection, s *reqStream, i int) {
	ro := s.reads[i]
	e.buf.grew(ReadCost, 0)
	copy(s.reads[i:], s.reads[i+1:])
	s.reads[len(s.reads)-1] = nil
	s.reads = s.reads[:len(s.reads)-1]
	st := &e.Reassembly
	r := e.rx()
	unit := 0
	if rc := r.conns[c]; rc != nil {
		unit = rc.pmtu
	}
	all := ro.got.allSet(0, int(ro.npkts)-1)
	if ro.npkts == 0 {
		// Span unknown (no PMTU): the responses seen must run from the
		// first without a hole.
		all = ro.got.has(0) && ro.got.leadingFrom(0) == ro.got.count()
	}
	// Complete only if the bytes the responses carried were placed: a
	// response placed past the Read's length (its offset from a unit
	// that is no PMTU, §9.4.1, such as an empty FIRST's) counts in
	// bytes but holds none of the data.
	complete := all && ro.started && !ro.truncated && ro.bytes == int(ro.length) &&
		(int(ro.length) > r.maxMsg || len(ro.data) == int(ro.length))
	data := ro.data
	if !complete {
		n := ro.got.leadingFrom(0)
		if unit > 0 && n*unit < len(data) {
			data = data[:n*unit]
		}
		if !ro.started {
			data = data[:0]
		}
	}
	if int(ro.length) > r.maxMsg {
		st.OpDataCut++
	}
	op := &r.op
	*op = RDMAOp{Kind: RDMARead, Conn: c, Dir: s.d, STag: ro.stag, Offset: ro.va, Length: ro.length,
		Packets: ro.packets, Data: data, Complete: complete, Start: ro.start, End: ro.end, Retransmitted: ro.retrans}
	st.Reads++
	if !complete {
		st.OpsIncomplete++
		if ro.started && !ro.truncated && !all {
			// Responses the capture does not hold: the requester got
			// them (it went on), so the capture lost them.
			c.captureLost(opposite(s.d), FirstPacket(ro.packets))
		}
	}
	e.deliverRDMAOp(p, op)
	if len(s.spare) < maxSpareReads {
		s.spare = append(s.spare, ro)
		return
	}
	// Enough kept for reuse: this one goes (its buffer with it), so that
	// finished Reads' records cannot pile up outside the budget.
	e.buf.grew(cap(ro.data), 0)
	ro.data = nil
}

// maxSpareReads bounds the finished Read records a direction keeps for
// reuse: a burst of Read Requests given up for the budget would otherwise
// leave their records here, uncounted.
const maxSpareReads = 8

// releaseRoCE hands up what c's reassembly still holds, as flushRoCE does,
// and drops c's reassembly state (release.go).
func (e *Engine) releaseRoCE(c *Connection) {
	r := e.rx()
	rc := r.conns[c]
	if rc == nil {
		return
	}
	for d := range rc.dir {
		s := &rc.dir[d]
		e.flushAll(nil, c, s)
		for len(s.reads) > 0 {
			e.finishRead(nil, c, s, 0)
		}
		for _, pt := range s.spareM {
			e.buf.grew(cap(pt.data), 0)
		}
		for _, ro := range s.spare {
			e.buf.grew(cap(ro.data), 0)
		}
	}
	rc.finishModel(c)
	delete(r.conns, c)
	if r.lastConn == c {
		r.lastConn, r.lastRC = nil, nil
	}
}

// flushRoCE hands up everything still in progress (end of capture), in
// connection order.
func (e *Engine) flushRoCE() {
	r := e.rx()
	for _, c := range e.Conns.Connections() {
		rc := r.conns[c]
		if rc == nil {
			continue
		}
		for d := range rc.dir {
			s := &rc.dir[d]
			e.flushAll(nil, c, s)
			for len(s.reads) > 0 {
				e.finishRead(nil, c, s, 0)
			}
		}
		rc.finishModel(c)
	}
}
