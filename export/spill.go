package export

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// Flat memory for export, as for analyze and check (report's spill of
// finished connections, issue 14): the engine keeps the summary of every
// connection it released, and the check runner its result, until the end —
// what Finish writes into the connections, transport_health and findings
// tables. Those grow with the connections the capture closes (at 1,600
// connections about 12 MB live: findings' messages, check results, RPC and
// health statistics). So once spillAfter connections were released, a
// released connection's rows — its connections row, its transport_health
// rows and its findings — are built when the engine releases it (they are
// final then: no packet of it comes any more), written to a temporary
// file, and the runner and the engine let go of what they kept of it
// (check.Runner.TakeDone, dissect.Connection.DropDetail). Finish reads the
// rows back in their place: the tables hold the same rows in the same
// order as without the spill (TestSpillSameRows).

// spillAfter is how many released connections keep their rows in memory
// before the spill starts (a variable for the tests; negative: never).
var spillAfter = 64

// spillToFile: the spill writes to a temporary file (false in tests: the
// in-memory store).
var spillToFile = true

// connRecord is what the spill keeps of one connection.
type connRecord struct {
	Conn     Connection        `json:"c"`
	Health   []TransportHealth `json:"h,omitempty"`
	Findings []Finding         `json:"f,omitempty"`
	// Checks are the runner's checks of the connection, packed
	// (check.PackChecks) when they can be: what the runner counts of a
	// connection the engine's table forgets (ConnectionForgotten).
	Checks      []byte              `json:"k,omitempty"`
	ChecksRaw   []check.CheckResult `json:"r,omitempty"`
	NumFindings int                 `json:"n,omitempty"`
}

// spillEntry is where a record is: off and n in the file, or mem.
type spillEntry struct {
	id  int
	off int64
	n   int
	mem []byte // when the file could not take it
}

// connSpill holds the records of the connections released.
type connSpill struct {
	runner   *check.Runner
	common   Common
	released int
	f        *os.File
	name     string // to remove on close where an open file cannot be unlinked
	off      int64
	noFile   bool // no file could be made, or a write failed: records stay in memory
	index    map[*dissect.Connection]spillEntry
	buf      []byte
	err      error
	// dead counts the bytes of the forgotten connections' records in f.
	dead int64
	// taken counts the connections spilled, compactions the
	// compactions (for the tests).
	taken, compactions int
}

// compactAt: past this many bytes of forgotten connections' records in the
// file, when they are more than the others', the spill copies the others
// to a new file, so that the file stays bounded by the connection table
// however many connections the capture closes (a variable for the tests).
var compactAt int64 = 8 << 20

// connectionDone is told that the engine released dc (the runner has its
// result). Past spillAfter, dc's rows go to the spill.
func (s *connSpill) connectionDone(dc *dissect.Connection) {
	s.released++
	if s.runner == nil || spillAfter < 0 || s.released <= spillAfter || s.err != nil {
		return
	}
	cr := s.runner.TakeDone(dc)
	if cr == nil {
		return // not the runner's: left where it is
	}
	rec := connRecord{Conn: connectionRow(s.common, dc)}
	fs := cr.Findings()
	rec.Conn.Findings = int64(len(fs))
	rec.NumFindings = len(fs)
	rec.Health = healthOf(s.common, dc)
	for i := range fs {
		rec.Findings = append(rec.Findings, findingRow(s.common, &fs[i]))
	}
	if rec.Checks = check.PackChecks(cr.Checks, s.runner.Rules()); rec.Checks == nil {
		rec.ChecksRaw = cr.Checks
	}
	b, err := json.Marshal(&rec)
	if err != nil {
		// Not expected (no NaN in the rows); should it happen, the
		// export fails rather than leave the connection out.
		s.err = fmt.Errorf("connection %d: %w", dc.ID, err)
		return
	}
	if s.index == nil {
		s.index = map[*dissect.Connection]spillEntry{}
	}
	s.index[dc] = s.put(dc.ID, b)
	s.taken++
	dc.DropDetail()
}

