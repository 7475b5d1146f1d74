package report

import (
	"github.com/segmentio/encoding/json"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/connspill"
)

// Flat memory for `analyze` (issue 14): a connection the engine released
// has its part of the document — report.Connection with its checks, and
// its findings, as they would be at the end: nothing of a released
// connection changes later — built then and taken out of memory
// (internal/connspill), and the reports read it back in its place, in ID
// order, merged with those still in memory (Analysis.eachConn). The
// outputs are those of the in-memory path (TestConnSpillMatches and
// TestCheckSpillMatches hold every output to it).

// spillConnsAfter is how many released connections stay in memory before
// the spill starts (a variable for the tests).
var spillConnsAfter = connspill.After

// spillToFile: the spill writes to a temporary file (false in tests: the
// in-memory fallback).
var spillToFile = true

// compactAt: past this many bytes of forgotten connections' records, when
// they are more than the others', the spill compacts its store (a
// variable for the tests).
var compactAt int64 = connspill.CompactAt

// spillDiskFull, when positive, fails a write to a spill's or a table's
// file that would take it past this many bytes, as a full disk would (for
// the tests).
var spillDiskFull int64

// spillConfig is the spills' configuration, as the variables set it.
func spillConfig() connspill.Config {
	return connspill.Config{After: spillConnsAfter, ToFile: spillToFile, CompactAt: compactAt, DiskFull: spillDiskFull}
}

// connDoc is one connection's part of the analyze document; Checks are
// Conn.Checks packed (connspill.Hooks.Checks). Conn is a connectionJSON,
// the Connection without its MarshalJSON, whose ULP section is ULP here:
// that MarshalJSON goes through encoding/json and segmentio then parses
// what it returns again, some 3% of analyze's time on a capture of 400
// NFS connections, all of them spilled.
type connDoc struct {
	Conn     connectionJSON `json:"c"`
	Findings []Finding      `json:"f"`
	Checks   []byte         `json:"k,omitempty"`
	// ULP, ULPHead and ULPRow are Conn.ulpData as JSON and its text
	// row (unexported: written under the ULP's name, or not at all).
	ULP     json.RawMessage `json:"u,omitempty"`
	ULPHead []string        `json:"uh,omitempty"`
	ULPRow  []string        `json:"ur,omitempty"`
}

// ConnSpill takes released connections out of memory for the analyze
// document (see above). Make it the check runner's Config.Next observer and
// hand it the runner (SetRunner); build the document with its Analysis.
type ConnSpill struct {
	connspill.Spill[connDoc]
}

// NewConnSpill returns an empty spill.
func NewConnSpill() *ConnSpill {
	s := &ConnSpill{}
	s.Init(spillConfig(), connspill.Hooks[connDoc]{
		Build: func(dc *dissect.Connection, cr *check.ConnResult) connDoc {
			d := connDoc{Conn: connectionJSON(connection(dc))}
			addCheckResult((*Connection)(&d.Conn), cr)
			if d.Conn.ulpData != nil {
				d.ULP, _ = marshalNoEscape(d.Conn.ulpData)
				d.ULPHead, d.ULPRow = d.Conn.ulpHead, d.Conn.ulpRow
			}
			d.Findings = cr.Findings()
			return d
		},
		Checks:    func(d *connDoc) (*[]check.CheckResult, *[]byte) { return &d.Conn.Checks, &d.Checks },
		Forgotten: func(d *connDoc) ([]check.CheckResult, int) { return d.Conn.Checks, len(d.Findings) },
		Append:    appendConnDoc,
		Unmarshal: json.Unmarshal,
	})
	return s
}

// appendConnDoc encodes a *connDoc for the spill: the file is the
// spill's own, so nothing in it needs HTML escaping, and ULP is
// marshalNoEscape's valid JSON.
func appendConnDoc(dst []byte, v any) ([]byte, error) {
	return json.Append(dst, v, json.SortMapKeys|json.TrustRawMessage)
}

