package dissect

import (
	"time"

	"github.com/rdmashark/rdmashark/pvtdata"
)

// Releasing finished connections: however long the input runs, the engine
// holds state only for live connections, plus a compact summary (the
// Connection) of each finished one, and the number of summaries is bounded.
//
// A connection is closed by
//   - RoCE: the CM DREP answering a DREQ (IBA 12.9.2-12.9.3: the QP stopped
//     sending before the DREQ went), or a REJ (12.6.7);
//   - iWARP: TCP ending both directions as the reassembly sees them in order
//     (a FIN each way), or a RST it accepts (the other direction is then
//     ended too), or a SYN or an MPA Request that starts a new connection on
//     the same 4-tuple.
//
// After the packet that closed it has been processed, the engine
//  1. hands up what the connection's reassembly still holds (a Send without
//     its LAST, RDMA Reads short of responses), as Finish does at the end of
//     the input — shown with no packet — and drops that state;
//  2. ends the connection's open RPC transactions (TxnNoReply: no Reply
//     before the connection ended) and drops its RPC state;
//  3. has already dropped its QP-number entries (ConnTable.close), so a new
//     connection reusing the QPNs is a new connection; an iWARP stream has
//     returned its framers and reassemblers and left gopacket's assembler.
//
// Its CM communication IDs and TCP 4-tuple stay known for the next
// graceConns closes: the messages that trail a close (the second DREQ and
// DREP of a crossing disconnect, as perftest's captures show; a
// retransmitted DREP; the last ACK of a TCP close, a RST answering a RST)
// still count on it, but start nothing. When it leaves that window its keys
// go, no packet reaches it any more, and a ConnObserver hears ConnectionDone.
//
// What stays is the Connection: endpoints, private data, thresholds, the
// counters, IWARPInfo and RPCStats. Options.MaxConnections bounds those
// summaries together with the live connections: a full table forgets its
// oldest released summary (ConnTable.Forgotten, a ConnObserver's
// ConnectionForgotten) before it refuses a new connection
// (ConnTable.Dropped).

// graceConns is how many closed connections stay reachable by their CM
// Comm IDs and TCP 4-tuples.
const graceConns = 16

type relState uint8

const (
	relLive    relState = iota
	relClosing          // closed; its keys lead to it for the next graceConns closes
	relDone             // released: only the summary is left
)

// connRelease is what the tables hold of a connection, to remove it.
type connRelease struct {
	state      relState
	qp         [2]qpKey
	cm         [2]commKey
	nqp, ncm   uint8
	pending    pairKey
	hasPending bool
	// firstByServer: a no-setup connection whose first packet was the
	// server's (its roles as settled: orient.go).
	firstByServer bool
	// unoriented: a no-setup connection whose roles are not settled yet,
	// unorientedPkts of its packets seen so (orient.go).
	unoriented     bool
	unorientedPkts uint8
	awaitREP       bool // in ConnTable.awaitREP, under awaitKey
	awaitKey       pairKey
	dropped        bool      // DropDetail took its detail
	stream         *iwStream // iWARP
	last           time.Time // timestamp of its last packet (IdleTimeout)
}

// Released reports whether the engine is done with c: it was closed and no
// packet reaches it any more (ConnObserver.ConnectionDone was called).
func (c *Connection) Released() bool { return c.rel.state == relDone }

// ConnForgetter is a ConnObserver that also wants to know when a released
// connection's summary leaves the table (ConnTable.Forgotten): it must
// let go of what it keeps of the connection.
type ConnForgetter interface {
	ConnObserver
	ConnectionForgotten(c *Connection)
}

// releaseClosed releases the connections the last packet closed.
func (e *Engine) releaseClosed() {
	t := e.Conns
	for i := 0; i < len(t.closing); i++ {
		c := t.closing[i]
		t.closing[i] = nil
		e.releaseRoCE(c)
		e.closeSession(c)
		t.released(c)
	}
	t.closing = t.closing[:0]
}

// Idle connections. A connection whose close is never captured (the
// capture missed it, a client crashed, an NFS mount that is never
// unmounted goes quiet) would keep its state to the end of an endless
// stream. With Options.IdleTimeout, a live connection that saw no packet
// for that long in capture time — measured by the latest timestamp seen,
// so that packets slightly out of order do not move the clock back — is
// closed as a DREP or FIN would close it and released the same way (its
// reassembly handed up, its open transactions ended, the checks told
// ConnectionDone), with Connection.Idle set. A packet that comes for it
// later starts a new connection (RoCE: a no-setup one on its QPs). The
// connections are looked at every eighth of the timeout, so one goes
// between IdleTimeout and 9/8 of it after its last packet.

// idleClock is the bookkeeping of the idle scan.
type idleClock struct {
	now, next time.Time
	// nowW and nextW are now's and next's wall clocks, compared for every
	// packet (set once init).
	nowW, nextW wallClock
	init        bool
	scans       int
}

// expireIdle releases the connections idle at ts.
func (e *Engine) expireIdle(ts time.Time) {
	k := &e.idle
	if !k.init {
		k.nowW, k.nextW, k.init = wallOf(k.now), wallOf(k.next), true
	}
	if w := wallOf(ts); k.nowW.before(w) {
		k.now, k.nowW = ts, w
	}
	if k.nowW.before(k.nextW) {
		return
	}
	timeout := e.opts.IdleTimeout
	step := timeout / 8
	if step <= 0 {
		step = timeout
	}
	if k.next.IsZero() {
		// The first packet starts the clock.
		k.next = k.now.Add(step)
		k.nextW = wallOf(k.next)
		return
	}
	k.next = k.now.Add(step)
	k.nextW = wallOf(k.next)
	k.scans++
	cutoff := k.now.Add(-timeout)
	t := e.Conns
	if r := e.releaser(); r != nil {
		r.closeIdle(cutoff)
	}
	for _, c := range t.conns {
		if c.rel.state == relLive && c.rel.last.Before(cutoff) && c.rel.stream == nil && c.Transport != TransportIWARP {
			c.Idle = true
			t.close(c)
		}
	}
	if len(t.closing) > 0 {
		e.releaseClosed()
	}
}

