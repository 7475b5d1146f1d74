package dissect

import (
	"sort"
	"time"
)

// This file holds the exchange bookkeeping every request/response ULP
// repeats on the seam (ulp/nvmeof, ulp/iser, ulp/smbdirect): the records
// of a packet's Sends, the open requests by key with their order, a pool
// of request records, the RDMA attach with its byte accounting, and the
// per-name statistics of the exchanges. None of it allocates in steady
// state (each session's TestSessionAllocatesNothingInSteadyState).

// ExchangeStats sum up the exchanges of one name (an opcode, an SMB2
// command): how many, how many answered in error, the bytes they moved,
// and the latency of the answered ones. A ULP's table of them is a
// map[string]*ExchangeStats (or of its own type embedding ExchangeStats,
// to add fields), filled by StatsFor, Ended and Answered; the JSON keys are
// a contract of analyze's per-connection ULP objects.
type ExchangeStats struct {
	Count  uint64 `json:"count"`
	Errors uint64 `json:"errors"`
	// Bytes are the bytes the exchanges moved (what is counted is the
	// ULP's: RDMA, in-capsule or immediate data).
	Bytes uint64 `json:"bytes"`
	// Latency, request to response, of the answered (Completed) ones.
	Completed    uint64        `json:"completed"`
	LatencyTotal time.Duration `json:"-"`
	LatencyMaxNS int64         `json:"latency_max_ns"`
	LatencyAvgNS int64         `json:"latency_avg_ns"`
}

// Stats returns s (a ULP's type embedding ExchangeStats has it too).
func (s *ExchangeStats) Stats() *ExchangeStats { return s }

// Ended counts one exchange that moved bytes, answered or not.
func (s *ExchangeStats) Ended(bytes uint64) {
	s.Count++
	s.Bytes += bytes
}

// Answered counts the response of an exchange, after latency, with
// success or not.
func (s *ExchangeStats) Answered(latency time.Duration, ok bool) {
	s.Completed++
	s.LatencyTotal += latency
	s.LatencyMaxNS = max(s.LatencyMaxNS, latency.Nanoseconds())
	s.LatencyAvgNS = (s.LatencyTotal / time.Duration(s.Completed)).Nanoseconds()
	if !ok {
		s.Errors++
	}
}

// StatsFor returns the statistics of name in *table, making the table and
// the entry on first use.
func StatsFor[S any, P interface {
	*S
	Stats() *ExchangeStats
}](table *map[string]P, name string) P {
	st := (*table)[name]
	if st == nil {
		if *table == nil {
			*table = map[string]P{}
		}
		st = P(new(S))
		(*table)[name] = st
	}
	return st
}

// CountError counts one response of status in *errors (made on first
// use): a connection's errors by status.
func CountError(errors *map[string]uint64, status string) {
	if *errors == nil {
		*errors = map[string]uint64{}
	}
	(*errors)[status]++
}

// Moved is what RDMA operations moved: by RDMA Read and by RDMA Write. A
// connection's summary embeds it (JSON read_bytes, write_bytes).
type Moved struct {
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
}

// Add counts op's bytes.
func (v *Moved) Add(op *RDMAOp) {
	if op.Kind == RDMARead {
		v.ReadBytes += uint64(op.Length)
	} else {
		v.WriteBytes += uint64(op.Length)
	}
}

// OpsMoved is what the RDMA operations attached to one request moved, and
// how many they were (Ops). A ULP's request record embeds it.
type OpsMoved struct {
	Moved
	Ops int
}

// Attached returns t (a request type embedding OpsMoved has it too).
func (t *OpsMoved) Attached() *OpsMoved { return t }

// Request is a ULP's request record as Attach needs it: comparable (the
// Memory's owner type) and counting what its RDMA moved.
type Request interface {
	comparable
	Attached() *OpsMoved
}

// Attach attaches op to the outstanding request whose advertised region it
// moved bytes of (Memory.Find), and accounts its bytes to that request and
// to conn; when none explains it, it counts op in *unattached and sets
// op.Attach to why (Memory.Unattached). It reports the request and region
// found.
func Attach[O Request](m *Memory[O], op *RDMAOp, conn *Moved, unattached *uint64) (RegionRef[O], bool) {
	ref, ok := m.Find(op)
	if !ok {
		*unattached++
		// Why none, the same way for every ULP (capture loss included).
		op.Attach = m.Unattached(op)
		return ref, false
	}
	op.Attach = OpAttachment{Owner: ref.Owner, I: int(ref.I), J: int(ref.J)}
	t := ref.Owner.Attached()
	t.Ops++
	t.Add(op)
	conn.Add(op)
	return ref, true
}

