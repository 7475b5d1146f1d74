package report

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// DefaultWidth is the width the text reports fit when standard output is
// not a terminal and COLUMNS is not set (cmd/rdmashark/term.go decides):
// the classic terminal's 80 columns, as ls and git assume.
const DefaultWidth = 80

// Layout is how a text report fits the terminal (docs/terminal.md).
type Layout struct {
	// Width is the terminal's width in display columns; 0 means
	// DefaultWidth.
	Width int
	// Wide: every column of every table and every line whole, whatever
	// the width (--wide): the tables of the versions before the layout
	// fitted the terminal.
	Wide bool
	// Color: severities, verdicts and retransmissions in ANSI colours.
	Color bool
}

func (l Layout) width() int {
	if l.Width <= 0 {
		return DefaultWidth
	}
	return l.Width
}

// TextWidth is the display columns s takes on a terminal: wide
// characters count two, combining marks none, ANSI escape sequences
// (colours) none.
func TextWidth(s string) int { return textWidth(s) }

// textWidth is twwidth.Width(s) (the width tablewriter lays its cells out
// by), without what twwidth.Width costs on every call (a lock, a look-up
// of the whole string in its cache, a width look-up per character): the
// reports' text is printable ASCII but for a few characters (→, ×, µ, …),
// and twwidth adds up its characters' widths. A string with a control
// character (an ANSI colour, a tab) goes to twwidth whole: it strips the
// escape sequences.
func textWidth[T string | []byte](s T) int {
	w, i := 0, 0
	for {
		j := i // a run of printable ASCII, a column a byte
		for j < len(s) && s[j]-0x20 < 0x7f-0x20 {
			j++
		}
		w += j - i
		if j == len(s) {
			return w
		}
		if s[j] < utf8.RuneSelf {
			return twwidth.Width(string(s))
		}
		r, n := decodeRune(s[j:])
		w += runeWidth(r)
		i = j + n
	}
}

// decodeRune is utf8.DecodeRune for either kind of text.
func decodeRune[T string | []byte](s T) (rune, int) {
	switch s := any(s).(type) {
	case []byte:
		return utf8.DecodeRune(s)
	case string:
		return utf8.DecodeRuneInString(s)
	}
	panic("unreachable")
}

// runeWidths remembers twwidth.Width of characters past ASCII, without a
// lock: slot r%len holds r<<3 | 4 | its width (0 to 2) once it is known;
// two characters that share a slot take turns in it. twwidth's options
// (East Asian widths, from the locale) are set at start, and rdmashark
// never changes them.
var runeWidths [1024]atomic.Uint32

// runeWidth is twwidth.Width(string(r)) for r past ASCII.
func runeWidth(r rune) int {
	slot := &runeWidths[uint32(r)%uint32(len(runeWidths))]
	if v := slot.Load(); v != 0 && rune(v>>3) == r {
		return int(v & 3)
	}
	w := twwidth.Width(string(r))
	if w <= 3 {
		slot.Store(uint32(r)<<3 | 4 | uint32(w))
	}
	return w
}

// The ANSI SGR colours of the reports.
const (
	colorReset  = "\x1b[0m"
	colorRed    = "\x1b[1;31m" // errors, FAILED, damaged packets
	colorYellow = "\x1b[33m"   // warnings, retransmissions
	colorCyan   = "\x1b[36m"   // info
	colorGreen  = "\x1b[32m"   // passed
)

// paint wraps s in colour when on.
func paint(on bool, color, s string) string {
	if !on || s == "" {
		return s
	}
	return color + s + colorReset
}

// severityColor is the colour of a severity's or a verdict's word.
func severityColor(word string) string {
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "error", "failed", "fail":
		return colorRed
	case "warning", "warn":
		return colorYellow
	case "info":
		return colorCyan
	case "ok", "passed", "pass":
		return colorGreen
	}
	return ""
}

// paintSeverity paints a severity or verdict word (padded as it is) in
// its colour.
func paintSeverity(on bool, word string) string {
	c := severityColor(word)
	if c == "" {
		return word
	}
	t := strings.TrimRight(word, " ")
	return paint(on, c, t) + word[len(t):]
}

