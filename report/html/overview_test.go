package html

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
)

// TestOverviewListsEveryConnection: the overview's table has a row for
// every connection of the document, in ID order, also for those that get
// no diagram (--max-diagrams); a drawn connection's row links to its
// section, an undrawn one's links nowhere and says it has no diagram; the
// note counts what the table shows; and every in-page link of the page
// (href="#…") leads to an element's id. The connections and which get a
// diagram are taken from the document held whole and the collector, not
// from the page's own walk; the page is read with and without the spill.
func TestOverviewListsEveryConnection(t *testing.T) {
	many := manyConnections(t)
	after := report.SpillConnsAfter(0)
	defer report.SpillConnsAfter(after)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{many, Options{}}, // 66 connections, 64 drawn
		{many, Options{MaxConnections: 2, MaxDetail: 3}},    // 64 undrawn
		{nfs3, Options{MaxConnections: 1}},                  // the second one undrawn
		{nfs3, Options{}},                                   // all drawn: no mark
		{many, Options{MaxConnections: 1000, MaxDetail: 2}}, // all drawn
	} {
		// The reference: the document held whole (no spill).
		whole, col, _, _ := analysis(t, tc.name, tc.opts, false)
		var ids []int
		client := map[int]string{}
		for _, c := range whole.Connections {
			ids = append(ids, c.ID)
			client[c.ID] = c.Client.Address
		}
		if !slices.IsSorted(ids) || len(ids) < 2 {
			t.Fatalf("%s: connections %v", tc.name, ids)
		}
		undrawn := 0
		for _, id := range ids {
			if col.conns[id] == nil {
				undrawn++
			}
		}
		for _, spill := range []bool{false, true} {
			label := fmt.Sprintf("%s %+v spill=%v", tc.name[strings.LastIndex(tc.name, "/")+1:], tc.opts, spill)
			a, col, _, n := analysis(t, tc.name, tc.opts, spill)
			if spill && n == 0 && tc.name == many {
				t.Fatalf("%s: the spill took no connection", label)
			}
			p, err := Build(a, col)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := p.Write(&out); err != nil {
				t.Fatal(err)
			}
			page := out.String()
			checkLinks(t, label, page)

			ov := page[strings.Index(page, `<section id="overview">`):]
			ov = ov[:strings.Index(ov, "</section>")]
			tbl := ov[strings.Index(ov, `<table id="connections">`):]
			tbl = tbl[:strings.Index(tbl, "</table>")]
			rows := regexp.MustCompile(`(?s)<tr[ >].*?</tr>`).FindAllString(tbl, -1)
			if len(rows) == 0 || !strings.Contains(rows[0], "<th>Conn</th>") {
				t.Fatalf("%s: no header row", label)
			}
			header := strings.Count(rows[0], "<th>")
			rows = rows[1:]
			var got []int
			marked := 0
			cell := regexp.MustCompile(`<td[^>]*>(.*?)</td>`)
			for _, r := range rows {
				cells := cell.FindAllStringSubmatch(r, -1)
				if len(cells) != header {
					t.Errorf("%s: row of %d cells under %d headers: %s", label, len(cells), header, r)
					continue
				}
				m := regexp.MustCompile(`^(?:<a href="#conn-(\d+)">(\d+)</a>|(\d+) <i>no diagram</i>)$`).FindStringSubmatch(cells[0][1])
				if m == nil {
					t.Errorf("%s: first cell %q", label, cells[0][1])
					continue
				}
				id, _ := strconv.Atoi(m[2] + m[3])
				got = append(got, id)
				drawn := col.conns[id] != nil
				switch {
				case drawn && (m[1] != m[2] || strings.Contains(r, "nodiagram")):
					t.Errorf("%s: drawn connection %d's row: %s", label, id, r)
				case !drawn && (m[3] == "" || !strings.HasPrefix(r, `<tr class="muted nodiagram"`)):
					t.Errorf("%s: undrawn connection %d's row is not marked: %s", label, id, r)
				case !drawn:
					marked++
					if strings.Contains(page, `id="conn-`+strconv.Itoa(id)+`"`) {
						t.Errorf("%s: undrawn connection %d has a section", label, id)
					}
				}
				if !strings.Contains(cells[2][1], client[id]) {
					t.Errorf("%s: connection %d's client cell %q, want %s", label, id, cells[2][1], client[id])
				}
			}
			if !slices.Equal(got, ids) {
				t.Errorf("%s: the overview lists connections %v, the document has %v", label, got, ids)
			}
			if marked != undrawn {
				t.Errorf("%s: %d rows marked without a diagram, %d connections have none", label, marked, undrawn)
			}
			if s := strings.Count(page, `<section class="conn"`); s != len(ids)-undrawn {
				t.Errorf("%s: %d sections for %d drawn connections", label, s, len(ids)-undrawn)
			}
			note := regexp.MustCompile(`(\d+) of (\d+) connections have no diagram: .* they are in the overview`).FindStringSubmatch(ov)
			switch {
			case undrawn == 0 && (note != nil || strings.Contains(ov, "no diagram")):
				t.Errorf("%s: every connection drawn, yet the overview speaks of one without a diagram", label)
			case undrawn > 0 && (note == nil || note[1] != strconv.Itoa(marked) || note[2] != strconv.Itoa(len(rows))):
				t.Errorf("%s: note %q, for %d rows of which %d without a diagram", label, note, len(rows), marked)
			}
		}
	}
}

