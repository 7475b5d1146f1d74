package report

import (
	"fmt"
	"io"
	"math/bits"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// CheckReport is the document `rdmashark check` writes: every file
// checked, its connections with the status of each rule, and the findings.
// Its JSON keys are a contract: later versions add keys, never rename these.
type CheckReport struct {
	// FailOn is the severity at or above which findings fail the gate;
	// Failed tells whether they did (or an input could not be read).
	FailOn check.Severity `json:"fail_on"`
	Failed bool           `json:"failed"`
	// FailOnDamage: an incomplete file (interrupted, or damaged records
	// skipped) fails the gate (check --fail-on-damage, the default).
	FailOnDamage bool         `json:"fail_on_damage"`
	Files        []CheckFile  `json:"files"`
	Summary      CheckSummary `json:"summary"`
	// Rules are the rules that ran (for SARIF's rule list).
	Rules []*check.Rule `json:"-"`
	// Version is rdmashark's version (SARIF tool.driver.version).
	Version string `json:"-"`
	// Gate holds the gate's assertions (report/gate.go), set by Judge;
	// Verdict says "passed" or why the gate failed.
	Gate    []GateResult `json:"gate,omitempty"`
	Verdict string       `json:"verdict,omitempty"`
	// FindingsDoNotFail: findings do not fail the gate (check
	// --write-baseline records them instead).
	FindingsDoNotFail bool `json:"-"`
	// err is the first error reading a file's spilled connections back
	// (findings_spill.go): the report cannot be written whole.
	err error
}

// keepErr keeps the first error of reading spilled connections back.
func (r *CheckReport) keepErr(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

// CheckFile is one capture's checks.
type CheckFile struct {
	File    string `json:"file"`
	Packets uint64 `json:"packets"`
	// Error says why the capture could not be read (whole or in part).
	Error       string            `json:"error,omitempty"`
	Connections []CheckConnection `json:"connections"`
	Findings    []check.Finding   `json:"findings"`
	// Omitted counts findings not kept (past the per-rule bound);
	// Suppressed those a baseline suppressed.
	Omitted    int `json:"omitted,omitempty"`
	Suppressed int `json:"suppressed,omitempty"`
	// ForgottenConnections counts closed connections left out because the
	// connection table was full; ForgottenChecks adds up their checks, whose
	// findings count in the summary but are not listed (check.Result).
	ForgottenConnections int                 `json:"forgotten_connections,omitempty"`
	ForgottenChecks      []check.CheckResult `json:"forgotten_checks,omitempty"`
	// Caveats apply to every connection's results (check.Result.Caveats).
	Caveats []string `json:"caveats,omitempty"`
	// Records locate the findings' packets in the file (SARIF regions);
	// set by the caller, which can read the file again.
	Records map[int]RecordSpan `json:"-"`
	// spill holds the connections released during the read when check
	// took them out of memory (findings_spill.go): Connections and
	// Findings then hold only the others, and the reports walk both
	// (eachConn, EachFinding).
	spill *CheckSpill
	// gate is what Add counted for the gate (Judge).
	gate gateCounts

	// Interrupted: a signal stopped reading before the end of the file
	// (or before the file was opened); SkippedRecords counts damaged
	// records skipped. Either makes the file incomplete (Incomplete).
	Interrupted    bool   `json:"interrupted,omitempty"`
	SkippedRecords uint64 `json:"skipped_records,omitempty"`
}

// Incomplete reports whether the file was not read whole: interrupted,
// or damaged records skipped. (A file that could not be read at all, or
// whose reading stopped at an error, is Error instead.)
func (f *CheckFile) Incomplete() bool { return f.Interrupted || f.SkippedRecords > 0 }

// incompleteNote says why f is incomplete, or "".
func (f *CheckFile) incompleteNote() string {
	return incompleteText(f.Interrupted, f.SkippedRecords, f.Packets)
}

// CheckConnection is one connection and its rules' statuses.
type CheckConnection struct {
	ID          int      `json:"id"`
	Transport   string   `json:"transport,omitempty"`
	Client      Endpoint `json:"client"`
	Server      Endpoint `json:"server"`
	ServicePort *uint16  `json:"service_port"`
	State       string   `json:"state,omitempty"`
	// RPC tells whether the connection carries RPC-over-RDMA.
	RPC bool `json:"rpc"`
	// ULP is the upper-layer protocol the engine found on the connection
	// ("rpcordma"), empty when none.
	ULP                string              `json:"ulp,omitempty"`
	Checks             []check.CheckResult `json:"checks"`
	RemoteInvalidation *check.InvUsage     `json:"remote_invalidation,omitempty"`
	Chunks             *check.ChunkSummary `json:"chunks,omitempty"`
	// Caveats say why its results may rest on incomplete evidence
	// (check.ConnResult.Caveats, the file's included).
	Caveats []string `json:"caveats,omitempty"`
	// Negotiated is what the connection's set-up negotiated (RFC 8797),
	// nil when the set-up is not in the capture or it carries no
	// RPC-over-RDMA; Transactions counts its RPC Calls answered by their
	// Reply.
	Negotiated   *Negotiated `json:"negotiated,omitempty"`
	Transactions uint64      `json:"transactions,omitempty"`
	name         string
	setUp        bool // both sides' set-up messages are in the capture
}

// CheckSummary adds up every file.
type CheckSummary struct {
	Files      int `json:"files"`
	Unreadable int `json:"unreadable"`
	// Incomplete counts the files read in part (CheckFile.Incomplete).
	Incomplete  int `json:"incomplete"`
	Connections int `json:"connections"`
	// Findings counts findings by severity name (omitted ones included).
	Findings     map[string]int `json:"findings"`
	Suppressed   int            `json:"suppressed"`
	NotEvaluated int            `json:"not_evaluated"`
	// AtOrAboveFailOn counts the findings that fail the gate.
	AtOrAboveFailOn int `json:"at_or_above_fail_on"`
	// GateFailures counts the gate's failed assertions; NothingToJudge
	// is set when one of them says the captures gave too little to judge
	// (exit status 3).
	GateFailures   int  `json:"gate_failures"`
	NothingToJudge bool `json:"nothing_to_judge"`
}

// NewCheckFile builds one file's part of the report from the snapshot of
// the engine that read it and the runner's result; readErr is what stopped
// reading, if anything (eng may then be nil).
func NewCheckFile(name string, eng *dissect.Snapshot, res *check.Result, readErr error) CheckFile {
	f := CheckFile{File: name, Connections: []CheckConnection{}, Findings: []check.Finding{}}
	if readErr != nil {
		f.Error = readErr.Error()
	}
	if eng != nil {
		f.Packets = eng.Stats.Packets
		f.SkippedRecords = eng.Stats.Skipped
	}
	if res == nil {
		return f
	}
	f.Omitted, f.Suppressed = res.Omitted, res.Suppressed
	f.ForgottenConnections, f.ForgottenChecks = res.ForgottenConnections, res.ForgottenChecks
	f.Caveats = res.Caveats
	f.Findings = append(f.Findings, res.Findings...)
	for _, cr := range res.Connections {
		f.Connections = append(f.Connections, checkConnection(cr))
	}
	return f
}

// checkConnection is one connection's part of a CheckFile.
func checkConnection(cr *check.ConnResult) CheckConnection {
	c := CheckConnection{ID: cr.ID, Transport: cr.Transport, State: cr.State, RPC: cr.RPC,
		Checks: cr.Checks, RemoteInvalidation: cr.Usage, Chunks: cr.Chunks, Caveats: cr.Caveats, name: cr.Name()}
	if c.Checks == nil {
		c.Checks = []check.CheckResult{}
	}
	if dc := cr.Connection(); dc != nil {
		c.Client, c.Server = endpoint(dc.Transport, dc.Client), endpoint(dc.Transport, dc.Server)
		c.Negotiated, c.Transactions = gateFacts(dc, cr.RPC)
		c.ULP = dc.ULP
		// A set-up refused with a CM REJ is whole too: the REJ answers.
		c.setUp = dc.PrivateData[0].Seen && (dc.PrivateData[1].Seen || dc.Reject.Seen)
	}
	if cr.ServicePort != 0 {
		p := cr.ServicePort
		c.ServicePort = &p
	}
	return c
}

// Add appends a file and updates the summary.
func (r *CheckReport) Add(f CheckFile) {
	s := &r.Summary
	if s.Findings == nil {
		s.Findings = map[string]int{}
	}
	s.Files++
	if f.Error != "" {
		s.Unreadable++
		r.Failed = true
	}
	if f.Incomplete() {
		s.Incomplete++
		if r.FailOnDamage {
			r.Failed = true
		}
	}
	s.Suppressed += f.Suppressed
	rules := ruleFindings{}
	f.gate = gateCounts{}
	err := f.eachConn(func(c *CheckConnection, fs []check.Finding) error {
		f.gate.add(c)
		if c.ID != 0 {
			s.Connections++
		}
		rules.reset(fs)
		for _, ch := range c.Checks {
			if ch.Status == check.StatusNotEvaluated {
				s.NotEvaluated++
			}
			if ch.Findings == 0 {
				continue
			}
			// Findings kept carry their own severity; omitted ones count
			// at the worst severity kept.
			kept := 0
			for _, i := range rules.of(ch.Rule) {
				fd := &fs[i]
				kept++
				s.Findings[fd.Severity.String()]++
				if fd.Severity >= r.FailOn {
					s.AtOrAboveFailOn++
				}
			}
			if extra := ch.Findings - kept; extra > 0 && ch.Worst != 0 {
				s.Findings[ch.Worst.String()] += extra
				if ch.Worst >= r.FailOn {
					s.AtOrAboveFailOn += extra
				}
			}
		}
		return nil
	})
	r.keepErr(err)
	r.Files = append(r.Files, f)
	// The forgotten connections' findings are not listed: they count at
	// the worst severity their rule found.
	s.Connections += f.ForgottenConnections
	for _, ch := range f.ForgottenChecks {
		if ch.Findings > 0 && ch.Worst != 0 {
			s.Findings[ch.Worst.String()] += ch.Findings
			if ch.Worst >= r.FailOn {
				s.AtOrAboveFailOn += ch.Findings
			}
		}
	}
	if s.AtOrAboveFailOn > 0 {
		r.Failed = true
	}
}

// WriteJSON writes the report, indented.
func (r *CheckReport) WriteJSON(w io.Writer) error {
	if r.Files == nil {
		r.Files = []CheckFile{}
	}
	if r.Summary.Findings == nil {
		r.Summary.Findings = map[string]int{}
	}
	if r.err != nil {
		return r.err
	}
	// Written as it is encoded, not built whole first (jsonstream.go);
	// "<stdin>" and "a < b" as they are: this is no HTML. A file's
	// spilled connections and findings are read back as they are written
	// (findings_spill.go).
	spilled := func(v reflect.Value) *CheckFile {
		if f := v.Addr().Interface().(*CheckFile); f.spill.Len() > 0 {
			return f
		}
		return nil
	}
	return writeJSONStreamLists(w, r, reflect.TypeFor[CheckFile](), map[string]jsonList{
		"Connections": func(v reflect.Value) func(func(reflect.Value)) error {
			if f := spilled(v); f != nil {
				return walkList(f.eachConnection)
			}
			return nil
		},
		"Findings": func(v reflect.Value) func(func(reflect.Value)) error {
			if f := spilled(v); f != nil {
				return walkList(f.EachFinding)
			}
			return nil
		},
	})
}

// TextOptions tune WriteText.
type TextOptions struct {
	// Verbose lists every finding kept and every rule's status; otherwise
	// each rule shows its first MaxPerRule findings and the checks are
	// counted.
	Verbose    bool
	MaxPerRule int
	// Layout: the width the lines are wrapped to (none with Wide), and
	// colour (termwidth.go).
	Layout
}

// WriteText prints the findings grouped by file and connection, then the
// summary.
func (r *CheckReport) WriteText(w io.Writer, o TextOptions) error {
	if o.MaxPerRule <= 0 {
		o.MaxPerRule = 3
	}
	if r.err != nil {
		return r.err
	}
	ew := &errWriter{w: w}
	if !o.Wide {
		ww := NewWrapWriter(w, o.width())
		ew.w = ww
		defer ww.Flush()
	}
	rules := ruleFindings{}
	for _, f := range r.Files {
		ew.printf("%s: %s, %s\n", fields.Escape(f.File), Plural(int(f.Packets), "packet"), Plural(f.numConnections(), "connection"))
		if f.Error != "" {
			ew.printf("  could not be read: %s\n", fields.Escape(f.Error))
		}
		if note := f.incompleteNote(); note != "" {
			ew.printf("  INCOMPLETE: %s\n", note)
		}
		for _, note := range f.Caveats {
			ew.printf("  caveat: %s\n", note)
		}
		if err := f.eachConn(func(c *CheckConnection, fs []check.Finding) error {
			rules.reset(fs)
			writeConnText(ew, &f, fs, rules, c, o)
			return nil
		}); err != nil {
			return err
		}
		if f.Suppressed > 0 {
			ew.printf("  %d findings suppressed by the baseline\n", f.Suppressed)
		}
	}
	s := &r.Summary
	verdict := "passed"
	if r.Failed {
		verdict = "FAILED"
	}
	if r.Verdict != "" {
		verdict = r.Verdict
	}
	ew.printf("\n%s (%d unreadable), %s: %s, %s, %d info",
		Plural(s.Files, "file"), s.Unreadable, Plural(s.Connections, "connection"),
		Plural(s.Findings["error"], "error"), Plural(s.Findings["warning"], "warning"), s.Findings["info"])
	if s.Suppressed > 0 {
		ew.printf(", %d suppressed by the baseline", s.Suppressed)
	}
	ew.printf("; %d checks not evaluated", s.NotEvaluated)
	if s.Incomplete > 0 {
		ew.printf("; %s incomplete", Plural(s.Incomplete, "file"))
	}
	ew.printf("\n")
	if s.Incomplete > 0 {
		if r.FailOnDamage {
			verdict += " (incomplete input fails the gate: --fail-on-damage)"
		} else {
			verdict += " (on incomplete input: --fail-on-damage=false)"
		}
	}
	writeGateText(ew, r.Gate)
	ew.printf("fail-on %s: %s\n", r.FailOn, paintVerdict(o.Color, verdict))
	return ew.err
}

// writeConnText writes connection c; fs are its findings, rules indexes
// them.
func writeConnText(ew *errWriter, f *CheckFile, fs []check.Finding, rules ruleFindings, c *CheckConnection, o TextOptions) {
	ew.printf("  %s\n", c.name)
	passed, found, notEval := check.Tally(c.Checks)
	for _, ch := range c.Checks {
		if ch.Findings == 0 {
			continue
		}
		ru, _ := check.Lookup(ch.Rule)
		plural := "s"
		if ch.Findings == 1 {
			plural = ""
		}
		ew.printf("    %s %-23s %d finding%s  %s\n", paintSeverity(o.Color, fmt.Sprintf("%-7s", ch.Worst)), ch.Rule, ch.Findings, plural, ru.Reference)
		shown := 0
		for _, i := range rules.of(ch.Rule) {
			fd := &fs[i]
			if !o.Verbose && shown == o.MaxPerRule {
				break
			}
			shown++
			ew.printf("      %s%s\n", where(fd), fd.Message)
		}
		if rest := ch.Findings - shown; rest > 0 {
			more := ""
			if !o.Verbose && shown < ch.Findings-ch.Omitted {
				more = " (--verbose lists them)"
			}
			ew.printf("      … and %d more%s\n", rest, more)
		}
	}
	if c.ID == 0 {
		return
	}
	if o.Verbose {
		for _, ch := range c.Checks {
			switch {
			case ch.Status == check.StatusNotEvaluated:
				ew.printf("    %-7s %-23s not evaluated: %s\n", "-", ch.Rule, ch.Reason)
			case ch.Status == check.StatusPassed:
				note := ""
				if ch.Reason != "" {
					note = " (" + ch.Reason + ")"
				}
				if ch.Suppressed > 0 {
					note += fmt.Sprintf(" (%d suppressed by the baseline)", ch.Suppressed)
				}
				ew.printf("    %s %-23s passed, %d checked%s\n", paintSeverity(o.Color, "ok     "), ch.Rule, ch.Checked, note)
			}
		}
	}
	ew.printf("    checks: %d passed, %d with findings, %d not evaluated\n", passed, found, notEval)
	for _, note := range ownCaveats(f, c) {
		ew.printf("    caveat: %s\n", note)
	}
	if u := c.RemoteInvalidation; u != nil {
		neg := "unknown"
		if u.Negotiated != nil {
			neg = fmt.Sprint(*u.Negotiated)
		}
		if u.Version2 {
			ew.printf("    remote invalidation: version 2, solicited by %d Calls, %d of %d Replies With Invalidate\n", u.SolicitingCalls, u.RepliesWithInvalidate, u.Replies)
		} else {
			ew.printf("    remote invalidation: negotiated %s, %d of %d Replies With Invalidate\n", neg, u.RepliesWithInvalidate, u.Replies)
		}
	}
}

// ownCaveats are c's caveats less the file's (printed once for the file).
func ownCaveats(f *CheckFile, c *CheckConnection) []string {
	var out []string
	for _, note := range c.Caveats {
		if !slices.Contains(f.Caveats, note) {
			out = append(out, note)
		}
	}
	return out
}

// where prefixes a finding's message with its packets and XID.
func where(f *check.Finding) string { return string(appendWhere(nil, f)) }

// appendWhere appends where's text: "packet 7, XID 0x0000002a: ".
func appendWhere(b []byte, f *check.Finding) []byte {
	start := len(b)
	switch n := len(f.Packets); {
	case n == 1:
		b = append(b, "packet "...)
		b = strconv.AppendInt(b, int64(f.Packets[0]), 10)
	case n > 1 && n <= 4:
		b = append(b, "packets "...)
		for i, p := range f.Packets {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
	case n > 4:
		b = append(b, "packets "...)
		b = strconv.AppendInt(b, int64(f.Packets[0]), 10)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(f.Packets[1]), 10)
		b = append(b, ", … ("...)
		b = strconv.AppendInt(b, int64(n+f.PacketsOmitted), 10)
		b = append(b, ')')
	}
	if f.XID != nil {
		if len(b) > start {
			b = append(b, ", "...)
		}
		b = append(b, "XID 0x"...)
		b = appendHex(b, uint64(*f.XID), 8)
	}
	if len(b) > start {
		b = append(b, ": "...)
	}
	return b
}

// appendHex appends v in lower-case hexadecimal, at least digits of them
// (fmt's %0*x).
func appendHex(b []byte, v uint64, digits int) []byte {
	for n := max(1, (bits.Len64(v)+3)/4); n < digits; n++ {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, v, 16)
}

// WriteRules prints the rule table: ID, severity, reference, summary.
func WriteRules(w io.Writer, rules []*check.Rule) error {
	ew := &errWriter{w: w}
	idw, refw := 0, 0
	for _, r := range rules {
		idw = max(idw, len(r.ID))
		refw = max(refw, len(r.Reference))
	}
	ew.printf("%-*s  %-8s %-*s  %s\n", idw, "ID", "SEVERITY", refw, "REFERENCE", "SUMMARY")
	for _, r := range rules {
		mark := ""
		if r.Added {
			mark = " [added]"
		}
		ew.printf("%-*s  %-8s %-*s  %s%s\n", idw, r.ID, r.Severity, refw, r.Reference, r.Summary, mark)
	}
	return ew.err
}

// WriteRule prints one rule's explanation, for `rdmashark rules ID`.
func WriteRule(w io.Writer, r *check.Rule) error {
	ew := &errWriter{w: w}
	ew.printf("%s (%s) — %s\n\n", r.ID, r.Severity, r.Summary)
	ew.printf("%s\n\n", r.Explanation)
	ew.printf("Reference: %s\n", r.Reference)
	ew.printf("Evidence:  %s\n", r.Evidence)
	if r.Added {
		ew.printf("Added:     not in the project's list of checks; the spec above supports it.\n")
	}
	if r.Waits != "" {
		ew.printf("Not evaluated yet: waits for %s.\n", r.Waits)
	}
	return ew.err
}

// artifactName is the capture's name as reports print it.
func artifactName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return filepath.ToSlash(file)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

// AddChecks puts the checks' result into the analyze document: the
// findings, and per connection the use of remote invalidation, the chunks,
// and the status of every rule.
func (a *Analysis) AddChecks(res *check.Result) {
	if len(res.Findings) > 0 {
		// Shared, not copied: a copy of every finding held to the end
		// was one per closed connection's findings more (docs/streaming.md).
		a.Findings = res.Findings
	} else {
		a.Findings = a.Findings[:0]
	}
	a.CheckCaveats = res.Caveats
	byID := map[int]*check.ConnResult{}
	for _, cr := range res.Connections {
		byID[cr.ID] = cr
	}
	for i := range a.Connections {
		c := &a.Connections[i]
		if cr := byID[c.ID]; cr != nil {
			c.RemoteInvalidation, c.Chunks, c.Checks = cr.Usage, cr.Chunks, cr.Checks
			c.CheckCaveats = cr.Caveats
		}
	}
}

// findingRows takes connection c's rows of analyze's findings table: each
// rule that found something, its count and its first finding; and the
// line that says which of its checks ran.
func (r *analysisRows) findingRows(a *Analysis, c *Connection, fs []Finding) {
	r.anyChecks = r.anyChecks || len(c.Checks) > 0
	r.anyFindings = r.anyFindings || len(fs) > 0
	if r.rules == nil {
		r.rules = ruleFindings{}
	}
	r.rules.reset(fs)
	for _, ch := range c.Checks {
		if ch.Findings == 0 {
			continue
		}
		first := ""
		if is := r.rules.of(ch.Rule); len(is) > 0 {
			f := &fs[is[0]]
			first = where(f) + f.Message
		}
		if len(first) > 120 {
			first = first[:117] + "..."
		}
		r.findings.add(strconv.Itoa(c.ID), ch.Worst.String(), ch.Rule, strconv.Itoa(ch.Findings), first)
	}
	passed, found, notEval := check.Tally(c.Checks)
	if len(c.Checks) > 0 {
		w := &r.checks
		fmt.Fprintf(w, "connection %d: %d checks passed, %d found something, %d not evaluated", c.ID, passed, found, notEval)
		if u := c.RemoteInvalidation; u != nil {
			fmt.Fprintf(w, "; %d of %d Replies With Invalidate", u.RepliesWithInvalidate, u.Replies)
		}
		fmt.Fprintln(w)
		for _, note := range c.CheckCaveats {
			if !slices.Contains(a.CheckCaveats, note) {
				fmt.Fprintf(w, "  caveat: %s\n", note)
			}
		}
	}
}

// writeFindingsTable prints analyze's findings (rows from findingRows),
// then which checks ran.
func writeFindingsTable(w io.Writer, a *Analysis, rows *analysisRows) error {
	var none []Finding // findings of no connection: first in Findings
	for i := range a.Findings {
		if a.Findings[i].Connection != 0 {
			break
		}
		none = a.Findings[: i+1 : i+1]
	}
	if !rows.anyFindings && len(none) == 0 && !rows.anyChecks {
		return nil
	}
	fmt.Fprintln(w, "\nConformance (rdmashark rules ID explains a rule):")
	for _, f := range none {
		rows.findings.add("-", f.Severity.String(), f.Rule, "1", where(&f)+f.Message)
	}
	if err := rows.findings.render(w, tablewriter.WithHeaderAutoFormat(tw.Off)); err != nil {
		return err
	}
	io.WriteString(w, rows.checks.String())
	for _, note := range a.CheckCaveats {
		fmt.Fprintf(w, "caveat on every connection's checks: %s\n", note)
	}
	return nil
}

// Plural writes n and the noun, with an s unless n is 1 ("1 file",
// "2 files").
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
