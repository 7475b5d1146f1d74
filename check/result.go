package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
)

// Status is what became of one rule on one connection.
type Status uint8

const (
	// StatusPassed: the rule examined the connection and found nothing.
	StatusPassed Status = iota + 1
	// StatusFound: the rule found something (of any severity).
	StatusFound
	// StatusNotEvaluated: the capture lacks the rule's evidence for the
	// connection; CheckResult.Reason says why.
	StatusNotEvaluated
)

func (s Status) String() string {
	switch s {
	case StatusPassed:
		return "passed"
	case StatusFound:
		return "found"
	case StatusNotEvaluated:
		return "not-evaluated"
	}
	return "unknown"
}

// MarshalText makes a Status appear by name in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a Status by name.
func (s *Status) UnmarshalText(b []byte) error {
	for v := StatusPassed; v <= StatusNotEvaluated; v++ {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unknown check status %q", b)
}

// CheckResult is one rule on one connection.
type CheckResult struct {
	Rule   string `json:"rule"`
	Status Status `json:"status"`
	// Reason says why the rule was not evaluated, or, when it was, what
	// part of the evidence it could not judge.
	Reason string `json:"reason,omitempty"`
	// Checked counts the items the rule examined (packets, Sends,
	// transactions, set-up messages).
	Checked int `json:"checked"`
	// Findings counts what the rule found, Omitted how many of them were
	// not kept (past Config.MaxFindings).
	Findings int `json:"findings"`
	Omitted  int `json:"omitted,omitempty"`
	// NotEvaluated counts the items the rule could not judge (Reason says
	// why).
	NotEvaluated int `json:"items_not_evaluated,omitempty"`
	// Suppressed counts findings a baseline suppressed.
	Suppressed int `json:"suppressed,omitempty"`
	// Worst is the highest severity among the findings kept.
	Worst Severity `json:"worst,omitempty"`
}

// Tally counts the rules of checks that passed, found something, and were
// not evaluated.
func Tally(checks []CheckResult) (passed, found, notEvaluated int) {
	for _, ch := range checks {
		switch ch.Status {
		case StatusPassed:
			passed++
		case StatusFound:
			found++
		case StatusNotEvaluated:
			notEvaluated++
		}
	}
	return passed, found, notEvaluated
}

// InvUsage is a connection's use of remote invalidation (INV-USAGE, and
// analyze's "remote_invalidation").
type InvUsage struct {
	// Negotiated is nil when the connection's set-up is not in the
	// capture, else whether both peers set R (RFC 8797 section 4.1).
	Negotiated *bool `json:"negotiated"`
	// Replies counts RPC Replies; RepliesWithInvalidate those sent with
	// Send With Invalidate.
	Replies               int `json:"replies"`
	RepliesWithInvalidate int `json:"replies_with_invalidate"`
	// Version2: every RPC-over-RDMA message of the connection used version
	// 2, which solicits remote invalidation per Call (rdma_inv_handle)
	// instead of negotiating it (Negotiated is then nil);
	// SolicitingCalls counts the Calls with a non-zero rdma_inv_handle.
	Version2        bool `json:"version2,omitempty"`
	SolicitingCalls int  `json:"soliciting_calls,omitempty"`
}

// ChunkSummary counts how a connection's RPC-over-RDMA messages used
// chunks (analyze's "chunks").
type ChunkSummary struct {
	Calls   int `json:"calls"`
	Replies int `json:"replies"`
	// Errors counts RDMA_ERROR messages.
	Errors int `json:"errors"`
	// ReadChunks counts Read chunks at a non-zero position (DDP-eligible
	// arguments); LongCalls RDMA_NOMSG Calls (a position-zero Read chunk).
	ReadChunks int `json:"read_chunks"`
	LongCalls  int `json:"long_calls"`
	// WriteChunks counts the Write chunks Calls provided; ReplyChunks the
	// Reply chunks Calls provided; LongReplies the RDMA_NOMSG Replies.
	WriteChunks int `json:"write_chunks"`
	ReplyChunks int `json:"reply_chunks"`
	LongReplies int `json:"long_replies"`
	// Segments counts the segments of every chunk list.
	Segments int `json:"segments"`
}

// ConnResult is one connection's checks.
type ConnResult struct {
	// ID is the connection's ID (0: packets of no connection).
	ID          int              `json:"id"`
	Transport   string           `json:"transport,omitempty"`
	Client      dissect.Endpoint `json:"-"`
	Server      dissect.Endpoint `json:"-"`
	ServicePort uint16           `json:"service_port,omitempty"`
	State       string           `json:"state,omitempty"`
	RPC         bool             `json:"rpc"`
	Checks      []CheckResult    `json:"checks"`
	Usage       *InvUsage        `json:"remote_invalidation,omitempty"`
	Chunks      *ChunkSummary    `json:"chunks,omitempty"`
	// Caveats say why the connection's results may rest on incomplete
	// evidence: packets of it the capture lacks (gaps in its PSNs or TCP
	// stream), or packets the capture as a whole lost (Result.Caveats,
	// repeated here). Its findings may then be missing or partial.
	Caveats  []string `json:"caveats,omitempty"`
	conn     *dissect.Connection
	findings []Finding
	// packed holds Checks while the result of a released connection
	// waits for Runner.Finish (packed.go); packedRules are its rules.
	packed      []byte
	packedRules []*Rule
}

// collectFindings appends every connection's findings, in order, to all
// and makes that res.Findings, each connection's findings then a slice of
// it: one copy of them is held to the end, not two. all may be
// res.Findings[:0] when the connections' findings already lie in its
// array in that order (each only moves down over itself).
func (res *Result) collectFindings(all []Finding) {
	for _, cr := range res.Connections {
		i := len(all)
		all = append(all, cr.findings...)
		if len(cr.findings) > 0 {
			cr.findings = all[i:len(all):len(all)]
		}
	}
	res.Findings = all
}

// Connection returns the engine's connection (nil for ID 0).
func (cr *ConnResult) Connection() *dissect.Connection { return cr.conn }

// Findings returns the connection's findings, in packet order. After
// Runner.Finish they share their array with Result.Findings: filter that
// into a new slice, not in place.
func (cr *ConnResult) Findings() []Finding { return cr.findings }

// Name describes the connection for people: "1 roce 192.0.2.2 QP 0x11 →
// 192.0.2.1:20049 QP 0x11", or "no connection" for ID 0.
func (cr *ConnResult) Name() string {
	if cr.ID == 0 {
		return "packets outside any connection"
	}
	ep := func(e dissect.Endpoint, port uint16) string {
		s := e.Address
		if port != 0 {
			s = dissect.HostPort(s, port)
		}
		if e.QPN != 0 {
			s += fmt.Sprintf(" QP 0x%06x", e.QPN)
		}
		return s
	}
	cport := uint16(0)
	if cr.Transport == "iwarp" {
		cport = cr.Client.Port
	}
	return fmt.Sprintf("connection %d (%s %s → %s, %s)", cr.ID, cr.Transport,
		ep(cr.Client, cport), ep(cr.Server, cr.ServicePort), cr.State)
}

// Result is what the runner found in one capture.
type Result struct {
	// Rules are the rules that were evaluated, in table order.
	Rules       []*Rule       `json:"-"`
	Connections []*ConnResult `json:"connections"`
	// Findings are every connection's findings, by connection, then by
	// first packet.
	Findings []Finding `json:"findings"`
	// Omitted counts findings not kept (past the bounds).
	Omitted int `json:"omitted,omitempty"`
	// Suppressed counts findings a baseline suppressed.
	Suppressed int `json:"suppressed,omitempty"`
	// ForgottenConnections counts connections whose results were dropped
	// with their summaries (the engine's connection table was full, see
	// dissect.ConnTable.Forgotten); ForgottenChecks adds up their checks
	// per rule, their findings counted as omitted.
	ForgottenConnections int           `json:"forgotten_connections,omitempty"`
	ForgottenChecks      []CheckResult `json:"forgotten_checks,omitempty"`
	// Caveats are the notes that apply to every connection (NoteLoss):
	// evidence was lost where it cannot be told whose it was.
	Caveats []string `json:"caveats,omitempty"`
}

// Narrow keeps connection id's results and findings only (check
// --connection: its ID as analyze numbers them); it reports whether the
// connection is there. The forgotten connections' checks stay.
func (r *Result) Narrow(id int) bool {
	found := false
	conns := r.Connections[:0]
	for _, cr := range r.Connections {
		if cr.ID == id {
			conns = append(conns, cr)
			found = true
		}
	}
	r.Connections = conns
	// A new slice, not r.Findings filtered in place: the connections'
	// findings share its array (Runner.Finish).
	var fs []Finding
	if r.Findings != nil {
		fs = []Finding{}
	}
	for _, f := range r.Findings {
		if f.Connection == id {
			fs = append(fs, f)
		}
	}
	r.Findings = fs
	return found
}

// AddCaveat notes that every connection's results may lack evidence.
func (r *Result) AddCaveat(note string) {
	r.Caveats = append(r.Caveats, note)
	for _, cr := range r.Connections {
		cr.Caveats = append(cr.Caveats, note)
	}
}

// NoteLoss adds the caveats of packets lost to the whole capture: kernel
// drops (live capture) and damaged records the reader skipped. Neither can
// be attributed to a connection, so every result carries them.
func (r *Result) NoteLoss(kernelDrops, skipped uint64) {
	if kernelDrops > 0 {
		r.AddCaveat(fmt.Sprintf("%d packets were dropped by the kernel during this capture: findings may be missing or partial", kernelDrops))
	}
	if skipped > 0 {
		r.AddCaveat(fmt.Sprintf("%d damaged records were skipped while reading the capture: findings may be missing or partial", skipped))
	}
}

// connCaveats notes what the capture lacks of one connection.
func connCaveats(dc *dissect.Connection) []string {
	var out []string
	if dc.MissingPSNs > 0 {
		what := "PSNs of this connection are"
		if dc.MissingPSNs == 1 {
			what = "PSN of this connection is"
		}
		out = append(out, fmt.Sprintf("%d %s missing from the capture: findings may be missing or partial", dc.MissingPSNs, what))
	}
	if dc.IWARP != nil {
		if n := dc.IWARP.Dir[0].GapOctets + dc.IWARP.Dir[1].GapOctets; n > 0 {
			out = append(out, fmt.Sprintf("%d octets of this connection's TCP stream are missing from the capture: findings may be missing or partial", n))
		}
	}
	return out
}

// Count returns how many findings (kept and omitted) are at or above sev.
func (r *Result) Count(sev Severity) int {
	n := 0
	count := func(checks []CheckResult) {
		for _, ch := range checks {
			if ch.Findings == 0 {
				continue
			}
			ru, _ := Lookup(ch.Rule)
			if ch.Worst >= sev || (ch.Worst == 0 && ru != nil && ru.Severity >= sev) {
				n += ch.Findings
			}
		}
	}
	for _, cr := range r.Connections {
		count(cr.Checks)
	}
	count(r.ForgottenChecks)
	return n
}

// result builds the connection's result after its End rules ran.
func (c *Conn) result() *ConnResult {
	// Sized exactly: a released connection's result is kept to the end.
	cr := &ConnResult{ID: c.ID, conn: c.Connection, Checks: make([]CheckResult, 0, len(c.r.rules))}
	if c.ID != 0 {
		cr.Transport = c.Transport.String()
		cr.Client, cr.Server = c.Client, c.Server
		cr.ServicePort = c.ServicePort
		cr.State = c.State.String()
		cr.Caveats = connCaveats(c.Connection)
		if c.hooks == nil {
			c.hooks = hooks[c.Connection.ULP]
		}
		if h := c.hooks; h != nil && h.Result != nil {
			h.Result(c, cr)
		}
	}
	for _, ru := range c.r.rules {
		if c.ID == 0 && ru.Packet == nil || ru.hiddenFor(c) {
			continue
		}
		s := c.state(ru)
		ch := CheckResult{Rule: ru.ID, Checked: s.checked, Findings: s.total, Omitted: s.total - len(s.findings)}
		for _, f := range s.findings {
			ch.Worst = max(ch.Worst, f.Severity)
		}
		skipped, top := 0, ReasonNone
		for why, n := range s.skipped {
			skipped += n
			if n > 0 && (top == ReasonNone || n > s.skipped[top]) {
				top = Reason(why)
			}
		}
		ch.NotEvaluated = skipped
		why := ""
		if ru.Applies != nil && ru.Waits == "" {
			why = ru.Applies(c)
		}
		switch {
		case ru.Waits != "":
			ch.Status, ch.Reason = StatusNotEvaluated, ru.waitsText()
		case s.total > 0:
			ch.Status = StatusFound
		case why != "":
			ch.Status, ch.Reason = StatusNotEvaluated, why
		case s.checked > 0:
			ch.Status = StatusPassed
		case skipped > 0:
			ch.Status, ch.Reason = StatusNotEvaluated, top.String()
		default:
			ch.Status, ch.Reason = StatusNotEvaluated, ru.noEvidenceText()
		}
		if ch.Status != StatusNotEvaluated && skipped > 0 {
			var parts []string
			for why, n := range s.skipped {
				if n > 0 {
					parts = append(parts, fmt.Sprintf("%d not evaluated: %s", n, Reason(why)))
				}
			}
			ch.Reason = strings.Join(parts, "; ")
		}
		cr.Checks = append(cr.Checks, ch)
		cr.findings = append(cr.findings, s.findings...)
	}
	sort.SliceStable(cr.findings, func(i, j int) bool { return cr.findings[i].First() < cr.findings[j].First() })
	return cr
}