// Records are the records a session makes of the Sends one packet
// completed (Message.ULP, Packet.ULP): each stays valid until the next
// packet, and is reused then. The zero value is ready to use.
type Records[R any] struct {
	scratch R // for a Send with no packet (the end of the input)
	recs    []*R
	n, pkt  int
}

// Next returns the record for the next Send of packet p (nil: the scratch
// record) and files it in m.ULP and p.ULP. Its old contents are the
// caller's to reset (keep the storage worth keeping).
func (rs *Records[R]) Next(p *Packet, m *Message) *R {
	r := rs.next(p)
	m.ULP = r
	if p != nil {
		p.ULP = append(p.ULP, r)
	}
	return r
}

func (rs *Records[R]) next(p *Packet) *R {
	if p == nil {
		return &rs.scratch
	}
	if p.Number != rs.pkt {
		rs.pkt, rs.n = p.Number, 0
	}
	if rs.n == len(rs.recs) {
		rs.recs = append(rs.recs, new(R))
	}
	r := rs.recs[rs.n]
	rs.n++
	return r
}

// NewPacket reports whether p is not the packet of the last record (a
// packet that completes several Sends hands them out one by one).
func (rs *Records[R]) NewPacket(p *Packet) bool { return p == nil || p.Number != rs.pkt }

// Pool keeps a session's request records for reuse: a record ended
// (Done) while the current Send is handed out may still be pointed at by
// that Send's record, so it is free again only from the next Send on
// (Recycle). The zero value is ready to use.
type Pool[T any] struct{ free, done []*T }

// Get returns a zeroed record.
func (p *Pool[T]) Get() *T {
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		var zero T
		*t = zero
		return t
	}
	return new(T)
}

// Done gives t back, free from the next Recycle on.
func (p *Pool[T]) Done(t *T) { p.done = append(p.done, t) }

// Recycle frees the records given back since the last call.
func (p *Pool[T]) Recycle() {
	p.free = append(p.free, p.done...)
	clear(p.done)
	p.done = p.done[:0]
}

// Outstanding are a session's open requests by key (RPC XID, NVMe CID,
// iSCSI ITT, SMB2 MessageId), in the order they came. The zero value is
// ready to use.
type Outstanding[K comparable, T any] struct {
	m   map[K]Open[T]
	seq uint64
}

// Open is one open request (Req) and when it was opened.
type Open[T any] struct {
	Req *T
	seq uint64
}

// Get returns the open request with key k (nil when none).
func (o *Outstanding[K, T]) Get(k K) *T { return o.m[k].Req }

// Put opens t under key k (replacing any with k: Delete it first).
func (o *Outstanding[K, T]) Put(k K, t *T) {
	if o.m == nil {
		o.m = map[K]Open[T]{}
	}
	o.seq++
	o.m[k] = Open[T]{t, o.seq}
}

// Delete closes the request with key k.
func (o *Outstanding[K, T]) Delete(k K) { delete(o.m, k) }

// Len is the number of open requests.
func (o *Outstanding[K, T]) Len() int { return len(o.m) }

// Oldest returns the request opened first of those open (nil when none).
func (o *Outstanding[K, T]) Oldest() *T {
	var best Open[T]
	for _, e := range o.m {
		if best.Req == nil || e.seq < best.seq {
			best = e
		}
	}
	return best.Req
}

// InOrder returns the open requests in the order they came (a copy: the
// caller may end them as it goes).
func (o *Outstanding[K, T]) InOrder() []Open[T] {
	es := make([]Open[T], 0, len(o.m))
	for _, e := range o.m {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	return es
}

// Full reports whether a session with open exchanges open may not open
// one more: past MaxExchanges, or the buffer budget has no room for it.
// The session ends its oldest (Evicted) while it is.
func (e *Env) Full(open int) bool {
	return open > 0 && (e.MaxExchanges > 0 && open >= e.MaxExchanges || e.Budget != nil && !e.Budget.ExchangeFits())
}

// Opened accounts one exchange opened in the buffer budget; Closed one
// ended.
func (e *Env) Opened() {
	if e.Budget != nil {
		e.Budget.Opened()
	}
}

// Closed: see Opened.
func (e *Env) Closed() {
	if e.Budget != nil {
		e.Budget.Closed()
	}
}

// End hands an ended exchange to the observers.
func (e *Env) End(x *Exchange) {
	if e.Exchange != nil {
		e.Exchange(x)
	}
}
