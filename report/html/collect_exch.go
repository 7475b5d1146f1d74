package html

import (
	"time"

	"github.com/rdmashark/rdmashark/dissect"
)

// The protocol-neutral ladder (issues 26 and 32: "a ladder per queue" for
// NVMe/RDMA, "report ladders" for SMB Direct, iSER and SRP) is drawn from
// the engine's own records, as every ULP on the seam hands them out: each
// exchange when it is over (dissect.Exchange: its request and response
// packets, name, status, latency, bytes, the STag its response
// invalidated), the RDMA operations its ULP session attached to it
// (RDMAOp.Attach.Owner, which is the exchange's Detail: each ULP hands
// its request record as both), the operations none explains, and the
// Sends that are no exchange's request or response (a ULP's negotiation,
// credit grants, keep-alives, fragments). It knows no ULP: names, statuses
// and keys are the exchanges' own (the key written by the format its ULP
// registered with fields.RegisterExchangeKey).
//
// Everything it keeps is bounded per connection: the first MaxDetail
// exchanges to end are drawn, the rest counted by signature; at most
// maxOpsPerExchange operations of one exchange are drawn, the rest
// counted under it; at most MaxDetail other Sends and MaxDetail
// unattached operations are drawn.

// maxOpsPerExchange bounds the RDMA operations drawn under one exchange.
const maxOpsPerExchange = 64

// exchRec is an exchange as the ladder keeps it. Its strings are the
// engine's (the ULPs' tables of names and statuses): no copy per record.
type exchRec struct {
	name, status string
	key          uint64
	init         dissect.Direction
	outcome      dissect.Outcome
	hasStatus    bool
	ok           bool
	invalidated  bool
	stag         uint32
	// req and resp are the packets the request and the response were
	// decoded in (the last packet of their Sends; 0: not in the capture);
	// reqFirst and respFirst the first packets of those Sends, when the
	// collector saw them (else equal to req and resp).
	req, resp           int
	reqFirst, respFirst int
	reqTime, respTime   time.Duration // since the capture's first packet
	latency             time.Duration
	read, write         uint64
	ops                 []opRec
	// opsCut counts the operations attached past maxOpsPerExchange, and
	// opsCutBytes what they moved.
	opsCut      int
	opsCutBytes uint64
}

// opRec is an RDMA operation as the ladder keeps it.
type opRec struct {
	kind        dissect.RDMAOpKind
	dir         dissect.Direction // the request's (RDMAOp.Dir)
	stag        uint32
	offset      uint64
	length      uint32
	first, last int
	complete    bool
	time        time.Duration
	reason      dissect.UnattachedReason
}

// sendRec is a Send that no exchange claimed (yet).
type sendRec struct {
	dir         dissect.Direction
	first, last int
	length      int
	inv         bool
	stag        uint32
	time        time.Duration
	claimed     bool
}

// claimKey is a Send by the packet that completed it and its direction.
type claimKey struct {
	pkt int
	dir dissect.Direction
}

// exchData is what a connection's neutral ladder holds.
type exchData struct {
	ulp string
	// recs are the exchanges drawn; cut counts the others, by signature
	// in cutSigs (first seen order in cutOrder).
	recs     []exchRec
	cut      uint64
	cutSigs  map[string]uint64
	cutOrder []string
	// Totals over every exchange of the connection, drawn or not: the
	// ladder's data attributes (TestLadderMatchesExchanges holds them to
	// `exchanges --format json`).
	total       uint64
	read, write uint64
	// ops counts the RDMA operations the ULP session attached to an
	// exchange; unattached those it did not.
	ops, unattached uint64
	// assoc is the association the exchanges named (NVMe/RDMA: the
	// controller), the last one seen.
	assoc *dissect.Association
	// inits counts the exchanges by the direction of their request.
	inits [2]uint64
}

