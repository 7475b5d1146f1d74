// Package connspill takes the connections the engine released out of
// memory as a capture is read, for the outputs that would otherwise hold
// them to the end (issue 14): analyze's and check's documents
// (report.ConnSpill, report.CheckSpill) and export's rows (export.Capture).
//
// A connection the engine released (closed, and no packet reaches it any
// more: dissect/release.go) used to stay in memory to the end of the input
// twice over — the engine's summary and the check runner's result with its
// findings — and the end of the run built the output from them: a capture
// of many short connections (an NFS client remounting, rping in a loop)
// grew to the connection table's bound. A Spill takes each released
// connection as it goes: its user builds the connection's part of the
// output then (Hooks.Build: nothing of a released connection changes
// later), the spill encodes it, writes it to an unlinked temporary file,
// and lets the engine and the runner drop the connection
// (dissect.Connection.DropDetail, check.Runner.TakeDone). When the engine's
// table is full and forgets a spilled connection, its record goes too, and
// the runner counts it as it counts any forgotten connection
// (check.Runner.ForgetTaken); once the forgotten records are most of the
// file, the others are copied to a new one (compaction), so that the file
// stays bounded by the connection table. The output reads the records back
// one at a time, in connection-ID order, merged with the connections still
// in memory (Merge).
//
// The first Config.After released connections stay in memory, so that a
// capture of a few connections never touches the disk. Without a
// temporary file (none can be made), or once a write to it fails (a full
// disk), the encoded records are kept in memory: still ~4× smaller than
// the structures. The encoding is JSON, which round-trips what the
// outputs write: pointers keep nil apart from present, floats their bits,
// and a slice the JSON omits when empty comes back nil (the users write
// it as an empty one); each user picks the JSON package (Hooks.Marshal,
// Unmarshal: report's is segmentio's, export's the standard library's,
// which keeps export's peak memory ~1 MB lower). The check rows of a record, most of its encoding
// and of the time to decode it, are kept packed (check.PackChecks).
package connspill

