package iwarp

import "errors"

// ErrTaggedSegment is returned by Reassembler.Add for a tagged segment:
// tagged data is placed, not reassembled into messages.
var ErrTaggedSegment = errors.New("iwarp: tagged DDP segment offered to the untagged message reassembler")

// ReassemblerConfig bounds a Reassembler.
type ReassemblerConfig struct {
	// MaxMessageBytes is the largest message kept; longer ones are dropped
	// and counted in Stats.TooLong. 0 means 1 MiB.
	MaxMessageBytes int
	// MaxInProgress is how many incomplete messages are kept; beyond it the
	// oldest is dropped and counted in Stats.Evicted. 0 means 64.
	MaxInProgress int
}

// ReassemblyStats counts what a Reassembler did and what its limits cut.
type ReassemblyStats struct {
	Segments   uint64 // untagged segments offered
	Messages   uint64 // complete messages returned
	TooLong    uint64 // messages dropped for MaxMessageBytes
	Evicted    uint64 // incomplete messages dropped for MaxInProgress
	Gaps       uint64 // messages dropped because a segment before MO was missing
	Duplicates uint64 // segments ignored because their octets were already received
	Tagged     uint64 // tagged segments refused
	Cut        uint64 // messages in progress dropped by DropLargest
}

// Message is a complete untagged DDP message: the DDP payloads of its
// segments in MO order, and the references the caller gave with each.
type Message struct {
	QN   uint32
	MSN  uint32
	Data []byte
	Refs []uint64
}

type partialMessage struct {
	qn, msn uint32
	data    []byte
	refs    []uint64
	dropped bool // a limit or a gap cut it; swallow segments until L
	age     uint64
}

// Reassembler puts untagged DDP messages (Sends, RDMA Read Requests,
// Terminates) back together from their segments, for one DDP stream
// direction: segments of one message share QN and MSN, carry their place in
// MO, and the last has L set (RFC 5041 section 5). TCP delivers
// a message's segments in order, so a segment whose MO does not continue
// the message means one was lost; the message is dropped and counted.
// Memory is bounded by MaxMessageBytes * MaxInProgress; buffers are reused,
// so steady state does not allocate.
type Reassembler struct {
	cfg     ReassemblerConfig
	parts   []*partialMessage
	free    []*partialMessage
	out     Message
	outPart *partialMessage
	ref1    [1]uint64
	clock   uint64
	Stats   ReassemblyStats
}

// NewReassembler returns a Reassembler bounded by cfg.
func NewReassembler(cfg ReassemblerConfig) *Reassembler {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 1 << 20
	}
	if cfg.MaxInProgress <= 0 {
		cfg.MaxInProgress = 64
	}
	return &Reassembler{cfg: cfg}
}

// InProgress returns the number of incomplete messages held.
func (r *Reassembler) InProgress() int { return len(r.parts) }

// Add offers one untagged DDP segment (d decoded from it) with a reference
// the caller chooses (packet number, FPDU index). When the segment completes
// a message, Add returns it; the Message and its slices are valid until the
// next Add. A message of one segment is returned without copying.
func (r *Reassembler) Add(d *DDP, ref uint64) (*Message, error) {
	if r.outPart != nil {
		r.release(r.outPart)
		r.outPart = nil
	}
	if d.T {
		r.Stats.Tagged++
		return nil, ErrTaggedSegment
	}
	r.Stats.Segments++
	i := r.find(d.QN, d.MSN)
	if i < 0 {
		if d.MO == 0 && d.L {
			if len(d.Data) > r.cfg.MaxMessageBytes {
				r.Stats.TooLong++
				return nil, nil
			}
			r.ref1[0] = ref
			r.out = Message{QN: d.QN, MSN: d.MSN, Data: d.Data, Refs: r.ref1[:]}
			r.Stats.Messages++
			return &r.out, nil
		}
		i = r.start(d.QN, d.MSN)
		if d.MO != 0 {
			// The message's first segment is missing.
			r.Stats.Gaps++
			r.parts[i].dropped = true
		}
	}
	p := r.parts[i]
	if !p.dropped {
		have := len(p.data)
		switch {
		case int64(d.MO) < int64(have):
			r.Stats.Duplicates++
			return nil, nil
		case int64(d.MO) > int64(have):
			r.Stats.Gaps++
			p.dropped = true
		case have+len(d.Data) > r.cfg.MaxMessageBytes:
			r.Stats.TooLong++
			p.dropped = true
		default:
			p.data = grow(p.data, len(d.Data), r.cfg.MaxMessageBytes)
			p.data = append(p.data, d.Data...)
			p.refs = append(p.refs, ref)
		}
	}
	if !d.L {
		return nil, nil
	}
	r.remove(i)
	if p.dropped {
		r.release(p)
		return nil, nil
	}
	r.out = Message{QN: p.qn, MSN: p.msn, Data: p.data, Refs: p.refs}
	r.outPart = p
	r.Stats.Messages++
	return &r.out, nil
}

