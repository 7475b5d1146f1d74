package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/rdmashark/rdmashark/report"
	htmlreport "github.com/rdmashark/rdmashark/report/html"
)

const chromiumPath = "/usr/bin/chromium"

// browser starts headless Debian chromium for the test, or skips the test
// when it is not installed — except in CI (CI=true), where .ci/run
// installs it and the test must run.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s is missing (.ci/run installs Debian's chromium): %v", chromiumPath, err)
		}
		t.Skipf("no %s: the HTML report's browser test needs Debian's chromium (apt-get install chromium)", chromiumPath)
	}
	// A fresh profile; not t.TempDir, whose removal fails when a helper
	// process of chromium still writes to it as the test ends.
	profile, err := os.MkdirTemp("", "rdmashark-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		for i := 0; i < 10 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return bctx
}

// artifacts is where screenshots go: $RDMASHARK_ARTIFACTS, or a temporary
// directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("RDMASHARK_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// pageData is what the test reads out of a loaded report.
type pageData struct {
	Arrows []struct {
		Conn  string `json:"conn"`
		Kind  string `json:"kind"`
		First int    `json:"first"`
		Last  int    `json:"last"`
		Src   string `json:"src"`
		XID   string `json:"xid"`
		Retx  int    `json:"retx"`
		Dup   int    `json:"dup"`
		Gaps  int    `json:"gaps"`
	} `json:"arrows"`
	Health     []map[string]string `json:"health"`
	Throughput []struct {
		Conn   string `json:"conn"`
		Series []struct {
			Key     string `json:"key"`
			Total   string `json:"total"`
			Packets string `json:"packets"`
			Bins    string `json:"bins"`
		} `json:"series"`
	} `json:"throughput"`
	Latency []map[string]string `json:"latency"`
	Chunks  []map[string]string `json:"chunks"`
	// BadLinks are in-page links whose target does not exist.
	BadLinks []string `json:"badLinks"`
	Title    string   `json:"title"`
	// FoldLink is what following a link to a finding inside a folded
	// group did to the group: "open", "closed", or "none" (no such
	// finding).
	FoldLink string
}

// followFoldedFinding goes to the first finding pinned inside a closed
// <details> and tells whether the group opened.
const followFoldedFinding = `(() => {
  const pin = document.querySelector('details:not([open]) text.pin');
  if (!pin) return Promise.resolve('none');
  location.hash = pin.id;
  return new Promise(r => setTimeout(() => r(pin.closest('details').open ? 'open' : 'closed'), 100));
})()`

const extractJS = `(() => {
  const d = (el) => Object.assign({}, el.dataset);
  const out = {title: document.title, arrows: [], throughput: [], latency: [], chunks: [], badLinks: []};
  document.querySelectorAll('g.row').forEach(g => {
    if (g.dataset.kind === 'missing') return;
    out.arrows.push({conn: g.closest('section').id, kind: g.dataset.kind, first: +g.dataset.first,
      last: +g.dataset.last, src: g.dataset.src, xid: g.dataset.xid, retx: +g.dataset.retx, dup: +g.dataset.dup,
      gaps: +g.dataset.gaps});
  });
  out.health = [];
  document.querySelectorAll('#overview td.health').forEach(td => out.health.push(d(td)));
  document.querySelectorAll('section.conn').forEach(s => {
    const series = [];
    s.querySelectorAll('g.tput-series').forEach(g => series.push({key: g.dataset.series,
      total: g.dataset.totalBytes, packets: g.dataset.packets, bins: g.dataset.bins}));
    out.throughput.push({conn: s.id, series});
  });
  document.querySelectorAll('g.lat-row').forEach(g => out.latency.push(d(g)));
  document.querySelectorAll('g.chunk-row').forEach(g => out.chunks.push(d(g)));
  document.querySelectorAll('a[href^="#"]').forEach(a => {
    const id = decodeURIComponent(a.getAttribute('href').slice(1));
    if (!document.getElementById(id)) out.badLinks.push(a.getAttribute('href'));
  });
  return out;
})()`