// put stores a record.
func (s *connSpill) put(id int, b []byte) spillEntry {
	if s.f == nil && !s.noFile {
		s.open()
	}
	if s.f != nil {
		n, err := s.f.WriteAt(b, s.off)
		if err == nil {
			e := spillEntry{id: id, off: s.off, n: n}
			s.off += int64(n)
			return e
		}
		// A full disk: this record and those after it stay in memory;
		// those before it are whole in the file.
		s.noFile = true
	}
	return spillEntry{id: id, n: len(b), mem: b}
}

func (s *connSpill) open() {
	if !spillToFile {
		s.noFile = true
		return
	}
	f, err := os.CreateTemp("", "rdmashark-export-*")
	if err != nil {
		s.noFile = true
		return
	}
	s.f, s.name = f, f.Name()
	if os.Remove(s.name) == nil {
		s.name = ""
	}
}

// bytes returns record e's bytes, valid until the next call.
func (s *connSpill) bytes(e spillEntry) ([]byte, error) {
	if e.mem != nil {
		return e.mem, nil
	}
	s.buf = slices.Grow(s.buf[:0], e.n)[:e.n]
	if _, err := s.f.ReadAt(s.buf, e.off); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading connection %d back from a temporary file: %w", e.id, err)
	}
	return s.buf, nil
}

// read decodes record e.
func (s *connSpill) read(e spillEntry) (*connRecord, error) {
	b, err := s.bytes(e)
	if err != nil {
		return nil, err
	}
	rec := new(connRecord)
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, fmt.Errorf("reading connection %d back: %w", e.id, err)
	}
	return rec, nil
}

// connectionForgotten: the engine's table was full and forgot dc. Its rows
// leave the export, as they would have without the spill; the runner
// counts its checks and lets its findings leave the bound on findings
// kept, as check.Runner.ConnectionForgotten does.
func (s *connSpill) connectionForgotten(dc *dissect.Connection) {
	e, ok := s.index[dc]
	if !ok {
		return
	}
	delete(s.index, dc)
	rec, err := s.read(e)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	checks := rec.ChecksRaw
	if rec.Checks != nil {
		checks = check.UnpackChecks(rec.Checks, s.runner.Rules())
	}
	s.runner.ForgetTaken(checks, rec.NumFindings)
	if e.mem == nil {
		s.dead += int64(e.n)
		if s.dead >= compactAt && s.dead > s.off-s.dead {
			s.compact()
		}
	}
}

// compact copies the records in the file of the connections not forgotten
// to a new file, and lets the old one go. Should that fail, the old one
// stays.
func (s *connSpill) compact() {
	old, oldName, noFile := s.f, s.name, s.noFile
	s.f, s.name = nil, ""
	s.open()
	nf, newName := s.f, s.name
	s.f, s.name, s.noFile = old, oldName, noFile
	if nf == nil {
		return
	}
	index := make(map[*dissect.Connection]spillEntry, len(s.index))
	var off int64
	for dc, e := range s.index {
		if e.mem == nil {
			b, err := s.bytes(e)
			if err == nil {
				_, err = nf.WriteAt(b, off)
			}
			if err != nil {
				nf.Close()
				if newName != "" {
					os.Remove(newName)
				}
				return
			}
			e.off = off
			off += int64(e.n)
		}
		index[dc] = e
	}
	old.Close()
	if oldName != "" {
		os.Remove(oldName)
	}
	s.f, s.name, s.index, s.off, s.dead = nf, newName, index, off, 0
	s.compactions++
}

// close removes the temporary file.
func (s *connSpill) close() {
	if s.f != nil {
		s.f.Close()
		if s.name != "" {
			os.Remove(s.name)
		}
		s.f = nil
	}
	s.index = nil
}
