package html

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"sync"
	"testing"
)

// blockTemplate is the template page.tmpl drew ladder blocks with before
// ladderBlock wrote them in Go; the tests below hold ladderBlock to its
// output, byte for byte.
const blockTemplate = `{{define "block"}}<svg class="block" width="{{.L.Width}}" height="{{.B.Height}}" viewBox="0 0 {{.L.Width}} {{.B.Height}}">
<line class="life" x1="{{.L.ClientX}}" y1="0" x2="{{.L.ClientX}}" y2="{{.B.Height}}"/><line class="life" x1="{{.L.ServerX}}" y1="0" x2="{{.L.ServerX}}" y2="{{.B.Height}}"/>
{{range .B.Rows}}<g class="row k-{{.Kind}}" id="{{.Anchor}}" data-kind="{{.Kind}}" data-first="{{.First}}" data-last="{{.Last}}" data-src="{{.Src}}" data-xid="{{.XID}}" data-retx="{{.Retx}}" data-dup="{{.Dup}}" data-gaps="{{.Gaps}}"><title>{{.Title}}</title>
{{if .Pkts}}<text x="8" y="{{.LabelY}}" class="pk">{{.Pkts}}</text>{{end}}
{{if .Time}}<text x="8" y="{{.Y | add 10}}" class="tm">{{.Time}}</text>{{else if .Note}}<text x="8" y="{{.Y | add 10}}" class="tm">latency {{.Note}}</text>{{end}}
{{if ne .Kind "missing"}}<line class="arrow {{if .LeftToRight}}c2s{{else}}s2c{{end}}" x1="{{.X1}}" y1="{{.Y}}" x2="{{.X2}}" y2="{{.Y}}"/>{{end}}
<text class="lb" x="{{.MidX}}" y="{{.LabelY}}" text-anchor="middle">{{.Label}}</text>
{{if or .Sub .Loss}}<text class="sub" x="{{.MidX}}" y="{{.SubY}}" text-anchor="middle">{{if .Loss}}<tspan class="loss">{{.Loss}}</tspan>{{if .Sub}} · {{end}}{{end}}{{.Sub}}</text>{{end}}
{{if .Inv}}<g class="inv"><rect x="{{.X2 | invX .LeftToRight}}" y="{{.Y | sub 8}}" width="26" height="15" rx="3"/><text x="{{.X2 | invX .LeftToRight}}" dx="3" y="{{.Y | add 4}}">INV</text></g>{{end}}
{{range .Pins}}<a href="{{.Link}}"><text class="pin sev-{{.Severity}}" id="{{.Anchor}}" x="790" y="{{.Y}}">⚑ {{.Rule}}<title>{{.Title}}</title></text></a>{{end}}
{{if .MorePins}}<text class="tm" x="790" y="{{.LabelY | add 56}}">+{{.MorePins}} more findings</text>{{end}}
</g>
{{end}}</svg>{{end}}`

type blockArg struct {
	L Ladder
	B Block
}

var refFuncs = template.FuncMap{
	"add":       func(a, b int) int { return a + b },
	"sub":       func(a, b int) int { return b - a },
	"invX":      invX,
	"blockArgs": func(l Ladder, b Block) blockArg { return blockArg{l, b} },
}

// refPage is the page as it was before ladderBlock: the whole page's
// template with the block template in place of ladderBlock.
var refPage = sync.OnceValue(func() *template.Template {
	const call = "{{ladderBlock $l .}}"
	text := wholeTemplateText()
	if strings.Count(text, call) != 2 {
		panic("page.tmpl no longer calls ladderBlock twice")
	}
	text = strings.ReplaceAll(text, call, `{{template "block" (blockArgs $l .)}}`) + blockTemplate
	return template.Must(template.New("page").Funcs(refFuncs).Parse(text))
})

// refBlock draws one block with the block template, in the context the
// page drew it in (HTML text).
var refBlock = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("b").Funcs(refFuncs).Parse(`<div>{{template "block" .}}</div>` + blockTemplate))
})

// nasty are strings with every character html/template escapes, in text,
// attributes, <title> and URLs, and non-ASCII ones the report writes.
var nasty = []string{
	"",
	"plain",
	`a"b`, "a'b", "a+b", "a<b", "a>b", "a&b", "&amp;", "a\x00b",
	"</title><script>x</script>",
	"→ µ · × – ⚑ …",
	"bad utf8 \xff\xfe end", "\xc3", "\ufdd0\ufffe",
	"javascript:alert(1)", "http://h/p?q=1&r=2#f", "HTTPS://X", "mailto:a@b",
	"fe80::1", "192.0.2.1:20049", "LID 4", "#rule-x", "#f12", "%41%zz", "a b\tc\nd\re",
	"/path/x.y_z-w", "?q", "a=b;c", "`backtick`", "{{.}}", "\\", "[::1]",
}