// WrapWriter passes text through line by line, breaking every line wider
// than its width (display columns) at spaces: the continuation lines are
// indented by the line's own indentation plus Indent columns. A word
// wider than the line is cut where the width ends. Lines that fit go
// through as they are; ANSI colour sequences take no width and are never
// cut. Close (or Flush) writes a last line that has no newline.
type WrapWriter struct {
	w     io.Writer
	width int
	// Indent is the continuation lines' indentation past the line's own.
	Indent int
	// Column, when positive, is the continuation lines' indentation
	// whatever the line's own (dissect's lines, whose frame numbers are
	// right-aligned: their own indentation changes with the number's
	// digits, the continuations must not).
	Column int
	// Prefer, when not empty, is where a line is broken first (dissect's
	// " | " between layers), before any other space.
	Prefer string
	// Hang: continuation lines start under the line's second column, the
	// text after its first run of two or more spaces ("  analyze      Report
	// the…" of cobra's command list), when there is one in the line's
	// first half.
	Hang bool
	line []byte
	out  []byte
	in   []byte // WriteString's text
	err  error
}

// NewWrapWriter wraps lines at width columns (DefaultWidth when 0).
func NewWrapWriter(w io.Writer, width int) *WrapWriter {
	if width <= 0 {
		width = DefaultWidth
	}
	return &WrapWriter{w: w, width: width, Indent: 4}
}

// Write takes any piece of text; each complete line is written wrapped.
func (ww *WrapWriter) Write(p []byte) (int, error) {
	if ww.err != nil {
		return 0, ww.err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			ww.line = append(ww.line, p...)
			break
		}
		ww.line = append(ww.line, p[:i]...)
		p = p[i+1:]
		ww.out = ww.wrapLine(ww.out[:0], ww.line)
		ww.line = ww.line[:0]
		if _, err := ww.w.Write(ww.out); err != nil {
			ww.err = err
			return n - len(p), err
		}
	}
	return n, nil
}

// WriteString is Write of s, through one buffer kept for the purpose
// rather than a new slice each time (io.WriteString's).
func (ww *WrapWriter) WriteString(s string) (int, error) {
	ww.in = append(ww.in[:0], s...)
	return ww.Write(ww.in)
}

// Flush writes a pending line that has no newline yet, wrapped.
func (ww *WrapWriter) Flush() error {
	if ww.err != nil || len(ww.line) == 0 {
		return ww.err
	}
	ww.out = ww.wrapLine(ww.out[:0], ww.line)
	ww.out = ww.out[:len(ww.out)-1] // no newline was written
	ww.line = ww.line[:0]
	_, ww.err = ww.w.Write(ww.out)
	return ww.err
}

// wrapLine appends line, broken to the width, each piece ending in '\n'.
func (ww *WrapWriter) wrapLine(dst, line []byte) []byte {
	if textWidth(line) <= ww.width {
		dst = append(dst, line...)
		return append(dst, '\n')
	}
	lead := 0
	for lead < len(line) && line[lead] == ' ' {
		lead++
	}
	indent := min(lead+ww.Indent, ww.width/2)
	if ww.Column > 0 {
		indent = min(ww.Column, ww.width/2)
	}
	if ww.Hang {
		if i := bytes.Index(line[lead:], []byte("  ")); i > 0 {
			j := lead + i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			if col := textWidth(line[:j]); col <= ww.width/2 {
				indent = col
			}
		}
	}
	first := true
	rest := line
	for len(rest) > 0 {
		avail := ww.width
		if !first {
			avail -= indent
			dst = appendSpaces(dst, indent)
		}
		cut, next := breakAt(rest, avail, ww.Prefer, first)
		dst = append(dst, bytes.TrimRight(rest[:cut], " ")...)
		dst = append(dst, '\n')
		rest = bytes.TrimLeft(rest[next:], " ")
		first = false
	}
	return dst
}

