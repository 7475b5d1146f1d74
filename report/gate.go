package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// The gate: what `rdmashark check` asserts beside the rules, so that a CI
// job never passes on a capture that gave it nothing to judge, and can
// demand what its test must have exercised.
//
// GATE-EVIDENCE (always, unless GateOptions.AllowEmpty): the captures hold
// at least one RDMA connection, one of them carries RPC-over-RDMA, at least
// one rule was evaluated, and at least one RPC-over-RDMA connection's set-up
// (the CM exchange, or MPA for iWARP) is in the capture, without which the
// RFC 8797 rules cannot be judged.
//
// GATE-MIN-CONNECTIONS, GATE-MIN-TRANSACTIONS, GATE-REMOTE-INVALIDATION and
// GATE-MIN-INLINE-THRESHOLD: the assertions a job asks for with flags.

// Gate assertion IDs.
const (
	GateEvidence           = "GATE-EVIDENCE"
	GateMinConnections     = "GATE-MIN-CONNECTIONS"
	GateMinTransactions    = "GATE-MIN-TRANSACTIONS"
	GateRemoteInvalidation = "GATE-REMOTE-INVALIDATION"
	GateMinInlineThreshold = "GATE-MIN-INLINE-THRESHOLD"
)

// GateOptions are the gate's assertions beside the rules.
type GateOptions struct {
	// AllowEmpty lets captures that give nothing to judge pass
	// (GATE-EVIDENCE is then reported as allowed, not failed).
	AllowEmpty bool
	// MinConnections and MinTransactions, when positive, demand at least
	// that many RDMA connections and RPC transactions (Calls answered by
	// their Reply) over all captures.
	MinConnections, MinTransactions int
	// ExpectRemoteInvalidation, when set, demands that every
	// RPC-over-RDMA connection negotiated remote invalidation (true) or
	// did not (false) (RFC 8797 section 4.1).
	ExpectRemoteInvalidation *bool
	// MinInlineThreshold, when positive, demands that every
	// RPC-over-RDMA connection negotiated inline thresholds of at least
	// this many octets both ways (RFC 8797 section 4.2).
	MinInlineThreshold int
}

// GateStatus is a gate assertion's verdict.
type GateStatus string

const (
	GatePassed GateStatus = "passed"
	GateFailed GateStatus = "failed"
	// GateAllowed: GATE-EVIDENCE found nothing to judge, and --allow-empty
	// accepted it.
	GateAllowed GateStatus = "allowed"
)

// GateResult is one gate assertion, reported like a rule.
type GateResult struct {
	ID     string     `json:"id"`
	Status GateStatus `json:"status"`
	// Summary says what the assertion demands; Message what was found.
	Summary string `json:"summary"`
	Message string `json:"message"`
	// Evidence is true for GATE-EVIDENCE: a failure means the captures
	// gave nothing (or too little) to judge, exit status 3.
	Evidence bool `json:"-"`
}

// Negotiated is what a connection's set-up negotiated (RFC 8797), as the
// gate and reports read it.
type Negotiated struct {
	RemoteInvalidation bool `json:"remote_invalidation"`
	// Inline thresholds in octets.
	ClientToServer int `json:"client_to_server_inline"`
	ServerToClient int `json:"server_to_client_inline"`
}