func nastyRows() []Row {
	var rows []Row
	y := 4
	for i, s := range nasty {
		for v := 0; v < 8; v++ {
			r := Row{Y: y + 18, LabelY: y + 13, SubY: y + 31, X1: 250, X2: 770, MidX: 510, LeftToRight: v&1 == 0,
				Kind: s, Label: s, Sub: s, Title: s, Pkts: s, Time: s, Anchor: s, First: i*10 + v, Last: -v, Src: s,
				XID: s, Note: s, Inv: v&2 != 0, MorePins: v / 4 * (i + 1), Loss: s, Retx: v, Dup: -i, Gaps: 1 << 40}
			switch v % 4 {
			case 1:
				r.Time, r.Sub = "", ""
			case 2:
				r.Time, r.Note, r.Loss, r.Pkts = "", "", "", ""
				r.Kind = "missing"
			case 3:
				r.Sub = nasty[(i+1)%len(nasty)]
				r.Src = nasty[(i+v)%len(nasty)]
			}
			for k := 0; k < v%4; k++ {
				t := nasty[(i+k)%len(nasty)]
				r.Pins = append(r.Pins, Pin{Y: y + k*14, Anchor: t, Rule: s, Link: t, Severity: s, Message: s, Title: t + s})
			}
			rows = append(rows, r)
			y += 40
		}
	}
	return rows
}

// TestLadderBlockMatches: ladderBlock writes what the block template
// wrote, for rows with every character the escapers treat specially in
// every field, and every branch of the template.
func TestLadderBlockMatches(t *testing.T) {
	l := Ladder{Width: ladderWidth, ClientX: clientX, ServerX: serverX, MidX: (clientX + serverX) / 2}
	rows := nastyRows()
	blocks := []Block{{Height: 0}, {Height: 8, Rows: rows[:1]}, {Fold: true, Height: -3, Rows: rows}}
	for i := range rows {
		blocks = append(blocks, Block{Height: i, Rows: rows[i : i+1]})
	}
	for i, b := range blocks {
		var want bytes.Buffer
		if err := refBlock().Execute(&want, blockArg{l, b}); err != nil {
			t.Fatal(err)
		}
		got := "<div>" + string(ladderBlock(l, b)) + "</div>"
		if got != want.String() {
			t.Errorf("block %d differs:\n got %q\nwant %q", i, got, want.String())
		}
	}
}

// TestPageMatches: pages written with ladderBlock are the pages the
// block template wrote (on the whole page: TestStreamMatchesWhole holds
// the streamed page to it).
func TestPageMatches(t *testing.T) {
	for _, name := range []string{nfs3, "../../testdata/pcaps/siw-nfs42-small.pcap",
		"../../testdata/pcaps/synthetic/rocev2-ipv6-qinq.pcap", "../../testdata/pcaps/mutated/ib-erf--vcrc-corrupt.pcap"} {
		for _, opts := range []Options{{}, {MaxDetail: 7}} {
			t.Run(fmt.Sprintf("%s/%d", name[strings.LastIndex(name, "/")+1:], opts.MaxDetail), func(t *testing.T) {
				a, col, _, _ := analysis(t, name, opts, false)
				p := refBuild(a, col)
				// Something in every field of a row, pins with more
				// than fit.
				for _, cv := range p.Connections {
					for bi := range cv.Ladder.Blocks {
						b := &cv.Ladder.Blocks[bi]
						if len(b.Rows) > 0 {
							b.Rows[0].Note = `µs <"'+&>`
							b.Rows[0].MorePins = 3
						}
					}
				}
				var got, want bytes.Buffer
				if err := wholeTemplate().Execute(&got, p); err != nil {
					t.Fatal(err)
				}
				if err := refPage().Execute(&want, p); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					g, w := got.Bytes(), want.Bytes()
					i := 0
					for i < len(g) && i < len(w) && g[i] == w[i] {
						i++
					}
					t.Fatalf("pages differ at byte %d of %d/%d:\n got %q\nwant %q", i, len(g), len(w),
						g[max(0, i-200):min(len(g), i+200)], w[max(0, i-200):min(len(w), i+200)])
				}
			})
		}
	}
}
