package report

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/rdmashark/rdmashark/dissect"
)

// Bounded memory for `exchanges`, as for `transactions`
// (transactions_spill.go): exchanges end out of the order of their
// requests, so every spillAt records kept, those in memory are sorted
// (stably, by sortKey) and written as one run to an unlinked temporary
// file; at the end the runs and what is left in memory are merged (by
// sortKey, then by run: the stable sort of the whole list). A record is
// flat, so its binary form is simple: varints, flags, and its three
// strings length-prefixed (some 40 bytes a record). A list that never
// reaches spillAt never touches the disk.

type exchSpill struct {
	f    *os.File
	name string // to remove on Close where an open file cannot be unlinked
	w    *bufio.Writer
	runs []txnRun
	n    int   // records written to runs
	off  int64 // bytes written so far
	buf  []byte
	err  error
}

// maybeSpill writes the records in memory as a sorted run when they reach
// spillAt; without a temporary file they stay in memory.
func (l *ExchangeList) maybeSpill() {
	if len(l.recs) < spillAt || l.noSpill {
		return
	}
	s := l.spill
	if s == nil {
		f, err := os.CreateTemp("", "rdmashark-exchanges-*")
		if err != nil {
			l.noSpill = true
			return
		}
		s = &exchSpill{f: f, name: f.Name()}
		if os.Remove(f.Name()) == nil {
			s.name = ""
		}
		s.w = bufio.NewWriterSize(f, 256<<10)
		l.spill = s
	}
	if s.err != nil {
		return
	}
	l.sortMem()
	start := s.off
	for i := range l.recs {
		s.buf = appendExchRec(s.buf[:0], &l.recs[i])
		n, err := s.w.Write(s.buf)
		s.off += int64(n)
		if err != nil {
			s.err = err
			break
		}
	}
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		s.err = fmt.Errorf("exchanges: writing to a temporary file: %w", s.err)
		return
	}
	s.runs = append(s.runs, txnRun{start, s.off - start})
	s.n += len(l.recs)
	clear(l.recs)
	l.recs = l.recs[:0]
}

// Close removes the temporary file, if any.
func (l *ExchangeList) Close() error {
	s := l.spill
	if s == nil {
		return nil
	}
	l.spill = nil
	err := s.f.Close()
	if s.name != "" {
		if rerr := os.Remove(s.name); err == nil {
			err = rerr
		}
	}
	return err
}

const (
	exchHasStatus = 1 << iota
	exchOK
	exchInvalidated
	exchAssoc
	exchFH
	exchReplyFH
	exchObjName
)

// appendExchRec appends r's binary form.
func appendExchRec(b []byte, r *exchRec) []byte {
	var flags byte
	if r.hasStatus {
		flags |= exchHasStatus
	}
	if r.ok {
		flags |= exchOK
	}
	if r.invalidated {
		flags |= exchInvalidated
	}
	if r.hasAssoc {
		flags |= exchAssoc
	}
	if r.hasFH {
		flags |= exchFH
	}
	if r.hasReplyFH {
		flags |= exchReplyFH
	}
	if r.objName != "" {
		flags |= exchObjName
	}
	b = append(b, flags, byte(r.init), byte(r.outcome))
	b = binary.AppendUvarint(b, uint64(r.conn))
	b = binary.AppendUvarint(b, r.key)
	b = binary.AppendUvarint(b, uint64(r.stag))
	b = binary.AppendUvarint(b, uint64(r.req))
	b = binary.AppendUvarint(b, uint64(r.resp))
	b = binary.AppendVarint(b, r.latency)
	b = binary.AppendUvarint(b, r.read)
	b = binary.AppendUvarint(b, r.write)
	b = binary.AppendUvarint(b, uint64(r.assocID))
	for _, s := range [...]string{r.ulp, r.name, r.status, r.assocInit, r.assocTarget} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	// The object, when there is one: not in the strings above, which are
	// shared (a capture has a few dozen of those, but any number of names).
	if flags&(exchFH|exchReplyFH|exchObjName) != 0 {
		b = binary.AppendUvarint(b, uint64(r.fh))
		b = binary.AppendUvarint(b, uint64(r.replyFH))
		b = binary.AppendUvarint(b, uint64(len(r.objName)))
		b = append(b, r.objName...)
	}
	return b
}

// exchDecoder reads records back; strs shares their strings (a capture
// has a few dozen names).
type exchDecoder struct {
	r    *bufio.Reader
	strs map[string]string
	buf  []byte
}

var errExchCorrupt = errors.New("exchanges: temporary file corrupt")