// A connReleaser is a sub-tracker that keeps its own per-connection state
// apart from the connection table — the iWARP engine's TCP streams
// (iwarp_budget.go) — and lets the release logic reach it only through
// this.
type connReleaser interface {
	// closeIdle closes the connections it follows that saw no packet
	// since cutoff, marking them Idle.
	closeIdle(cutoff time.Time)
	// release drops what it keeps of c, which left the grace window.
	release(c *Connection)
	// retained adds what it holds to r.
	retained(r *Retained)
}

// releaser is the engine's connReleaser, nil before any TCP packet.
func (e *Engine) releaser() connReleaser {
	if e.iw == nil {
		return nil
	}
	return e.iw
}

// retired is told by the ConnTable that c left the grace window.
func (e *Engine) retired(c *Connection) {
	if r := e.releaser(); r != nil {
		r.release(c)
	}
	if o, ok := e.opts.Observer.(ConnObserver); ok {
		o.ConnectionDone(c)
	}
	if c.Health != nil {
		c.Health.compact() // no packet reaches it any more
	}
}

// forgotten tells the Observer that a summary left the table.
func (e *Engine) forgotten(c *Connection) {
	if o, ok := e.opts.Observer.(ConnForgetter); ok {
		o.ConnectionForgotten(c)
	}
}

// Retained is what the engine holds at one moment: the sizes of its tables
// and buffers. Each is bounded (by a limit with a counter of what it cut,
// or by the number of live connections); tests and benchmarks use it to
// show that they stay flat however long the input runs.
type Retained struct {
	// Connections in the table: live, in the grace window, and the
	// summaries of released ones (Summaries).
	Connections, Summaries int
	// Entries of the lookup tables: by destination QP, by CM Comm ID, and
	// no-setup connections awaiting their reverse direction.
	QPEntries, CommEntries, PendingEntries int
	// RoCEConns have IB/RoCE reassembly state; RoCEBuffered is the
	// capacity of its message and RDMA Read buffers, in bytes.
	RoCEConns, RoCEBuffered int
	// ULPConns have ULP session state (ULPRetainer: RPC-over-RDMA's);
	// OpenExchanges are awaiting their response; RebuildBytes is the data
	// held to rebuild messages (RPC's chunk data).
	ULPConns, OpenExchanges, RebuildBytes int
	// IWARPStreams are the iWARP connections followed; IWARPKeys the TCP
	// 4-tuples (two per stream) that lead to a stream, closed ones in the
	// grace window included.
	IWARPStreams, IWARPKeys int
	// BufferedBytes is what Options.MaxBufferedBytes bounds: the capacity
	// of the IB/RoCE and iWARP message and RDMA operation buffers
	// (budget.go).
	BufferedBytes int
}

// Retained measures what the engine holds now.
func (e *Engine) Retained() Retained {
	t := e.Conns
	r := Retained{Connections: len(t.conns), Summaries: len(t.done), QPEntries: len(t.byQP),
		CommEntries: len(t.byComm), PendingEntries: len(t.pending)}
	for _, rc := range e.rxs.conns {
		r.RoCEConns++
		for d := range rc.dir {
			s := &rc.dir[d]
			for _, pt := range s.msgs {
				r.RoCEBuffered += cap(pt.data)
			}
			for _, pt := range s.spareM {
				r.RoCEBuffered += cap(pt.data)
			}
			for _, ro := range s.reads {
				r.RoCEBuffered += cap(ro.data)
			}
			for _, ro := range s.spare {
				r.RoCEBuffered += cap(ro.data)
			}
		}
	}
	for _, l := range e.opts.ULPs {
		if h, ok := l.(ULPRetainer); ok {
			conns, open, rebuild := h.Retained()
			r.ULPConns += conns
			r.OpenExchanges += open
			r.RebuildBytes += rebuild
		}
	}
	r.BufferedBytes = e.buf.held
	if rl := e.releaser(); rl != nil {
		rl.retained(&r)
	}
	return r
}

// DropDetail lets go of what a released connection's summary holds beyond
// its identity and counters: its transport health, iWARP and RPC-over-RDMA
// statistics and the bytes of its private data. It is for an observer that
// took what it reports of the connection when ConnectionDone was called
// (internal/connspill keeps the commands' memory flat however many
// connections the input closes: issue 14); the summary stays in the table
// only so that the table's bound counts it as before. A live connection
// keeps everything: DropDetail does nothing to it.
func (c *Connection) DropDetail() {
	if c.rel.state != relDone {
		return
	}
	c.Health, c.tcpH, c.IWARP = nil, nil, nil
	if d, ok := c.ULPData.(DetailDropper); ok {
		d.DropWithDetail()
		c.ULPData = nil
	}
	c.rel.dropped = true
	for i := range c.PrivateData {
		c.PrivateData[i].Bytes = nil
		c.PrivateData[i].Framing = pvtdata.Framing{}
	}
}

// DetailDropped reports whether DropDetail took c's detail: what a report
// would show of it now is no longer what the capture said (a live view
// leaves it out; the report that took it has it).
func (c *Connection) DetailDropped() bool { return c.rel.dropped }
