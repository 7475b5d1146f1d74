package export

import (
	"encoding/json"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/connspill"
)

// Flat memory for export, as for analyze and check (internal/connspill,
// issue 14): the engine keeps the summary of every connection it
// released, and the check runner its result, until the end — what Finish
// writes into the connections, transport_health and findings tables.
// Those grow with the connections the capture closes (at 1,600
// connections about 12 MB live: findings' messages, check results, RPC
// and health statistics). So once spillAfter connections were released, a
// released connection's rows — its connections row, its transport_health
// rows and its findings — are built when the engine releases it (they are
// final then: no packet of it comes any more) and taken out of memory,
// and the runner and the engine let go of what they kept of it. Finish
// reads the rows back in their place: the tables hold the same rows in
// the same order as without the spill (TestSpillSameRows).

// spillAfter is how many released connections keep their rows in memory
// before the spill starts (a variable for the tests; negative: never).
var spillAfter = connspill.After

// spillToFile: the spill writes to a temporary file (false in tests: the
// in-memory store).
var spillToFile = true

// compactAt: past this many bytes of forgotten connections' records, when
// they are more than the others', the spill compacts its store (a
// variable for the tests).
var compactAt int64 = connspill.CompactAt

// connRecord is what the spill keeps of one connection.
type connRecord struct {
	Conn     Connection        `json:"c"`
	Health   []TransportHealth `json:"h,omitempty"`
	Findings []Finding         `json:"f,omitempty"`
	// Checks are ChecksRaw packed (connspill.Hooks.Checks), when they
	// can be: the runner's checks of the connection, what it counts of a
	// connection the engine's table forgets.
	Checks    []byte              `json:"k,omitempty"`
	ChecksRaw []check.CheckResult `json:"r,omitempty"`
}

// connSpill holds the records of the connections released.
type connSpill = connspill.Spill[connRecord]

// initSpill makes s the spill of a capture whose rows carry common.
func initSpill(s *connSpill, common Common) {
	s.Init(connspill.Config{After: spillAfter, ToFile: spillToFile, CompactAt: compactAt}, connspill.Hooks[connRecord]{
		Build: func(dc *dissect.Connection, cr *check.ConnResult) connRecord {
			rec := connRecord{Conn: connectionRow(common, dc), ChecksRaw: cr.Checks}
			fs := cr.Findings()
			rec.Conn.Findings = int64(len(fs))
			rec.Health = healthOf(common, dc)
			for i := range fs {
				rec.Findings = append(rec.Findings, findingRow(common, &fs[i]))
			}
			return rec
		},
		Checks: func(rec *connRecord) (*[]check.CheckResult, *[]byte) { return &rec.ChecksRaw, &rec.Checks },
		Forgotten: func(rec *connRecord) ([]check.CheckResult, int) {
			return rec.ChecksRaw, len(rec.Findings)
		},
		// The standard library's: segmentio's (report's) costs export
		// ~1 MB more at the peak.
		Marshal:   json.Marshal,
		Unmarshal: json.Unmarshal,
	})
}
