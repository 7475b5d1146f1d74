package report

import (
	"encoding/binary"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// rowTable holds a table's rows encoded (each cell its length as a uvarint,
// then its bytes) and the widest cell of each column, and writes them with
// tablewriter's streaming mode given those widths: byte for byte what
// tablewriter's Render writes of the same rows (TestRowTableMatchesRender),
// but tablewriter neither holds every row nor works on them all at once.
// analyze's table of 4,096 connections held its rows as [][]string, then
// tablewriter its own copies of them while it rendered: some 7 KB a
// connection at the peak, against ~1 KB here (issue 14).
type rowTable struct {
	header []string
	widths []int
	rows   []byte
	n      int
	// batch: the rows go through Render as before: a cell holds what
	// tablewriter's streaming mode might lay out otherwise (a line break,
	// a tab, a control character), or the table's style wraps cells,
	// which the streaming mode does otherwise (spaces inside a wrapped
	// cell are squeezed: findings' table, batchTable).
	batch bool
}

// batchTable is a rowTable for a style that wraps cells.
func batchTable(header ...string) *rowTable {
	t := newRowTable(header...)
	t.batch = true
	return t
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
	t.n++
}

// trimmedWidth is the columns c takes in a table: tablewriter trims the
// spaces at either end of a cell (Behavior.TrimSpace, on by default).
func trimmedWidth(c string) int { return twwidth.Width(strings.TrimSpace(c)) }

// len is the number of rows.
func (t *rowTable) len() int { return t.n }

// each calls fn with every row; its cells are in one reused slice unless
// fresh is set (batch Append keeps the slice it is given).
func (t *rowTable) each(fresh bool, fn func(cells []string) error) error {
	cells := make([]string, len(t.header))
	b := t.rows
	for range t.n {
		if fresh {
			cells = make([]string, len(t.header))
		}
		for i := range cells {
			n, k := binary.Uvarint(b)
			cells[i] = string(b[k : k+int(n)])
			b = b[k+int(n):]
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
	opts = append(opts, tablewriter.WithStreaming(tw.StreamConfig{Enable: true}), tablewriter.WithColumnWidths(widths))
	tb := tablewriter.NewTable(w, opts...)
	if err := tb.Start(); err != nil {
		return err
	}
	tb.Header(t.header)
	if err := t.each(false, func(cells []string) error { return tb.Append(cells) }); err != nil {
		return err
	}
	return tb.Close()
}