// grow makes room for n more octets without letting capacity run far past max.
func grow(b []byte, n, max int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := 2 * cap(b)
	if c > max {
		c = max
	}
	if c < need {
		c = need
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

func (r *Reassembler) find(qn, msn uint32) int {
	for i, p := range r.parts {
		if p.qn == qn && p.msn == msn {
			return i
		}
	}
	return -1
}

func (r *Reassembler) start(qn, msn uint32) int {
	if len(r.parts) >= r.cfg.MaxInProgress {
		oldest := 0
		for i, p := range r.parts {
			if p.age < r.parts[oldest].age {
				oldest = i
			}
		}
		p := r.parts[oldest]
		r.remove(oldest)
		r.release(p)
		r.Stats.Evicted++
	}
	var p *partialMessage
	if n := len(r.free); n > 0 {
		p = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		p = &partialMessage{}
	}
	r.clock++
	p.qn, p.msn, p.dropped, p.age = qn, msn, false, r.clock
	p.data = p.data[:0]
	p.refs = p.refs[:0]
	r.parts = append(r.parts, p)
	return len(r.parts) - 1
}

func (r *Reassembler) remove(i int) {
	last := len(r.parts) - 1
	r.parts[i] = r.parts[last]
	r.parts[last] = nil
	r.parts = r.parts[:last]
}

// Reset drops the messages in progress and zeroes Stats, to reuse the
// Reassembler for another stream; its buffers are kept.
func (r *Reassembler) Reset() {
	if r.outPart != nil {
		r.release(r.outPart)
		r.outPart = nil
	}
	for _, p := range r.parts {
		r.release(p)
	}
	clear(r.parts)
	r.parts = r.parts[:0]
	r.Stats = ReassemblyStats{}
}

// Buffered returns the capacity of the buffers the Reassembler holds, in
// octets: those of the messages in progress, of the last message returned,
// and those kept for reuse.
func (r *Reassembler) Buffered() int {
	n := 0
	for _, p := range r.parts {
		n += cap(p.data)
	}
	for _, p := range r.free {
		n += cap(p.data)
	}
	if r.outPart != nil {
		n += cap(r.outPart.data)
	}
	return n
}

// Largest returns the buffer capacity of its largest message in progress
// (0 when none holds a buffer).
func (r *Reassembler) Largest() int {
	n := 0
	for _, p := range r.parts {
		n = max(n, cap(p.data))
	}
	return n
}

// DropLargest drops the largest message in progress, as a limit does: its
// buffer is let go and its remaining segments are ignored up to its last
// (Stats.Cut counts it). For a bound on memory shared by many Reassemblers.
func (r *Reassembler) DropLargest() {
	best := -1
	for i, p := range r.parts {
		if cap(p.data) > 0 && (best < 0 || cap(p.data) > cap(r.parts[best].data)) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	p := r.parts[best]
	p.dropped, p.data, p.refs = true, nil, nil
	r.Stats.Cut++
}

// FreeSpare lets go of the buffers kept for reuse (and of the last
// message returned: call it after that message has been used).
func (r *Reassembler) FreeSpare() {
	for _, p := range r.free {
		p.data = nil
	}
	if r.outPart != nil {
		r.outPart.data = nil
	}
}

func (r *Reassembler) release(p *partialMessage) {
	if len(r.free) < r.cfg.MaxInProgress {
		r.free = append(r.free, p)
	}
}