// decode reads the next record into r: io.EOF at the end of the run.
func (d *exchDecoder) decode(r *exchRec) error {
	var head [3]byte
	if _, err := io.ReadFull(d.r, head[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return errExchCorrupt
		}
		return err
	}
	var u [9]uint64
	for i := range u {
		var err error
		if i == 5 {
			var v int64
			v, err = binary.ReadVarint(d.r)
			u[i] = uint64(v)
		} else {
			u[i], err = binary.ReadUvarint(d.r)
		}
		if err != nil {
			return errExchCorrupt
		}
	}
	var strs [5]string
	for i := range strs {
		n, err := binary.ReadUvarint(d.r)
		if err != nil || n > 1<<20 {
			return errExchCorrupt
		}
		if cap(d.buf) < int(n) {
			d.buf = make([]byte, n)
		}
		b := d.buf[:n]
		if _, err := io.ReadFull(d.r, b); err != nil {
			return errExchCorrupt
		}
		s, ok := d.strs[string(b)]
		if !ok {
			s = string(b)
			d.strs[s] = s
		}
		strs[i] = s
	}
	*r = exchRec{hasStatus: head[0]&exchHasStatus != 0, ok: head[0]&exchOK != 0, invalidated: head[0]&exchInvalidated != 0,
		init: dissect.Direction(head[1]), outcome: dissect.Outcome(head[2]),
		conn: int(u[0]), key: u[1], stag: uint32(u[2]), req: int(u[3]), resp: int(u[4]), latency: int64(u[5]),
		read: u[6], write: u[7], ulp: strs[0], name: strs[1], status: strs[2],
		hasAssoc: head[0]&exchAssoc != 0, assocID: uint32(u[8]), assocInit: strs[3], assocTarget: strs[4],
		hasFH: head[0]&exchFH != 0, hasReplyFH: head[0]&exchReplyFH != 0}
	if head[0]&(exchFH|exchReplyFH|exchObjName) != 0 {
		fh, err1 := binary.ReadUvarint(d.r)
		rfh, err2 := binary.ReadUvarint(d.r)
		n, err3 := binary.ReadUvarint(d.r)
		if err1 != nil || err2 != nil || err3 != nil || fh > math.MaxUint32 || rfh > math.MaxUint32 || n > 1<<20 {
			return errExchCorrupt
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(d.r, name); err != nil {
			return errExchCorrupt
		}
		r.fh, r.replyFH, r.objName = uint32(fh), uint32(rfh), string(name)
	}
	return nil
}

// each calls fn with every record kept, in sortKey order (ties in the
// order they ended); fn must not keep the record.
func (l *ExchangeList) each(fn func(*exchRec) error) error {
	l.sortMem()
	s := l.spill
	if s == nil || len(s.runs) == 0 {
		for i := range l.recs {
			if err := fn(&l.recs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if s.err != nil {
		return s.err
	}
	h := &exchHeap{}
	strs := map[string]string{}
	for i, r := range s.runs {
		it := &exchIter{run: i, dec: &exchDecoder{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.size), 32<<10), strs: strs}}
		if err := it.next(); err != nil {
			return err
		}
		if it.ok {
			h.items = append(h.items, it)
		}
	}
	mem := &exchIter{run: len(s.runs), mem: l.recs}
	if err := mem.next(); err != nil {
		return err
	}
	if mem.ok {
		h.items = append(h.items, mem)
	}
	heap.Init(h)
	for len(h.items) > 0 {
		it := h.items[0]
		if err := fn(&it.cur); err != nil {
			return err
		}
		if err := it.next(); err != nil {
			return err
		}
		if !it.ok {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return nil
}

// exchIter reads one sorted run: from disk (dec) or the records in
// memory.
type exchIter struct {
	run int
	dec *exchDecoder
	mem []exchRec
	i   int
	cur exchRec
	ok  bool
}

func (it *exchIter) next() error {
	it.ok = false
	if it.dec == nil {
		if it.i < len(it.mem) {
			it.cur, it.ok = it.mem[it.i], true
			it.i++
		}
		return nil
	}
	if err := it.dec.decode(&it.cur); err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	it.ok = true
	return nil
}

type exchHeap struct{ items []*exchIter }

func (h *exchHeap) Len() int { return len(h.items) }
func (h *exchHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if ka, kb := a.cur.sortKey(), b.cur.sortKey(); ka != kb {
		return ka < kb
	}
	return a.run < b.run
}
func (h *exchHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *exchHeap) Push(x any)    { h.items = append(h.items, x.(*exchIter)) }
func (h *exchHeap) Pop() any {
	n := len(h.items)
	x := h.items[n-1]
	h.items = h.items[:n-1]
	return x
}
