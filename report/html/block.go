package html

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"
	"sync"
)

// ladderBlock writes one ladder block (an SVG of rows) in Go and hands it
// to page.tmpl as markup. The rows were a template of their own, and
// executing it was most of the report's time: per row some twenty values,
// each looked up and passed through an escaper by reflection. The markup
// here is byte for byte what that template wrote (TestLadderBlockMatches
// compares the two, blockTemplate in the test is the old text): every
// value is escaped as html/template escaped it in its context; in text,
// quoted attribute values and <title> (RCDATA) alike that is
// htmlReplacementTable, escText below; URL attributes (href, and data-src,
// which html/template takes for a URL because of its name) go through
// html/template itself, escURL.
func ladderBlock(l Ladder, b Block) template.HTML {
	var w blockBuf
	w.b.Grow(512 + len(b.Rows)*900)
	w.s(`<svg class="block" width="`).i(l.Width).s(`" height="`).i(b.Height).s(`" viewBox="0 0 `).i(l.Width).s(` `).i(b.Height).s(`">
<line class="life" x1="`).i(l.ClientX).s(`" y1="0" x2="`).i(l.ClientX).s(`" y2="`).i(b.Height).s(`"/><line class="life" x1="`).i(l.ServerX).s(`" y1="0" x2="`).i(l.ServerX).s(`" y2="`).i(b.Height).s(`"/>
`)
	for ri := range b.Rows {
		r := &b.Rows[ri]
		w.s(`<g class="row k-`).e(r.Kind).s(`" id="`).e(r.Anchor).s(`" data-kind="`).e(r.Kind).s(`" data-first="`).i(r.First).s(`" data-last="`).i(r.Last).s(`" data-src="`).u(r.Src).s(`" data-xid="`).e(r.XID).s(`" data-retx="`).i(r.Retx).s(`" data-dup="`).i(r.Dup).s(`" data-gaps="`).i(r.Gaps)
		if r.Exch != 0 {
			// The neutral ladder's rows (RPC's are as they were).
			w.s(`" data-exch="`).i(r.Exch)
			if r.Kind == "rdma-read" || r.Kind == "rdma-write" {
				w.s(`" data-bytes="`).i(int(r.Bytes))
			}
		}
		w.s(`"><title>`).e(r.Title).s(`</title>
`)
		if r.Pkts != "" {
			w.s(`<text x="8" y="`).i(r.LabelY).s(`" class="pk">`).e(r.Pkts).s(`</text>`)
		}
		w.s("\n")
		if r.Time != "" {
			w.s(`<text x="8" y="`).i(r.Y + 10).s(`" class="tm">`).e(r.Time).s(`</text>`)
		} else if r.Note != "" {
			w.s(`<text x="8" y="`).i(r.Y + 10).s(`" class="tm">latency `).e(r.Note).s(`</text>`)
		}
		w.s("\n")
		if r.Kind != "missing" {
			w.s(`<line class="arrow `)
			if r.LeftToRight {
				w.s("c2s")
			} else {
				w.s("s2c")
			}
			w.s(`" x1="`).i(r.X1).s(`" y1="`).i(r.Y).s(`" x2="`).i(r.X2).s(`" y2="`).i(r.Y).s(`"/>`)
		}
		w.s(`
<text class="lb" x="`).i(r.MidX).s(`" y="`).i(r.LabelY).s(`" text-anchor="middle">`).e(r.Label).s(`</text>
`)
		if r.Sub != "" || r.Loss != "" {
			w.s(`<text class="sub" x="`).i(r.MidX).s(`" y="`).i(r.SubY).s(`" text-anchor="middle">`)
			if r.Loss != "" {
				w.s(`<tspan class="loss">`).e(r.Loss).s(`</tspan>`)
				if r.Sub != "" {
					w.s(" · ")
				}
			}
			w.e(r.Sub).s(`</text>`)
		}
		w.s("\n")
		if r.Inv {
			x := invX(r.LeftToRight, r.X2)
			w.s(`<g class="inv"><rect x="`).i(x).s(`" y="`).i(r.Y - 8).s(`" width="26" height="15" rx="3"/><text x="`).i(x).s(`" dx="3" y="`).i(r.Y + 4).s(`">INV</text></g>`)
		}
		w.s("\n")
		for pi := range r.Pins {
			p := &r.Pins[pi]
			w.s(`<a href="`).u(p.Link).s(`"><text class="pin sev-`).e(p.Severity).s(`" id="`).e(p.Anchor).s(`" x="790" y="`).i(p.Y).s(`">⚑ `).e(p.Rule).s(`<title>`).e(p.Title).s(`</title></text></a>`)
		}
		w.s("\n")
		if r.MorePins != 0 {
			w.s(`<text class="tm" x="790" y="`).i(r.LabelY + 56).s(`">+`).i(r.MorePins).s(` more findings</text>`)
		}
		w.s(`
</g>
`)
	}
	w.s(`</svg>`)
	return template.HTML(w.b.String())
}

