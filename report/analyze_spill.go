package report

import (
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/segmentio/encoding/json"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// Flat memory for `analyze` (issue 14). A connection the engine released
// (closed, and no packet reaches it any more: dissect/release.go) used to
// stay in memory to the end of the input twice over — the engine's summary
// and the checks' result with its findings, ~10 KB — and the end of the run
// built its document next to them, ~25 KB a connection at the peak: a
// capture of many short connections (an NFS client remounting, rping in a
// loop) grew to the connection table's bound. The ConnSpill takes each
// released connection as it goes: it builds the connection's part of the
// document then (report.Connection with its checks, and its findings, as
// they would be at the end: nothing of a released connection changes
// later), writes it to an unlinked temporary file, and lets the engine and
// the runner drop it (dissect.Connection.DropDetail, check.Runner.TakeDone).
// The reports read the connections back one at a time, in ID order, merged
// with those still in memory (Analysis.eachConn).
//
// The first spillConnsAfter released connections stay in memory as before,
// so that a capture of a few connections never touches the disk. Without a
// temporary file (none can be made) the encoded connections are kept in
// memory: still ~4× smaller than the structures. The encoding is
// encoding/json's, which round-trips what the reports write: pointers keep
// nil apart from present, floats their bits, and a slice the JSON omits
// when empty comes back nil, which every report writes as an empty one
// (TestConnSpillMatches and TestCheckSpillMatches hold every output to the
// in-memory path's).

// spillConnsAfter is how many released connections stay in memory before
// the spill starts (a variable for the tests).
var spillConnsAfter = 64

// spillToFile: the spill writes to a temporary file (false in tests: the
// in-memory fallback).
var spillToFile = true

// connDoc is one connection's part of the analyze document; Checks are
// Conn.Checks packed (connSpill.checks).
type connDoc struct {
	Conn     Connection `json:"c"`
	Findings []Finding  `json:"f"`
	Checks   []byte     `json:"k,omitempty"`
}

type spillEntry struct {
	id  int
	off int64
	n   int
	dc  *dissect.Connection // only while compact rebuilds byConn
}

// connSpill is what ConnSpill and CheckSpill share: it takes released
// connections from the runner, builds their part of a document D with
// build, and keeps the encoded documents out of memory, to be read back in
// ID order.
type connSpill[D any] struct {
	runner *check.Runner
	build  func(dc *dissect.Connection, cr *check.ConnResult) D
	// forgotten gives the checks and the number of findings of a
	// document (ConnectionForgotten).
	forgotten func(d *D) ([]check.CheckResult, int)
	// checks points to a document's check rows and to where they are
	// kept packed (check.PackChecks: most of the encoding and of the
	// time to decode it), which the spill fills when it writes the
	// document and empties when it reads it back.
	checks   func(d *D) (rows *[]check.CheckResult, packed *[]byte)
	released int
	store
	off       int64 // the bytes of the records in the store
	deadBytes int64 // of those, the forgotten connections'
	// compactions counts the compactions (for the tests).
	compactions int
	index       []spillEntry
	byConn      map[*dissect.Connection]int // index position
	dead        int
	err         error
	buf         []byte
	finished    bool
	only        int // Only
}

// ConnSpill takes released connections out of memory for the analyze
// document (see above). Make it the check runner's Config.Next observer and
// hand it the runner (SetRunner); build the document with its Analysis.
type ConnSpill struct {
	connSpill[connDoc]
}

// NewConnSpill returns an empty spill.
func NewConnSpill() *ConnSpill {
	s := &ConnSpill{}
	s.init(func(dc *dissect.Connection, cr *check.ConnResult) connDoc {
		d := connDoc{Conn: connection(dc)}
		addCheckResult(&d.Conn, cr)
		d.Findings = cr.Findings()
		return d
	}, func(d *connDoc) ([]check.CheckResult, int) { return d.Conn.Checks, len(d.Findings) },
		func(d *connDoc) (*[]check.CheckResult, *[]byte) { return &d.Conn.Checks, &d.Checks })
	return s
}

func (s *connSpill[D]) init(build func(dc *dissect.Connection, cr *check.ConnResult) D,
	forgotten func(d *D) ([]check.CheckResult, int), checks func(d *D) (*[]check.CheckResult, *[]byte)) {
	s.build, s.forgotten, s.checks, s.byConn = build, forgotten, checks, map[*dissect.Connection]int{}
}

// SetRunner gives the spill the runner whose released results it takes.
func (s *connSpill[D]) SetRunner(r *check.Runner) { s.runner = r }

// Message and RDMAOp implement dissect.Observer: the spill wants only the
// released connections.
func (s *connSpill[D]) Message(*dissect.Message) {}
func (s *connSpill[D]) RDMAOp(*dissect.RDMAOp)   {}

// ConnectionDone implements dissect.ConnObserver: dc's part of the
// document is written out, and the engine and the runner let go of it.
func (s *connSpill[D]) ConnectionDone(dc *dissect.Connection) {
	s.released++
	if s.released <= spillConnsAfter || s.runner == nil {
		return
	}
	cr := s.runner.TakeDone(dc)
	if cr == nil {
		return // not the runner's: left where it is
	}
	d := s.build(dc, cr)
	rows, packed := s.checks(&d)
	if *packed = check.PackChecks(*rows, s.runner.Rules()); *packed != nil {
		*rows = nil
	}
	b, err := json.Marshal(&d)
	if err != nil {
		// Not expected (no NaN in the documents); should it happen the
		// report says so rather than leave the connection out silently.
		s.fail(fmt.Errorf("connection %d: %w", dc.ID, err))
		return
	}
	s.write(dc, b)
	dc.DropDetail()
}

// ConnectionForgotten implements dissect.ConnForgetter: the engine's table
// was full and forgot dc; the document loses it as it would have.
// The runner counts the checks of a forgotten connection and lets its
// findings leave the bound on findings kept: the record is read back for
// them.
func (s *connSpill[D]) ConnectionForgotten(dc *dissect.Connection) {
	i, ok := s.byConn[dc]
	if !ok {
		return
	}
	e := s.index[i]
	s.index[i].n = -1
	s.dead++
	s.deadBytes += int64(e.n)
	delete(s.byConn, dc)
	var d D
	if err := s.read(e, &d); err != nil {
		s.fail(err)
		return
	}
	checks, findings := s.forgotten(&d)
	s.runner.ForgetTaken(checks, findings)
	if s.deadBytes >= compactAt && s.deadBytes > s.off-s.deadBytes {
		s.compact()
	}
}

func (s *connSpill[D]) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// store is where the records go: an unlinked temporary file, or memory
// when no file can be made or a write to it fails (a full disk: what was
// written is read back into memory and the spill goes on there, rather
// than fail the report).
type store struct {
	f       *os.File
	name    string // to remove on Close where an open file cannot be unlinked
	written int64  // bytes written to f
	mem     []byte
}

func newStore() store {
	f, err := os.CreateTemp("", "rdmashark-connections-*")
	if err == nil && !spillToFile {
		f.Close()
		os.Remove(f.Name())
		err = os.ErrPermission
	}
	if err != nil {
		return store{mem: []byte{}}
	}
	st := store{f: f, name: f.Name()}
	if os.Remove(st.name) == nil {
		st.name = ""
	}
	return st
}

// spillDiskFull, when positive, fails a write to a store's file that
// would take it past this many bytes, as a full disk would (for the
// tests).
var spillDiskFull int64

// put appends b (a record: written whole, one write each).
func (st *store) put(b []byte) error {
	if st.f == nil {
		st.mem = append(st.mem, b...)
		return nil
	}
	if spillDiskFull > 0 && st.written+int64(len(b)) > spillDiskFull {
		n, _ := st.f.Write(b[:spillDiskFull-st.written])
		st.written += int64(n)
		return fmt.Errorf("write %s: %w", st.f.Name(), syscall.ENOSPC)
	}
	n, err := st.f.Write(b)
	st.written += int64(n)
	return err
}

// toMemory moves the store's first n bytes, written whole to its file,
// into memory, and lets the file go.
func (st *store) toMemory(n int64) error {
	mem := make([]byte, n, max(n, 1))
	if _, err := st.f.ReadAt(mem, 0); err != nil && !(err == io.EOF && n == 0) {
		return err
	}
	st.close()
	st.mem = mem
	return nil
}

func (st *store) close() error {
	st.mem = nil
	if st.f == nil {
		return nil
	}
	err := st.f.Close()
	if st.name != "" {
		os.Remove(st.name)
	}
	st.f, st.written = nil, 0
	return err
}

// write appends one record.
func (s *connSpill[D]) write(dc *dissect.Connection, b []byte) {
	if s.f == nil && s.mem == nil {
		s.store = newStore()
	}
	if err := s.put(b); err != nil {
		// The records before this one are whole in the file: they go to
		// memory with it.
		if s.f == nil || s.toMemory(s.off) != nil {
			s.fail(fmt.Errorf("writing connections to a temporary file: %w", err))
			return
		}
		s.mem = append(s.mem, b...)
	}
	s.byConn[dc] = len(s.index)
	s.index = append(s.index, spillEntry{id: dc.ID, off: s.off, n: len(b)})
	s.off += int64(len(b))
}

// compactAt: past this many bytes of forgotten connections' records, when
// they are more than the others', the spill copies the others to a new
// store and lets the old one go, so that what it holds stays bounded by
// the connection table however many connections the input closes (a
// variable for the tests).
var compactAt int64 = 8 << 20

// compact copies the records of the connections not forgotten to a new
// store (to memory, should writing a new file fail).
func (s *connSpill[D]) compact() {
	nst := newStore()
	index, err := s.copyTo(&nst)
	if err != nil && nst.f != nil {
		nst.close()
		nst = store{mem: []byte{}}
		index, err = s.copyTo(&nst)
	}
	if err != nil {
		s.fail(fmt.Errorf("compacting the connections' temporary file: %w", err))
		nst.close()
		return
	}
	s.store.close()
	s.store, s.index, s.off, s.dead, s.deadBytes = nst, index, nst.size(), 0, 0
	for i, e := range index {
		s.byConn[e.dc] = i
		index[i].dc = nil
	}
	s.compactions++
}

// size is how many bytes the store holds.
func (st *store) size() int64 {
	if st.f != nil {
		return st.written
	}
	return int64(len(st.mem))
}

// copyTo copies the records of the connections not forgotten to nst and
// returns their entries there, each with its connection (dc) for compact.
func (s *connSpill[D]) copyTo(nst *store) ([]spillEntry, error) {
	index := make([]spillEntry, 0, len(s.byConn))
	var off int64
	for dc, pos := range s.byConn {
		e := s.index[pos]
		b, err := s.bytesOf(e)
		if err == nil {
			err = nst.put(b)
		}
		if err != nil {
			return nil, err
		}
		e.off, e.dc = off, dc
		off += int64(e.n)
		index = append(index, e)
	}
	return index, nil
}

// Len is the number of connections the spill holds and the reports read
// back (those Only picks, when it was told one).
func (s *connSpill[D]) Len() int {
	if s.only == 0 {
		return len(s.index) - s.dead
	}
	n := 0
	for _, e := range s.index {
		if e.n >= 0 && e.id == s.only {
			n++
		}
	}
	return n
}

// Only narrows what the reports read back to connection id (analyze and
// check --connection); the others are still spilled, so that what the
// runner counts of them (forgotten connections, a baseline written) is as
// without the spill.
func (s *connSpill[D]) Only(id int) { s.only = id }

// has reports whether the spill took dc.
func (s *connSpill[D]) has(dc *dissect.Connection) bool {
	_, ok := s.byConn[dc]
	return ok
}

// finish makes the records readable, in ID order.
func (s *connSpill[D]) finish() {
	if s.finished {
		return
	}
	s.finished = true
	s.index = slices.DeleteFunc(s.index, func(e spillEntry) bool { return e.n < 0 })
	s.dead = 0
	s.byConn = nil
	slices.SortStableFunc(s.index, func(a, b spillEntry) int { return a.id - b.id })
}

// bytesOf returns record e's bytes, valid until the next call.
func (s *connSpill[D]) bytesOf(e spillEntry) ([]byte, error) {
	switch {
	case s.f != nil:
		s.buf = slices.Grow(s.buf[:0], e.n)[:e.n]
		if _, err := s.f.ReadAt(s.buf, e.off); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading connection %d back from a temporary file: %w", e.id, err)
		}
		return s.buf, nil
	case s.mem != nil:
		return s.mem[e.off : e.off+int64(e.n)], nil
	}
	return nil, fmt.Errorf("reading connection %d back: the spill was closed", e.id)
}

