// Package html writes rdmashark's self-contained HTML report: an overview
// of the capture and what each connection negotiated, a ladder (sequence)
// diagram per connection, charts, and the checks' findings with links into
// the diagrams. It draws the documents the JSON outputs are made of —
// report.Analysis (analyze), report.Transaction (transactions), check
// findings, and the exchanges of every other ULP as `exchanges` lists them
// (dissect.Exchange, with the RDMA operations attached to each: the
// neutral ladder, collect_exch.go) — and adds only what a picture needs
// and no JSON output holds: the packet-level arrows of connections that
// carry no ULP and the traffic over time. Everything it keeps is bounded
// (Options). It imports no plug-in: names, statuses and keys are the
// exchanges' own.
package html

import (
	"math/rand/v2"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/report"
)

// Options bound what the report keeps.
type Options struct {
	// MaxDetail is how many transactions (on connections of another ULP
	// exchanges, on connections without one packet-level arrows) of each
	// connection are drawn; the rest are counted in the folded groups and
	// the charts.
	MaxDetail int
	// MaxConnections is how many connections get a diagram.
	MaxConnections int
	// LatencySample is how many latencies each procedure keeps for its
	// distribution and percentiles; past it a uniform sample is kept
	// (reservoir sampling) and the page says the percentiles are estimated.
	LatencySample int
}

// Defaults for Options.
const (
	DefaultMaxDetail      = 1000
	DefaultMaxConnections = 64
	DefaultLatencySample  = 20000
	maxCMEvents           = 64  // CM MADs and MPA frames kept per connection
	maxProcedures         = 256 // procedure keys; the rest count as "other"
	maxSignatures         = 256 // folded signatures of undrawn transactions
	throughputBins        = 240
)

