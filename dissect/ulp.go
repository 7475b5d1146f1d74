package dissect

import "github.com/rdmashark/rdmashark/layers/roce"

// The upper-layer-protocol seam. Below it the engine is protocol-neutral:
// both transports hand up Message (one reassembled Send) and RDMAOp (one
// RDMA Read or Write). Above it each upper-layer protocol (ULP) — RPC-over-
// RDMA, NVMe over Fabrics, SMB Direct, iSER — is a plug-in: it claims the
// connections it carries, and a Session of it sees every Send and RDMA
// operation of such a connection. The shape is gopacket's
// reassembly.StreamFactory/Stream and Zeek's per-connection analyzers: the
// engine owns the loop, the connection table, set-up, reassembly, the RC
// model and the buffer budget; it never knows which protocols exist. The
// ones a program wants are listed in Options.ULPs (cmd/rdmashark/ulps.go
// is the tool's one registration list).
//
// Which ULP a connection carries is decided once per connection, at its
// first Send or RDMA operation, as Wireshark's heuristic dissector lists
// do: every registered ULP is asked in order to Claim it from what its
// set-up said (the service port, the consumer private data, the MPA
// exchange); the first Yes wins. When none says Yes but some say Maybe, the
// connection's first Sends are offered to the Maybe ones' Probe, in order,
// at most MaxProbes of them: the first Yes wins and that Send is the
// session's first. A connection no ULP claims carries "no ULP": its Sends
// and operations reach the Observer all the same, unattached.

// Verdict is a ULP's answer to whether a connection carries it.
type Verdict uint8

const (
	// Maybe: nothing tells yet (no set-up in the capture, a port shared by
	// several protocols); the ULP wants to Probe the first Sends.
	Maybe Verdict = iota
	// Yes: the connection carries the ULP.
	Yes
	// No: the connection does not carry it.
	No
)

func (v Verdict) String() string {
	switch v {
	case Maybe:
		return "maybe"
	case Yes:
		return "yes"
	case No:
		return "no"
	}
	return "unknown"
}

// MaxProbes bounds the Sends of a connection offered to the Maybe ULPs'
// Probe before the connection is taken to carry none of them (perftest,
// rping and other traffic of no storage protocol).
const MaxProbes = 16

// ULP is one upper-layer protocol: a plug-in the engine asks about every
// connection. One ULP value serves one engine (it may keep engine-wide
// state: pools, counters), so Options.ULPs holds fresh values per engine;
// NewULPs-style constructors in the plug-in packages make them.
type ULP interface {
	// Name is the protocol's short name as tshark spells it ("rpcordma",
	// "nvme-rdma", "smb_direct", "iser"): it names the connection's ULP in
	// every output, and prefixes the ULP's fields and rules.
	Name() string
	// Ports are the well-known ports of the protocol: RDMA-CM service-ID
	// ports (IB/RoCE) and TCP ports (iWARP). On such a TCP port the iWARP
	// engine picks up a connection whose MPA exchange the capture lacks
	// from one plausible FPDU, and live capture's default filter keeps
	// them.
	Ports() []uint16
	// Claim tells from the connection's set-up (Connection.ServicePort,
	// Connection.SetUp, the MPA exchange) whether it carries the protocol.
	Claim(c *Connection) Verdict
	// Probe looks at one of the first Sends of a connection every ULP
	// asked answered Maybe for: Yes claims it, and m is then the Session's
	// first Message; No stops the probes of this ULP on the connection.
	Probe(c *Connection, m *Message) Verdict
	// Start begins the protocol's analysis of a claimed connection.
	Start(c *Connection, env *Env) Session
}

// Session is one ULP's analysis of one connection: it pairs requests with
// responses, attaches RDMA operations to the memory requests advertised,
// and records what each packet carried.
type Session interface {
	// Message hands the session one reassembled Send, p the packet that
	// completed it (nil at the end of the input). m.Duplicate marks a
	// retransmitted Send (a PSN already consumed) handed over for display
	// only: it must not count again.
	Message(p *Packet, m *Message)
	// RDMAOp hands the session one RDMA Read or Write, completed or given
	// up; the session sets op.Attach.
	RDMAOp(p *Packet, op *RDMAOp)
	// Close ends the session: its connection was released (closed, idle)
	// or the input ended; the engine closes the sessions still open at the
	// end in the order their connections were made. Open exchanges end
	// without their response.
	Close()
}

