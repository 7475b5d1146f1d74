package report

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// rowTable holds a table's rows encoded (each cell its length as a uvarint,
// then its bytes) and the widest cell of each column, and writes them with
// tablewriter's streaming mode given those widths: byte for byte what
// tablewriter's Render writes of the same rows (TestRowTableMatchesRender),
// but tablewriter neither holds every row nor works on them all at once.
// analyze's table of 4,096 connections held its rows as [][]string, then
// tablewriter its own copies of them while it rendered: some 7 KB a
// connection at the peak. Past rowSpillAt bytes the rows go to an unlinked
// temporary file (they stay in memory when none can be made), so that
// what the tables hold does not grow with the connections (issue 14).
type rowTable struct {
	header []string
	widths []int
	rows   []byte
	n      int
	// f holds the rows written out; noFile: none could be made, or
	// writing to it failed (they came back to memory); err: neither
	// worked.
	f       *os.File
	name    string // to remove at close when it could not be unlinked open
	written int64  // bytes in f
	noFile  bool
	err     error
	// batch: a cell holds what tablewriter's streaming mode might lay out
	// otherwise (a line break, a tab, a control character): the rows go
	// through Render as before.
	batch bool
	// appended: rows render wrote itself (appendRow), not tablewriter.
	appended int
}

func newRowTable(header ...string) *rowTable {
	t := &rowTable{header: header, widths: make([]int, len(header))}
	for i, h := range header {
		t.widths[i] = trimmedWidth(h)
	}
	return t
}

// add appends a row (as many cells as the header).
func (t *rowTable) add(cells ...string) {
	for i, c := range cells {
		if i < len(t.widths) {
			t.widths[i] = max(t.widths[i], trimmedWidth(c))
		}
		for j := 0; j < len(c) && !t.batch; j++ {
			if c[j] < 0x20 || c[j] == 0x7f {
				t.batch = true
			}
		}
		t.rows = binary.AppendUvarint(t.rows, uint64(len(c)))
		t.rows = append(t.rows, c...)
	}
	t.endRow()
}

// addText appends a row of one cell, text, to a table of one column that
// is never rendered (the blocks of analyze's text, which wait for the
// summary): no width taken, no copy made as a string.
func (t *rowTable) addText(text []byte) {
	t.rows = binary.AppendUvarint(t.rows, uint64(len(text)))
	t.rows = append(t.rows, text...)
	t.endRow()
}

// endRow counts a row whose cells are appended, and spills the rows to
// the file past rowSpillAt bytes.
func (t *rowTable) endRow() {
	t.n++
	if len(t.rows) >= rowSpillAt && !t.noFile {
		t.spill()
	}
}

// rowSpillAt is how many bytes of encoded rows a table holds in memory
// before it writes them to its temporary file (a variable for the tests).
var rowSpillAt = 256 << 10

// spill writes the rows in memory to the temporary file.
func (t *rowTable) spill() {
	if t.f == nil {
		f, err := os.CreateTemp("", "rdmashark-table-*")
		if err != nil {
			t.noFile = true
			return
		}
		if os.Remove(f.Name()) != nil {
			// Not unlinked while open (some systems): removed at close.
			t.name = f.Name()
		}
		t.f = f
	}
	n, err := t.f.Write(t.rows)
	if spillDiskFull > 0 && t.written+int64(n) > spillDiskFull {
		n, err = int(spillDiskFull-t.written), syscall.ENOSPC // a full disk, for the tests
	}
	if err != nil {
		// A full disk: the rows written whole so far come back to memory,
		// before those not written, and the table stays there.
		back := make([]byte, t.written, t.written+int64(len(t.rows)))
		if _, rerr := t.f.ReadAt(back, 0); rerr != nil && !(rerr == io.EOF && t.written == 0) {
			if t.err == nil {
				t.err = fmt.Errorf("writing a table's rows to a temporary file: %w", err)
			}
			return
		}
		t.rows = append(back, t.rows...)
		t.close()
		t.noFile = true
		return
	}
	t.written += int64(n)
	t.rows = t.rows[:0]
}

// close removes the temporary file.
func (t *rowTable) close() {
	if t.f != nil {
		t.f.Close()
		if t.name != "" {
			os.Remove(t.name)
		}
		t.f = nil
	}
}

// trimmedWidth is the columns c takes in a table: tablewriter trims the
// spaces at either end of a cell (Behavior.TrimSpace, on by default).
func trimmedWidth(c string) int { return textWidth(strings.TrimSpace(c)) }

// len is the number of rows.
func (t *rowTable) len() int { return t.n }

