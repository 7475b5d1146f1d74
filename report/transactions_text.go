package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/rdmashark/rdmashark/fields"
)

// txnPriority lists the transactions table's columns from the most to the
// least wanted when the terminal is too narrow for all of them: what was
// asked and how long it took first, the RDMA detail last.
var txnPriority = []int{0, 1, 4, 11, 5, 6, 3, 7, 8, 9, 2, 10}

// txnMaxCell caps a column of the fitted table (in display columns): the
// procedure cell lists an NFSv4 COMPOUND's operations, which can run to
// hundreds of columns; the cut ends in "…" (--wide shows it whole).
var txnMaxCell = [txnColumns]int{4: 24}

// txnRight are the columns aligned right in the fitted table: the numbers.
var txnRight = [txnColumns]bool{1: true, 8: true, 9: true, 10: false, 11: true}

// WriteText writes the transactions as WriteTable does with lay.Wide, and
// otherwise in plain columns chosen to fit lay's width: those that do not
// fit are named under the table (--wide shows them).
func (l *TransactionList) WriteText(w io.Writer, lay Layout) error {
	if lay.Wide {
		return l.WriteTable(w)
	}
	if l.spill != nil && l.spill.err != nil {
		return l.spill.err
	}
	// The header and the lines after the table are prose: wrapped.
	ww := NewWrapWriter(w, lay.width())
	bw := bufio.NewWriterSize(ww, 64<<10)
	fmt.Fprintf(bw, "%s: %s\n", fields.Escape(l.File), Plural(l.Len(), "transaction"))
	var dropped []string
	if l.Len() > 0 {
		widths := make([]int, txnColumns)
		for i, h := range txnHeader {
			widths[i] = twwidth.Width(h)
			if l.spill != nil {
				widths[i] = max(widths[i], l.spill.widths[i])
			}
		}
		var c txnCells
		for i := range l.Transactions {
			addWidths(widths, &c, &l.Transactions[i])
		}
		for i, m := range txnMaxCell {
			if m > 0 {
				widths[i] = min(widths[i], max(m, twwidth.Width(txnHeader[i])))
			}
		}
		var keep []bool
		keep, dropped = fitColumns(txnHeader[:], widths, 2, lay.width(), txnPriority)
		t := plainTable{widths: widths, keep: keep, right: txnRight[:]}
		var line []byte
		hdr := make([][]byte, txnColumns)
		for i, h := range txnHeader {
			hdr[i] = []byte(h)
		}
		line = t.appendLine(line[:0], func(i int) []byte { return hdr[i] })
		bw.Write(line)
		if err := l.each(func(x *Transaction) error {
			c.build(x)
			line = t.appendLine(line[:0], c.cell)
			_, err := bw.Write(line)
			return err
		}); err != nil {
			return err
		}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(bw, "(%s not shown at %d columns: --wide shows every column)\n", strings.Join(dropped, ", "), lay.width())
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return l.writeTableTail(ww)
}

// plainTable lays out rows in columns separated by two spaces, without
// the box of the house style: the columns kept, each cut to its width
// with "…" when a cell is wider.
type plainTable struct {
	widths []int
	keep   []bool
	right  []bool
}

// appendLine appends the line of the cells cell(i) gives, and '\n'.
func (t plainTable) appendLine(b []byte, cell func(int) []byte) []byte {
	last := -1
	for i := range t.widths {
		if t.keep[i] {
			last = i
		}
	}
	first := true
	for i, wd := range t.widths {
		if !t.keep[i] {
			continue
		}
		if !first {
			b = append(b, "  "...)
		}
		first = false
		c := cell(i)
		n := textWidth(c)
		if n > wd {
			cut := fitPrefix(c, wd-1)
			c = append(c[:cut:cut], "…"...)
			n = textWidth(c)
		}
		switch {
		case i < len(t.right) && t.right[i]:
			b = appendSpaces(b, wd-n)
			b = append(b, c...)
		case i == last:
			b = append(b, c...) // no trailing spaces
		default:
			b = append(b, c...)
			b = appendSpaces(b, wd-n)
		}
	}
	return append(b, '\n')
}