// sendsData are the connection's Sends and operations that may be no
// exchange's: kept from the connection's first ULP record on, before the
// first exchange ends (collected while the connection's mode is unknown).
type sendsData struct {
	// pending are the operations attached to a request not over yet, by
	// its record (RDMAOp.Attach.Owner).
	pending  map[any][]opRec
	nPending int
	// sends are Sends no exchange claimed yet (at most MaxDetail), with
	// their index by claimKey; sendsCut counts those not kept.
	sends    []sendRec
	sendIdx  map[claimKey]int
	sendsCut uint64
	// nClaimed counts the claimed Sends still in sends (compact drops
	// them).
	nClaimed int
	// claims are the responses of exchanges that ended before their
	// Send reached the observer (the session ends the exchange first):
	// the index of the exchange's record, -1 when it is not drawn.
	claims map[claimKey]int
	// loose are the operations no exchange explains (at most MaxDetail);
	// looseCut counts the rest.
	loose    []opRec
	looseCut uint64
	// pendingCut counts, by request, the operations past maxPendingOps
	// (counted when their exchange ends, not drawn); unattachedEarly the
	// unattached operations before the connection's first exchange.
	pendingCut      map[any]uint64
	unattachedEarly uint64
}

// full: the connection's ladder has drawn MaxDetail exchanges already, and
// draws nothing after them.
func (cd *connData) full(max int) bool { return cd.exch != nil && len(cd.exch.recs) >= max }

// compact drops the claimed Sends.
func (s *sendsData) compact() {
	n := 0
	clear(s.sendIdx)
	for _, r := range s.sends {
		if r.claimed {
			continue
		}
		s.sends[n] = r
		if _, dup := s.sendIdx[claimKey{r.last, r.dir}]; !dup {
			s.sendIdx[claimKey{r.last, r.dir}] = n
		}
		n++
	}
	s.sends = s.sends[:n]
	s.nClaimed = 0
}

// maxPendingOps bounds the operations held for requests not over yet,
// per connection (a request's are at most the ULP's bound of open
// exchanges times its segments: past this they are counted, not drawn).
const maxPendingOps = 1 << 14

// Observe returns an Observer for dissect.Options.Observer (or a check
// runner's Config.Next) that records the RDMA operations and Sends the
// neutral ladder draws, then hands everything to next (which may be nil).
// It forwards ConnectionDone and ConnectionForgotten to next when next has
// them. The exchanges come by dissect.Options.Exchange: set it to
// Exchange.
func (c *Collector) Observe(next dissect.Observer) dissect.Observer {
	return &observer{c: c, next: next}
}

type observer struct {
	c    *Collector
	next dissect.Observer
}

func (o *observer) Message(m *dissect.Message) {
	o.c.message(m)
	if o.next != nil {
		o.next.Message(m)
	}
}

func (o *observer) RDMAOp(op *dissect.RDMAOp) {
	o.c.rdmaOp(op)
	if o.next != nil {
		o.next.RDMAOp(op)
	}
}

func (o *observer) ConnectionDone(dc *dissect.Connection) {
	o.c.connectionDone(dc)
	if n, ok := o.next.(dissect.ConnObserver); ok {
		n.ConnectionDone(dc)
	}
}

func (o *observer) ConnectionForgotten(dc *dissect.Connection) {
	if n, ok := o.next.(dissect.ConnForgetter); ok {
		n.ConnectionForgotten(dc)
	}
}

// rel is t as a time since the capture's first packet (Packet.RelTime).
func (c *Collector) rel(t time.Time) time.Duration {
	if c.t0.IsZero() || t.IsZero() {
		return 0
	}
	return t.Sub(c.t0)
}

// ulpConn returns the connection's data when its ladder may be the neutral
// one: it is drawn and no RPC transaction drew it.
func (c *Collector) ulpConn(dc *dissect.Connection) *connData {
	if dc == nil {
		return nil
	}
	cd := c.conns[dc.ID]
	if cd == nil {
		cd = c.conn(dc)
	}
	if cd == nil || cd.txns.Len() > 0 || cd.txnsOmitted > 0 {
		return nil
	}
	return cd
}