// Negotiated is what a connection's set-up negotiated, in the terms the
// protocol-neutral rules and reports read: whether the responder may
// invalidate the requester's memory remotely (Send With Invalidate), and
// the largest message one Send may carry each way. Each ULP says it from
// its own negotiation (RPC-over-RDMA: RFC 8797's R bits and inline
// thresholds, or version 2's Transport Properties; NVMe/RDMA: IOCCSZ and
// IORCSZ; SMB Direct: MaxReceiveSize; iSER: the SIE bit; SRP: the maximum
// IU lengths); known is false for what the protocol does not negotiate
// per connection or the capture does not show.
type Negotiated interface {
	// RemoteInvalidation reports whether the responder may use Send With
	// Invalidate on the connection.
	RemoteInvalidation() (allowed, known bool)
	// InlineLimit is the largest message, in octets, one Send in
	// direction d may carry (its receiver's buffer).
	InlineLimit(d Direction) (bytes int, known bool)
}

// Negotiator is a Session that says what its connection negotiated. The
// engine asks it while the session is open, and keeps its last answer
// when the session closes, so that Connection.Negotiation answers after
// the connection was released too; the Negotiated it returns must
// therefore hold no reference to the session.
type Negotiator interface {
	Negotiated() Negotiated
}

// unknownNegotiation is the Negotiated of a connection whose ULP says
// nothing of it: nothing known.
type unknownNegotiation struct{}

func (unknownNegotiation) RemoteInvalidation() (allowed, known bool)     { return false, false }
func (unknownNegotiation) InlineLimit(Direction) (bytes int, known bool) { return 0, false }

// Negotiation returns what c's set-up negotiated as its ULP's session says
// (Negotiator); nothing known when no ULP claimed c or its ULP does not
// say. Never nil.
func (c *Connection) Negotiation() Negotiated {
	u := &c.ulp
	if n, ok := u.session.(Negotiator); ok {
		if v := n.Negotiated(); v != nil {
			return v
		}
	}
	if u.negotiated != nil {
		return u.negotiated
	}
	return unknownNegotiation{}
}

// Env is what the engine lends a session.
type Env struct {
	// Budget accounts the bytes a session holds (chunk data, in-capsule
	// data kept to rebuild a message) in the one buffer budget of
	// Options.MaxBufferedBytes (budget.go).
	Budget *Budget
	// Exchange, when not nil, hears every exchange a session ends
	// (Options.Exchange and an ExchangeObserver).
	Exchange func(x *Exchange)
	// MaxExchanges bounds the exchanges a session keeps open at once
	// (Options.MaxTransactions); past it the oldest is evicted.
	MaxExchanges int
	// MaxMessageBytes bounds a message a session puts together (a
	// reassembled Send's bound, Options.MaxMessageBytes); MaxRebuildBytes
	// the data the sessions of one ULP hold together to rebuild messages
	// from RDMA data (Options.MaxRebuildBytes).
	MaxMessageBytes, MaxRebuildBytes int
	// Observer is the engine's Observer (Options.Observer), for a ULP
	// whose own observer interface extends it (RPC-over-RDMA's
	// TxnObserver hears its transactions).
	Observer Observer
	// Fields says which of the packets' fields the caller reads
	// (Options.Fields): nil none but the summary line and
	// frame.protocols. A session fills its per-packet records' parts
	// that only some fields show when one of them is read.
	Fields func(name string) bool
}

// SetUpFailer is a ULP that wants to hear of a connection of its whose
// set-up ended without a working connection — refused (State
// StateRejected: Connection.RejectPrivateData holds the refusal's private
// data, an SRP_LOGIN_REJ, NVMe/RDMA's Reject) or never answered (the
// client's set-up in the capture, nothing of the server's) — so that a
// refused login or association is in its reports: such a connection
// carries no Send, so no session ever starts on it. When the connection
// is released (or the input ends), every ULP is asked in order to Claim
// it from its set-up; when the first Yes is a SetUpFailer, the
// connection is its (Connection.ULP) and SetUpFailed is called, once: it
// may set Connection.ULPData.
type SetUpFailer interface {
	ULP
	SetUpFailed(c *Connection)
}

