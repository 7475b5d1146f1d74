package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
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

// Width is the width the text output fits in.
const Width = 100

// WriteText writes d for a terminal of Width columns: per pair the
// changes (or every row) by class, then by scope, "BASE → NEW" per line.
// name escapes a file name for a terminal.
func (d *Document) WriteText(w io.Writer, name func(string) string) error {
	var b strings.Builder
	for i, p := range d.Pairs {
		if i > 0 {
			b.WriteString("\n")
		}
		wrap(&b, "BASE "+name(p.Base), "     ")
		wrap(&b, "NEW  "+name(p.New), "     ")
		for _, e := range p.Errors {
			wrap(&b, "  error: "+e, "    ")
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
			line(&b, string(c))
			scope := ""
			for _, r := range rows {
				if r.Scope != scope {
					scope = r.Scope
					line(&b, "  "+scope)
				}
				b.WriteString(rowText(r))
				b.WriteString("\n")
			}
		}
		if len(p.Errors) == 0 {
			line(&b, summary(p.Changes))
		}
	}
	if len(d.UnpairedBase) > 0 || len(d.UnpairedNew) > 0 {
		b.WriteString("\n")
		for _, n := range d.UnpairedBase {
			wrap(&b, "only in BASE: "+name(n), "    ")
		}
		for _, n := range d.UnpairedNew {
			wrap(&b, "only in NEW:  "+name(n), "    ")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func summary(c map[Class]int) string {
	n := c[Negotiation] + c[Behaviour] + c[Findings]
	if n == 0 {
		return "no change beyond the tolerances"
	}
	return fmt.Sprintf("%d changes: negotiation %d, behaviour %d, findings %d", n, c[Negotiation], c[Behaviour], c[Findings])
}

// line writes s cut to Width columns.
func line(b *strings.Builder, s string) {
	b.WriteString(cut(s, Width))
	b.WriteString("\n")
}

// wrap writes s in lines of at most Width columns, broken at spaces, the
// lines after the first indented by indent: an error is never cut.
func wrap(b *strings.Builder, s, indent string) {
	for first := true; ; first = false {
		if !first {
			s = indent + s
		}
		r := []rune(s)
		if len(r) <= Width {
			b.WriteString(s + "\n")
			return
		}
		at := strings.LastIndex(string(r[:Width]), " ")
		if at <= len(indent) {
			at = len(string(r[:Width]))
		}
		b.WriteString(s[:at] + "\n")
		s = strings.TrimLeft(s[at:], " ")
	}
}

// cut shortens s to n runes, ending it with "…" when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

const nameCol = 50

// rowText is one row: "    NAME   BASE → NEW  NOTE", the name in a
// column of nameCol, values cut so that the line fits Width.
func rowText(r Row) string {
	bv, nv := r.Base, r.New
	if bv == "" {
		bv = "(none)"
	}
	if nv == "" {
		nv = "(none)"
	}
	name := cut(r.Name, nameCol-5)
	pad := nameCol - 4 - utf8.RuneCountInString(name)
	if pad < 1 {
		pad = 1
	}
	room := Width - nameCol - 3 // " → "
	if utf8.RuneCountInString(bv)+utf8.RuneCountInString(nv) > room {
		half := room / 2
		bv, nv = cut(bv, half), cut(nv, room-half)
	}
	s := "    " + name + strings.Repeat(" ", pad) + bv + " → " + nv
	if r.Note != "" {
		s += "  " + r.Note
	}
	return cut(s, Width)
}
