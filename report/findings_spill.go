package report

import (
	"slices"

	"github.com/segmentio/encoding/json"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/connspill"
)

// Flat memory for `check` (issue 14): as for analyze (analyze_spill.go),
// a connection the engine released has its part of the report — its
// CheckConnection and its findings, a baseline applied — built then and
// written out, and the reports read it back in its place (with
// --connection, that one only: Only).

// checkDoc is one connection's part of a CheckFile.
type checkDoc struct {
	Conn CheckConnection `json:"c"`
	// Name is Conn.name (unexported: not in the report's JSON).
	Name string `json:"n"`
	// SetUp is Conn.setUp.
	SetUp    bool            `json:"u,omitempty"`
	Findings []check.Finding `json:"f"`
	// Checks are Conn.Checks packed (connspill.Hooks.Checks).
	Checks []byte `json:"k,omitempty"`
	// With a baseline: how many findings it suppressed, and when it did,
	// the checks and the number of findings before (what the runner
	// counts of a connection the full table forgets: it forgets results
	// the baseline was not applied to).
	Suppressed     int                 `json:"s,omitempty"`
	ChecksBefore   []check.CheckResult `json:"cb,omitempty"`
	FindingsBefore int                 `json:"fb,omitempty"`
	// Unsuppressed are the findings before the baseline, when a baseline
	// is written (check --write-baseline records them) and the one applied
	// suppressed any.
	Unsuppressed []check.Finding `json:"fu,omitempty"`
}

// CheckSpill takes released connections out of memory for the check
// report. Make it the check runner's Config.Next observer and hand it the
// runner (SetRunner); build the file's part with its CheckFile, and Close
// it once the report is written (CheckReport.Close).
type CheckSpill struct {
	connspill.Spill[checkDoc]
	// suppressed counts the findings the baseline suppressed in the
	// connections spilled (and not forgotten since).
	suppressed int
}

// NewCheckSpill returns an empty spill. known, when not nil, is the
// baseline the check applies: it is applied to each connection as it is
// spilled (check.Baseline.ApplyConn), as check applies it to the others
// at the end. record: a baseline is written of the findings
// (RecordBaseline).
func NewCheckSpill(known *check.Baseline, record bool) *CheckSpill {
	s := &CheckSpill{}
	s.Init(spillConfig(), connspill.Hooks[checkDoc]{
		Build: func(_ *dissect.Connection, cr *check.ConnResult) checkDoc {
			var d checkDoc
			if known != nil {
				before := slices.Clone(cr.Checks)
				var all []check.Finding
				if record {
					all = slices.Clone(cr.Findings())
				}
				n := len(cr.Findings())
				if d.Suppressed = known.ApplyConn(cr); d.Suppressed > 0 {
					d.ChecksBefore, d.FindingsBefore, d.Unsuppressed = before, n, all
					s.suppressed += d.Suppressed
				}
			}
			d.Conn = checkConnection(cr)
			d.Name, d.Findings, d.SetUp = d.Conn.name, cr.Findings(), d.Conn.setUp
			return d
		},
		Checks: func(d *checkDoc) (*[]check.CheckResult, *[]byte) { return &d.Conn.Checks, &d.Checks },
		Forgotten: func(d *checkDoc) ([]check.CheckResult, int) {
			if d.Suppressed > 0 {
				s.suppressed -= d.Suppressed
				return d.ChecksBefore, d.FindingsBefore
			}
			return d.Conn.Checks, len(d.Findings)
		},
		Append: func(dst []byte, v any) ([]byte, error) {
			return json.Append(dst, v, json.EscapeHTML|json.SortMapKeys) // json.Marshal's flags
		},
		Unmarshal: json.Unmarshal,
	})
	return s
}