// each calls fn with every row, those in the file first; its cells are in
// one reused slice unless fresh is set (batch Append keeps the slice it is
// given).
func (t *rowTable) each(fresh bool, fn func(cells []string) error) error {
	if t.err != nil {
		return t.err
	}
	// Rows all in memory (a connection's health rows, most tables) are
	// read in place: a 64 KiB buffer for each was most of what analyze
	// allocated on a capture of many connections.
	var r interface {
		io.Reader
		io.ByteReader
	} = bytes.NewReader(t.rows)
	if t.f != nil {
		r = bufio.NewReaderSize(io.MultiReader(io.NewSectionReader(t.f, 0, t.written), r), 64<<10)
	}
	cells := make([]string, len(t.header))
	var buf []byte
	for range t.n {
		if fresh {
			cells = make([]string, len(t.header))
		}
		for i := range cells {
			n, err := binary.ReadUvarint(r)
			if err == nil {
				buf = slices.Grow(buf[:0], int(n))[:n]
				_, err = io.ReadFull(r, buf)
			}
			if err != nil {
				return fmt.Errorf("reading a table's rows back: %w", err)
			}
			cells[i] = string(buf)
		}
		if err := fn(cells); err != nil {
			return err
		}
	}
	return nil
}

// render writes the table with opts (the table's style) to w.
func (t *rowTable) render(w io.Writer, opts ...tablewriter.Option) error {
	if t.batch {
		tb := tablewriter.NewTable(w, opts...)
		tb.Header(t.header)
		if err := t.each(true, func(cells []string) error { return tb.Append(cells) }); err != nil {
			return err
		}
		return tb.Render()
	}
	widths := tw.NewMapper[int, int]()
	for i, n := range t.widths {
		widths.Set(i, n+2) // a space of padding each side
	}
	// No wrapping: every cell fits its column, and a style that wraps
	// (the findings table's) would have the streaming mode squeeze the
	// spaces inside a cell, which Render, with no width to wrap to,
	// leaves as they are.
	opts = append(opts, tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}), tablewriter.WithColumnWidths(widths))
	// tablewriter writes into out, which goes to w in pieces.
	var out bytes.Buffer
	tb := tablewriter.NewTable(&out, opts...)
	if err := tb.Start(); err != nil {
		return err
	}
	tb.Header(t.header)
	// tablewriter takes ~20 µs a row (a map of cell contexts per line,
	// merge state, width lookups): 7 ms of analyze's 70 on rxe-nfs3 ×20,
	// ~0.8 s for 4,096 connections. A row is laid out the same each time
	// in this style, so once tablewriter has written the second row
	// exactly as appendRow would, appendRow writes the rest.
	fast, plain := false, plainRows(tb.Config())
	var line []byte
	row := 0
	err := t.each(false, func(cells []string) error {
		row++
		if fast {
			line = t.appendRow(line[:0], cells)
			out.Write(line)
			t.appended++
		} else {
			before := out.Len()
			if err := tb.Append(cells); err != nil {
				return err
			}
			if row == 2 && plain {
				line = t.appendRow(line[:0], cells)
				fast = bytes.Equal(out.Bytes()[before:], line)
			}
		}
		if out.Len() >= 64<<10 {
			if _, err := w.Write(out.Bytes()); err != nil {
				return err
			}
			out.Reset()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tb.Close(); err != nil {
		return err
	}
	_, err = w.Write(out.Bytes())
	return err
}

// plainRows reports whether a table's rows are laid out as appendRow lays
// them out: left-aligned, trimmed, one space of padding each side, no
// filters and no merging.
func plainRows(c tablewriter.Config) bool {
	r := c.Row
	left := func(a tw.Align) bool { return a == tw.AlignLeft || a == tw.AlignDefault }
	// (tablewriter copies the deprecated Formatting.MergeMode into
	// Merging.Mode.)
	if !left(r.Alignment.Global) || r.Formatting.AutoFormat.Enabled() || r.Merging.Mode != tw.MergeNone ||
		r.Filter.Global != nil || len(r.Filter.PerColumn) > 0 ||
		len(r.Padding.PerColumn) > 0 || r.Padding.Global.Left != " " || r.Padding.Global.Right != " " ||
		!c.Behavior.TrimSpace.Enabled() || c.Counter != nil {
		return false
	}
	for _, a := range r.Alignment.PerColumn {
		if a != "" && !left(a) {
			return false
		}
	}
	// Deprecated, but tablewriter (v1.1.5) still prefers it to
	// Alignment.PerColumn when set.
	//lint:ignore SA1019 still honoured by tablewriter, so still checked
	for _, a := range r.ColumnAligns {
		if a != "" && !left(a) {
			return false
		}
	}
	return true
}

// appendRow appends a row's line: each cell trimmed, left-aligned in its
// column with a space each side, between vertical bars.
func (t *rowTable) appendRow(b []byte, cells []string) []byte {
	for i, c := range cells {
		c = strings.TrimSpace(c)
		b = append(b, "│ "...)
		b = append(b, c...)
		b = appendSpaces(b, t.widths[i]-textWidth(c)+1)
	}
	return append(b, "│\n"...)
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}