import (
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// The defaults of Config.
const (
	// After is how many released connections stay in memory before the
	// spill starts.
	After = 64
	// CompactAt: past this many bytes of forgotten connections' records,
	// when they are more than the others', the spill copies the others to
	// a new store and lets the old one go.
	CompactAt = 8 << 20
)

// Config sets how a spill behaves. Its users keep it in variables their
// tests turn, and read them when they make a spill.
type Config struct {
	// After is how many released connections stay in memory before the
	// spill starts (negative: never).
	After int
	// ToFile: the records go to a temporary file (false, in tests: to
	// memory, as when no file can be made).
	ToFile bool
	// CompactAt is the bytes of forgotten records past which the spill
	// compacts its store (when they are more than the others').
	CompactAt int64
	// DiskFull, when positive, fails a write to the spill's file that
	// would take it past this many bytes, as a full disk would (tests).
	DiskFull int64
}

// Hooks are what a spill's user does with a document D, its part of the
// output for one connection.
type Hooks[D any] struct {
	// Build makes the document of connection dc, released, from its
	// result cr (taken from the runner).
	Build func(dc *dissect.Connection, cr *check.ConnResult) D
	// Checks points to the document's check rows and to where the spill
	// keeps them packed: it fills packed (and empties rows) when it can
	// pack them as it writes the document, and unpacks them into rows
	// when it reads it back.
	Checks func(d *D) (rows *[]check.CheckResult, packed *[]byte)
	// Forgotten gives the checks and the number of findings of a
	// document whose connection the engine forgot, read back: what the
	// runner counts of it (check.Runner.ForgetTaken).
	Forgotten func(d *D) (checks []check.CheckResult, findings int)
	// Marshal and Unmarshal encode a document (given as a *D) and decode
	// it: json.Marshal and json.Unmarshal, of either JSON package.
	Marshal   func(v any) ([]byte, error)
	Unmarshal func(data []byte, v any) error
	// Append, when set, encodes instead of Marshal: it appends the
	// document to dst, a buffer the spill reuses from one connection to
	// the next (a connection's document is tens of kilobytes).
	Append func(dst []byte, v any) ([]byte, error)
}

type entry struct {
	id  int
	off int64
	n   int                 // -1: forgotten
	dc  *dissect.Connection // only while compact rebuilds byConn
}

// Spill takes released connections from the runner, builds their
// documents with its Hooks, and keeps them encoded out of memory, to be
// read back in ID order. Make it (or an Observer that hands it
// ConnectionDone and ConnectionForgotten) the check runner's Config.Next
// observer, hand it the runner (SetRunner), and when the capture is read,
// leave out of the output the connections it Has, Finish it, and Merge.
// Its methods are for one goroutine.
type Spill[D any] struct {
	cfg      Config
	hooks    Hooks[D]
	runner   *check.Runner
	released int
	store
	off       int64 // the bytes of the records in the store
	deadBytes int64 // of those, the forgotten connections'
	index     []entry
	byConn    map[*dissect.Connection]int // index position
	dead      int
	err       error
	buf       []byte
	enc       []byte // Hooks.Append's buffer
	finished  bool
	only      int // Only
	// taken counts the connections spilled, compactions the
	// compactions (Stats).
	taken, compactions int
}

// Init makes s an empty spill.
func (s *Spill[D]) Init(cfg Config, h Hooks[D]) {
	*s = Spill[D]{cfg: cfg, hooks: h, byConn: map[*dissect.Connection]int{}}
}

// SetRunner gives the spill the runner whose released results it takes.
func (s *Spill[D]) SetRunner(r *check.Runner) { s.runner = r }

// Message and RDMAOp implement dissect.Observer: the spill wants only the
// released connections.
func (s *Spill[D]) Message(*dissect.Message) {}
func (s *Spill[D]) RDMAOp(*dissect.RDMAOp)   {}

// ConnectionDone implements dissect.ConnObserver: dc's document is built
// and written out, and the engine and the runner let go of it.
func (s *Spill[D]) ConnectionDone(dc *dissect.Connection) {
	s.released++
	if s.runner == nil || s.cfg.After < 0 || s.released <= s.cfg.After || s.err != nil {
		return
	}
	cr := s.runner.TakeDone(dc)
	if cr == nil {
		return // not the runner's: left where it is
	}
	d := s.hooks.Build(dc, cr)
	rows, packed := s.hooks.Checks(&d)
	if *packed = check.PackChecks(*rows, s.runner.Rules()); *packed != nil {
		*rows = nil
	}
	var b []byte
	var err error
	if s.hooks.Append != nil {
		b, err = s.hooks.Append(s.enc[:0], &d)
		s.enc = b[:0]
	} else {
		b, err = s.hooks.Marshal(&d)
	}
	if err != nil {
		// Not expected (no NaN in the documents); should it happen the
		// output says so rather than leave the connection out silently.
		s.fail(fmt.Errorf("connection %d: %w", dc.ID, err))
		return
	}
	s.write(dc, b)
	s.taken++
	dc.DropDetail()
}

// ConnectionForgotten implements dissect.ConnForgetter: the engine's table
// was full and forgot dc; the output loses it as it would have without
// the spill. The runner counts the checks of a forgotten connection and
// lets its findings leave the bound on findings kept: the record is read
// back for them.
func (s *Spill[D]) ConnectionForgotten(dc *dissect.Connection) {
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
	checks, findings := s.hooks.Forgotten(&d)
	s.runner.ForgetTaken(checks, findings)
	if s.deadBytes >= s.cfg.CompactAt && s.deadBytes > s.off-s.deadBytes {
		s.compact()
	}
}

func (s *Spill[D]) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Err is the first error spilling a connection, if any: the output cannot
// be written whole (Merge returns it too).
func (s *Spill[D]) Err() error { return s.err }

// store is where the records go: an unlinked temporary file, or memory
// when no file can be made or a write to it fails (a full disk: what was
// written is read back into memory and the spill goes on there, rather
// than fail the output).
type store struct {
	f        *os.File
	name     string // to remove on Close where an open file cannot be unlinked
	written  int64  // bytes written to f
	diskFull int64  // Config.DiskFull
	mem      []byte
}

func newStore(cfg *Config) store {
	f, err := os.CreateTemp("", "rdmashark-connections-*")
	if err == nil && !cfg.ToFile {
		f.Close()
		os.Remove(f.Name())
		err = os.ErrPermission
	}
	if err != nil {
		return store{mem: []byte{}}
	}
	st := store{f: f, name: f.Name(), diskFull: cfg.DiskFull}
	if os.Remove(st.name) == nil {
		st.name = ""
	}
	return st
}

// put appends b (a record: written whole, one write each).
func (st *store) put(b []byte) error {
	if st.f == nil {
		st.mem = append(st.mem, b...)
		return nil
	}
	if st.diskFull > 0 && st.written+int64(len(b)) > st.diskFull {
		n, _ := st.f.Write(b[:st.diskFull-st.written])
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

// size is how many bytes the store holds.
func (st *store) size() int64 {
	if st.f != nil {
		return st.written
	}
	return int64(len(st.mem))
}

// write appends one record.
func (s *Spill[D]) write(dc *dissect.Connection, b []byte) {
	if s.f == nil && s.mem == nil {
		s.store = newStore(&s.cfg)
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
	s.index = append(s.index, entry{id: dc.ID, off: s.off, n: len(b)})
	s.off += int64(len(b))
}

// compact copies the records of the connections not forgotten to a new
// store (to memory, should writing a new file fail).
func (s *Spill[D]) compact() {
	nst := newStore(&s.cfg)
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

// copyTo copies the records of the connections not forgotten to nst and
// returns their entries there, each with its connection (dc) for compact.
func (s *Spill[D]) copyTo(nst *store) ([]entry, error) {
	index := make([]entry, 0, len(s.byConn))
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

// Has reports whether the spill took dc (and the engine did not forget
// it since): its document is read back in its place. Not after Finish.
func (s *Spill[D]) Has(dc *dissect.Connection) bool {
	_, ok := s.byConn[dc]
	return ok
}

// Len is the number of connections the spill holds and Merge reads back
// (those Only picks, when it was told one).
func (s *Spill[D]) Len() int {
	if s == nil {
		return 0
	}
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

// Only narrows what Merge reads back to connection id (analyze and check
// --connection); the others are still spilled, so that what the runner
// counts of them (forgotten connections, a baseline written) is as
// without the spill.
func (s *Spill[D]) Only(id int) { s.only = id }

// Stats reports how many connections the spill took, and how many times
// it compacted its store (for the tests).
func (s *Spill[D]) Stats() (taken, compactions int) { return s.taken, s.compactions }

// InMemory reports whether the records are kept in memory, no file
// having been made or a write to it having failed (for the tests).
func (s *Spill[D]) InMemory() bool { return s.f == nil && s.mem != nil }

// Finish makes the records readable, in ID order: call it once the
// capture is read, after asking Has of the connections still in memory.
func (s *Spill[D]) Finish() {
	if s.finished {
		return
	}
	s.finished = true
	s.index = slices.DeleteFunc(s.index, func(e entry) bool { return e.n < 0 })
	s.dead = 0
	s.byConn = nil
	slices.SortStableFunc(s.index, func(a, b entry) int { return a.id - b.id })
}

// bytesOf returns record e's bytes, valid until the next call.
func (s *Spill[D]) bytesOf(e entry) ([]byte, error) {
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
func (s *Spill[D]) read(e entry, d *D) error {
	b, err := s.bytesOf(e)
	if err != nil {
		return err
	}
	var zero D
	*d = zero
	if err := s.hooks.Unmarshal(b, d); err != nil {
		return fmt.Errorf("reading connection %d back: %w", e.id, err)
	}
	if rows, packed := s.hooks.Checks(d); *packed != nil {
		*rows, *packed = check.UnpackChecks(*packed, s.runner.Rules()), nil
	}
	return nil
}

// Merge calls mem(i) for each of n connections in memory, whose IDs id(i)
// ascend, and spilled(d) for each spilled one (that Only picks) read back
// into d, in ID order; d is reused, and spilled must not keep it. The
// spill's error, or the first error of a call, stops it. s may be nil (no
// spill). Call Finish first.
func (s *Spill[D]) Merge(n int, id func(i int) int, mem func(i int) error, spilled func(d *D) error) error {
	i := 0
	if s != nil {
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

// Each calls fn with every spilled document, whatever Only picks, read
// back in ID order into the same d, which fn must not keep; the spill's
// error, or fn's, stops it.
func (s *Spill[D]) Each(fn func(d *D) error) error {
	s.Finish()
	if s.err != nil {
		return s.err
	}
	var d D
	for _, e := range s.index {
		if err := s.read(e, &d); err != nil {
			return err
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the temporary file.
func (s *Spill[D]) Close() error { return s.store.close() }