// message records a Send of a ULP's connection that no exchange claimed.
func (c *Collector) message(m *dissect.Message) {
	if m.ULP == nil || len(m.Packets) == 0 {
		// No ULP session made a record of it: its connection carries no
		// ULP, and its ladder draws packets.
		return
	}
	cd := c.ulpConn(m.Conn)
	if cd == nil {
		return
	}
	s := cd.sendsData()
	k := claimKey{dissect.LastPacket(m.Packets), m.Dir}
	first := dissect.FirstPacket(m.Packets)
	if i, ok := s.claims[k]; ok {
		// The response of an exchange that ended already.
		delete(s.claims, k)
		if i >= 0 && cd.exch != nil && i < len(cd.exch.recs) {
			cd.exch.recs[i].respFirst = first
		}
		return
	}
	if s.sendIdx == nil {
		s.sendIdx = map[claimKey]int{}
	}
	if len(s.sends) >= c.opts.MaxDetail && s.nClaimed > 0 && !cd.full(c.opts.MaxDetail) {
		s.compact()
	}
	if len(s.sends) >= c.opts.MaxDetail || cd.full(c.opts.MaxDetail) {
		s.sendsCut++
		return
	}
	if _, dup := s.sendIdx[k]; !dup {
		s.sendIdx[k] = len(s.sends)
	}
	s.sends = append(s.sends, sendRec{dir: m.Dir, first: first, last: k.pkt, length: m.Length,
		inv: m.Invalidate, stag: m.InvalidatedSTag, time: c.rel(m.Time)})
}

func opOf(op *dissect.RDMAOp, rel time.Duration) opRec {
	r := opRec{kind: op.Kind, dir: op.Dir, stag: op.STag, offset: op.Offset, length: op.Length,
		complete: op.Complete, time: rel, reason: op.Attach.Reason}
	if len(op.Packets) > 0 {
		r.first, r.last = op.Packets[0], op.Packets[0]
		for _, p := range op.Packets {
			r.first, r.last = min(r.first, p), max(r.last, p)
		}
	}
	return r
}

// rdmaOp records an RDMA operation: under the request it served until
// that exchange ends, or as one no exchange explains.
func (c *Collector) rdmaOp(op *dissect.RDMAOp) {
	a := &op.Attach
	// Reason UnattachedNoULP: no ULP session looked at it (none has the
	// connection, or not yet): kept too, in case the connection's ladder
	// is the neutral one (an SRP target's zero-length RDMA Write before
	// the channel's first Send).
	cd := c.ulpConn(op.Conn)
	if cd == nil {
		return
	}
	s := cd.sendsData()
	if a.Reason != dissect.Attached || a.Owner == nil {
		if cd.exch != nil {
			cd.exch.unattached++
		} else {
			s.unattachedEarly++
		}
		if len(s.loose) >= c.opts.MaxDetail || cd.full(c.opts.MaxDetail) {
			s.looseCut++
			return
		}
		s.loose = append(s.loose, opOf(op, c.rel(op.Start)))
		return
	}
	if s.pending == nil {
		s.pending = map[any][]opRec{}
	}
	if s.nPending >= maxPendingOps || cd.full(c.opts.MaxDetail) {
		// Counted when its exchange ends, not drawn.
		s.pendingCut[a.Owner]++
		return
	}
	s.nPending++
	s.pending[a.Owner] = append(s.pending[a.Owner], opOf(op, c.rel(op.Start)))
}

