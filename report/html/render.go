package html

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
	"sync"
)

//go:embed page.tmpl
var pageTemplate string

// page is parsed once, when the first page is written (not at program
// start: parsing took 0.5 ms of every command's start-up, the most of any
// package's init); html/template escapes every value by its context
// (text, attribute, URL), so capture data never becomes markup. The
// ladder's blocks are the exception: ladderBlock writes them, escaping
// each value as the template did.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"sub":         func(a, b int) int { return b - a },
		"ladderBlock": ladderBlock,
	}).Parse(pageTemplate))
})

// Write writes the page: one self-contained HTML document (its CSS, SVG
// and script inline; it loads nothing), each part as the template reaches
// it (Page). Call it once.
func (p *Page) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := page().Execute(bw, p); err != nil {
		return err
	}
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}
