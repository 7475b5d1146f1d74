package report

import (
	"bufio"
	"container/heap"
	"io"
	"os"
	"reflect"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// Bounded memory for `transactions` (issue 14): the list is written in the
// order of the Calls' first packets, with its count first (table), but
// transactions finish out of that order and a Call without a Reply finishes
// only when the capture does. So the list is sorted externally: every
// spillAt transactions kept, the ones in memory are sorted (stably, by
// first packet) and written as one run to an unlinked temporary file; at
// the end the runs and what is left in memory are merged (by first packet,
// then by run: exactly the stable sort of the whole list). Memory stays at
// spillAt transactions plus a read buffer per run, whatever the capture's
// length; the disk holds the transactions past the first spillAt in a
// compact binary form (transactions_codec.go, a few hundred bytes each). A
// capture with fewer transactions never touches the disk and is written as
// before.
//
// The binary form round-trips a Transaction exactly (every pointer and
// slice keeps nil apart from present and empty, LatencyUS its float64
// bits), so the merged list is written through the same code, byte for
// byte.

// spillAt is how many transactions are held in memory before a run is
// written to disk (a variable for the tests).
var spillAt = 4096

type txnRun struct {
	off, size int64
}

type txnSpill struct {
	f    *os.File
	name string // to remove on Close where an open file cannot be unlinked
	w    *bufio.Writer
	enc  txnEncoder
	runs []txnRun
	n    int   // transactions written to runs
	err  error // the first error writing; reported by the Write methods
	off2 int64 // bytes written so far (the next run's offset)
	// widths are the table's column widths for the transactions in the
	// runs, taken as they are written, so that the table needs one pass
	// over the runs, not two.
	widths [txnColumns]int
	cells  txnCells
}

// Len is the number of transactions kept: those in memory and those
// written to disk.
func (l *TransactionList) Len() int {
	n := len(l.Transactions)
	if l.spill != nil {
		n += l.spill.n
	}
	return n
}

// maybeSpill writes the transactions in memory as a sorted run when they
// reach spillAt. Without a temporary file (none can be made, or the disk
// is full) they stay in memory, as before.
func (l *TransactionList) maybeSpill() {
	if len(l.Transactions) < spillAt || l.noSpill {
		return
	}
	s := l.spill
	if s == nil {
		f, err := os.CreateTemp("", "rdmashark-transactions-*")
		if err != nil {
			l.noSpill = true
			return
		}
		s = &txnSpill{f: f, name: f.Name()}
		if os.Remove(f.Name()) == nil {
			s.name = ""
		}
		s.w = bufio.NewWriterSize(f, 256<<10)
		s.enc.w = s.w
		l.spill = s
	}
	if s.err != nil {
		return
	}
	l.Sort()
	start, widths := s.off2, s.widths
	for i := range l.Transactions {
		addWidths(s.widths[:], &s.cells, &l.Transactions[i])
		n, err := s.enc.encode(&l.Transactions[i])
		s.off2 += int64(n)
		if err != nil {
			s.err = err
			break
		}
	}
	if err := s.w.Flush(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		// A full disk ($TMPDIR): the runs written whole stay on disk and
		// the rest stays in memory, as analyze, check and report fall
		// back (internal/connspill) — the output is the same, only the
		// memory bound is lost (issue 29 point 5).
		s.err, s.widths, s.off2 = nil, widths, start
		l.noSpill = true
		return
	}
	s.runs = append(s.runs, txnRun{start, s.off2 - start})
	s.n += len(l.Transactions)
	clear(l.Transactions)
	l.Transactions = l.Transactions[:0]
}

// Close removes the temporary file, if any. The list holds only what is
// in memory afterwards.
func (l *TransactionList) Close() error {
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

// firstPacket is the sort key: the first packet of the Call (of the Reply
// for a Reply without its Call).
func firstPacket(t *Transaction) int {
	if t.Call != nil && len(t.Call.Packets) > 0 {
		return t.Call.Packets[0]
	}
	if t.Reply != nil && len(t.Reply.Packets) > 0 {
		return t.Reply.Packets[0]
	}
	return 0
}

// each calls fn with every transaction kept, in the order of their first
// packets (ties in the order they finished). Without runs on disk, the
// list in memory as it is (Sort orders it).
func (l *TransactionList) each(fn func(*Transaction) error) error {
	s := l.spill
	if s == nil || len(s.runs) == 0 {
		for i := range l.Transactions {
			if err := fn(&l.Transactions[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if s.err != nil {
		return s.err
	}
	l.Sort()
	h := &runHeap{}
	strs := map[string]string{} // the runs' decoders share their names
	for i, r := range s.runs {
		it := &runIter{run: i, dec: &txnDecoder{r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.size), 32<<10), strs: strs}}
		if err := it.next(); err != nil {
			return err
		}
		if it.cur != nil {
			h.items = append(h.items, it)
		}
	}
	mem := &runIter{run: len(s.runs), mem: l.Transactions}
	if err := mem.next(); err != nil {
		return err
	}
	if mem.cur != nil {
		h.items = append(h.items, mem)
	}
	heap.Init(h)
	for len(h.items) > 0 {
		it := h.items[0]
		if err := fn(it.cur); err != nil {
			return err
		}
		if err := it.next(); err != nil {
			return err
		}
		if it.cur == nil {
			heap.Pop(h)
		} else {
			heap.Fix(h, 0)
		}
	}
	return nil
}

// runIter reads one sorted run: from disk (dec) or the list in memory.
type runIter struct {
	run int
	dec *txnDecoder
	mem []Transaction
	i   int
	cur *Transaction
	key int
}

func (it *runIter) next() error {
	it.cur = nil
	if it.dec == nil {
		if it.i < len(it.mem) {
			it.cur = &it.mem[it.i]
			it.i++
			it.key = firstPacket(it.cur)
		}
		return nil
	}
	t := new(Transaction)
	if err := it.dec.decode(t); err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	it.cur, it.key = t, firstPacket(t)
	return nil
}

type runHeap struct{ items []*runIter }

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.key != b.key {
		return a.key < b.key
	}
	return a.run < b.run
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(*runIter)) }
func (h *runHeap) Pop() any {
	n := len(h.items)
	x := h.items[n-1]
	h.items = h.items[:n-1]
	return x
}

// txnDoc is TransactionList as its JSON document is written: the same
// keys in the same order, the transactions streamed from each.
type txnDoc struct {
	File         string      `json:"file"`
	Transactions txnSeq      `json:"transactions"`
	Omitted      uint64      `json:"omitted,omitempty"`
	Counters     TxnCounters `json:"counters"`
	Errors       []string    `json:"errors,omitempty"`
}

type txnSeq struct{ l *TransactionList }

// streamJSON writes the list as jsonStream writes a slice (null for a nil
// list, [] for an empty one), one transaction at a time.
func (q txnSeq) streamJSON(s *jsonStream, prefix string) {
	l, empty := q.l, "[]"
	if l.Transactions == nil && l.Len() == 0 {
		empty = "null"
	}
	s.list(prefix, empty, func(put func(reflect.Value)) error {
		return l.each(func(t *Transaction) error {
			put(reflect.ValueOf(t).Elem())
			return s.err
		})
	})
}

// txnColumns is the number of columns of the table.
const txnColumns = 12

var txnHeader = [txnColumns]string{"XID", "Conn", "Dir", "Program", "Procedure", "Call", "Reply", "Chunks", "RDMA Read", "RDMA Write", "Inv. STag", "Latency µs"}

// txnRow is the row of x as tablewriter takes it.
func txnRow(x *Transaction) []string {
	var c txnCells
	c.build(x)
	all := string(c.b)
	row := make([]string, txnColumns)
	start := 0
	for i, e := range c.ends {
		row[i] = all[start:e]
		start = e
	}
	return row
}

// addWidths widens widths to the cells of x.
func addWidths(widths []int, c *txnCells, x *Transaction) {
	c.build(x)
	for i := range widths {
		widths[i] = max(widths[i], textWidth(c.cell(i)))
	}
}

// writeTableSpilled writes the table of a list with runs on disk: the
// column widths are those of the runs (taken as they were written) and of
// the transactions in memory, then the rows in one pass over the merged
// runs. The bytes are the house tablewriter style's (newTable: a box of
// light lines, headers centred, cells left-aligned, one space of padding),
// which TestTransactionsSpilledSame compares with tablewriter itself.
func (l *TransactionList) writeTableSpilled(w io.Writer) error {
	widths := make([]int, len(txnHeader))
	for i, h := range txnHeader {
		widths[i] = max(twwidth.Width(h), l.spill.widths[i])
	}
	var c txnCells
	for i := range l.Transactions {
		addWidths(widths, &c, &l.Transactions[i])
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	rule := func(l, m, r string) {
		bw.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				bw.WriteString(m)
			}
			for range wd + 2 {
				bw.WriteString("─")
			}
		}
		bw.WriteString(r)
		bw.WriteString("\n")
	}
	spaces := func(n int) {
		for range n {
			bw.WriteByte(' ')
		}
	}
	cell := func(i int, text []byte, center bool) {
		gap := widths[i] - textWidth(text)
		left := 0
		if center {
			left = gap / 2
		}
		bw.WriteByte(' ')
		spaces(left)
		bw.Write(text)
		spaces(gap - left)
		bw.WriteString(" │")
	}
	rule("┌", "┬", "┐")
	bw.WriteString("│")
	for i, h := range txnHeader {
		cell(i, []byte(h), true)
	}
	bw.WriteString("\n")
	rule("├", "┼", "┤")
	if err := l.each(func(x *Transaction) error {
		c.build(x)
		bw.WriteString("│")
		for i := range txnHeader {
			cell(i, c.cell(i), false)
		}
		bw.WriteString("\n")
		return nil
	}); err != nil {
		return err
	}
	rule("└", "┴", "┘")
	return bw.Flush()
}