// RecordBaseline records in b the findings of the connections spilled
// (before the baseline applied to them, if any), as check.Baseline.Add
// records those of a result: call it before b.Add of the file's result.
// The spill must have been made with record set.
func (s *CheckSpill) RecordBaseline(b *check.Baseline) error {
	return s.Each(func(d *checkDoc) error { // all, whatever Only picks
		fs := d.Findings
		if d.Suppressed > 0 {
			fs = d.Unsuppressed
		}
		c := &d.Conn
		port := uint16(0)
		if c.ServicePort != nil {
			port = *c.ServicePort
		}
		b.AddFindings(c.ID, c.Transport, c.Client.Address, c.Server.Address, port, fs)
		return nil
	})
}

// Len is the number of connections the spill holds.
func (s *CheckSpill) Len() int {
	if s == nil {
		return 0
	}
	return s.Spill.Len()
}

// Close removes the temporary file.
func (s *CheckSpill) Close() error {
	if s == nil {
		return nil
	}
	return s.Spill.Close()
}

// CheckFile builds the file's part of the report as NewCheckFile does; the
// connections the spill took are read back by the reports in their place.
func (s *CheckSpill) CheckFile(name string, eng *dissect.Snapshot, res *check.Result, readErr error) CheckFile {
	f := NewCheckFile(name, eng, res, readErr)
	s.Finish()
	f.spill = s
	f.Suppressed += s.suppressed
	return f
}

// eachConn calls fn with every connection of the file in ID order and its
// findings; a spilled one is read back into a Connection fn must not keep.
func (f *CheckFile) eachConn(fn func(c *CheckConnection, fs []check.Finding) error) error {
	var sp *connspill.Spill[checkDoc]
	if f.spill != nil {
		sp = &f.spill.Spill
	}
	byConn := findingsByConn(f.Findings)
	return sp.Merge(len(f.Connections), func(i int) int { return f.Connections[i].ID },
		func(i int) error {
			c := &f.Connections[i]
			return fn(c, byConn[c.ID])
		},
		func(d *checkDoc) error {
			d.Conn.name, d.Conn.setUp = d.Name, d.SetUp
			// The caveats on every connection came at the end
			// (check.Result.NoteLoss).
			d.Conn.Caveats = append(d.Conn.Caveats, f.Caveats...)
			return fn(&d.Conn, d.Findings)
		})
}

// eachConnection calls fn with every connection, as eachConn does.
func (f *CheckFile) eachConnection(fn func(*CheckConnection) error) error {
	return f.eachConn(func(c *CheckConnection, _ []check.Finding) error { return fn(c) })
}

// EachFinding calls fn with every finding of the file, in the report's
// order (by connection, then by first packet).
func (f *CheckFile) EachFinding(fn func(*check.Finding) error) error {
	if f.spill.Len() == 0 {
		for i := range f.Findings {
			if err := fn(&f.Findings[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return f.eachConn(func(_ *CheckConnection, fs []check.Finding) error {
		for i := range fs {
			if err := fn(&fs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// numConnections counts the file's connections (not the packets outside
// any).
func (f *CheckFile) numConnections() int {
	n := f.spill.Len()
	for _, c := range f.Connections {
		if c.ID != 0 {
			n++
		}
	}
	return n
}

// Close lets go of the files' spills.
func (r *CheckReport) Close() error {
	var first error
	for i := range r.Files {
		if s := r.Files[i].spill; s != nil {
			if err := s.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// findingsByConn splits findings by connection (they are in connection
// order, each connection's together).
func findingsByConn(fs []check.Finding) map[int][]check.Finding {
	m := map[int][]check.Finding{}
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j].Connection == fs[i].Connection {
			j++
		}
		m[fs[i].Connection] = fs[i:j:j]
		i = j
	}
	return m
}

// ruleFindings lists one connection's findings by rule, in their order.
type ruleFindings map[string][]int

// of returns the positions in fs of the findings of rule, fs being the
// connection's findings ruleFindings was last reset with.
func (x ruleFindings) of(rule string) []int { return x[rule] }

// reset indexes fs.
func (x ruleFindings) reset(fs []check.Finding) {
	for k, v := range x {
		x[k] = v[:0]
	}
	for i := range fs {
		x[fs[i].Rule] = append(x[fs[i].Rule], i)
	}
}
