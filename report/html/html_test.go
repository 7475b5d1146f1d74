package html

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

const nfs3 = "../../testdata/pcaps/rxe-nfs3.pcap"

// analysis reads a capture as `rdmashark report` does, through a
// report.ConnSpill when spill is set (the document must then be closed:
// the test's cleanup does it), and returns the document, the collector,
// every transaction the engine handed out, and how many connections the
// spill took.
func analysis(t testing.TB, name string, opts Options, spill bool) (*report.Analysis, *Collector, []report.Transaction, int) {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	col := NewCollector(opts)
	var all []report.Transaction
	var cfg check.Config
	var s *report.ConnSpill
	if spill {
		s = report.NewConnSpill()
		cfg.Next = s
	}
	run := check.NewRunner(cfg)
	if s != nil {
		s.SetRunner(run)
	}
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), func(x *rpcordma.Transaction) {
		all = append(all, report.ConvertTransaction(x))
		col.Transaction(&all[len(all)-1])
	}))
	runErr := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); col.Packet(p); return nil })
	var a *report.Analysis
	if s != nil {
		a = s.Analysis(name, eng.Snapshot())
		t.Cleanup(func() { a.Close() })
	} else {
		a = report.NewAnalysis(name, eng.Snapshot())
	}
	res := run.Finish(eng.Conns.Connections())
	res.NoteLoss(0, eng.Stats.Skipped)
	a.AddChecks(res)
	if runErr != nil {
		a.Errors = append(a.Errors, runErr.Error())
	}
	return a, col, all, s.Len()
}

// build reads a capture as `rdmashark report` does (without the spill)
// and returns the page, the collector, and every transaction the engine
// handed out.
func build(t *testing.T, name string, opts Options) (*Page, *Collector, []report.Transaction) {
	t.Helper()
	a, col, all, _ := analysis(t, name, opts, false)
	p, err := Build(a, col)
	if err != nil {
		t.Fatal(err)
	}
	return p, col, all
}

// sections draws the page's diagrams as Write would and returns a copy of
// each connection's section.
func sections(p *Page) []ConnView {
	var out []ConnView
	for cv := range p.Sections() {
		out = append(out, *cv)
	}
	return out
}

// TestDetailLimit: past MaxDetail a connection's transactions are not
// drawn but counted by signature, the page says so, and the charts still
// count every transaction.
func TestDetailLimit(t *testing.T) {
	const limit = 25
	p, col, all := build(t, nfs3, Options{MaxDetail: limit})
	perConn := map[int]int{}
	for _, x := range all {
		perConn[x.Connection]++
	}
	for _, cv := range sections(p) {
		cd := col.conns[cv.ID]
		total := perConn[cv.ID]
		if total <= limit {
			continue
		}
		if cd.txns.Len() != limit || cd.txnsOmitted != uint64(total-limit) {
			t.Errorf("conn %d: %d drawn, %d omitted of %d (limit %d)", cv.ID, cd.txns.Len(), cd.txnsOmitted, total, limit)
		}
		var sum uint64
		for _, kv := range cv.Ladder.Omitted {
			var n uint64
			fmt.Sscan(kv.K, &n)
			sum += n
		}
		if sum != cd.txnsOmitted || cv.Ladder.OmittedTotal != cd.txnsOmitted {
			t.Errorf("conn %d: folded counts add up to %d, %d omitted", cv.ID, sum, cd.txnsOmitted)
		}
	}
	var calls uint64
	for _, r := range p.Chunks.Rows {
		calls += r.Calls
	}
	var want uint64
	for _, x := range all {
		if x.Call != nil {
			want++
		}
	}
	if calls != want || want < 100 {
		t.Errorf("chunk chart counts %d Calls, the engine handed out %d", calls, want)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "are not drawn (report --max-detail)") {
		t.Error("the page does not say what the detail limit left out")
	}
}

// TestLinksWithLimits: with diagrams and details cut by the limits, every
// in-page link still leads to an element of the page.
func TestLinksWithLimits(t *testing.T) {
	for _, o := range []Options{{}, {MaxConnections: 1, MaxDetail: 10}, {MaxDetail: 1}} {
		p, _, _ := build(t, nfs3, o)
		var out bytes.Buffer
		if err := p.Write(&out); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(s, -1) {
			ids[m[1]] = true
		}
		links := regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(s, -1)
		if len(links) < 20 {
			t.Errorf("%+v: only %d links", o, len(links))
		}
		for _, m := range links {
			if !ids[m[1]] {
				t.Errorf("%+v: link #%s leads nowhere", o, m[1])
			}
		}
	}
}