// checkLinks fails when an in-page link (href="#…") of page names no id
// of it.
func checkLinks(t *testing.T, label, page string) {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`\sid="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	links := regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(links) < 10 {
		t.Errorf("%s: only %d links", label, len(links))
	}
	for _, m := range links {
		if !ids[m[1]] {
			t.Errorf("%s: link #%s leads nowhere", label, m[1])
		}
	}
}

// TestWalkOnce: the one walk Build makes (EachConnectionAndFinding) gives
// the connections EachConnection gives, each with the same findings, and
// the findings EachFinding gives in its order, each connection before its
// findings, with the spill taking every released connection, with it
// taking all but one, and without it.
func TestWalkOnce(t *testing.T) {
	many := manyConnections(t)
	after := report.SpillConnsAfter(0)
	defer report.SpillConnsAfter(after)
	key := func(f *report.Finding) string {
		return fmt.Sprint(f.Connection, f.Rule, f.Message, f.Packets)
	}
	for _, spillAfter := range []int{-1, 0, 1} {
		if spillAfter >= 0 {
			report.SpillConnsAfter(spillAfter)
		}
		a, _, _, n := analysis(t, many, Options{}, spillAfter >= 0)
		if spillAfter >= 0 && n == 0 {
			t.Fatal("the spill took no connection")
		}
		var wantConns, gotConns, wantFindings, gotFindings []string
		if err := a.EachConnection(func(c *report.Connection, fs []report.Finding) error {
			wantConns = append(wantConns, fmt.Sprint(c.ID, c.FirstPacket, c.LastPacket, len(fs)))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := a.EachFinding(func(f *report.Finding) error {
			wantFindings = append(wantFindings, key(f))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		if err := a.EachConnectionAndFinding(func(c *report.Connection, fs []report.Finding) error {
			gotConns = append(gotConns, fmt.Sprint(c.ID, c.FirstPacket, c.LastPacket, len(fs)))
			seen[c.ID] = true
			return nil
		}, func(f *report.Finding) error {
			if f.Connection != 0 && !seen[f.Connection] {
				t.Errorf("spill after %d: a finding of connection %d before it", spillAfter, f.Connection)
			}
			gotFindings = append(gotFindings, key(f))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(wantConns) < 60 || len(wantFindings) < 10 {
			t.Fatalf("spill after %d: %d connections, %d findings: the comparison proves little", spillAfter, len(wantConns), len(wantFindings))
		}
		if !slices.Equal(gotConns, wantConns) {
			t.Errorf("spill after %d: connections\n got %v\nwant %v", spillAfter, gotConns, wantConns)
		}
		if !slices.Equal(gotFindings, wantFindings) {
			t.Errorf("spill after %d: findings\n got %v\nwant %v", spillAfter, gotFindings, wantFindings)
		}
	}
}
