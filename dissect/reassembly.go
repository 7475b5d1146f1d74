package dissect

import (
	"math/bits"
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
// Decisions, and what the counters of ReassemblyStats say about them:
//
//   - A request packet whose PSN is behind the highest PSN accepted on its
//     direction, and not inside a gap recorded earlier, is a duplicate (a
//     retransmission the responder already executed, §9.7.5.1.2): counted,
//     never appended again. A lone duplicate SEND_ONLY is still decoded for
//     display (RPCRecord.Duplicate) but not handed up.
//   - A PSN jump forward is a gap: counted, and the skipped PSNs are
//     remembered (a few ranges) so that a retransmission filling them later
//     is accepted as new. Packets of a message are placed by PSN (offset =
//     (PSN − first PSN) × PMTU, FIRST and MIDDLE packets carry exactly one
//     PMTU, §9.4.1), so a late fill lands where it belongs.
//   - A message whose FIRST packet is missing (the capture began in it) is
//     dropped (Orphans). A message with its start but with a hole, a packet
//     cut by the snap length, or no LAST before the next message starts is
//     handed up with Truncated set and Data holding the bytes before the
//     first hole (its RPC-over-RDMA header is at the start); Truncated counts
//     them.
//   - Sends longer than MaxMessageBytes are cut there (TooLong, Truncated);
//     RDMA operations keep at most MaxMessageBytes of data (OpDataCut) while
//     Complete still tells whether every byte went by.
//   - At most MaxOutstandingReads Read Requests per direction wait for their
//     responses; past that the oldest is handed up incomplete (ReadsEvicted).
//     Responses come back in request order (§9.7.5.1.3), so a response to a
//     later request also gives up the earlier ones still waiting.

// Reassembly limits (Options override them).
const (
	DefaultMaxMessageBytes     = 1 << 20
	DefaultMaxOutstandingReads = 256
	maxHoles                   = 8
	psnMask                    = 1<<24 - 1
	psnHalf                    = 1 << 23
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
}

// rxState is the engine's reassembly state.
type rxState struct {
	conns    map[*Connection]*roceConn
	msg      Message
	op       RDMAOp
	finished bool
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

// roceConn is one connection's reassembly state; dir is indexed by the
// requester's direction.
type roceConn struct {
	pmtu int // path MTU in bytes, 0 until known
	dir  [2]reqStream
}

type psnRange struct{ start, n uint32 }

// reqStream follows one requester's PSN space.
type reqStream struct {
	d      Direction // the requester's direction
	init   bool
	next   uint32 // one past the highest PSN accepted
	holes  []psnRange
	cur    partial
	reads  []*readOp
	spare  []*readOp
	onePkt [1]int
}

// partial is a Send or RDMA Write in progress.
type partial struct {
	active    bool
	write     bool
	first     uint32 // PSN of the FIRST packet
	unit      int    // payload of the FIRST packet: the PMTU
	lastSeen  bool
	lastPSN   uint32
	got       bitmap
	npkts     int
	packets   []int
	data      []byte
	hi        int // bytes of data written, holes included
	truncAt   int // where the first packet cut by the snap length ends, -1 if none
	length    int // message bytes on the wire seen so far
	truncated bool
	cut       bool
	start     time.Time
	end       time.Time
	inv       bool
	invSTag   uint32
	imm       bool
	immData   uint32
	stag      uint32
	va        uint64
	dmaLen    uint32
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
	nextD     uint32
	started   bool
	truncated bool
	gap       bool
	start     time.Time
	end       time.Time
}

// bitmap marks the packets of a message received, by index from its first
// PSN.
type bitmap []uint64

func (b *bitmap) reset() { *b = (*b)[:0] }

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

// leading counts the marks from index 0 up to the first hole.
func (b bitmap) leading() int {
	n := 0
	for _, w := range b {
		if w == ^uint64(0) {
			n += 64
			continue
		}
		return n + bits.TrailingZeros64(^w)
	}
	return n
}

func psnDiff(a, b uint32) uint32 { return (a - b) & psnMask }

// reassembleRoCE reassembles IB/RoCE Sends in PSN order and follows RDMA
// Reads and Writes, handing each whole message and operation to the
// RPC-over-RDMA layer and the Observer.
func (e *Engine) reassembleRoCE(p *Packet) {
	c := p.Conn
	if c == nil || c.Transport != TransportRoCE || c.rel.state != relLive {
		// (A closed connection's trailing CM messages start nothing:
		// release.go.)
		return
	}
	r := e.rx()
	rc := r.conns[c]
	if rc == nil {
		rc = &roceConn{}
		rc.dir[0].d, rc.dir[1].d = DirClientToServer, DirServerToClient
		r.conns[c] = rc
	}
	if p.CM.Attr == roce.LayerTypeCMREQ {
		if n := p.CM.REQ.PathPacketPayloadMTU.Bytes(); n > 0 {
			rc.pmtu = n
		}
		return
	}
	if p.CM.Attr != 0 || !p.Has(roce.LayerTypeBTH) {
		return
	}
	op := p.BTH.OpCode
	switch op.Transport() {
	case roce.TransportRC, roce.TransportUC, roce.TransportXRC:
	default:
		return
	}
	if (op.IsFirst() || op.IsMiddle()) && !p.BTH.Truncated && len(p.BTH.Payload) > 0 {
		// FIRST and MIDDLE packets carry exactly one PMTU (§9.4.1).
		rc.pmtu = len(p.BTH.Payload)
	}
	d := p.Dir.Index()
	switch {
	case op.IsRequest():
		e.request(p, c, rc, &rc.dir[d])
	case op.IsReadResponse():
		// Responses travel opposite to their requests.
		e.readResponse(p, c, rc, &rc.dir[1-d])
	}
}

// accept places a request packet's PSN in its stream: dup when it was
// consumed already.
func (s *reqStream) accept(r *ReassemblyStats, psn, n uint32) (dup bool) {
	if !s.init {
		s.init = true
		s.next = (psn + n) & psnMask
		return false
	}
	d := psnDiff(psn, s.next)
	if d < psnHalf {
		if d > 0 {
			r.Gaps++
			r.MissingPSNs += uint64(d)
			if len(s.holes) == maxHoles {
				copy(s.holes, s.holes[1:])
				s.holes = s.holes[:maxHoles-1]
			}
			s.holes = append(s.holes, psnRange{s.next, d})
		}
		s.next = (psn + n) & psnMask
		return false
	}
	// Behind: new only if it fills a recorded gap.
	for i := range s.holes {
		h := &s.holes[i]
		off := psnDiff(psn, h.start)
		if off >= h.n {
			continue
		}
		end := off + n
		if end > h.n {
			end = h.n
		}
		switch {
		case off == 0 && end == h.n:
			s.holes = append(s.holes[:i], s.holes[i+1:]...)
		case off == 0:
			h.start = (h.start + end) & psnMask
			h.n -= end
		case end == h.n:
			h.n = off
		default: // split
			tail := psnRange{(h.start + end) & psnMask, h.n - end}
			h.n = off
			if len(s.holes) < maxHoles {
				s.holes = append(s.holes, tail)
			}
		}
		return false
	}
	return true
}

func (e *Engine) request(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	r := e.rx()
	st := &e.Reassembly
	h := &p.BTH
	op := h.OpCode
	psn := h.PSN
	// The stream starts at its first packet. (The CM's Starting PSNs are
	// not used: in every capture we have, Linux's REQ carries the PSN the
	// passive side sends with and the REP the active side's.)
	n := uint32(1)
	unknownLen := false
	if op.IsReadRequest() {
		n = 1
		if rc.pmtu > 0 {
			if k := (h.RETH.DMALen + uint32(rc.pmtu) - 1) / uint32(rc.pmtu); k > 1 {
				n = k
			}
		} else if h.RETH.DMALen > 256 {
			// 256 is the smallest PMTU (IBA 9.4.1): shorter Reads take one
			// packet whatever the PMTU.
			unknownLen = true
		}
	}
	missing := st.MissingPSNs
	dup := s.accept(st, psn, n)
	c.MissingPSNs += st.MissingPSNs - missing
	if dup {
		st.Duplicates++
		if op.IsSend() && op.IsOnly() {
			e.duplicateSend(p)
		}
		return
	}
	if unknownLen {
		// Without the PMTU the Read's PSN span is unknown: pick the
		// sequence up again at the next request.
		s.init = false
	}
	switch {
	case op.IsSend() || op.IsWrite():
		e.messagePacket(p, c, s, r)
	case op.IsReadRequest():
		e.readRequest(p, c, rc, s, r)
	}
}

// messagePacket adds a Send or RDMA Write packet to the message in progress.
func (e *Engine) messagePacket(p *Packet, c *Connection, s *reqStream, r *rxState) {
	h := &p.BTH
	op := h.OpCode
	cur := &s.cur
	write := op.IsWrite()
	if op.IsOnly() {
		// A whole message in one packet: handed up from the packet itself.
		// Only a message that ended without its LAST gives way to it; a
		// late retransmission into an earlier gap leaves the message in
		// progress alone.
		if cur.active && psnDiff(h.PSN, cur.first) < psnHalf {
			e.flushPartial(p, c, s)
		}
		e.onlyPacket(p, c, s, r)
		return
	}
	if op.IsFirst() {
		if cur.active {
			e.flushPartial(p, c, s)
		}
		cur.begin(p, write)
	} else if !cur.active || cur.write != write {
		e.Reassembly.Orphans++
		return
	}
	idx := int(psnDiff(h.PSN, cur.first))
	if idx >= psnHalf || (idx > 0 && cur.unit == 0) || idx*cur.unit > 1<<30 {
		e.Reassembly.Orphans++
		return
	}
	if idx*cur.unit >= r.maxMsg+cur.unit {
		// Far past MaxMessageBytes: only counted.
		cur.cut = true
	} else if cur.got.set(idx) {
		e.Reassembly.Duplicates++
		return
	}
	cur.npkts++
	cur.packets = append(cur.packets, p.Number)
	cur.length += wireLen(h)
	off := idx * cur.unit
	max := r.maxMsg
	payload := h.Payload
	if off+len(payload) > max {
		cur.cut = true
		if off >= max {
			payload = nil
		} else {
			payload = payload[:max-off]
		}
	}
	if need := off + len(payload); len(payload) > 0 && need > len(cur.data) {
		if need > cap(cur.data) {
			size := 2 * need
			if size > max {
				size = max
			}
			grown := make([]byte, need, size)
			copy(grown, cur.data)
			e.buf.grew(cap(cur.data), cap(grown))
			cur.data = grown
		}
		cur.data = cur.data[:need]
	}
	if len(payload) > 0 {
		copy(cur.data[off:], payload)
		if end := off + len(payload); end > cur.hi {
			cur.hi = end
		}
	}
	if h.Truncated && (cur.truncAt < 0 || off+len(payload) < cur.truncAt) {
		cur.truncAt = off + len(payload)
	}
	cur.end = p.Timestamp
	if h.Has(roce.ExtIETH) {
		cur.inv, cur.invSTag = true, h.IETH.RKey
	}
	if h.Has(roce.ExtImmDt) {
		cur.imm, cur.immData = true, h.ImmDt.Data
	}
	if op.IsLast() {
		cur.lastSeen, cur.lastPSN = true, h.PSN
	}
	if cur.lastSeen && cur.npkts == int(psnDiff(cur.lastPSN, cur.first))+1 {
		e.flushPartial(p, c, s)
	}
	e.checkBudget()
}

func wireLen(h *roce.BTH) int {
	if h.PayloadLen < 0 {
		return len(h.Payload)
	}
	return h.PayloadLen
}

// onlyPacket hands up a SEND_ONLY or RDMA_WRITE_ONLY without copying it.
func (e *Engine) onlyPacket(p *Packet, c *Connection, s *reqStream, r *rxState) {
	h := &p.BTH
	st := &e.Reassembly
	data := h.Payload
	cut := false
	if len(data) > r.maxMsg {
		data, cut = data[:r.maxMsg], true
	}
	s.onePkt[0] = p.Number
	if h.OpCode.IsWrite() {
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

func (cur *partial) begin(p *Packet, write bool) {
	h := &p.BTH
	*cur = partial{
		active: true, write: write, first: h.PSN, truncAt: -1,
		got: cur.got[:0], packets: cur.packets[:0], data: cur.data[:0],
		start: p.Timestamp,
	}
	if !h.Truncated {
		cur.unit = len(h.Payload)
	}
	if write {
		cur.stag, cur.va, cur.dmaLen = h.RETH.RKey, h.RETH.VA, h.RETH.DMALen
	}
}

// flushPartial hands up the message in progress, whole or not; p is the
// packet that completed it or made it give up (nil at the end of the
// capture).
func (e *Engine) flushPartial(p *Packet, c *Connection, s *reqStream) {
	cur := &s.cur
	if !cur.active {
		return
	}
	cur.active = false
	st := &e.Reassembly
	r := e.rx()
	span := -1
	if cur.lastSeen {
		span = int(psnDiff(cur.lastPSN, cur.first)) + 1
	}
	whole := span == cur.npkts && cur.truncAt < 0
	data := cur.data[:cur.hi]
	if !whole {
		if n := cur.got.leading() * cur.unit; n < len(data) && n < span*cur.unit {
			data = data[:n]
		}
		if cur.truncAt >= 0 && cur.truncAt < len(data) {
			data = data[:cur.truncAt]
		}
	}
	length := cur.length
	if span > cur.npkts {
		length += (span - cur.npkts) * cur.unit
	}
	if !whole && length <= len(data) {
		// What followed the last packet seen is unknown: the message is
		// longer than what we hold.
		length = len(data) + 1
	}
	if cur.write {
		op := &r.op
		*op = RDMAOp{Kind: RDMAWrite, Conn: c, Dir: s.d, STag: cur.stag, Offset: cur.va, Length: cur.dmaLen,
			Packets: cur.packets, Data: data, Start: cur.start, End: cur.end}
		op.Complete = whole && cur.length == int(cur.dmaLen)
		if len(op.Data) > int(op.Length) {
			op.Data = op.Data[:op.Length]
		}
		st.Writes++
		if cur.cut {
			st.OpDataCut++
		}
		if !op.Complete {
			st.OpsIncomplete++
		}
		e.deliverRDMAOp(p, op)
		return
	}
	m := &r.msg
	*m = Message{Conn: c, Dir: s.d, Packets: cur.packets, Data: data, Length: length,
		Truncated: !whole || cur.cut, Invalidate: cur.inv, InvalidatedSTag: cur.invSTag,
		HasImmediate: cur.imm, Immediate: cur.immData, Time: cur.end}
	st.Messages++
	if m.Truncated {
		st.Truncated++
	}
	if cur.cut {
		st.TooLong++
	}
	e.deliverMessage(p, m)
}

func (e *Engine) readRequest(p *Packet, c *Connection, rc *roceConn, s *reqStream, r *rxState) {
	h := &p.BTH
	if len(s.reads) >= r.maxReads {
		e.Reassembly.ReadsEvicted++
		e.finishRead(p, c, s, 0)
	}
	var ro *readOp
	if n := len(s.spare); n > 0 {
		ro, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		ro = &readOp{}
	}
	*ro = readOp{psn: h.PSN, stag: h.RETH.RKey, va: h.RETH.VA, length: h.RETH.DMALen,
		packets: append(ro.packets[:0], p.Number), data: ro.data[:0], got: ro.got[:0],
		start: p.Timestamp, end: p.Timestamp}
	if rc.pmtu > 0 {
		ro.npkts = 1
		if k := (ro.length + uint32(rc.pmtu) - 1) / uint32(rc.pmtu); k > 1 {
			ro.npkts = k
		}
	}
	s.reads = append(s.reads, ro)
}

// readResponse places a Read Response in the Read Request it answers; s is
// the stream of the requester (the opposite direction).
func (e *Engine) readResponse(p *Packet, c *Connection, rc *roceConn, s *reqStream) {
	h := &p.BTH
	op := h.OpCode
	psn := h.PSN
	st := &e.Reassembly
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
			k = i
			break
		}
		if ro.npkts == 0 && (d == 0 || ro.started) {
			// Without the PMTU: a response belongs to the last request at or
			// before its PSN.
			k = i
			if i+1 < len(s.reads) && psnDiff(psn, s.reads[i+1].psn) < psnHalf {
				continue
			}
			break
		}
	}
	if k < 0 {
		st.UnmatchedResponses++
		return
	}
	// Responses come in request order: earlier Reads still waiting will
	// not be answered any more.
	for k > 0 {
		e.finishRead(p, c, s, 0)
		k--
	}
	ro := s.reads[0]
	d := psnDiff(psn, ro.psn)
	if !ro.started && !(op.IsFirst() || op.IsOnly()) {
		ro.gap = true
	}
	ro.started = true
	if int(d) > e.rx().maxMsg/256 {
		// Past MaxMessageBytes whatever the PMTU (256 at least): only
		// counted.
	} else if ro.got.set(int(d)) {
		st.Duplicates++
		return
	}
	if d != ro.nextD {
		ro.gap = true
	}
	ro.nextD = d + 1
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
	if op.IsLast() || op.IsOnly() {
		e.finishRead(p, c, s, 0)
	}
	e.checkBudget()
}

// finishRead hands up s.reads[i] and recycles it.
func (e *Engine) finishRead(p *Packet, c *Connection, s *reqStream, i int) {
	ro := s.reads[i]
	copy(s.reads[i:], s.reads[i+1:])
	s.reads[len(s.reads)-1] = nil
	s.reads = s.reads[:len(s.reads)-1]
	st := &e.Reassembly
	r := e.rx()
	unit := 0
	if rc := r.conns[c]; rc != nil {
		unit = rc.pmtu
	}
	complete := !ro.gap && !ro.truncated && ro.bytes == int(ro.length)
	data := ro.data
	if !complete {
		n := ro.got.leading()
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
		Packets: ro.packets, Data: data, Complete: complete, Start: ro.start, End: ro.end}
	st.Reads++
	if !complete {
		st.OpsIncomplete++
	}
	e.deliverRDMAOp(p, op)
	s.spare = append(s.spare, ro)
}

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
		e.flushPartial(nil, c, s)
		for len(s.reads) > 0 {
			e.finishRead(nil, c, s, 0)
		}
		e.buf.grew(cap(s.cur.data), 0)
		for _, ro := range s.spare {
			e.buf.grew(cap(ro.data), 0)
		}
	}
	delete(r.conns, c)
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
			e.flushPartial(nil, c, s)
			for len(s.reads) > 0 {
				e.finishRead(nil, c, s, 0)
			}
		}
	}
}