// Exchange records an exchange of any ULP when it is over (set
// dissect.Options.Exchange to it): in its connection's ladder while the
// connection has fewer than MaxDetail, else in the connection's folded
// count of its signature. The connections whose ladder draws RPC
// transactions (Transaction) ignore it.
func (c *Collector) Exchange(x *dissect.Exchange) {
	cd := c.ulpConn(x.Conn)
	if cd == nil {
		return
	}
	cd.dropEvents()
	e := cd.exch
	if e == nil {
		e = &exchData{ulp: x.ULP, cutSigs: map[string]uint64{}}
		cd.exch = e
		s := cd.sendsData()
		e.unattached, s.unattachedEarly = s.unattachedEarly, 0
	}
	s := cd.sendsData()
	e.total++
	e.read += x.ReadBytes
	e.write += x.WriteBytes
	e.inits[x.Initiator.Index()]++
	if a := x.Association; a != nil && (e.assoc == nil || *e.assoc != *a) {
		cp := *a
		e.assoc = &cp
	}
	var ops []opRec
	if x.Detail != nil {
		ops = s.pending[x.Detail]
		delete(s.pending, x.Detail)
		s.nPending -= len(ops)
		if n, ok := s.pendingCut[x.Detail]; ok {
			e.ops += n
			delete(s.pendingCut, x.Detail)
		}
	}
	e.ops += uint64(len(ops))
	// Claim the Sends of the request and the response: they are drawn as
	// the exchange's, not as Sends of their own.
	respDir := x.Initiator.Opposite()
	req := claimKey{x.RequestPacket, x.Initiator}
	resp := claimKey{x.ResponsePacket, respDir}
	reqFirst, respFirst := x.RequestPacket, x.ResponsePacket
	if x.RequestPacket != 0 {
		if i, ok := s.sendIdx[req]; ok {
			reqFirst = s.sends[i].first
			s.claim(i)
		}
	}
	respSeen := false
	if x.ResponsePacket != 0 {
		if i, ok := s.sendIdx[resp]; ok {
			respFirst = s.sends[i].first
			s.claim(i)
			respSeen = true
		}
	}
	idx := -1
	if len(e.recs) < c.opts.MaxDetail {
		r := exchRec{name: x.Name, key: x.Key, init: x.Initiator, outcome: x.Outcome, invalidated: x.Invalidated,
			stag: x.InvalidatedSTag, req: x.RequestPacket, resp: x.ResponsePacket, reqFirst: reqFirst, respFirst: respFirst,
			reqTime: c.rel(x.RequestTime), respTime: c.rel(x.ResponseTime), latency: x.Latency, read: x.ReadBytes, write: x.WriteBytes}
		if x.Status != "" {
			r.status, r.hasStatus, r.ok = x.Status, true, x.OK
		}
		for i := range ops {
			if len(r.ops) >= maxOpsPerExchange {
				r.opsCut++
				r.opsCutBytes += uint64(ops[i].length)
				continue
			}
			r.ops = append(r.ops, ops[i])
		}
		idx = len(e.recs)
		e.recs = append(e.recs, r)
	} else {
		e.cut++
		sig := exchSignature(x.Name, x.Invalidated, x.Status, x.OK, x.Outcome)
		if _, ok := e.cutSigs[sig]; !ok {
			if len(e.cutSigs) >= maxSignatures {
				sig = "other"
			}
			if _, ok := e.cutSigs[sig]; !ok {
				e.cutOrder = append(e.cutOrder, sig)
			}
		}
		e.cutSigs[sig]++
	}
	if x.ResponsePacket != 0 && !respSeen {
		// The session ended the exchange on its response's Send, which
		// reaches the observer next.
		if s.claims == nil {
			s.claims = map[claimKey]int{}
		}
		if len(s.claims) >= maxPendingOps {
			clear(s.claims)
		}
		s.claims[resp] = idx
	}
}

// claim takes Send i out of the unclaimed ones.
func (s *sendsData) claim(i int) {
	r := &s.sends[i]
	if r.claimed {
		return
	}
	r.claimed = true
	s.nClaimed++
	k := claimKey{r.last, r.dir}
	if s.sendIdx[k] == i {
		delete(s.sendIdx, k)
	}
}

// sendsData returns the connection's sendsData, made on first use.
func (cd *connData) sendsData() *sendsData {
	if cd.sends == nil {
		cd.sends = &sendsData{pendingCut: map[any]uint64{}}
	}
	return cd.sends
}

// connectionDone lets go of what a released connection held for requests
// that will not end any more.
func (c *Collector) connectionDone(dc *dissect.Connection) {
	if cd := c.conns[dc.ID]; cd != nil && cd.sends != nil {
		s := cd.sends
		s.pending, s.nPending, s.claims, s.sendIdx = nil, 0, nil, nil
		clear(s.pendingCut)
	}
}

// exchSignature is what folds repeated exchanges together: the name, a
// response by Send With Invalidate, a status that is not a success, an
// outcome other than a response.
func exchSignature(name string, inv bool, status string, ok bool, o dissect.Outcome) string {
	s := name
	if s == "" {
		s = "(request not in the capture)"
	}
	if inv {
		s += ", Send With Invalidate"
	}
	if status != "" && !ok {
		s += ", " + status
	}
	if o != dissect.Responded {
		s += ", " + o.String()
	}
	return s
}
