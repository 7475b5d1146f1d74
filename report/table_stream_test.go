package report

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// renderBatch writes rows the way the reports did before rowTable:
// Append every row, then Render.
func renderBatch(header []string, rows [][]string, opts []tablewriter.Option) string {
	var b bytes.Buffer
	t := tablewriter.NewTable(&b, opts...)
	t.Header(header)
	for _, r := range rows {
		_ = t.Append(r)
	}
	_ = t.Render()
	return b.String()
}

func renderRows(t *testing.T, rt *rowTable, rows [][]string, opts []tablewriter.Option) (string, bool) {
	t.Helper()
	s, batch, _ := renderRowsFast(t, rt, rows, opts)
	return s, batch
}

// renderRowsFast is renderRows, also returning how many rows rowTable
// wrote itself rather than through tablewriter.
func renderRowsFast(t *testing.T, rt *rowTable, rows [][]string, opts []tablewriter.Option) (string, bool, int) {
	t.Helper()
	defer rt.close()
	for _, r := range rows {
		rt.add(r...)
	}
	var b bytes.Buffer
	if err := rt.render(&b, opts...); err != nil {
		t.Fatal(err)
	}
	return b.String(), rt.batch, rt.appended
}

// cellParts are what the reports' cells are made of: digits, words,
// arrows, µ, the ellipsis, a wide CJK character and an emoji (two columns
// each), spaces at either end, and (rarely) what streaming cannot take.
var cellParts = []string{"0", "42", "1476 / 1472", "roce", "192.0.2.2 QP 0x000011", "C→S", "664 µs", "…", "(205)",
	"not RPC-over-RDMA", "v1 R=1 send 4096 recv 4096", "漢字", "🙂", " ", "  lead", "trail  ", "", "-"}

func randomCell(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(cellParts[r.IntN(len(cellParts))])
		if r.IntN(3) == 0 {
			b.WriteByte(' ')
		}
	}
	if r.IntN(20) == 0 {
		b.WriteString(strings.Repeat("x", 100+r.IntN(60)))
	}
	if r.IntN(2000) == 0 {
		b.WriteString([]string{"a\tb", "line\nbreak", "\x1b[1m"}[r.IntN(3)])
	}
	return b.String()
}

// TestRowTableMatchesRender: rowTable writes what tablewriter's Render
// writes of the same rows in the reports' style, byte for byte, its rows
// in memory or (half the tables) in a temporary file: tables of
// 0 to 40 random rows of the characters the reports' cells hold (wide
// characters, an ellipsis that is one column in three bytes, spaces at
// either end, cells longer than 120 columns, empty cells), and those with
// a tab or a line break, which go through Render; in the house style and
// in the findings table's, which wraps. It fails when the widths given to
// the streaming mode are off by one, or not of the trimmed cells, or when
// the rows in the temporary file are read back after those in memory, or
// the findings table's style is streamed as it is (it squeezes spaces:
// all tried).
func TestRowTableMatchesRender(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	streamed, appended := 0, 0
	defer func(n int) { rowSpillAt = n }(rowSpillAt)
	for i := range 1500 {
		// Half the tables write their rows to a temporary file, from a
		// few rows on.
		rowSpillAt = 256 << 10
		if i%2 == 1 {
			rowSpillAt = 1 + r.IntN(400)
		}
		cols := 1 + r.IntN(8)
		header := make([]string, cols)
		for c := range header {
			header[c] = randomCell(r)
			if header[c] == "" || strings.ContainsAny(header[c], "\t\n") {
				header[c] = "H" + string(rune('A'+c))
			}
		}
		rows := make([][]string, r.IntN(41))
		for k := range rows {
			rows[k] = make([]string, cols)
			for c := range rows[k] {
				rows[k][c] = randomCell(r)
			}
		}
		want := renderBatch(header, rows, houseStyle)
		got, batch, fast := renderRowsFast(t, newRowTable(header...), rows, houseStyle)
		if !batch {
			streamed++
			if len(rows) > 2 && fast != len(rows)-2 {
				t.Fatalf("table %d: %d of its %d rows written by appendRow, want all but the first two", i, fast, len(rows))
			}
			appended += fast
		}
		if got != want {
			t.Fatalf("table %d (batch %v): rowTable writes\n%s\nRender writes\n%s", i, batch, got, want)
		}
		// A style whose rows appendRow does not lay out goes through
		// tablewriter whole.
		if i%10 == 0 {
			right := append(slices.Clone(houseStyle), tablewriter.WithRowAlignment(tw.AlignRight))
			got, _, fast := renderRowsFast(t, newRowTable(header...), rows, right)
			if want := renderBatch(header, rows, right); got != want || fast != 0 {
				t.Fatalf("table %d, right-aligned (%d rows by appendRow): rowTable writes\n%s\nRender writes\n%s", i, fast, got, want)
			}
		}
		// The findings table's style wraps (with no width to wrap to).
		findings := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
		if got, _ := renderRows(t, newRowTable(header...), rows, findings); got != renderBatch(header, rows, findings) {
			t.Fatalf("table %d, findings style: rowTable writes\n%s\nRender writes\n%s", i, got, renderBatch(header, rows, findings))
		}
	}
	if appended == 0 {
		t.Fatal("no row written by appendRow")
	}
	if streamed < 1000 || streamed == 1500 {
		t.Fatalf("%d tables of 1500 streamed: both paths must be taken", streamed)
	}
}