// Len is the number of connections the spill holds.
func (s *ConnSpill) Len() int {
	if s == nil {
		return 0
	}
	return s.Spill.Len()
}

// Close removes the temporary file.
func (s *ConnSpill) Close() error {
	if s == nil {
		return nil
	}
	return s.Spill.Close()
}

// Analysis builds the document from the engine's snapshot as NewAnalysis
// does, but with the connections the spill took: they are left out of
// Connections and read back by the reports in their place.
func (s *ConnSpill) Analysis(file string, eng *dissect.Snapshot) *Analysis {
	a := newAnalysis(file, eng, s)
	s.Finish()
	return a
}

// addCheckResult puts one connection's checks into its document (AddChecks).
func addCheckResult(c *Connection, cr *check.ConnResult) {
	c.RemoteInvalidation, c.Chunks, c.Checks = cr.Usage, cr.Chunks, cr.Checks
	c.CheckCaveats = cr.Caveats
}

// Narrow keeps connection id and its findings only (analyze --connection:
// its ID as analyze numbers them); the packet and protocol counts stay the
// capture's. Of the connections the spill took, only those it was told to
// keep (ConnSpill.Only) are read back. It reports whether the connection
// is there.
func (a *Analysis) Narrow(id int) bool {
	conns := a.Connections[:0]
	for _, c := range a.Connections {
		if c.ID == id {
			conns = append(conns, c)
		}
	}
	a.Connections = conns
	var fs []Finding
	if a.Findings != nil {
		fs = []Finding{} // a new slice: a.Findings is the check.Result's (AddChecks)
	}
	for _, f := range a.Findings {
		if f.Connection == id {
			fs = append(fs, f)
		}
	}
	a.Findings = fs
	return a.NumConnections() > 0
}

// NumConnections is the number of connections the document reports.
func (a *Analysis) NumConnections() int {
	n := len(a.Connections)
	if a.spill != nil {
		n += a.spill.Len()
	}
	return n
}

// eachConn calls fn with every connection of the document in ID order and
// its findings; the spilled ones are read back one at a time into the same
// Connection, which fn must not keep. An error reading them back stops
// the walk and is returned.
func (a *Analysis) eachConn(fn func(c *Connection, fs []Finding) error) error {
	byConn := findingsByConn(a.Findings)
	var sp *connspill.Spill[connDoc]
	if a.spill != nil {
		sp = &a.spill.Spill
	}
	return sp.Merge(len(a.Connections), func(i int) int { return a.Connections[i].ID },
		func(i int) error {
			c := &a.Connections[i]
			return fn(c, byConn[c.ID])
		},
		func(d *connDoc) error {
			// The caveats on every connection came at the end (NoteLoss,
			// AddChecks); a spilled connection always had a check result.
			d.Conn.CheckCaveats = append(d.Conn.CheckCaveats, a.CheckCaveats...)
			d.Conn.ulpData, d.Conn.ulpHead, d.Conn.ulpRow = nil, d.ULPHead, d.ULPRow
			if len(d.ULP) > 0 {
				d.Conn.ulpData = d.ULP
			}
			return fn((*Connection)(&d.Conn), d.Findings)
		})
}

// eachConnection calls fn with every connection, as eachConn does.
func (a *Analysis) eachConnection(fn func(*Connection) error) error {
	return a.eachConn(func(c *Connection, _ []Finding) error { return fn(c) })
}

// eachFinding calls fn with every finding in the document's order: those of
// no connection, then each connection's.
func (a *Analysis) eachFinding(fn func(f *Finding) error) error {
	if a.spill == nil || a.spill.Len() == 0 {
		for i := range a.Findings {
			if err := fn(&a.Findings[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return a.EachConnectionAndFinding(func(*Connection, []Finding) error { return nil }, fn)
}

// Close lets go of the spill's temporary file.
func (a *Analysis) Close() error {
	if a.spill == nil {
		return nil
	}
	return a.spill.Close()
}