// loadReport writes the report of capture, opens it from file:// and
// returns what the page shows; it fails the test on a console error, an
// uncaught exception, or any request but the page's own.
func loadReport(t *testing.T, bctx context.Context, capture, shots string) pageData {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(capture), ".pcap")+".html")
	if code, _, stderr := runCmd(t, "report", capture, "-o", out); code != 0 {
		t.Fatalf("report %s: exit %d: %s", capture, code, stderr)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	url := "file://" + abs
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	var (
		mu       sync.Mutex
		problems []string
		requests []string
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning || ev.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *network.EventLoadingFailed:
			problems = append(problems, "loading failed: "+ev.ErrorText)
		}
	})
	var data pageData
	var shot []byte
	err = chromedp.Run(ctx,
		network.Enable(),
		runtime.Enable(),
		chromedp.Navigate(url),
		chromedp.WaitReady("body"),
		chromedp.Evaluate(extractJS, &data),
		chromedp.CaptureScreenshot(&shot),
		chromedp.Evaluate(followFoldedFinding, &data.FoldLink, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	base := strings.TrimSuffix(filepath.Base(out), ".html")
	if err := os.WriteFile(filepath.Join(shots, base+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	// The top of the first ladder as a reader scrolls to it (the README's
	// picture), then the whole first ladder and the charts.
	var view []byte
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1200, 720),
		chromedp.Evaluate(`window.location.hash = ''; window.scrollTo(0, document.querySelector('section.conn .ladder').getBoundingClientRect().top + window.scrollY - 44)`, nil),
		chromedp.Sleep(100*time.Millisecond),
		chromedp.CaptureScreenshot(&view)); err != nil {
		t.Errorf("%s: screenshot of the ladder: %v", base, err)
	} else if err := os.WriteFile(filepath.Join(shots, base+"-view.png"), view, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, el := range []struct{ sel, name string }{{"section.conn .ladder", "ladder"}, {"section.conn svg.throughput", "throughput"}, {"#charts", "charts"}, {"#findings", "findings"}} {
		var png []byte
		if err := chromedp.Run(ctx, chromedp.Screenshot(el.sel, &png, chromedp.ByQuery, chromedp.NodeVisible)); err != nil {
			t.Errorf("%s: screenshot of %s: %v", base, el.sel, err)
			continue
		}
		if err := os.WriteFile(filepath.Join(shots, base+"-"+el.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("%s: %s", base, p)
	}
	for _, r := range requests {
		if r != url {
			t.Errorf("%s: the page requested %s (it must fetch nothing)", base, r)
		}
	}
	if len(data.BadLinks) > 0 {
		t.Errorf("%s: %d links lead nowhere, e.g. %v", base, len(data.BadLinks), data.BadLinks[:min(5, len(data.BadLinks))])
	}
	return data
}

func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	code, out, stderr := runCmd(t, args...)
	if code != 0 && code != exitFindings {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// TestReportInBrowser opens the HTML reports of the real captures in
// headless chromium and compares what they draw with independent sources:
// tshark's fields for rping's arrows, the transactions JSON for the NFS
// ladders and the latency and chunk charts, analyze's JSON for the
// throughput charts.
func TestReportInBrowser(t *testing.T) {
	bctx := browser(t)
	shots := artifacts(t)
	t.Logf("screenshots in %s", shots)

	for _, name := range []string{"rxe-rping", "rxe-rping-any-sll2", "rxe-ib_send_bw", "rxe-ib_write_bw", "siw-ib_read_bw", "siw-ib_send_bw"} {
		t.Run(name, func(t *testing.T) {
			capture := "../../testdata/pcaps/" + name + ".pcap"
			data := loadReport(t, bctx, capture, shots)
			var want []string
			if strings.HasPrefix(name, "siw-") {
				want = iwarpArrowsFromTshark(t, name)
			} else {
				want = arrowsFromTshark(t, name)
			}
			var got []string
			for _, a := range data.Arrows {
				got = append(got, fmt.Sprintf("%d %s", a.First, a.Src))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("rping ladder: %d arrows %v\ntshark's packets imply %d: %v", len(got), got, len(want), want)
			}
			t.Logf("%s: %d arrows drawn, %d implied by tshark's fields", name, len(got), len(want))
			if len(want) < 20 {
				t.Errorf("tshark's golden implies only %d arrows", len(want))
			}
			checkThroughput(t, data, capture)
		})
	}

	foldLinks, nfsRan := 0, 0
	nfs, _ := filepath.Glob("../../testdata/pcaps/*-nfs*.pcap")
	if len(nfs) < 6 {
		t.Fatalf("NFS captures: %v", nfs)
	}
	for _, capture := range nfs {
		t.Run(strings.TrimSuffix(filepath.Base(capture), ".pcap"), func(t *testing.T) {
			data := loadReport(t, bctx, capture, shots)
			var txns report.TransactionList
			runJSON(t, &txns, "transactions", "--format", "json", capture)
			checkLadderTransactions(t, data, &txns)
			checkLatency(t, data, &txns)
			checkChunks(t, data, &txns)
			a := checkThroughput(t, data, capture)
			checkChunksAnalyze(t, data, a)
			if data.FoldLink == "closed" {
				t.Error("a link to a finding inside a folded group left the group closed")
			}
			if data.FoldLink == "open" {
				foldLinks++
			}
			nfsRan++
		})
	}
	if nfsRan > 0 && foldLinks == 0 {
		t.Error("no NFS report has a finding inside a folded group to follow")
	}

	// The neutral ladders of the other ULPs (report/html ladder_exch.go):
	// under loss (netem on an NVMe/RDMA queue over RoCE and iWARP), their
	// arrows' marks against dissect -Y, as RPC's.
	for _, name := range []string{"rxe-nvmeof-loss2", "siw-nvmeof-loss2", "rxe-smbdirect"} {
		t.Run("ulp-"+name, func(t *testing.T) {
			capture := "../../testdata/pcaps/ulp/" + name + ".pcap"
			data := loadReport(t, bctx, capture, shots)
			checkThroughput(t, data, capture)
			if strings.Contains(name, "loss") {
				checkLossMarks(t, data, capture)
			}
		})
	}

	for _, name := range []string{"rxe-nfs3-lossy", "rxe-ib_write_bw-lossy", "siw-nfs3-lossy"} {
		t.Run(name, func(t *testing.T) {
			capture := "../../testdata/pcaps/lossy/" + name + ".pcap"
			data := loadReport(t, bctx, capture, shots)
			a := checkThroughput(t, data, capture)
			checkHealthOverview(t, data, a)
			checkLossMarks(t, data, capture)
		})
	}
}

// checkHealthOverview: the overview's transport-health headline of each
// connection carries analyze's transport_health counts.
func checkHealthOverview(t *testing.T, data pageData, a *report.Analysis) {
	got := map[string]map[string]string{}
	for _, h := range data.Health {
		got[h["conn"]] = h
	}
	for _, c := range a.Connections {
		h := c.TransportHealth
		if h == nil {
			continue
		}
		naks := h.ClientToServer.RNRNAKs + h.ServerToClient.RNRNAKs
		for _, d := range []report.DirectionHealth{h.ClientToServer, h.ServerToClient} {
			for _, n := range d.NAKs {
				naks += n
			}
		}
		want := map[string]string{"conn": strconv.Itoa(c.ID),
			"retxC2s":  strconv.FormatUint(h.ClientToServer.RetransmittedPackets, 10),
			"retxS2c":  strconv.FormatUint(h.ServerToClient.RetransmittedPackets, 10),
			"naks":     strconv.FormatUint(naks, 10),
			"episodes": strconv.FormatUint(h.ClientToServer.Episodes+h.ServerToClient.Episodes, 10)}
		if !maps.Equal(got[want["conn"]], want) {
			t.Errorf("conn %d: the overview shows %v, analyze %v", c.ID, got[want["conn"]], want)
		}
	}
}

// checkLossMarks: each packet `dissect -Y rdmashark.analysis.retransmission`
// (and .duplicate, .lost_segment) selects is marked under exactly one
// arrow, when one of its sender's arrows spans it: the one of them that
// began last (of arrows beginning at the same packet, the last on the
// page); and none is marked twice.
func checkLossMarks(t *testing.T, data pageData, capture string) {
	// Each flagged packet's connection, where analyze's connections tell
	// it by the sender and the QP it was sent to (RoCE) or the TCP ports
	// (iWARP): captures with several connections between the
	// same two hosts (an NVMe/RDMA admin and I/O queue) need it.
	var an report.Analysis
	runJSON(t, &an, "analyze", "--format", "json", capture)
	connOf := func(src, destQP, srcPort, dstPort string) string {
		for _, c := range an.Connections {
			for _, e := range [][2]report.Endpoint{{c.Client, c.Server}, {c.Server, c.Client}} {
				from, to := e[0], e[1]
				if from.Address != src {
					continue
				}
				if to.QPN != nil && destQP != "" && fmt.Sprintf("0x%06x", *to.QPN) == destQP ||
					from.Port != nil && to.Port != nil && strconv.Itoa(int(*from.Port)) == srcPort && strconv.Itoa(int(*to.Port)) == dstPort {
					return fmt.Sprintf("conn-%d", c.ID)
				}
			}
		}
		return ""
	}
	type flagged struct{ src, conn string }
	sel := func(filter string) map[int]flagged {
		code, out, stderr := runCmd(t, "dissect", "-Y", filter, "-T", "fields", "-e", "frame.number", "-e", "ip.src",
			"-e", "infiniband.bth.destqp", "-e", "tcp.srcport", "-e", "tcp.dstport", capture)
		if code != 0 {
			t.Fatalf("dissect -Y %s: exit %d: %s", filter, code, stderr)
		}
		pks := map[int]flagged{}
		if strings.TrimSpace(out) == "" {
			return pks
		}
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			f := strings.Split(l, "\t")
			n, err := strconv.Atoi(f[0])
			if err != nil || len(f) < 5 {
				t.Fatalf("dissect: line %q", l)
			}
			pks[n] = flagged{f[1], connOf(f[1], f[2], f[3], f[4])}
		}
		return pks
	}
	arrows := data.Arrows
	want := make([][3]int, len(arrows))
	for k, pks := range []map[int]flagged{sel("rdmashark.analysis.retransmission"), sel("rdmashark.analysis.duplicate"), sel("rdmashark.analysis.lost_segment")} {
		for n, fl := range pks {
			best := -1
			for i, a := range arrows {
				if a.Src == fl.src && (fl.conn == "" || a.Conn == fl.conn) && a.First <= n && n <= a.Last && (best < 0 || a.First >= arrows[best].First) {
					best = i
				}
			}
			if best >= 0 {
				want[best][k]++
			}
		}
	}
	marked := 0
	for i, a := range arrows {
		if got := [3]int{a.Retx, a.Dup, a.Gaps}; got != want[i] {
			t.Errorf("%s %s arrow #%d–%d from %s: marks %v retransmitted/duplicate/gaps, dissect -Y selects %v", a.Conn, a.Kind, a.First, a.Last, a.Src, got, want[i])
		}
		marked += a.Retx
	}
	t.Logf("%d arrows mark %d retransmitted packets", len(arrows), marked)
	if marked == 0 {
		t.Error("no arrow marks a retransmission")
	}
}

// arrowsFromTshark lists "packet source" for every arrow the packets of a
// RoCE capture without RPC imply, from tshark's fields (testdata/tshark): each CM
// MAD (management class 0x07), and the first (or only) packet of each RC
// Send, RDMA Write and RDMA Read Response, and each RDMA Read Request (IBA
// 9.2 opcodes); acknowledgements and middle/last packets draw none.
func arrowsFromTshark(t *testing.T, name string) []string {
	names := listFile(t, "../../testdata/tshark/fields.txt")
	col := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("fields.txt has no %s", name)
		}
		return i
	}
	num, src, op, class, attr := col("frame.number"), col("ip.src"), col("infiniband.bth.opcode"),
		col("infiniband.mad.mgmtclass"), col("infiniband.mad.attributeid")
	starts := map[string]bool{
		"0": true, "4": true, "5": true, "23": true, // SEND_FIRST, SEND_ONLY, _WITH_IMMEDIATE, _WITH_INVALIDATE
		"6": true, "10": true, "11": true, // RDMA_WRITE_FIRST, _ONLY, _ONLY_WITH_IMMEDIATE
		"12": true,             // RDMA_READ_REQUEST
		"13": true, "16": true, // RDMA_READ_RESPONSE_FIRST, _ONLY
	}
	b, err := os.ReadFile("../../testdata/tshark/" + name + ".fields.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range readLines(t, b) {
		f := strings.Split(line, "\t")
		if len(f) <= attr {
			continue
		}
		cm := f[class] == "0x07" && f[attr] != ""
		if cm || starts[f[op]] {
			out = append(out, f[num]+" "+f[src])
		}
	}
	return out
}

// iwarpArrowsFromTshark lists "packet source" for every arrow the packets
// of an iWARP capture without RPC imply, from tshark's fields
// (testdata/tshark/*.iwarp.tsv): each MPA Request and Reply, each RDMA Read
// Request and Terminate, and the first DDP segment of each Send, RDMA Write
// and RDMA Read Response message (RFC 5040 section 4; RFC 5041 section 5:
// the Last flag ends a message).
func iwarpArrowsFromTshark(t *testing.T, name string) []string {
	names := listFile(t, "../../testdata/tshark/fields-iwarp.txt")
	col := func(name string) int {
		i := slices.Index(names, name)
		if i < 0 {
			t.Fatalf("fields-iwarp.txt has no %s", name)
		}
		return i
	}
	num, src, req, rep, last, op := col("frame.number"), col("ip.src"), col("iwarp_mpa.key.req"), col("iwarp_mpa.key.rep"),
		col("iwarp_ddp.last_flag"), col("iwarp_rdma.opcode")
	b, err := os.ReadFile("../../testdata/tshark/" + name + ".iwarp.tsv")
	if err != nil {
		t.Fatal(err)
	}
	class := map[string]string{"0x00": "write", "0x02": "read-resp", "0x03": "send", "0x04": "send", "0x05": "send", "0x06": "send"}
	open := map[string]bool{} // source and class of the messages in progress
	var out []string
	for _, line := range readLines(t, b) {
		f := strings.Split(line, "\t")
		if len(f) <= op {
			continue
		}
		if f[req] != "" || f[rep] != "" {
			out = append(out, f[num]+" "+f[src])
		}
		if f[op] == "" {
			continue
		}
		ops, lasts := strings.Split(f[op], ","), strings.Split(f[last], ",")
		for i, o := range ops {
			cl, ok := class[o]
			if !ok { // Read Request, Terminate: one segment each
				out = append(out, f[num]+" "+f[src])
				continue
			}
			k := f[src] + " " + cl
			if !open[k] {
				out = append(out, f[num]+" "+f[src])
			}
			open[k] = i >= len(lasts) || lasts[i] != "1"
		}
	}
	return out
}

// checkLadderTransactions: every transaction of the transactions JSON has
// its Call and its Reply drawn, at their first packets, on their
// connection's ladder, and nothing else is drawn as a Call or a Reply.
func checkLadderTransactions(t *testing.T, data pageData, txns *report.TransactionList) {
	drawn := map[string]int{}
	for _, a := range data.Arrows {
		if a.Kind == "call" || a.Kind == "reply" {
			drawn[fmt.Sprintf("%s %s %s %d", a.Conn, a.Kind, a.XID, a.First)]++
		}
	}
	want := map[string]int{}
	for _, x := range txns.Transactions {
		if x.Call != nil {
			want[fmt.Sprintf("conn-%d call %s %d", x.Connection, x.XID, x.Call.Packets[0])]++
		}
		if x.Reply != nil {
			want[fmt.Sprintf("conn-%d reply %s %d", x.Connection, x.XID, x.Reply.Packets[0])]++
		}
	}
	if len(want) < 100 {
		t.Errorf("only %d Calls and Replies in the transactions JSON", len(want))
	}
	t.Logf("%d transactions: %d Calls and Replies in the JSON, %d drawn", len(txns.Transactions), len(want), len(drawn))
	for k, n := range want {
		if drawn[k] != n {
			t.Errorf("%s: drawn %d times, transactions JSON has it %d times", k, drawn[k], n)
		}
	}
	for k := range drawn {
		if want[k] == 0 {
			t.Errorf("%s drawn but not in the transactions JSON", k)
		}
	}
}

// nearestRank is the p-th percentile by the nearest-rank method.
func nearestRank(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	r := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(r, 1)-1]
}

// checkLatency: each procedure's count, p50 and p99 are those of the
// transactions JSON's latency_us.
func checkLatency(t *testing.T, data pageData, txns *report.TransactionList) {
	lat := map[string][]float64{}
	for i := range txns.Transactions {
		x := &txns.Transactions[i]
		if x.LatencyUS != nil {
			k := htmlreport.ProcedureKey(x)
			lat[k] = append(lat[k], *x.LatencyUS)
		}
	}
	if len(data.Latency) != len(lat) {
		t.Errorf("latency chart has %d procedures, transactions JSON %d", len(data.Latency), len(lat))
	}
	t.Logf("latency chart: %d procedures", len(data.Latency))
	for _, row := range data.Latency {
		v := lat[row["proc"]]
		if len(v) == 0 {
			t.Errorf("latency chart: %q has no latency in the transactions JSON", row["proc"])
			continue
		}
		if row["count"] != strconv.Itoa(len(v)) {
			t.Errorf("%s: count %s, transactions JSON %d", row["proc"], row["count"], len(v))
		}
		for _, p := range []struct {
			key string
			pct float64
		}{{"p50", 50}, {"p99", 99}} {
			got, err := strconv.ParseFloat(row[p.key], 64)
			if want := nearestRank(v, p.pct); err != nil || got != want {
				t.Errorf("%s: %s %s, transactions JSON %v", row["proc"], p.key, row[p.key], want)
			}
		}
	}
}

// checkChunks: each procedure's Calls by chunk class are those counted from
// the transactions JSON's Call chunk lists.
func checkChunks(t *testing.T, data pageData, txns *report.TransactionList) {
	want := map[string]map[string]int{}
	for i := range txns.Transactions {
		x := &txns.Transactions[i]
		if x.Call == nil {
			continue
		}
		k := htmlreport.ProcedureKey(x)
		if want[k] == nil {
			want[k] = map[string]int{}
		}
		want[k]["calls"]++
		kinds := map[string]bool{}
		for _, c := range x.Call.Chunks {
			kinds[c.Kind] = true
		}
		if len(kinds) == 0 {
			want[k]["inline"]++
		}
		for kind := range kinds {
			want[k][kind]++
		}
	}
	if len(data.Chunks) != len(want) {
		t.Errorf("chunk chart has %d procedures, transactions JSON %d", len(data.Chunks), len(want))
	}
	for _, row := range data.Chunks {
		w := want[row["proc"]]
		for _, key := range []string{"calls", "inline", "read", "write", "reply", "call"} {
			if row[key] != strconv.Itoa(w[key]) {
				t.Errorf("%s: %s %s, transactions JSON %d", row["proc"], key, row[key], w[key])
			}
		}
	}
}

// checkThroughput: each connection's bins add up, per direction, to the
// packets and bytes of analyze's JSON.
func checkThroughput(t *testing.T, data pageData, capture string) *report.Analysis {
	var a report.Analysis
	runJSON(t, &a, "analyze", "--format", "json", capture)
	if len(data.Throughput) != len(a.Connections) {
		t.Errorf("%d throughput charts, analyze has %d connections", len(data.Throughput), len(a.Connections))
	}
	for _, c := range a.Connections {
		want := map[string]report.Direction{"c2s": c.Traffic.ClientToServer, "s2c": c.Traffic.ServerToClient}
		found := false
		for _, tp := range data.Throughput {
			if tp.Conn != fmt.Sprintf("conn-%d", c.ID) {
				continue
			}
			found = true
			// With transport_health, the retransmitted bytes per direction
			// are two more series.
			if nw := 2 + 2*btoi(c.TransportHealth != nil); len(tp.Series) != nw {
				t.Errorf("conn %d: %d series, want %d", c.ID, len(tp.Series), nw)
			}
			if h := c.TransportHealth; h != nil {
				want["c2s-retx"] = report.Direction{Packets: h.ClientToServer.RetransmittedPackets, Bytes: h.ClientToServer.RetransmittedBytes}
				want["s2c-retx"] = report.Direction{Packets: h.ServerToClient.RetransmittedPackets, Bytes: h.ServerToClient.RetransmittedBytes}
			}
			for _, s := range tp.Series {
				var sum uint64
				for _, f := range strings.Fields(s.Bins) {
					n, err := strconv.ParseUint(f, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					sum += n
				}
				w := want[s.Key]
				if sum != w.Bytes || s.Total != strconv.FormatUint(w.Bytes, 10) || s.Packets != strconv.FormatUint(w.Packets, 10) {
					t.Errorf("conn %d %s: bins add up to %d bytes (total %s, %s packets); analyze: %d bytes, %d packets",
						c.ID, s.Key, sum, s.Total, s.Packets, w.Bytes, w.Packets)
				}
			}
		}
		if !found {
			t.Errorf("conn %d has no throughput chart", c.ID)
		}
	}
	return &a
}

// checkChunksAnalyze: the chunk chart's Calls by chunk kind add up to the
// chunks analyze's JSON counts ("chunks" of each connection, from the
// checks). A Call with two chunks of one kind would count once in the chart
// and twice in analyze; no Call of these captures has one.
func checkChunksAnalyze(t *testing.T, data pageData, a *report.Analysis) {
	var want, got [4]int // calls, read, write, reply
	for _, c := range a.Connections {
		if ch := c.Chunks; ch != nil {
			want[0] += ch.Calls
			want[1] += ch.ReadChunks + ch.LongCalls
			want[2] += ch.WriteChunks
			want[3] += ch.ReplyChunks
		}
	}
	for _, row := range data.Chunks {
		for i, k := range []string{"calls", "read", "write", "reply"} {
			n, err := strconv.Atoi(row[k])
			if err != nil {
				t.Fatalf("%s: data-%s %q", row["proc"], k, row[k])
			}
			got[i] += n
		}
	}
	if got != want || want[0] == 0 {
		t.Errorf("chunk chart: Calls, Read, Write, Reply %v; analyze's chunks %v", got, want)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
