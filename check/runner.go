package check

import (
	"fmt"
	"slices"
	"sort"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Bounds on what the runner keeps (Config overrides them).
const (
	// DefaultMaxFindings is the number of findings kept per rule and
	// connection; the rest are counted (CheckResult.Omitted).
	DefaultMaxFindings = 100
	// DefaultMaxPackets is the number of packet numbers kept per finding;
	// the rest are counted (Finding.PacketsOmitted).
	DefaultMaxPackets = 100
	// DefaultMaxTotal is the number of findings kept in all.
	DefaultMaxTotal = 100000
)

// Config configures a Runner.
type Config struct {
	// Rules are the rules to evaluate; nil means all (Select builds a
	// subset from --enable/--disable patterns).
	Rules []*Rule
	// MaxFindings, MaxPackets and MaxTotal override the Default* bounds
	// when positive.
	MaxFindings, MaxPackets, MaxTotal int
	// Next, when set, receives every message and RDMA operation after the
	// runner: the runner sits in dissect.Options.Observer and chains to
	// whatever else observes the engine.
	Next dissect.Observer
}

// Runner evaluates the rules while the engine streams a capture: hand it
// every packet (Packet, from Engine.Run's callback), make it the engine's
// Observer (Message, RDMAOp, and ConnectionDone: a connection the engine
// released gets its end-of-connection checks then, and the runner keeps
// only its result), and call Finish with the engine's connections at the
// end. A Runner checks one capture; it is not safe for concurrent use.
type Runner struct {
	cfg     Config
	rules   []*Rule
	enabled []bool
	pkt     []*Rule
	// pktOn are the rules of pkt that run on the packets of a connection
	// of each transport (Rule.Transport), by dissect.Transport.
	pktOn  [3][]*Rule
	op     []*Rule
	ulpMsg []*Rule
	end    []*Rule

	conns map[*dissect.Connection]*Conn
	// last and lastC are the map's most recent answer: consecutive
	// packets and messages are mostly of one connection, and the map
	// lookup for each was ~1% of analyze's instructions. Cleared where an
	// entry leaves the map.
	last  *dissect.Connection
	lastC *Conn
	order []*Conn
	none  *Conn // packets of no connection
	// done holds the results of the connections the engine released
	// (ConnectionDone), in the order they came; forgotten folds the
	// results of those whose summaries the engine forgot.
	done      []*ConnResult
	forgotten forgottenConns

	kept, omitted int
	// shared is what the ULPs' rules keep across the connections of the
	// capture (Conn.Shared), by ULP.
	shared map[string]any
}

// NewRunner returns a runner for cfg.
func NewRunner(cfg Config) *Runner {
	if cfg.MaxFindings <= 0 {
		cfg.MaxFindings = DefaultMaxFindings
	}
	if cfg.MaxPackets <= 0 {
		cfg.MaxPackets = DefaultMaxPackets
	}
	if cfg.MaxTotal <= 0 {
		cfg.MaxTotal = DefaultMaxTotal
	}
	rules := cfg.Rules
	if rules == nil {
		rules = table
	}
	r := &Runner{cfg: cfg, rules: rules, enabled: make([]bool, len(table)),
		conns: map[*dissect.Connection]*Conn{}}
	for _, ru := range rules {
		r.enabled[ru.index] = true
		if ru.Waits != "" {
			continue
		}
		if ru.Packet != nil {
			r.pkt = append(r.pkt, ru)
		}
		if ru.RDMAOp != nil {
			r.op = append(r.op, ru)
		}
		if ru.ULPMessage != nil {
			r.ulpMsg = append(r.ulpMsg, ru)
		}
		if ru.End != nil {
			r.end = append(r.end, ru)
		}
	}
	for t := range r.pktOn {
		for _, ru := range r.pkt {
			if ru.Transport == 0 || ru.Transport == dissect.Transport(t) {
				r.pktOn[t] = append(r.pktOn[t], ru)
			}
		}
	}
	r.none = r.newConn(&dissect.Connection{})
	return r
}

// Rules returns the rules the runner evaluates.
func (r *Runner) Rules() []*Rule { return r.rules }

func (r *Runner) newConn(dc *dissect.Connection) *Conn {
	return &Conn{Connection: dc, r: r, rs: make([]*ruleState, len(table))}
}

func (r *Runner) conn(dc *dissect.Connection) *Conn {
	if dc == nil {
		return r.none
	}
	if dc == r.last {
		return r.lastC
	}
	c := r.conns[dc]
	if c == nil {
		c = r.newConn(dc)
		r.conns[dc] = c
		r.order = append(r.order, c)
	}
	r.last, r.lastC = dc, c
	return c
}

// Packet evaluates the per-packet rules on p. Call it from Engine.Run's
// callback, after the engine processed p.
func (r *Runner) Packet(p *dissect.Packet) {
	c := r.conn(p.Conn)
	c.packets++
	if p.CaptureLength < p.Length {
		c.snapCut++
	}
	discarded := p.CRCDiscarded
	if p.Conn != nil && !discarded {
		switch p.CM.Attr {
		case roce.LayerTypeCMREQ:
			c.pmtu = p.CM.REQ.PathPacketPayloadMTU.Bytes()
			// IBA Vol 1 12.6.5, 12.6.8: the REQ's Starting PSN is
			// where the passive side's requests start, the REP's where
			// the active side's do (the captures confirm it).
			c.startPSN[1], c.hasStartPSN[1] = p.CM.REQ.StartingPSN&psnMask, true
		case roce.LayerTypeCMREP:
			c.startPSN[0], c.hasStartPSN[0] = p.CM.REP.StartingPSN&psnMask, true
		}
	}
	rules := r.pkt
	if p.Conn != nil && c.Transport != 0 && int(c.Transport) < len(r.pktOn) {
		rules = r.pktOn[c.Transport]
	}
	for _, ru := range rules {
		if discarded && !ru.SeesDiscarded {
			// Its receiver dropped it: no PSN, NAK, request or CM
			// message to judge, and any header may be the corrupted one.
			continue
		}
		c.cur = ru.index + 1
		ru.Packet(c, p)
	}
	c.cur = 0
}

// Message evaluates the per-message rules on one reassembled Send; the
// runner implements dissect.Observer.
func (r *Runner) Message(m *dissect.Message) {
	if m.Conn != nil {
		c := r.conn(m.Conn)
		c.sends++
		if m.ULP != nil {
			// The session of the connection's ULP made its record of the
			// message: its hooks, then its rules, read it.
			if c.hooks == nil {
				c.hooks = hooks[c.Connection.ULP]
				if c.hooks == nil {
					c.hooks = &noHooks
				}
			}
			if h := c.hooks.Message; h != nil {
				h(c, m)
			}
			for _, ru := range c.ruleLists().msgRules {
				c.cur = ru.index + 1
				ru.ULPMessage(c, m)
			}
			c.cur = 0
		}
	}
	if r.cfg.Next != nil {
		r.cfg.Next.Message(m)
	}
}

// RDMAOp evaluates the per-operation rules; the runner implements
// dissect.Observer.
func (r *Runner) RDMAOp(op *dissect.RDMAOp) {
	if op.Conn != nil {
		c := r.conn(op.Conn)
		c.ops++
		for _, ru := range c.ruleLists().opRules {
			c.cur = ru.index + 1
			ru.RDMAOp(c, op)
		}
		c.cur = 0
	}
	if r.cfg.Next != nil {
		r.cfg.Next.RDMAOp(op)
	}
}

// ruleLists returns c with msgRules and opRules those of its ULP now.
func (c *Conn) ruleLists() *Conn {
	if c.rulesSet && c.rulesULP == c.Connection.ULP {
		return c
	}
	c.rulesSet, c.rulesULP = true, c.Connection.ULP
	c.msgRules, c.opRules = c.msgRules[:0], c.opRules[:0]
	for _, ru := range c.r.ulpMsg {
		if !ru.otherULP(c) {
			c.msgRules = append(c.msgRules, ru)
		}
	}
	for _, ru := range c.r.op {
		if !ru.otherULP(c) {
			c.opRules = append(c.opRules, ru)
		}
	}
	return c
}

// Finish runs the end-of-capture rules on every connection and returns the
// result. conns are the engine's connections (Engine.Conns.Connections()),
// so that connections no packet reached the runner with still get their
// checks; those the engine released were checked when it did.
func (r *Runner) Finish(conns []*dissect.Connection) *Result {
	for _, dc := range conns {
		if !dc.Released() {
			r.conn(dc)
		}
	}
	sort.SliceStable(r.order, func(i, j int) bool { return r.order[i].ID < r.order[j].ID })
	res := &Result{Rules: r.rules}
	for _, c := range r.order {
		res.Connections = append(res.Connections, c.end())
	}
	for _, cr := range r.done {
		cr.unpack()
	}
	res.Connections = append(res.Connections, r.done...)
	sort.SliceStable(res.Connections, func(i, j int) bool { return res.Connections[i].ID < res.Connections[j].ID })
	if c := r.none; c.found() {
		cr := c.result()
		res.Connections = append([]*ConnResult{cr}, res.Connections...)
	}
	n := 0
	for _, cr := range res.Connections {
		n += len(cr.findings)
	}
	var all []Finding
	if n > 0 {
		all = make([]Finding, 0, n) // kept to the end: sized exactly
	}
	res.collectFindings(all)
	res.Omitted = r.omitted
	res.ForgottenConnections = r.forgotten.n
	for _, ch := range r.forgotten.checks {
		res.ForgottenChecks = append(res.ForgottenChecks, *ch)
	}
	return res
}

// end runs the end-of-connection rules on c and returns its result.
func (c *Conn) end() *ConnResult {
	c.settle()
	for _, ru := range c.r.end {
		if ru.Applies != nil && ru.Applies(c) != "" || ru.otherULP(c) {
			continue
		}
		c.cur = ru.index + 1
		ru.End(c)
	}
	c.cur = 0
	return c.result()
}

// ConnectionDone implements dissect.ConnObserver: the engine released dc,
// no packet of it will come any more. Its end-of-connection rules run now;
// the runner keeps its result and lets go of the rest.
func (r *Runner) ConnectionDone(dc *dissect.Connection) {
	c := r.conn(dc)
	cr := c.end()
	cr.pack(r.rules) // kept to the end: packed.go
	r.done = append(r.done, cr)
	delete(r.conns, dc)
	r.last, r.lastC = nil, nil
	if i := slices.Index(r.order, c); i >= 0 {
		r.order = slices.Delete(r.order, i, i+1)
	}
	if o, ok := r.cfg.Next.(dissect.ConnObserver); ok {
		o.ConnectionDone(dc)
	}
}

// TakeDone hands over the result of dc, a connection the engine released
// (ConnectionDone was called for it), and forgets it: Finish will not
// report it, the caller does. Its findings still count towards
// Config.MaxTotal, as when Finish reports them. nil when the runner holds
// no released result of dc. A Config.Next observer may call it from its
// ConnectionDone (report's spill of finished connections, issue 14).
func (r *Runner) TakeDone(dc *dissect.Connection) *ConnResult {
	for i := len(r.done) - 1; i >= 0; i-- {
		if cr := r.done[i]; cr.conn == dc {
			r.done = slices.Delete(r.done, i, i+1)
			cr.unpack()
			return cr
		}
	}
	return nil
}

// ForgetTaken counts a connection whose result TakeDone handed over and
// whose summary the engine then forgot (ConnectionForgotten finds nothing
// of it here): its checks are added up in Result.ForgottenChecks and its
// findings, no longer listed, leave Config.MaxTotal's count, as
// ConnectionForgotten does with a result the runner holds.
func (r *Runner) ForgetTaken(checks []CheckResult, findings int) {
	r.forgotten.add(&ConnResult{Checks: checks})
	r.kept -= findings
}

// ConnectionForgotten implements dissect.ConnForgetter: the engine's
// connection table was full and dropped dc's summary. Its result goes too;
// its checks are added up in Result.ForgottenChecks so that the verdict
// still counts its findings, which are no longer listed.
func (r *Runner) ConnectionForgotten(dc *dissect.Connection) {
	for i, cr := range r.done {
		if cr.conn == dc {
			r.forgotten.add(cr)
			r.kept -= len(cr.findings)
			r.done = slices.Delete(r.done, i, i+1)
			break
		}
	}
	if o, ok := r.cfg.Next.(dissect.ConnForgetter); ok {
		o.ConnectionForgotten(dc)
	}
}

// forgottenConns adds up the checks of the connections whose results went
// with their summaries.
type forgottenConns struct {
	n      int
	checks []*CheckResult // by rule, in table order
}

func (f *forgottenConns) add(cr *ConnResult) {
	cr.unpack()
	f.n++
	for _, ch := range cr.Checks {
		var sum *CheckResult
		for _, s := range f.checks {
			if s.Rule == ch.Rule {
				sum = s
				break
			}
		}
		if sum == nil {
			sum = &CheckResult{Rule: ch.Rule, Status: ch.Status, Reason: ch.Reason}
			f.checks = append(f.checks, sum)
		}
		// Found beats passed beats not evaluated.
		switch {
		case ch.Status == StatusFound, sum.Status == StatusNotEvaluated && ch.Status == StatusPassed:
			sum.Status, sum.Reason = ch.Status, ""
		}
		sum.Checked += ch.Checked
		sum.NotEvaluated += ch.NotEvaluated
		// The findings are no longer listed: all count as omitted.
		sum.Findings += ch.Findings
		sum.Omitted += ch.Findings
		sum.Suppressed += ch.Suppressed
		sum.Worst = max(sum.Worst, ch.Worst)
	}
}

// Reason is why a rule could not judge an item, or a connection.
type Reason uint8

const (
	ReasonNone Reason = iota
	// ReasonNoSetup: the CM exchange (or MPA exchange) is not in the
	// capture: nothing is known of what the peers negotiated.
	ReasonNoSetup
	// ReasonHalfSetup: only one side's set-up message is in the capture.
	ReasonHalfSetup
	// ReasonSnapLen: the capture's snap length cut the bytes.
	ReasonSnapLen
	// ReasonMidTransaction: the capture started after the Call of a Reply
	// (or ended before the Reply of a Call).
	ReasonMidTransaction
	// ReasonNotRPC: the connection carries no RPC-over-RDMA.
	ReasonNotRPC
	// ReasonUndecodable: the transport header did not decode.
	ReasonUndecodable
	// ReasonUnknownMTU: the path MTU is not known (no CM REQ).
	ReasonUnknownMTU
	// ReasonNoULB: no Upper-Layer Binding is known for the RPC program.
	ReasonNoULB
	// ReasonNFS4: the rule needs the operations of NFSv4 COMPOUNDs.
	ReasonNFS4
	// ReasonCallUnknown: the Call's chunks are unknown (its header did
	// not decode, or the capture cut it).
	ReasonCallUnknown
	// ReasonCaptureGap: the capture lost packets the item needs (capture
	// loss or damage, never a protocol error: docs/loss.md); the
	// connection's caveats name them.
	ReasonCaptureGap
	numReasons
)

var reasonText = [numReasons]string{
	ReasonNoSetup:        "no CM exchange in the capture",
	ReasonHalfSetup:      "only one side of the connection set-up is in the capture",
	ReasonSnapLen:        "payload cut by snap length",
	ReasonMidTransaction: "capture started mid-transaction",
	ReasonNotRPC:         "no RPC-over-RDMA traffic on this connection",
	ReasonUndecodable:    "transport header does not decode",
	ReasonUnknownMTU:     "path MTU unknown (no CM REQ in the capture)",
	ReasonNoULB:          "no Upper-Layer Binding known for the RPC program",
	ReasonNFS4:           "NFSv4 COMPOUND operations are not decoded (waits for the transaction model)",
	ReasonCallUnknown:    "the Call's chunk lists are unknown (header cut or malformed)",
	ReasonCaptureGap:     "the capture lost packets it needs (capture loss, see the caveats)",
}

func (r Reason) String() string {
	if r < numReasons {
		return reasonText[r]
	}
	return "?"
}

// ruleState is what the runner keeps per rule and connection.
type ruleState struct {
	findings []Finding
	total    int
	checked  int
	skipped  [numReasons]int
}

// Conn is a connection as the rules see it: the engine's connection (for
// packets of no connection, a zero Connection with ID 0) and the state the
// runner and the rules keep for it.
type Conn struct {
	*dissect.Connection
	r *Runner
	// cur is the rule being run, as its index in the table plus one (0:
	// none): an integer, so that setting it for every rule and packet
	// needs no write barrier as a pointer would (curRule).
	cur int
	rs  []*ruleState

	packets, snapCut, ops int

	// sends counts the connection's Sends (Messages).
	sends int
	// hooks are those of the connection's ULP (noHooks: none), found
	// on its first message with a ULP record.
	hooks *Hooks
	// msgRules and opRules are the runner's message and RDMA operation
	// rules that judge this connection while its ULP is rulesULP (those
	// of no other ULP: Rule.otherULP), built when first needed and again
	// when the ULP changes: the runner's lists hold every plug-in's
	// rules, and testing each against the connection's ULP on every
	// message was some 3% of analyze's time on an NFS capture.
	msgRules, opRules []*Rule
	rulesULP          string
	rulesSet          bool
	// ULPState is what the rules of the connection's ULP keep for it
	// (set and read by them, through their Hooks).
	ULPState any

	// Per-area state of the rules (transport.go, hdr.go, ...).
	pmtu int // path MTU in bytes from the CM REQ, 0 when unknown
	// startPSN is the first PSN of each direction's requests, from the
	// CM REP (client's) and REQ (server's).
	startPSN    [2]uint32
	hasStartPSN [2]bool
	psn         [2]psnState
	loss        lossState   // loss.go
	damage      damageState // damage.go
	// rej is the refusal CM-REJ or MPA-REJ saw, reported at the end of
	// the connection, when a later connection may have got through.
	rej refusal
	// held are the findings Hold keeps to the end of the connection.
	held []heldFinding
}

// heldFinding is a finding that rests on the capture holding every
// request sent in direction dir (both: DirUnknown) between packets from
// and to.
type heldFinding struct {
	rule     *Rule
	dir      dissect.Direction
	from, to int
	f        Finding
}

// MaxHeld bounds the findings Hold keeps per connection; past it a
// finding is judged on what is known when it is made.
const MaxHeld = 256

// lost reports whether the capture lost part of the request stream of
// direction d (both: DirUnknown) between packets from and to.
func (c *Conn) lost(d dissect.Direction, from, to int) bool {
	if d == dissect.DirUnknown {
		return c.Lost[0].Between(from, to) || c.Lost[1].Between(from, to)
	}
	return c.Lost[d.Index()].Between(from, to)
}

// Hold reports f at the end of the connection, unless by then the capture
// turns out to have lost part of the requests direction d (both:
// dissect.DirUnknown) sent between packets from and to
// (dissect.CaptureLoss: a stretch is known only once a later packet
// reveals it): then the item is not evaluated (ReasonCaptureGap). It is
// for a finding that rests on the capture holding every request of that
// stretch — an RDMA operation on memory no request outstanding advertised
// (from 0: the request may be anywhere before it), a completion of no
// command outstanding, a CID reused while its first command had no
// completion in the capture — when what is missing may be what the
// capture lost. Capture damage is never a protocol error (docs/loss.md).
func (c *Conn) Hold(f Finding, d dissect.Direction, from, to int) {
	if c.lost(d, from, to) {
		c.Skip(ReasonCaptureGap)
		return
	}
	if len(c.held) >= MaxHeld {
		c.Checked()
		if !c.dropped() {
			c.Report(f)
		}
		return
	}
	f.Packets = slices.Clone(f.Packets)
	c.held = append(c.held, heldFinding{rule: c.curRule(), dir: d, from: from, to: to, f: f})
}

// settle judges the findings Hold kept, now that every stretch the
// capture lost before them is known.
func (c *Conn) settle() {
	for _, h := range c.held {
		c.cur = h.rule.index + 1
		if c.lost(h.dir, h.from, h.to) {
			c.Skip(ReasonCaptureGap)
			continue
		}
		c.Checked()
		if !c.dropped() {
			c.Report(h.f)
		}
	}
	c.held = nil
}

// noHooks are the hooks of a ULP that registered none.
var noHooks Hooks

// curRule is the rule being run (cur).
func (c *Conn) curRule() *Rule { return table[c.cur-1] }

// curState is the state of the rule being run on c.
func (c *Conn) curState() *ruleState {
	if s := c.rs[c.cur-1]; s != nil {
		return s
	}
	return c.state(table[c.cur-1])
}

func (c *Conn) state(ru *Rule) *ruleState {
	s := c.rs[ru.index]
	if s == nil {
		s = &ruleState{}
		c.rs[ru.index] = s
	}
	return s
}

// Checked records that the current rule examined one item (a packet, a
// Send, a transaction, a connection's set-up) and so was evaluated.
func (c *Conn) Checked() { c.curState().checked++ }

// Skip records that the current rule could not judge one item, and why.
func (c *Conn) Skip(why Reason) { c.curState().skipped[why]++ }

// Report records a finding of the current rule. The runner fills in the
// rule, its reference and the connection; f.Severity may lower the rule's
// severity for a milder case. f.Packets is copied.
func (c *Conn) Report(f Finding) {
	ru := c.curRule()
	s := c.state(ru)
	s.total++
	r := c.r
	if len(s.findings) >= r.cfg.MaxFindings || r.kept >= r.cfg.MaxTotal {
		r.omitted++
		return
	}
	f.Rule = ru.ID
	if f.Severity == 0 || f.Severity > ru.Severity {
		f.Severity = ru.Severity
	}
	f.Connection = c.ID
	f.Reference = ru.Reference
	f.ULP = ru.ULP
	if n := len(f.Packets); n > r.cfg.MaxPackets {
		f.PacketsOmitted += n - r.cfg.MaxPackets
		f.Packets = f.Packets[:r.cfg.MaxPackets]
	}
	f.Packets = slices.Clone(f.Packets)
	if f.Packets == nil {
		f.Packets = []int{}
	}
	s.findings = append(s.findings, f)
	r.kept++
}

// Dropped counts a finding of the current rule that the limits leave out
// (as Report would) and reports whether there is one, so that a rule that
// fires on every message does not format a message nobody will read.
func (c *Conn) Dropped() bool { return c.dropped() }

func (c *Conn) dropped() bool {
	s := c.curState()
	r := c.r
	if len(s.findings) >= r.cfg.MaxFindings || r.kept >= r.cfg.MaxTotal {
		s.total++
		r.omitted++
		return true
	}
	return false
}

// Reportf is Report for the common case: packets, a key, and a message.
func (c *Conn) Reportf(packets []int, key, format string, a ...any) {
	if c.dropped() {
		return
	}
	c.Report(Finding{Packets: packets, Key: key, Message: fmt.Sprintf(format, a...)})
}

// Enabled tells whether the rule with that ID is being evaluated.
func (c *Conn) Enabled(id string) bool {
	ru, ok := byID[id]
	return ok && c.r.enabled[ru.index]
}

func (c *Conn) found() bool {
	for _, s := range c.rs {
		if s != nil && s.total > 0 {
			return true
		}
	}
	return false
}

// Sends returns how many Sends of the connection the engine delivered.
func (c *Conn) Sends() int { return c.sends }

// RDMAOps returns how many RDMA Reads and Writes of the connection the
// engine delivered.
func (c *Conn) RDMAOps() int { return c.ops }

// SnapCut returns how many packets of the connection the capture's snap
// length cut.
func (c *Conn) SnapCut() int { return c.snapCut }

// MaxPackets is the number of packet numbers a finding keeps
// (Config.MaxPackets).
func (c *Conn) MaxPackets() int { return c.r.cfg.MaxPackets }

// Shared returns what the rules of the ULP named ulp keep across the
// connections of the capture (one value per Runner), made by mk on first
// use.
func (c *Conn) Shared(ulp string, mk func() any) any {
	r := c.r
	if v, ok := r.shared[ulp]; ok {
		return v
	}
	if r.shared == nil {
		r.shared = map[string]any{}
	}
	v := mk()
	r.shared[ulp] = v
	return v
}
