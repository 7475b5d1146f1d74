package dissect

import (
	"slices"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// Bounds of the RDMA operations followed per connection. The data kept of
// one operation is bounded by Options.MaxMessageBytes (past it the operation
// is still followed but handed out without Data), the outstanding RDMA Read
// Requests of one direction by Options.MaxOutstandingReads (siw's IRD/ORD is
// 128; RFC 6581 allows 16383); beyond them the oldest is given up
// (IWARPCounters.OpsIncomplete).
const (
	// iwarpMaxWrites bounds the RDMA Write messages in progress in one
	// direction.
	iwarpMaxWrites  = 16
	iwarpMaxFreeOps = 64
)

// iwOp is an RDMA Write or Read being followed.
type iwOp struct {
	kind RDMAOpKind
	dir  Direction // of the Write's data, or of the Read Request
	// stag/to name the remote memory the operation is about: the Write's
	// Data Sink STag and TO (RFC 5040 section 4.3), the Read's Data Source
	// STag and TO (section 4.4).
	stag   uint32
	to     uint64
	length uint32
	// sinkSTag and next place the next tagged segment: a Write's STag and
	// the TO its next segment continues at; a Read's Data Sink STag, where
	// its responses land.
	sinkSTag uint32
	sinkTO   uint64 // a Read's first Data Sink TO
	next     uint64
	got      uint32 // octets placed (a Read's, counting missing ones)
	packets  []int
	data     []byte
	cut      bool // more than Options.MaxMessageBytes octets: data dropped
	broken   bool // octets of it are missing from the capture
	start    time.Time
	end      time.Time
}

func (ie *iwarpEngine) newOp() *iwOp {
	if n := len(ie.freeOps); n > 0 {
		op := ie.freeOps[n-1]
		ie.freeOps = ie.freeOps[:n-1]
		*op = iwOp{packets: op.packets[:0], data: op.data[:0]}
		return op
	}
	return &iwOp{}
}

func (ie *iwarpEngine) freeOp(op *iwOp) {
	if len(ie.freeOps) < iwarpMaxFreeOps {
		ie.freeOps = append(ie.freeOps, op)
	} else {
		ie.e.buf.grew(cap(op.data), 0)
	}
}

// cutOp hands up an operation in progress unfinished, for the buffer
// budget (budget.go).
func (s *iwStream) cutOp(op *iwOp) {
	for h := range s.half {
		hf := &s.half[h]
		if i := slices.Index(hf.writes, op); i >= 0 {
			hf.writes = slices.Delete(hf.writes, i, i+1)
		}
		if i := slices.Index(hf.reads, op); i >= 0 {
			hf.reads = slices.Delete(hf.reads, i, i+1)
			s.ie.readsEnded(1)
		}
	}
	s.giveUp(op)
}

// readsEnded takes n Read Requests that left their queue out of the
// buffer budget (ReadCost, reassembly.go).
func (ie *iwarpEngine) readsEnded(n int) { ie.e.buf.grew(n*ReadCost, 0) }

func (op *iwOp) addPacket(n int) {
	if k := len(op.packets); k == 0 || op.packets[k-1] != n {
		op.packets = append(op.packets, n)
	}
}

// continues reports whether a tagged segment at to can belong to an
// operation that lost octets: further on, within its bounds.
func (op *iwOp) continues(to uint64) bool {
	const maxJump = 1 << 24
	return to > op.next && to-op.next < maxJump
}

// skipTo moves past octets the capture lacks: the operation keeps no data.
func (op *iwOp) skipTo(to uint64) {
	if to > op.next {
		op.broken, op.cut = true, true
		op.data = op.data[:0]
		op.next = to
	}
}

func (op *iwOp) addData(b []byte, max int, budget *bufBudget) {
	if op.cut {
		return
	}
	if len(op.data)+len(b) > max {
		op.cut = true
		op.data = op.data[:0]
		return
	}
	old := cap(op.data)
	op.data = append(op.data, b...)
	budget.grew(old, cap(op.data))
}

// iwFPDUHook, when set (tests only), sees every FPDU framed, with a
// packet or without.
var iwFPDUHook func(c *Connection, d Direction, fp *iwarp.FPDU)

// fpdu decodes one FPDU of direction h and hands what it carries on.
func (s *iwStream) fpdu(h int, fp *iwarp.FPDU) {
	ie := s.ie
	ctr := &s.info.Dir[h]
	ctr.FPDUs++
	if iwFPDUHook != nil {
		iwFPDUHook(s.conn, dirOfHalf(h), fp)
	}
	if fp.CRCChecked && fp.CRC != fp.CRCComputed {
		ctr.CRCErrors++
	}
	d, r := &ie.ddp, &ie.rdmap
	*d, *r = iwarp.DDP{}, iwarp.RDMAP{}
	err := d.DecodeFromBytes(fp.ULPDU, gopacket.NilDecodeFeedback)
	ddpOK := err == nil
	if ddpOK {
		err = r.DecodeFromBytes(d.LayerPayload(), gopacket.NilDecodeFeedback)
	}
	// The FPDU is shown with the packet that completed it. FPDUs that a
	// packet of the other direction releases (octets held until the MPA
	// Reply fixed the framing) or that Finish flushes have no packet of
	// their own: they are decoded and handed up all the same.
	w := &ie.loose
	if p := s.pkt(h); p != nil {
		w = &p.IWARP
	} else {
		w.reset()
	}
	switch {
	case err == nil:
		w.addFPDU(fp, d, r, nil)
	case ddpOK:
		w.addFPDU(fp, d, nil, err)
	default:
		w.addFPDU(fp, nil, nil, err)
	}
	if ie.fpduHook != nil {
		ie.fpduHook(s.conn, dirOfHalf(h), &w.FPDUs[len(w.FPDUs)-1])
	}
	if err != nil {
		ctr.Malformed++
		return
	}
	num := ie.curNum
	if num == 0 {
		num = s.lastNum
	}
	switch r.Opcode {
	case iwarp.OpRDMAWrite:
		s.writeSegment(h, d, num)
	case iwarp.OpRDMAReadResponse:
		s.readResponse(h, d, num)
	case iwarp.OpRDMAReadRequest:
		s.readRequest(h, &r.ReadRequest, num)
	case iwarp.OpTerminate:
		ctr.Terminates++
	case iwarp.OpSend, iwarp.OpSendWithInvalidate, iwarp.OpSendWithSE, iwarp.OpSendWithSEAndInvalidate:
		hf := &s.half[h]
		held := hf.reasm.Buffered()
		m, _ := hf.reasm.Add(d, uint64(num))
		ie.e.buf.grew(held, hf.reasm.Buffered())
		ctr.Reassembly = hf.reasm.Stats
		if m != nil {
			s.message(h, m, r)
		}
		ie.e.checkBudget()
	}
	if d.L {
		s.half[h].fresh = false
	}
}

// message hands a reassembled Send to the Observer.
func (s *iwStream) message(h int, m *iwarp.Message, r *iwarp.RDMAP) {
	ie := s.ie
	s.info.Dir[h].Messages++
	pk := ie.pkts[:0]
	for _, ref := range m.Refs {
		if n := int(ref); len(pk) == 0 || pk[len(pk)-1] != n {
			pk = append(pk, n)
		}
	}
	ie.pkts = pk
	ie.msg = Message{Conn: s.conn, Dir: dirOfHalf(h), Packets: pk, Data: m.Data, Length: len(m.Data),
		Invalidate: r.Opcode.HasInvalidateSTag(), InvalidatedSTag: r.InvalidateSTag, Time: ie.now}
	ie.e.deliverMessage(s.pkt(h), &ie.msg)
}

// writeSegment follows an RDMA Write: tagged segments of one message share
// the STag and continue each other's TO; the last has L (RFC 5041 section
// 4.3, RFC 5040 section 4.3).
func (s *iwStream) writeSegment(h int, d *iwarp.DDP, num int) {
	defer s.ie.e.checkBudget() // after the operation is settled (budget.go)
	ie := s.ie
	hf := &s.half[h]
	var op *iwOp
	for _, w := range hf.writes {
		if w.sinkSTag == d.STag && (w.next == d.TO || w.broken && w.continues(d.TO)) {
			op = w
			break
		}
	}
	if op == nil {
		if len(hf.writes) >= iwarpMaxWrites {
			s.giveUp(hf.writes[0])
			hf.writes = append(hf.writes[:0], hf.writes[1:]...)
		}
		op = ie.newOp()
		op.kind, op.dir = RDMAWrite, dirOfHalf(h)
		op.stag, op.to, op.sinkSTag, op.next = d.STag, d.TO, d.STag, d.TO
		op.broken = hf.fresh
		op.start = ie.now
		hf.writes = append(hf.writes, op)
		s.info.Dir[h].Writes++
	}
	op.addPacket(num)
	op.skipTo(d.TO)
	op.addData(d.Data, s.ie.maxMsg, &s.ie.e.buf)
	if o := s.conn.dataObserver(); o != nil && !op.broken && d.TO >= op.to {
		if p := s.pkt(h); p != nil {
			// The segment's part, at its TO (RFC 5041 section 4.3).
			rd := &ie.data
			*rd = RDMAData{Kind: RDMAWrite, Conn: s.conn, Dir: op.dir, STag: d.STag, Offset: op.to, At: d.TO - op.to, Data: d.Data}
			o.RDMAData(p, rd)
		}
	}
	op.next += uint64(len(d.Data))
	op.length = uint32(op.next - op.to)
	op.got = op.length
	op.end = ie.now
	if d.L {
		for i, w := range hf.writes {
			if w == op {
				hf.writes = append(hf.writes[:i], hf.writes[i+1:]...)
				break
			}
		}
		s.emit(op, !op.broken)
	}
}

// readRequest queues an RDMA Read Request sent in direction h: the
// responses come back in the other direction, tagged with the Data Sink
// STag, in the order of the requests (RFC 5040 section 5.5, ordering).
func (s *iwStream) readRequest(h int, q *iwarp.ReadRequest, num int) {
	ie := s.ie
	hf := &s.half[h]
	if c := &s.info.Dir[h]; q.RDMAReadMessageSize == 0 && h == 0 && s.info.Negotiated && c.FPDUs == 1 && c.Resyncs == 0 {
		hf.rtr = true
		return
	}
	if len(hf.reads) >= ie.maxReads || len(hf.reads) > 0 && !ie.e.budget().fits(ReadCost) {
		s.giveUp(hf.reads[0])
		hf.reads = append(hf.reads[:0], hf.reads[1:]...)
		ie.readsEnded(1)
	}
	ie.e.buf.grew(0, ReadCost)
	op := ie.newOp()
	op.kind, op.dir = RDMARead, dirOfHalf(h)
	op.stag, op.to, op.length = q.SourceSTag, q.SourceTaggedOffset, q.RDMAReadMessageSize
	op.sinkSTag, op.next, op.sinkTO = q.SinkSTag, q.SinkTaggedOffset, q.SinkTaggedOffset
	op.start, op.end = ie.now, ie.now
	op.addPacket(num)
	hf.reads = append(hf.reads, op)
	s.info.Dir[h].Reads++
}

// readResponse places a Read Response segment of direction h on the
// oldest outstanding Read Request of the other direction it continues.
func (s *iwStream) readResponse(h int, d *iwarp.DDP, num int) {
	defer s.ie.e.checkBudget() // after the operation is settled (budget.go)
	rq := &s.half[1-h]
	if rq.rtr && d.L && len(d.LayerPayload()) == 0 && len(rq.reads) == 0 {
		rq.rtr = false // the answer to the RTR
		return
	}
	i := -1
	for k, op := range rq.reads {
		if op.sinkSTag == d.STag && (op.next == d.TO || op.broken && op.continues(d.TO)) {
			i = k
			break
		}
	}
	if i < 0 {
		if d.L {
			ctr := &s.info.Dir[h]
			ctr.UnmatchedResponses++
			if len(ctr.UnmatchedPackets) < iwarpMaxReadFaults && num > 0 {
				ctr.UnmatchedPackets = append(ctr.UnmatchedPackets, num)
			}
		}
		return
	}
	// Responses come in request order: earlier requests were answered
	// where the capture cannot show it, or not at all.
	for _, op := range rq.reads[:i] {
		if op.got == 0 {
			s.unanswered(1-h, op)
		}
		s.giveUp(op)
	}
	s.ie.readsEnded(i)
	op := rq.reads[i]
	rq.reads = append(rq.reads[:0], rq.reads[i+1:]...)
	op.addPacket(num)
	op.skipTo(d.TO)
	op.addData(d.Data, s.ie.maxMsg, &s.ie.e.buf)
	op.next += uint64(len(d.Data))
	op.got = uint32(op.next - op.sinkTO)
	op.end = s.ie.now
	if op.got > op.length {
		op.broken = true
	}
	if d.L {
		s.ie.readsEnded(1)
		s.emit(op, !op.broken && op.got == op.length)
		return
	}
	// Not done: back at the front of the queue.
	rq.reads = append(rq.reads, nil)
	copy(rq.reads[1:], rq.reads)
	rq.reads[0] = op
}

// unanswered counts a Read Request of direction h that no response
// answered.
func (s *iwStream) unanswered(h int, op *iwOp) {
	ctr := &s.info.Dir[h]
	ctr.UnansweredReads++
	if len(ctr.UnansweredPackets) < iwarpMaxReadFaults && len(op.packets) > 0 {
		ctr.UnansweredPackets = append(ctr.UnansweredPackets, op.packets[0])
	}
}

// giveUp hands out an operation that will not complete.
func (s *iwStream) giveUp(op *iwOp) { s.emit(op, false) }

// emit hands an operation to the Observer and recycles it.
func (s *iwStream) emit(op *iwOp, complete bool) {
	ie := s.ie
	if !complete {
		s.info.Dir[op.dir.Index()].OpsIncomplete++
	}
	o := &ie.op
	*o = RDMAOp{Kind: op.kind, Conn: s.conn, Dir: op.dir, STag: op.stag, Offset: op.to, Length: op.length,
		Packets: op.packets, Complete: complete, Start: op.start, End: op.end}
	if !op.cut {
		o.Data = op.data
	}
	ie.e.deliverRDMAOp(s.pkt(s.opHalf(op)), o)
	ie.freeOp(op)
}

// opHalf is the direction whose segment completes an operation: a Write's
// own, a Read's responses' (the other way from its request).
func (s *iwStream) opHalf(op *iwOp) int {
	if op.kind == RDMARead {
		return 1 - op.dir.Index()
	}
	return op.dir.Index()
}