// invX places the INV mark outside the lifeline the arrow ends at.
func invX(leftToRight bool, x2 int) int {
	if leftToRight {
		return x2 + 8
	}
	return x2 - 34
}

// blockBuf is a strings.Builder: the block becomes a string without a
// copy.
type blockBuf struct{ b strings.Builder }

func (w *blockBuf) s(s string) *blockBuf { w.b.WriteString(s); return w }

// i writes an int as text/template prints it (fmt's %v).
func (w *blockBuf) i(n int) *blockBuf {
	var a [20]byte
	w.b.Write(strconv.AppendInt(a[:0], int64(n), 10))
	return w
}

func (w *blockBuf) e(s string) *blockBuf { escText(&w.b, s); return w }

func (w *blockBuf) u(s string) *blockBuf { escURL(&w.b, s); return w }

// escText appends s escaped as html/template's htmlEscaper, attrEscaper
// and rcdataEscaper escape a string (htmlReplacementTable). The runes it
// replaces are all ASCII, so replacing bytes is the same: no byte below
// 0x80 is part of a longer UTF-8 sequence, and the template passes
// invalid UTF-8 through as it is.
func escText(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case 0:
			rep = "\uFFFD"
		case '"':
			rep = "&#34;"
		case '&':
			rep = "&amp;"
		case '\'':
			rep = "&#39;"
		case '+':
			rep = "&#43;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// escURL appends s as html/template writes it in a quoted URL attribute
// (urlFilter, urlNormalizer, attrEscaper). Letters, digits and ".-_#/"
// pass all three unchanged (no ':' for urlFilter to judge a scheme by);
// anything else is escaped by html/template itself, remembered.
func escURL(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == '#' || c == '/') {
			b.WriteString(urlAttr(s))
			return
		}
	}
	b.WriteString(s)
}

var urlAttrs struct {
	sync.Mutex
	m map[string]string
}

var urlAttrTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("url").Parse(`<a href="{{.}}">`))
})

const urlAttrPrefix, urlAttrSuffix = `<a href="`, `">`

func urlAttr(s string) string {
	urlAttrs.Lock()
	v, ok := urlAttrs.m[s]
	urlAttrs.Unlock()
	if ok {
		return v
	}
	var buf bytes.Buffer
	if err := urlAttrTemplate().Execute(&buf, s); err != nil {
		// Cannot happen: the template only interpolates a string.
		panic(err)
	}
	out := buf.String()
	v = out[len(urlAttrPrefix) : len(out)-len(urlAttrSuffix)]
	urlAttrs.Lock()
	if urlAttrs.m == nil {
		urlAttrs.m = map[string]string{}
	}
	if len(urlAttrs.m) < 4096 {
		urlAttrs.m[s] = v
	}
	urlAttrs.Unlock()
	return v
}