// Judge evaluates the gate on every file added and records the verdicts
// in r.Gate; a failed assertion fails the report.
func (r *CheckReport) Judge(o GateOptions) {
	r.Gate = nil
	r.Summary.GateFailures, r.Summary.NothingToJudge = 0, false
	r.Failed = r.Summary.Unreadable > 0 || (r.Summary.AtOrAboveFailOn > 0 && !r.FindingsDoNotFail) ||
		(r.FailOnDamage && r.Summary.Incomplete > 0)
	var conns, rpcConns, negotiated, evaluated, checks, otherULP, otherSetUp int
	var txns uint64
	reasons := map[string]int{}
	for _, f := range r.Files {
		// What Add counted of the file's connections (gateCounts).
		g := &f.gate
		conns += f.ForgottenConnections + g.conns
		rpcConns += g.rpcConns
		negotiated += g.negotiated
		otherULP += g.otherULP
		otherSetUp += g.otherSetUp
		txns += g.txns
		checks += g.checks
		evaluated += g.evaluated
		for why, n := range g.reasons {
			reasons[why] += n
		}
		for _, ch := range f.ForgottenChecks {
			if ch.Status != check.StatusNotEvaluated {
				evaluated++
			}
		}
	}

	// The evidence is a connection of any registered upper-layer
	// protocol with its set-up in the capture; the messages name
	// RPC-over-RDMA's figures as before, and the others' beside them.
	ev := GateResult{ID: GateEvidence, Evidence: true,
		Summary: "the captures hold RDMA connections carrying an upper-layer protocol (RPC-over-RDMA or another registered one), with their set-up, on which the rules could be evaluated"}
	switch {
	case conns == 0:
		ev.Message = "nothing to judge: 0 RDMA connections"
	case rpcConns+otherULP == 0:
		ev.Message = fmt.Sprintf("no RPC-over-RDMA traffic: none of the %d RDMA connections carries RPC-over-RDMA or another registered upper-layer protocol", conns)
	case evaluated == 0:
		ev.Message = fmt.Sprintf("every rule not evaluated: %s", topReasons(reasons, checks))
	case negotiated+otherSetUp == 0:
		ev.Message = fmt.Sprintf("no connection set-up in the capture: the set-up of the %d upper-layer protocol connection(s) is missing, so what they negotiated cannot be judged; start the capture before the connections", rpcConns+otherULP)
	}
	switch {
	case ev.Message == "":
		ev.Status = GatePassed
		ev.Message = fmt.Sprintf("%d RDMA connections, %d carrying RPC-over-RDMA (%d with their set-up), %d RPC transactions; %d of %d checks evaluated",
			conns, rpcConns, negotiated, txns, evaluated, checks)
		if otherULP > 0 {
			ev.Message += fmt.Sprintf("; %d carrying other upper-layer protocols (%d with their set-up)", otherULP, otherSetUp)
		}
	case o.AllowEmpty:
		ev.Status = GateAllowed
		ev.Message += " (allowed by --allow-empty)"
	default:
		ev.Status = GateFailed
	}
	r.Gate = append(r.Gate, ev)

	if o.MinConnections > 0 {
		g := GateResult{ID: GateMinConnections, Evidence: true,
			Summary: fmt.Sprintf("at least %d RDMA connections (--min-connections)", o.MinConnections),
			Message: fmt.Sprintf("%d RDMA connections", conns)}
		g.Status = passIf(conns >= o.MinConnections)
		r.Gate = append(r.Gate, g)
	}
	if o.MinTransactions > 0 {
		g := GateResult{ID: GateMinTransactions, Evidence: true,
			Summary: fmt.Sprintf("at least %d RPC transactions, Calls answered by their Reply (--min-transactions)", o.MinTransactions),
			Message: fmt.Sprintf("%d RPC transactions", txns)}
		g.Status = passIf(txns >= uint64(o.MinTransactions))
		r.Gate = append(r.Gate, g)
	}
	if o.ExpectRemoteInvalidation != nil {
		want := *o.ExpectRemoteInvalidation
		g := GateResult{ID: GateRemoteInvalidation,
			Summary: fmt.Sprintf("every RPC-over-RDMA connection negotiated remote invalidation: %s (--expect-remote-invalidation, RFC 8797 section 4.1)", yesNo(want))}
		g.Status, g.Message = r.eachNegotiated(func(n *Negotiated) (bool, string) {
			return n.RemoteInvalidation == want, "remote invalidation " + yesNo(n.RemoteInvalidation)
		})
		r.Gate = append(r.Gate, g)
	}
	if o.MinInlineThreshold > 0 {
		g := GateResult{ID: GateMinInlineThreshold,
			Summary: fmt.Sprintf("every RPC-over-RDMA connection negotiated inline thresholds of at least %d octets both ways (--min-inline-threshold, RFC 8797 section 4.2)", o.MinInlineThreshold)}
		g.Status, g.Message = r.eachNegotiated(func(n *Negotiated) (bool, string) {
			return n.ClientToServer >= o.MinInlineThreshold && n.ServerToClient >= o.MinInlineThreshold,
				fmt.Sprintf("inline thresholds %d/%d (C→S/S→C)", n.ClientToServer, n.ServerToClient)
		})
		r.Gate = append(r.Gate, g)
	}
	for _, g := range r.Gate {
		if g.Status == GateFailed {
			r.Failed = true
			r.Summary.GateFailures++
			if g.Evidence {
				r.Summary.NothingToJudge = true
			}
		}
	}
	r.Verdict = r.verdict()
}