func (o *Options) defaults() {
	if o.MaxDetail <= 0 {
		o.MaxDetail = DefaultMaxDetail
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.LatencySample <= 0 {
		o.LatencySample = DefaultLatencySample
	}
}

// Event is one arrow of a ladder drawn from packets: a CM MAD, an MPA
// Request or Reply, or an RDMA message (a Send, an RDMA Write, an RDMA
// Read Request, an RDMA Read Response) from its first packet to its last.
// Acknowledgements are counted, not drawn.
type Event struct {
	Kind  string // "cm", "mpa", "send", "send-inv", "write", "read-req", "read-resp", "terminate", "other"
	Label string
	Dir   dissect.Direction
	// Src is the sending host's address.
	Src         string
	First, Last int
	Packets     int
	Bytes       uint64 // frame bytes of its packets
	Time        time.Duration
}

// Collector gathers, while the engine reads the capture, what the page
// draws besides the Analysis document: hand Packet every packet,
// Transaction every finished RPC transaction (rpcordma.OnTransaction,
// converted), Exchange every exchange (dissect.Options.Exchange), and
// put Observe in the engine's chain of observers.
type Collector struct {
	opts  Options
	conns map[int]*connData
	order []int
	// notDrawn is set when a connection came past MaxConnections.
	notDrawn  bool
	procs     map[string]*procStats
	procOrder []string
	rng       *rand.Rand
	// t0 is the capture's first packet's time (Packet.RelTime's zero).
	t0 time.Time
}

// NewCollector returns an empty Collector.
func NewCollector(opts Options) *Collector {
	opts.defaults()
	return &Collector{opts: opts, conns: map[int]*connData{}, procs: map[string]*procStats{},
		rng: rand.New(rand.NewPCG(1, 2))}
}

type connData struct {
	id     int
	events []Event
	cm     []Event
	// open holds, per direction, the index in events of the message in
	// progress of each class, or openNone, or openCut (past MaxDetail).
	open          [2][nClass]int
	eventsOmitted uint64
	omittedKinds  map[string]uint64
	acks          [2]uint64
	// rpc: a transaction or an exchange of the connection finished, so
	// its diagram draws transactions (isRPC) or exchanges (exch), never
	// events: they are let go and no more are recorded (dropEvents).
	rpc bool
	// exch are the exchanges of the neutral ladder (collect_exch.go), nil
	// until one ends; sends the Sends and operations it draws besides.
	exch  *exchData
	sends *sendsData
	// txns are the transactions drawn, packed (~5× smaller than the
	// structures, most of what the report holds).
	txns        report.TransactionPack
	txnsOmitted uint64
	omittedSigs map[string]uint64
	sigOrder    []string
	tput        throughput
	// marks are the packets the transport analysis flagged, in capture
	// order (at most maxLossMarks; marksCut counts the rest).
	marks    []lossMark
	marksCut uint64
}

// message classes tracked for multi-packet messages.
const (
	clsSend = iota
	clsWrite
	clsReadResp
	nClass
)

const (
	openNone = -1
	openCut  = -2
)

func (c *Collector) conn(d *dissect.Connection) *connData { return c.connByID(d.ID) }

// connByID returns the data of connection id, made on first use; nil past
// MaxConnections.
func (c *Collector) connByID(id int) *connData {
	cd := c.conns[id]
	if cd != nil {
		return cd
	}
	if len(c.order) >= c.opts.MaxConnections {
		c.notDrawn = true
		return nil
	}
	cd = &connData{id: id, omittedKinds: map[string]uint64{}, omittedSigs: map[string]uint64{}}
	for i := range cd.open {
		for j := range cd.open[i] {
			cd.open[i][j] = openNone
		}
	}
	c.conns[id] = cd
	c.order = append(c.order, id)
	return cd
}

// Packet records a packet: its bytes in its connection's throughput, and
// the arrow it starts or continues.
func (c *Collector) Packet(p *dissect.Packet) {
	if c.t0.IsZero() {
		c.t0 = p.Timestamp.Add(-p.RelTime)
	}
	if p.Conn == nil {
		return
	}
	cd := c.conn(p.Conn)
	if cd == nil || p.Dir == dissect.DirUnknown {
		// (No direction: a packet of a connection whose roles were not
		// settled yet, dissect/orient.go.)
		return
	}
	d := p.Dir.Index()
	a := &p.Analysis
	cd.tput.add(p.RelTime, d, uint64(p.Length), a.Valid && a.Retransmission)
	if a.Valid && (a.Retransmission || a.Duplicate || a.LostSegment > 0) {
		cd.lossMark(p)
	}
	// The sender is one of the connection's endpoints (no per-packet
	// formatting of addresses).
	src := p.Conn.Client.Address
	if p.Dir == dissect.DirServerToClient {
		src = p.Conn.Server.Address
	}
	switch {
	case p.CM.Attr != 0:
		if len(cd.cm) < maxCMEvents {
			cd.cm = append(cd.cm, Event{Kind: "cm", Label: cmName(p), Dir: p.Dir, Src: src, First: p.Number,
				Last: p.Number, Packets: 1, Bytes: uint64(p.Length), Time: p.RelTime})
		}
	case p.Has(roce.LayerTypeBTH) && (p.BTH.OpCode.IsAck() || p.BTH.OpCode.IsAtomicAck()):
		cd.acks[d]++
	case p.Has(roce.LayerTypeBTH):
		if !cd.rpc {
			cd.bth(p, src, c.opts.MaxDetail)
		}
	default:
		if p.IWARP.HasReqRep && len(cd.cm) < maxCMEvents {
			cd.cm = append(cd.cm, Event{Kind: "mpa", Label: mpaName(&p.IWARP.ReqRep), Dir: p.Dir, Src: src,
				First: p.Number, Last: p.Number, Packets: 1, Bytes: uint64(p.Length), Time: p.RelTime})
		}
		for i := range p.IWARP.FPDUs {
			if cd.rpc {
				break
			}
			cd.fpdu(p, &p.IWARP.FPDUs[i], src, c.opts.MaxDetail)
		}
	}
}

// dropEvents lets the connection's RDMA messages go: it carries RPC, and
// its diagram draws the transactions (isRPC holds from its first
// transaction on). At ~100 bytes an arrow, MaxDetail of them on every
// drawn connection were the second largest thing the report held.
func (cd *connData) dropEvents() {
	if cd.rpc {
		return
	}
	cd.rpc = true
	cd.events, cd.eventsOmitted, cd.omittedKinds = nil, 0, nil
	for d := range cd.open {
		for cls := range cd.open[d] {
			cd.open[d][cls] = openNone
		}
	}
}

// event appends an arrow, or counts it when the connection's detail is full.
func (cd *connData) event(e Event, max int) int {
	if cd.rpc {
		return -1
	}
	if len(cd.events) >= max {
		cd.eventsOmitted++
		cd.omittedKinds[e.Kind]++
		return -1
	}
	cd.events = append(cd.events, e)
	return len(cd.events) - 1
}

// message starts an arrow of class cls (start) or extends the one in
// progress; end closes it.
func (cd *connData) message(p *dissect.Packet, cls int, start, end bool, e Event, max int) {
	d := p.Dir.Index()
	if start {
		cd.open[d][cls] = cd.event(e, max)
		if cd.open[d][cls] < 0 {
			cd.open[d][cls] = openCut
		}
	} else if i := cd.open[d][cls]; i >= 0 {
		ev := &cd.events[i]
		ev.Last = p.Number
		ev.Packets++
		ev.Bytes += uint64(p.Length)
	}
	if end {
		cd.open[d][cls] = openNone
	}
}
