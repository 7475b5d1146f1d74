package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// Pair is the comparison of two captures.
type Pair struct {
	Base string `json:"base"`
	New  string `json:"new"`
	// Changes counts the rows that are changes, by class.
	Changes map[Class]int `json:"changes"`
	// Rows are the changes, or with All every compared row.
	Rows []Row `json:"rows"`
	// Errors say why a capture could not be compared (the pair is then
	// unusable: exit status 2).
	Errors []string `json:"errors,omitempty"`
}

// NewPair compares base and nw; all keeps the unchanged rows too.
func NewPair(base, nw *Profile, tol Tolerances, all bool) *Pair {
	rows := Compare(base, nw, tol)
	p := &Pair{Base: base.File, New: nw.File, Changes: map[Class]int{Negotiation: 0, Behaviour: 0, Findings: 0}, Rows: []Row{}}
	for _, r := range rows {
		if r.Changed {
			p.Changes[r.Class]++
		}
		if r.Changed || all {
			p.Rows = append(p.Rows, r)
		}
	}
	return p
}

// Document is diff's JSON output (docs/diff.md).
type Document struct {
	Tolerances Tolerances `json:"tolerances"`
	Pairs      []*Pair    `json:"pairs"`
	// UnpairedBase and UnpairedNew are the captures of a directory or
	// glob with no capture of the same name on the other side.
	UnpairedBase []string `json:"unpaired_base"`
	UnpairedNew  []string `json:"unpaired_new"`
	// Changes adds up the pairs' changes by class.
	Changes map[Class]int `json:"changes"`
}

// WriteJSON writes d, indented.
func (d *Document) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// Width is the width the text output fits when its layout names none.
const Width = 100

// TextLayout is how WriteTextLayout fits the terminal (docs/terminal.md).
type TextLayout struct {
	// Width is the terminal's width in display columns; 0 means Width.
	Width int
	// Wide: nothing cut nor wrapped, every name, value and note whole on
	// its row's line, however long (--wide).
	Wide bool
}

// WriteText writes d for a terminal of Width columns (WriteTextLayout).
func (d *Document) WriteText(w io.Writer, name func(string) string) error {
	return d.WriteTextLayout(w, name, TextLayout{})
}

// WriteTextLayout writes d fitted to lay: per pair the changes (or every
// row) by class, then by scope, "NAME  BASE → NEW  NOTE" per row. Fitted,
// no line is wider than the width: a name too long for its column gets a
// line of its own, a note that does not fit the row's line goes on the next
// one under the values, and only values are cut (with "…"; the JSON and
// --wide have them whole). name escapes a file name for a terminal.
func (d *Document) WriteTextLayout(w io.Writer, name func(string) string, lay TextLayout) error {
	t := textWriter{width: lay.Width, wide: lay.Wide}
	if t.width <= 0 {
		t.width = Width
	}
	for i, p := range d.Pairs {
		if i > 0 {
			t.b.WriteString("\n")
		}
		t.wrap("BASE "+name(p.Base), "     ")
		t.wrap("NEW  "+name(p.New), "     ")
		for _, e := range p.Errors {
			t.wrap("  error: "+e, "    ")
		}
		for _, c := range []Class{Negotiation, Behaviour, Findings} {
			var rows []Row
			for _, r := range p.Rows {
				if r.Class == c {
					rows = append(rows, r)
				}
			}
			if len(rows) == 0 {
				continue
			}
			t.wrap(string(c), "  ")
			scope := ""
			for _, r := range rows {
				if r.Scope != scope {
					scope = r.Scope
					t.wrap("  "+scope, "      ")
				}
				t.row(r)
			}
		}
		if len(p.Errors) == 0 {
			t.wrap(summary(p.Changes), "  ")
		}
	}
	if len(d.UnpairedBase) > 0 || len(d.UnpairedNew) > 0 {
		t.b.WriteString("\n")
		for _, n := range d.UnpairedBase {
			t.wrap("only in BASE: "+name(n), "    ")
		}
		for _, n := range d.UnpairedNew {
			t.wrap("only in NEW:  "+name(n), "    ")
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

func summary(c map[Class]int) string {
	n := c[Negotiation] + c[Behaviour] + c[Findings]
	if n == 0 {
		return "no change beyond the tolerances"
	}
	return fmt.Sprintf("%d changes: negotiation %d, behaviour %d, findings %d", n, c[Negotiation], c[Behaviour], c[Findings])
}

// textWriter lays the text out.
type textWriter struct {
	b     strings.Builder
	width int
	wide  bool
}

// cols is the display columns s takes on a terminal.
func cols(s string) int { return twwidth.Width(s) }

// wrap writes s in lines of at most the width, broken at spaces, the lines
// after the first indented by indent: nothing is cut (a word wider than a
// line is broken where the line ends). Wide, s goes whole.
func (t *textWriter) wrap(s, indent string) {
	if t.wide || cols(s) <= t.width {
		t.b.WriteString(s + "\n")
		return
	}
	for first := true; ; first = false {
		if !first {
			s = indent + s
		}
		if cols(s) <= t.width {
			t.b.WriteString(s + "\n")
			return
		}
		end := fitRunes(s, t.width) // bytes of s that fit
		at := strings.LastIndex(s[:end], " ")
		if at <= len(indent) {
			at = end
		}
		t.b.WriteString(strings.TrimRight(s[:at], " ") + "\n")
		s = strings.TrimLeft(s[at:], " ")
	}
}

// fitRunes is the length in bytes of the longest prefix of s that takes at
// most n columns (at least one character).
func fitRunes(s string, n int) int {
	w := 0
	for i, r := range s {
		rw := cols(string(r))
		if w+rw > n {
			if i == 0 {
				return len(string(r))
			}
			return i
		}
		w += rw
	}
	return len(s)
}

// cut shortens s to n columns, ending it with "…" when cut.
func cut(s string, n int) string {
	if cols(s) <= n {
		return s
	}
	if n < 1 {
		return "…"
	}
	return s[:fitRunes(s, n-1)] + "…"
}

// nameCol is the column the values start at on a terminal of Width
// columns; narrower terminals give the names half the width.
const nameCol = 50

// row writes one row: "    NAME   BASE → NEW  NOTE", the values starting
// at the name column.
func (t *textWriter) row(r Row) {
	bv, nv := r.Base, r.New
	if bv == "" {
		bv = "(none)"
	}
	if nv == "" {
		nv = "(none)"
	}
	col := nameCol
	if !t.wide {
		col = min(nameCol, max(t.width/2, 16))
	}
	var s strings.Builder
	s.WriteString("    " + r.Name)
	if pad := col - 4 - cols(r.Name); pad >= 1 {
		s.WriteString(strings.Repeat(" ", pad))
	} else if t.wide {
		s.WriteString("  ")
	} else {
		// The name does not leave its column room: the values go on
		// the next line, at the column.
		t.wrap(s.String(), "        ")
		s.Reset()
		s.WriteString(strings.Repeat(" ", col))
	}
	if !t.wide {
		if room := t.width - col - 3; cols(bv)+cols(nv) > room { // " → "
			half := room / 2
			bv, nv = cut(bv, half), cut(nv, room-half)
		}
	}
	s.WriteString(bv + " → " + nv)
	line := s.String()
	if r.Note != "" {
		if t.wide || cols(line)+2+cols(r.Note) <= t.width {
			line += "  " + r.Note
		} else {
			// The note goes on the next line, under the values.
			t.b.WriteString(line + "\n")
			t.wrap(strings.Repeat(" ", col)+r.Note, strings.Repeat(" ", col))
			return
		}
	}
	t.b.WriteString(line + "\n")
}