// gateCounts are what the gate needs of a file's connections (those of no
// connection aside), counted by CheckReport.Add as it walks them for the
// summary: Judge then need not walk them again, reading back the spilled
// ones (findings_spill.go).
type gateCounts struct {
	conns, rpcConns, negotiated int
	txns                        uint64
	checks, evaluated           int
	// otherULP counts the connections of the upper-layer protocols other
	// than RPC-over-RDMA; otherSetUp those with their set-up.
	otherULP, otherSetUp int
	reasons              map[string]int // of the checks not evaluated
}

// add counts connection c.
func (g *gateCounts) add(c *CheckConnection) {
	if c.ID == 0 {
		return
	}
	g.conns++
	switch {
	case c.RPC:
		g.rpcConns++
		if c.Negotiated != nil {
			g.negotiated++
		}
	case c.ULP != "":
		// Another upper-layer protocol: its set-up is its evidence.
		g.otherULP++
		if c.setUp {
			g.otherSetUp++
		}
	}
	g.txns += c.Transactions
	for _, ch := range c.Checks {
		g.checks++
		if ch.Status == check.StatusNotEvaluated {
			if g.reasons == nil {
				g.reasons = map[string]int{}
			}
			g.reasons[ch.Reason]++
		} else {
			g.evaluated++
		}
	}
}

// eachNegotiated applies an expectation to every RPC-over-RDMA
// connection: it passes when there is at least one and each has its
// set-up in the capture and meets it. The message names the connections
// that do not.
func (r *CheckReport) eachNegotiated(ok func(*Negotiated) (bool, string)) (GateStatus, string) {
	var bad []string
	n, good := 0, 0
	for _, f := range r.Files {
		r.keepErr(f.eachConn(func(c *CheckConnection, _ []check.Finding) error {
			if c.ID == 0 || !c.RPC {
				return nil
			}
			n++
			name := fmt.Sprintf("%s connection %d", artifactName(f.File), c.ID)
			if c.Negotiated == nil {
				bad = append(bad, name+": set-up not in the capture")
				return nil
			}
			pass, what := ok(c.Negotiated)
			if pass {
				good++
			} else {
				bad = append(bad, name+": "+what)
			}
			return nil
		}))
	}
	switch {
	case n == 0:
		return GateFailed, "no RPC-over-RDMA connection to judge"
	case len(bad) > 0:
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("… and %d more", len(bad)-5))
		}
		return GateFailed, fmt.Sprintf("%d of %d RPC-over-RDMA connections do not: %s", n-good, n, strings.Join(bad, "; "))
	}
	return GatePassed, fmt.Sprintf("all %d RPC-over-RDMA connections do", n)
}

// topReasons lists the commonest reasons rules were not evaluated.
func topReasons(reasons map[string]int, checks int) string {
	type kv struct {
		why string
		n   int
	}
	var all []kv
	for why, n := range reasons {
		all = append(all, kv{why, n})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].why < all[j].why
	})
	var parts []string
	for i, e := range all {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", e.why, e.n))
	}
	return fmt.Sprintf("%d checks, %s", checks, strings.Join(parts, "; "))
}

func passIf(ok bool) GateStatus {
	if ok {
		return GatePassed
	}
	return GateFailed
}

// verdict is the gate's one-line verdict: "passed", or why it failed.
func (r *CheckReport) verdict() string {
	var why []string
	if r.Summary.Unreadable > 0 {
		why = append(why, fmt.Sprintf("%d unreadable", r.Summary.Unreadable))
	}
	if r.Summary.AtOrAboveFailOn > 0 && !r.FindingsDoNotFail {
		why = append(why, fmt.Sprintf("%d findings at or above %s", r.Summary.AtOrAboveFailOn, r.FailOn))
	}
	for _, g := range r.Gate {
		if g.Status == GateFailed {
			why = append(why, g.ID+": "+g.Message)
		}
	}
	if len(why) == 0 {
		if r.FailOnDamage && r.Summary.Incomplete > 0 {
			// The text report says why (incomplete input, --fail-on-damage).
			return "FAILED"
		}
		if r.FindingsDoNotFail && r.Summary.AtOrAboveFailOn > 0 {
			return fmt.Sprintf("passed (writing a baseline: %d findings at or above %s recorded, not failed)", r.Summary.AtOrAboveFailOn, r.FailOn)
		}
		return "passed"
	}
	return "FAILED (" + strings.Join(why, "; ") + ")"
}