// Side names a side of a connection.
type Side uint8

const (
	SideUnknown Side = iota
	SideClient       // the requester: the side that asked for the connection
	SideServer       // the responder: the side that accepted it
)

// Orienter is a ULP that can tell which side sent a packet from the
// packet alone: the engine asks it of the packets of an InfiniBand/RoCE
// connection whose set-up the capture lacks until one tells (a capture
// that starts, or lost frames, in the middle of a connection — issue 28:
// with its roles reversed, a ULP's rules read every response as a
// request; orient.go). The engine itself takes an RDMA Write or Read
// Request for the server's and a Read Response for the client's (only the
// responder initiates RDMA in the ULPs the seam serves), so Sender is
// asked only of a packet that starts a Send: op is its BTH opcode (a
// SEND_FIRST or SEND_ONLY, with immediate or invalidate) and payload what
// follows its extension headers, the message's first bytes. SideUnknown:
// the packet does not tell, or is not the ULP's. Every Orienter is asked, whichever ULP the connection turns out
// to carry (none is decided yet): a packet tells when the ones that answer
// agree, so a ULP answers only for what its own protocol makes plain.
type Orienter interface {
	ULP
	Sender(op roce.OpCode, payload []byte) Side
}

// ULPCounters is a ULP with engine-wide counters of its own (RPC-over-
// RDMA's): Engine.Snapshot keeps a copy of them under the ULP's name
// (Snapshot.ULPCounters), for the reports.
type ULPCounters interface {
	ULP
	// Counters returns a copy of the counters now.
	Counters() any
}

// ULPRetainer is a ULP that says what its sessions hold (Engine.Retained):
// connections with state, exchanges open, bytes held to rebuild messages.
type ULPRetainer interface {
	ULP
	Retained() (conns, open, rebuildBytes int)
}

// DetailDropper is a Connection.ULPData that Connection.DropDetail lets
// go of with the rest of a released connection's detail.
type DetailDropper interface {
	DropWithDetail()
}

// ExchangeCost is what one open exchange — an RPC Call awaiting its Reply,
// an NVMe command awaiting its completion — counts in the buffer budget
// while it is open: about what its record and index entries take (an RPC
// Transaction with a few chunks ~0.9 KB, issue 29). A session opens one
// only when it fits (Budget.OpenExchange), giving up its oldest otherwise,
// so that outstanding requests cannot grow past --max-buffered however
// many connections hold them.
const ExchangeCost = 1 << 10

// Budget is the engine's buffer budget as a session sees it.
type Budget struct{ e *Engine }

// Fits reports whether n more bytes fit in the budget now.
func (b *Budget) Fits(n int) bool { return b.e.budget().fits(n) }

// Grew accounts a held buffer that went from old to new bytes of capacity.
func (b *Budget) Grew(old, new int) { b.e.buf.grew(old, new) }

// ExchangeFits reports whether one more open exchange fits in the budget;
// a session with exchanges open gives up its oldest while it does not.
func (b *Budget) ExchangeFits() bool { return b.e.budget().fits(ExchangeCost) }

// Opened and Closed account an exchange opened and one ended.
func (b *Budget) Opened() { b.e.buf.grew(0, ExchangeCost) }

// Closed: see Opened.
func (b *Budget) Closed() { b.e.buf.grew(ExchangeCost, 0) }

// ulpConn is the engine's record of which ULP a connection carries.
type ulpConn struct {
	decided bool
	probes  uint8
	ulp     int8 // index in e.opts.ULPs, -1 for none
	maybe   uint32
	session Session
	// data is session when it is a DataObserver, else nil: asked on
	// every RDMA Write packet, so found once.
	data DataObserver
	// negotiated is what the session said last when it closed
	// (Negotiator).
	negotiated Negotiated
}