// TestEscaping: capture data (file names, finding messages) is escaped,
// never written as markup.
func TestEscaping(t *testing.T) {
	a, col, _, _ := analysis(t, nfs3, Options{}, false)
	p, err := Build(a, col)
	if err != nil {
		t.Fatal(err)
	}
	var clean bytes.Buffer
	if err := p.Write(&clean); err != nil {
		t.Fatal(err)
	}
	// The page's own script is the only one, and it loads nothing.
	if n := strings.Count(clean.String(), "<script"); n != 1 {
		t.Errorf("%d script elements", n)
	}
	for _, ext := range []string{"http://", "https://", " src=", "@import", "url(http", "<link"} {
		if strings.Contains(clean.String(), ext) {
			t.Errorf("page contains %q: it must load nothing", ext)
		}
	}
	evil := `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
	a.File = evil
	if len(a.Findings) == 0 || len(a.Connections) == 0 {
		t.Fatal("no findings on rxe-nfs3")
	}
	a.Findings[0].Message = evil
	a.Connections[0].Client.Address = evil
	if p, err = Build(a, col); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(s, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	if !strings.Contains(s, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("escaped file name not found")
	}
}

// TestThroughputBins: the bins keep every byte when they widen.
func TestThroughputBins(t *testing.T) {
	var tp throughput
	var want, wantRetx [2]uint64
	for i := 0; i < 5000; i++ {
		at := (time.Duration(i) * 37 * time.Millisecond)
		tp.add(at, i%2, uint64(i), i%7 == 0)
		want[i%2] += uint64(i)
		if i%7 == 0 {
			wantRetx[i%2] += uint64(i)
		}
	}
	for d := range want {
		if got := sum(tp.retx[d][:tp.n]); got != wantRetx[d] {
			t.Errorf("dir %d: retransmitted bins add up to %d, want %d", d, got, wantRetx[d])
		}
		if got := sum(tp.bytes[d][:tp.n]); got != want[d] {
			t.Errorf("dir %d: bins hold %d bytes, %d added", d, got, want[d])
		}
	}
	if tp.n > throughputBins || tp.width*time.Duration(tp.n) < 4999*37*time.Millisecond {
		t.Errorf("%d bins of %v do not cover the span", tp.n, tp.width)
	}
}

// TestPercentile: nearest rank (the smallest value with at least p percent
// at or below it).
func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{50, 5}, {99, 10}, {10, 1}, {11, 2}, {100, 10}} {
		if got := Percentile(v, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
}

// BenchmarkCollect reads rxe-nfs3.pcap through the engine alone and with
// the report's collector (per packet and per transaction), so that what the
// report adds per packet shows in ns/op and allocs/op.
func BenchmarkCollect(b *testing.B) {
	for _, c := range []struct {
		name       string
		withReport bool
		detail     int
	}{{"engine", false, 0}, {"engine+report", true, 0}, {"engine+report/detail=1", true, 1}, {"engine+report-per-packet-only/detail=1", false, 1}} {
		withReport := c.withReport
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var packets uint64
			for i := 0; i < b.N; i++ {
				r, err := source.Open(nfs3)
				if err != nil {
					b.Fatal(err)
				}
				col := NewCollector(Options{MaxDetail: c.detail})
				var opts dissect.Options
				var txn func(*rpcordma.Transaction)
				each := func(*dissect.Packet) error { return nil }
				if withReport {
					txn = func(t *rpcordma.Transaction) { x := report.ConvertTransaction(t); col.Transaction(&x) }
				}
				if c.detail > 0 || withReport {
					each = func(p *dissect.Packet) error { col.Packet(p); return nil }
				}
				eng := dissect.NewEngine(rpcordma.With(opts, nfs.NewBinding(), txn))
				if err := eng.Run(r, each); err != nil {
					b.Fatal(err)
				}
				packets = eng.Stats.Packets
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(uint64(b.N)*packets), "ns/packet")
		})
	}
}

// TestRPCConnectionsKeepNoEvents: a connection that carries RPC draws its
// transactions, so the collector keeps none of its RDMA messages (they
// were ~100 bytes each, MaxDetail of them per connection); one without
// RPC keeps them for its diagram.
func TestRPCConnectionsKeepNoEvents(t *testing.T) {
	for _, c := range []struct {
		name string
		rpc  bool
	}{{nfs3, true}, {"../../testdata/pcaps/siw-nfs3.pcap", true}, {"../../testdata/pcaps/rxe-rping.pcap", false}, {"../../testdata/pcaps/siw-ib_send_bw.pcap", false}} {
		_, col, _ := build(t, c.name, Options{})
		if len(col.conns) == 0 {
			t.Fatalf("%s: no connection collected", c.name)
		}
		rpc, events := 0, 0
		for _, cd := range col.conns {
			if cd.txns.Len() > 0 {
				rpc++
				if len(cd.events) > 0 || !cd.rpc {
					t.Errorf("%s: connection %d carries RPC and keeps %d events", c.name, cd.id, len(cd.events))
				}
			}
			events += len(cd.events)
		}
		if c.rpc && rpc == 0 {
			t.Errorf("%s: no connection with transactions", c.name)
		}
		if !c.rpc && (rpc > 0 || events == 0) {
			t.Errorf("%s: %d connections with transactions, %d events", c.name, rpc, events)
		}
	}
}
