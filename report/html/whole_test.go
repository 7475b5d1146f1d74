package html

import (
	"fmt"
	"html/template"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/report"
)

// The page as it was written before it was streamed (9e5062e): Build
// made every connection's diagram and every finding's row, then the
// template ran over them. Kept as the reference the streamed page is held
// to, byte for byte (TestStreamMatchesWhole).
//
// Changed since in its overview only: the overview's table lists every
// connection, not only those drawn (Overview, NumConnections, Undrawn,
// ConnView.Drawn), made here from the document held whole.

// wholeTemplateText is page.tmpl as it was: ranging over the diagrams and
// the findings held in the page, not over Page.Sections and Page.Findings.
func wholeTemplateText() string {
	text := pageTemplate
	for _, r := range [][2]string{
		{"{{range .Sections}}", "{{range .Connections}}"},
		{"<h2>Findings ({{.NumFindings}})</h2>", "<h2>Findings ({{len .Findings}})</h2>"},
		{"{{if .NumFindings}}<table>", "{{if .Findings}}<table>"},
	} {
		if strings.Count(text, r[0]) != 1 {
			panic("page.tmpl: " + r[0] + " is not there once")
		}
		text = strings.Replace(text, r[0], r[1], 1)
	}
	return text
}

var wholeTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"sub":         func(a, b int) int { return b - a },
		"ladderBlock": ladderBlock,
	}).Parse(wholeTemplateText()))
})

// wholePage is the page as Build made it before the page was streamed
// (commit 9e5062e): every connection's diagram and every finding built
// before the template ran. Every string in it may hold capture
// data; the template (html/template) escapes all of them.
type wholePage struct {
	File        string
	Packets     uint64
	Verdict     Verdict
	Protocols   []KV
	Connections []*ConnView
	// Overview is every connection of the document, in its order, those
	// drawn being Connections' (Drawn set); Undrawn how many are not.
	Overview                []*ConnView
	NumConnections, Undrawn int
	Findings                []FindingView
	Rules                   []RuleView
	Latency                 LatencyChart
	Chunks                  ChunkChart
	ULPs                    []ULPView
	// Notes say what the page leaves out and why (its bounds).
	Notes  []string
	Errors []string
	// Caveats are the checks' caveats on the whole capture.
	Caveats []string
}

// refBuild is Build as it was (9e5062e), kept as the reference the
// streamed page is held to: it needs the whole document in memory
// (report.NewAnalysis, no spill).
func refBuild(a *report.Analysis, c *Collector) *wholePage {
	p := &wholePage{File: a.File, Packets: a.Packets, Errors: a.Errors, Caveats: a.CheckCaveats}
	for _, pr := range a.Protocols {
		p.Protocols = append(p.Protocols, KV{pr.Proto, strconv.FormatUint(pr.Packets, 10)})
	}
	p.Verdict = refVerdict(a)
	p.Findings = make([]FindingView, len(a.Findings))
	byConn := map[int][]int{}
	for i := range a.Findings {
		f := &a.Findings[i]
		p.Findings[i] = findingView(i, f)
		byConn[f.Connection] = append(byConn[f.Connection], i)
	}
	p.Rules = refRulesOf(a.Findings)
	for i := range a.Connections {
		ac := &a.Connections[i]
		cd := c.conns[ac.ID]
		addULP(&p.ULPs, ac, cd != nil)
		if cd == nil {
			continue
		}
		cv := connView(ac)
		cv.Drawn = true
		p.Connections = append(p.Connections, cv)
		for _, fi := range byConn[ac.ID] {
			if len(a.Findings[fi].Packets) == 0 {
				cv.ConnFindings = append(cv.ConnFindings, p.Findings[fi])
			}
		}
		var err error
		if cv.Ladder, err = ladder(ac, cd, a.Findings, byConn[ac.ID], p.Findings); err != nil {
			panic(err)
		}
		cv.Notes = ladderNotes(ac, cd, c.opts.MaxDetail)
		cv.Throughput = throughputChart(ac, &cd.tput)
	}
	drawn := map[int]bool{}
	for _, cv := range p.Connections {
		drawn[cv.ID] = true
	}
	k := 0
	for i := range a.Connections {
		if ac := &a.Connections[i]; drawn[ac.ID] {
			p.Overview = append(p.Overview, p.Connections[k])
			k++
		} else {
			p.Overview = append(p.Overview, connView(ac))
		}
	}
	p.NumConnections, p.Undrawn = len(a.Connections), len(a.Connections)-len(p.Connections)
	for i := range p.Findings {
		f := &p.Findings[i]
		if drawn[f.Conn] {
			f.ConnLink = "#conn-" + strconv.Itoa(f.Conn)
		} else if !f.Pinned {
			// No diagram to link to: the link stays on the table's row.
			f.Link = "#row-" + f.Anchor
		}
	}
	if c.notDrawn || len(p.Connections) < len(a.Connections) {
		p.Notes = append(p.Notes, fmt.Sprintf("%d of %d connections have no diagram: the report draws at most %d (report --max-diagrams); they are in the overview, the charts and the findings.",
			len(a.Connections)-len(p.Connections), len(a.Connections), c.opts.MaxConnections))
	}
	p.Latency = latencyChart(c)
	p.Chunks = chunkChart(c)
	if p.Latency.Sampled {
		p.Notes = append(p.Notes, fmt.Sprintf("Latency distributions and percentiles of procedures with more than %d replies are estimated from a uniform sample of %d.",
			c.opts.LatencySample, c.opts.LatencySample))
	}
	for i := range p.Connections {
		p.Notes = append(p.Notes, p.Connections[i].Notes...)
	}
	return p
}

func refVerdict(a *report.Analysis) Verdict {
	var v Verdict
	conns := map[int]bool{}
	for _, f := range a.Findings {
		switch f.Severity {
		case check.Error:
			v.Errors++
		case check.Warning:
			v.Warnings++
		default:
			v.Infos++
		}
		conns[f.Connection] = true
	}
	for _, c := range a.Connections {
		for _, ch := range c.Checks {
			switch ch.Status {
			case check.StatusPassed:
				v.Passed++
			case check.StatusNotEvaluated:
				v.NotEvaluated++
			case check.StatusFound:
				v.ChecksWithFindings++
			}
			v.Omitted += ch.Omitted
		}
	}
	v.ConnectionsWithFindings = len(conns)
	v.FindingsListed = len(a.Findings)
	v.Pass = v.Errors == 0
	v.Status = "PASS"
	if !v.Pass {
		v.Status, v.Reason = "FAIL", fmt.Sprintf("%d error findings", v.Errors)
	}
	return v
}

func refRulesOf(fs []report.Finding) []RuleView {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	sort.Strings(ids)
	var out []RuleView
	for _, id := range ids {
		rv := RuleView{ID: id, Anchor: "rule-" + id}
		if r, ok := check.Lookup(id); ok {
			rv.Severity, rv.Reference, rv.Summary, rv.Explanation = r.Severity.String(), r.Reference, r.Summary, r.Explanation
		}
		out = append(out, rv)
	}
	return out
}