// session returns c's session, deciding its ULP on c's first Send (m) or
// RDMA operation (m nil): nil when no registered ULP carries c.
func (e *Engine) session(c *Connection, m *Message) Session {
	u := &c.ulp
	if u.decided {
		return u.session
	}
	ulps := e.opts.ULPs
	if c.IPoIBCM() || len(ulps) == 0 {
		// IPoIB connected mode carries IP datagrams, which the engine
		// decodes itself (ipoib.go).
		e.decide(c, -1)
		return nil
	}
	if u.probes == 0 && u.maybe == 0 {
		// The first look: every ULP answers from the set-up.
		for i, l := range ulps {
			switch l.Claim(c) {
			case Yes:
				return e.decide(c, i)
			case Maybe:
				if i < 32 {
					u.maybe |= 1 << i
				}
			}
		}
		if u.maybe == 0 {
			e.decide(c, -1)
			return nil
		}
	} else {
		// A later look: set-up may have come since (a REP after the
		// first Send of the client), and a Yes from it wins.
		for i, l := range ulps {
			if i < 32 && u.maybe&(1<<i) != 0 && l.Claim(c) == Yes {
				return e.decide(c, i)
			}
		}
	}
	if m == nil {
		return nil // an RDMA operation tells nothing: still undecided
	}
	for i, l := range ulps {
		if i >= 32 || u.maybe&(1<<i) == 0 {
			continue
		}
		switch l.Probe(c, m) {
		case Yes:
			return e.decide(c, i)
		case No:
			u.maybe &^= 1 << i
		}
	}
	u.probes++
	if u.maybe == 0 || u.probes >= MaxProbes {
		e.decide(c, -1)
	}
	return nil
}

// decide fixes c's ULP (i < 0: none) and starts its session.
func (e *Engine) decide(c *Connection, i int) Session {
	u := &c.ulp
	u.decided, u.ulp, u.maybe = true, int8(i), 0
	if i < 0 {
		return nil
	}
	l := e.opts.ULPs[i]
	c.ULP = l.Name()
	u.session = l.Start(c, &e.env)
	u.data, _ = u.session.(DataObserver)
	return u.session
}

// closeSession ends c's session: the connection was released, or the
// input ended.
func (e *Engine) closeSession(c *Connection) {
	c.settleGuess() // nothing told before it ended (orient.go)
	u := &c.ulp
	if !u.decided {
		e.setUpFailed(c)
	}
	if u.session == nil {
		return
	}
	s := u.session
	u.session, u.data = nil, nil
	s.Close()
	if n, ok := s.(Negotiator); ok {
		u.negotiated = n.Negotiated()
	}
}

// setUpFailed ends the ULP decision of c, a connection no Send or RDMA
// operation reached: when its set-up failed, the SetUpFailer that claims
// it hears of it (SetUpFailer).
func (e *Engine) setUpFailed(c *Connection) {
	u := &c.ulp
	if u.probes != 0 || u.maybe != 0 || c.IPoIBCM() {
		return // a Send came: the set-up worked, the traffic tells
	}
	u.decided, u.ulp = true, -1
	if !c.PrivateData[0].Seen || c.State != StateRejected && (c.State != StateIncomplete || c.PrivateData[1].Seen) {
		return
	}
	for i, l := range e.opts.ULPs {
		if l.Claim(c) != Yes {
			continue
		}
		if f, ok := l.(SetUpFailer); ok {
			u.ulp = int8(i)
			c.ULP = l.Name()
			f.SetUpFailed(c)
		}
		return
	}
}

// finishSessions ends every open session, in the order the connections
// were made.
func (e *Engine) finishSessions() {
	for _, c := range e.Conns.Connections() {
		e.closeSession(c)
	}
}

// ULPs returns the ULPs the engine was given, in the order it asks them.
func (e *Engine) ULPs() []ULP { return e.opts.ULPs }

// ULPPorts returns the well-known ports of the given ULPs, each once, in
// order: live capture's default filter and the iWARP engine's hint ports.
func ULPPorts(ulps []ULP) []uint16 {
	var out []uint16
	for _, l := range ulps {
	next:
		for _, p := range l.Ports() {
			for _, q := range out {
				if p == q {
					continue next
				}
			}
			out = append(out, p)
		}
	}
	return out
}