// breakAt returns where the first piece of s that fits avail columns ends
// (cut) and where the rest starts (next): at the last occurrence of
// prefer that fits, else the last space, else where the width ends.
// Leading spaces of the first piece (its indentation) are not a break.
func breakAt(s []byte, avail int, prefer string, first bool) (cut, next int) {
	end := fitPrefix(s, avail)
	if end == len(s) {
		return end, end
	}
	start := 0
	if first {
		for start < len(s) && s[start] == ' ' {
			start++
		}
	}
	if prefer != "" {
		// Break in front of the separator, so that the next line starts
		// with it ("| NFS V3 Call"), keeping its visible marks.
		if i := bytes.LastIndex(s[start:end+1], []byte(prefer)); i > 0 {
			return start + i, start + i + 1
		}
	}
	if i := bytes.LastIndexByte(s[start:end+1], ' '); i > 0 {
		return start + i, start + i + 1
	}
	if end == 0 {
		_, sz := utf8.DecodeRune(s)
		end = sz // at least one character a line
	}
	return end, end
}

// fitPrefix is the length of the longest prefix of s that takes at most
// avail display columns, never ending inside an ANSI escape sequence.
func fitPrefix[T string | []byte](s T, avail int) int {
	w := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
				for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
					j++
				}
				j++
			}
			i = min(j, len(s))
			continue
		}
		rw, sz := 1, 1 // ASCII (a control character too)
		if s[i] >= utf8.RuneSelf {
			var r rune
			r, sz = decodeRune(s[i:])
			rw = runeWidth(r)
		}
		if w+rw > avail {
			return i
		}
		w += rw
		i += sz
	}
	return len(s)
}

// appendItems lays out items after the line's head (what b holds from
// start: its indentation and title), separated by sep, as many on a line
// as fit width; continuation lines are indented by indent spaces. Item i
// is "labels[i] values[i]", or values[i] alone when labels is nil. An
// item wider than a line is left to a WrapWriter to break. Each piece's
// width is taken once; they add up to the line's, as twwidth's do (no
// escape sequence spans a label and its value: paint colours whole
// values).
func appendItems(b []byte, start int, labels, values []string, sep string, width, indent int) []byte {
	tail := strings.TrimRight(sep, " ") // ends a line that goes on
	sepW, tailW := textWidth(sep), textWidth(tail)
	lineW := textWidth(b[start:])
	for i, v := range values {
		itemW := textWidth(v)
		if labels != nil {
			itemW += textWidth(labels[i]) + 1
		}
		room := itemW // the item, and the separators on either side
		if i > 0 {
			room += sepW
		}
		if i < len(values)-1 {
			room += tailW
		}
		switch {
		case i > 0 && lineW+room > width:
			b = append(b, tail...)
			b = trimSpacesAfter(b, start)
			b = append(b, '\n')
			start = len(b)
			b = appendSpaces(b, indent)
			lineW = indent + itemW
		case i > 0:
			b = append(b, sep...)
			lineW += sepW + itemW
		default:
			lineW += itemW
		}
		if labels != nil {
			b = append(b, labels[i]...)
			b = append(b, ' ')
		}
		b = append(b, v...)
	}
	return append(b, '\n')
}

// trimSpacesAfter trims the spaces at the end of b, but none before start.
func trimSpacesAfter(b []byte, start int) []byte {
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// fitColumns chooses the columns of a table that fit width: each column
// takes its width plus gap; priority lists the columns from the most to
// the least wanted, and the least wanted go first until the rest fit (at
// least the first of priority stays). It returns which columns stay and
// the names of those left out.
func fitColumns(header []string, widths []int, gap, width int, priority []int) (keep []bool, dropped []string) {
	keep = make([]bool, len(widths))
	total := -gap
	for i := range widths {
		keep[i] = true
		total += widths[i] + gap
	}
	for k := len(priority) - 1; k > 0 && total > width; k-- {
		c := priority[k]
		keep[c] = false
		total -= widths[c] + gap
	}
	for i, k := range keep {
		if !k {
			dropped = append(dropped, header[i])
		}
	}
	return keep, dropped
}

// paintVerdict paints check's verdict: red when it failed, green when it
// passed, the rest (the gate's reasons) as it is.
func paintVerdict(on bool, verdict string) string {
	word, rest, _ := strings.Cut(verdict, " ")
	if rest != "" {
		rest = " " + rest
	}
	switch word {
	case "FAILED":
		return paint(on, colorRed, word) + rest
	case "passed":
		return paint(on, colorGreen, word) + rest
	}
	return verdict
}