// read decodes record e into d.
func (s *connSpill[D]) read(e spillEntry, d *D) error {
	b, err := s.bytesOf(e)
	if err != nil {
		return err
	}
	var zero D
	*d = zero
	if err := json.Unmarshal(b, d); err != nil {
		return fmt.Errorf("reading connection %d back: %w", e.id, err)
	}
	if rows, packed := s.checks(d); *packed != nil {
		*rows, *packed = check.UnpackChecks(*packed, s.runner.Rules()), nil
	}
	return nil
}

// merge calls mem(i) for each of n connections in memory, whose IDs id(i)
// ascend, and spilled(d) for each spilled one read back into d, in ID
// order; the first error stops it.
func (s *connSpill[D]) merge(n int, id func(i int) int, mem func(i int) error, spilled func(d *D) error) error {
	i := 0
	if s != nil && len(s.index) > 0 {
		if s.err != nil {
			return s.err
		}
		var d D
		for _, e := range s.index {
			if s.only != 0 && e.id != s.only {
				continue
			}
			for ; i < n && id(i) < e.id; i++ {
				if err := mem(i); err != nil {
					return err
				}
			}
			if err := s.read(e, &d); err != nil {
				return err
			}
			if err := spilled(&d); err != nil {
				return err
			}
		}
	}
	for ; i < n; i++ {
		if err := mem(i); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the temporary file.
func (s *connSpill[D]) Close() error { return s.store.close() }

// Len is the number of connections the spill holds.
func (s *ConnSpill) Len() int {
	if s == nil {
		return 0
	}
	return s.connSpill.Len()
}

// Close removes the temporary file.
func (s *ConnSpill) Close() error {
	if s == nil {
		return nil
	}
	return s.connSpill.Close()
}

// Analysis builds the document from the engine's snapshot as NewAnalysis
// does, but with the connections the spill took: they are left out of
// Connections and read back by the reports in their place.
func (s *ConnSpill) Analysis(file string, eng *dissect.Snapshot) *Analysis {
	a := newAnalysis(file, eng, s)
	s.finish()
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
	var sp *connSpill[connDoc]
	if a.spill != nil {
		sp = &a.spill.connSpill
	}
	return sp.merge(len(a.Connections), func(i int) int { return a.Connections[i].ID },
		func(i int) error {
			c := &a.Connections[i]
			return fn(c, byConn[c.ID])
		},
		func(d *connDoc) error {
			// The caveats on every connection came at the end (NoteLoss,
			// AddChecks); a spilled connection always had a check result.
			d.Conn.CheckCaveats = append(d.Conn.CheckCaveats, a.CheckCaveats...)
			return fn(&d.Conn, d.Findings)
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
	for i := range a.Findings {
		if a.Findings[i].Connection != 0 {
			break
		}
		if err := fn(&a.Findings[i]); err != nil {
			return err
		}
	}
	return a.eachConn(func(_ *Connection, fs []Finding) error {
		for i := range fs {
			if err := fn(&fs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close lets go of the spill's temporary file.
func (a *Analysis) Close() error {
	if a.spill == nil {
		return nil
	}
	return a.spill.Close()
}