// gateName is the JUnit class and SARIF name of the gate assertions.
const gateName = "rdmashark gate"

// gateFacts reads what the gate needs of a connection: its negotiation
// (when it carries RPC-over-RDMA and its set-up is in the capture) and its
// RPC transactions (Replies matched to their Call).
func gateFacts(dc *dissect.Connection, rpc bool) (*Negotiated, uint64) {
	var n *Negotiated
	if rpc && dc.Negotiated {
		t := thresholds(dc)
		n = &Negotiated{RemoteInvalidation: t.RemoteInvalidation, ClientToServer: t.ClientToServer, ServerToClient: t.ServerToClient}
	}
	return n, ulpTransactions(dc)
}

// writeGateText prints the gate's assertions under the summary.
func writeGateText(ew *errWriter, gate []GateResult) {
	for _, g := range gate {
		mark := "ok"
		switch g.Status {
		case GateFailed:
			mark = "FAILED"
		case GateAllowed:
			mark = "allowed"
		}
		ew.printf("gate %-7s %-25s %s\n", mark, g.ID, g.Message)
	}
}

// junitGate is the gate's test suite: one test case per assertion, a
// <failure> for each that failed (so "nothing to judge" is a failed test,
// not an empty report that passes).
func (r *CheckReport) junitGate() (junitSuite, bool) {
	s := junitSuite{Name: gateName, Time: "0"}
	for _, g := range r.Gate {
		tc := junitCase{Name: g.ID, Classname: gateName, Time: "0"}
		switch g.Status {
		case GateFailed:
			tc.Failure = &junitMessage{Message: g.Message, Type: "gate", Text: g.Summary}
			s.Failures++
		default:
			tc.SystemOut = g.Message
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	return s, s.Tests > 0
}

// sarifGate adds the gate to a SARIF run: each assertion that ran as a
// rule (GATE-*), each failed one as an error result and an error
// notification ("nothing to judge" must not read as a clean run). The
// invocation stays executionSuccessful: rdmashark ran to the end; only a
// capture that could not be read makes it false.
func (r *CheckReport) sarifGate(run *sarifRun, inv *sarifInvocation) {
	for _, g := range r.Gate {
		idx := len(run.Tool.Driver.Rules)
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: g.ID, Name: g.ID,
			ShortDescription:     sarifText{g.Summary},
			FullDescription:      sarifText{g.Summary},
			Help:                 sarifText{g.Summary + "\n\nAn assertion of rdmashark check's gate (docs/ci-gate.md), not a rule of a spec."},
			DefaultConfiguration: sarifConfig{"error"},
			Properties:           map[string]any{"tags": []string{"rdma", "gate"}, "status": string(g.Status), "message": g.Message},
		})
		if g.Status != GateFailed {
			continue
		}
		var locs []sarifLocation
		if len(r.Files) > 0 {
			i := 0
			locs = []sarifLocation{{PhysicalLocation: &sarifPhysical{ArtifactLocation: sarifArtifactLocation{URI: fileURI(r.Files[0].File), Index: &i}}}}
		}
		if locs == nil {
			locs = []sarifLocation{}
		}
		run.Results = append(run.Results, sarifResult{RuleID: g.ID, RuleIndex: idx, Level: "error",
			Message:             sarifText{g.ID + ": " + g.Message},
			Locations:           locs,
			PartialFingerprints: map[string]string{"rdmasharkGate/v1": g.ID},
			Properties:          map[string]any{"gate": true}})
		inv.Notifications = append(inv.Notifications, sarifNotification{Descriptor: &sarifDescriptorRef{ID: g.ID},
			Level: "error", Message: sarifText{g.ID + ": " + g.Message}})
	}
}
