package report

import (
	"strings"
	"testing"

	"github.com/clipperhouse/displaywidth"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// wrapped is what a WrapWriter of width w (Indent 4, prefer) writes of s.
func wrapped(s string, w int, prefer string) string {
	var b strings.Builder
	ww := NewWrapWriter(&b, w)
	ww.Prefer = prefer
	ww.Write([]byte(s))
	ww.Flush()
	return b.String()
}

func TestWrapWriter(t *testing.T) {
	for _, c := range []struct {
		name, in string
		width    int
		prefer   string
		want     string
	}{
		{"fits", "a short line\n", 20, "", "a short line\n"},
		{"at spaces, indented", "  one two three four five\n", 12, "", "  one two\n      three\n      four\n      five\n"},
		{"a word wider than the line is cut", "abcdefghij\n", 4, "", "abcd\n  ef\n  gh\n  ij\n"},
		{"prefer the separator", "39 SEND_ONLY QP=1 | RPCoRDMA xid=2 | NFS V3 Call\n", 40, " | ",
			"39 SEND_ONLY QP=1 | RPCoRDMA xid=2\n    | NFS V3 Call\n"},
		{"colour takes no width", "\x1b[1;31merror\x1b[0m INV 7\n", 11, "", "\x1b[1;31merror\x1b[0m INV 7\n"},
		{"wide characters count two", "µs → 漢字漢字 x\n", 10, "", "µs →\n    漢字漢\n    字 x\n"},
		{"a last line without newline", "one two", 5, "", "one\n  two"}, // indented at most half the width
	} {
		if got := wrapped(c.in, c.width, c.prefer); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		for _, line := range strings.Split(wrapped(c.in, c.width, c.prefer), "\n") {
			// displaywidth counts the escape's printable bytes; the
			// colour case is checked by its exact output above.
			if !strings.Contains(line, "\x1b") && displaywidth.String(line) > c.width {
				t.Errorf("%s: %q is wider than %d", c.name, line, c.width)
			}
		}
	}
}

func TestFitColumns(t *testing.T) {
	header := []string{"A", "B", "C", "D"}
	widths := []int{10, 10, 10, 10} // 46 with gaps of 2
	keep, dropped := fitColumns(header, widths, 2, 35, []int{0, 2, 1, 3})
	if want := []bool{true, true, true, false}; !equalBools(keep, want) || strings.Join(dropped, ",") != "D" {
		t.Errorf("width 35: keep %v dropped %v", keep, dropped)
	}
	keep, dropped = fitColumns(header, widths, 2, 5, []int{0, 2, 1, 3})
	if want := []bool{true, false, false, false}; !equalBools(keep, want) || len(dropped) != 3 {
		t.Errorf("width 5: keep %v dropped %v (the first of priority stays)", keep, dropped)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTextWidthIsTwwidth: textWidth is what tablewriter's twwidth.Width
// says of the same text (the widths the tables and the wrapped lines were
// laid out by), for ASCII, the reports' own characters, wide and
// combining characters, emoji, colours, tabs, control characters and
// invalid UTF-8, with East Asian widths off and on (ambiguous characters
// such as → and × take two columns then).
func TestTextWidthIsTwwidth(t *testing.T) {
	texts := []string{"", "a", "packets 1476 C→S, 1472 S→C", "error X ×7: packet 1…", "664 µs / 8.48 ms",
		"日本語 text", "e\u0301 combining", "emoji 🚀 and ✅", "\x1b[33m5 (100)\x1b[0m → 2", "tab\there", "\t",
		"bell\x07 and \x7f del", "\x01", "invalid \xff\xfe bytes", "\xe2\x86", "─┼─", "\u200b zero width", "ｆｕｌｌ",
		"→▒→▒ (one slot of runeWidths)", "\u0300\u0700\u0b00\u0f00 (zero width, one slot)"}
	check := func(ea bool) {
		t.Helper()
		forget := func() { // the widths met so far were of the other setting
			for i := range runeWidths {
				runeWidths[i].Store(0)
			}
		}
		defer func(was bool) { twwidth.SetEastAsian(was); forget() }(twwidth.IsEastAsian())
		twwidth.SetEastAsian(ea)
		forget()
		for range 2 { // the second time from runeWidths
			for _, s := range texts {
				want := twwidth.Width(s)
				if got := textWidth(s); got != want {
					t.Errorf("east asian %v: textWidth(%q) = %d, twwidth.Width = %d", ea, s, got, want)
				}
				if got := textWidth([]byte(s)); got != want {
					t.Errorf("east asian %v: textWidth([]byte(%q)) = %d, twwidth.Width = %d", ea, s, got, want)
				}
			}
		}
	}
	check(false)
	check(true)
	if twwidth.WidthWithOptions("→", twwidth.Options{}) == twwidth.WidthWithOptions("→", twwidth.Options{EastAsianWidth: true}) {
		t.Error("→ as wide with East Asian widths as without: the second setting proves nothing")
	}
}
