package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// ladderSection is one connection's neutral ladder as the page writes it:
// the ladder's data attributes and its rows' (report/html ladder_exch.go).
type ladderSection struct {
	conn  int
	attrs map[string]string
	rows  []map[string]string
}

var (
	sectionRE = regexp.MustCompile(`<section class="conn" id="conn-(\d+)">`)
	ladderRE  = regexp.MustCompile(`<div class="ladder"[^>]*>`)
	rowRE     = regexp.MustCompile(`<g class="row [^>]*>`)
	attrRE    = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
)

func attrsOf(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRE.FindAllStringSubmatch(tag, -1) {
		m[a[1]] = a[2]
	}
	return m
}

// ladderSections parses the neutral ladders of a report page.
func ladderSections(t *testing.T, page string) []ladderSection {
	t.Helper()
	var out []ladderSection
	locs := sectionRE.FindAllStringSubmatchIndex(page, -1)
	for i, l := range locs {
		end := len(page)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sec := page[l[0]:end]
		sec = sec[:strings.Index(sec, "</section>")]
		conn, _ := strconv.Atoi(page[l[2]:l[3]])
		lad := ladderRE.FindString(sec)
		if lad == "" {
			t.Fatalf("connection %d: no ladder", conn)
		}
		ls := ladderSection{conn: conn, attrs: attrsOf(lad)}
		if ls.attrs["data-ulp"] == "" {
			continue
		}
		for _, g := range rowRE.FindAllString(sec, -1) {
			ls.rows = append(ls.rows, attrsOf(g))
		}
		out = append(out, ls)
	}
	return out
}

func atou(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestReportLadderMatchesExchanges: the HTML report's ladder of every
// connection of a ULP (NVMe/RDMA over RoCE and iWARP, clean and under
// netem loss, SMB Direct, iSER, SRP: the real captures of each) counts what `exchanges --format json` lists
// on the same capture — per connection the exchanges and the bytes they
// moved by RDMA Read and Write —, draws every exchange with its request
// and response packets and, under it, RDMA operations whose lengths add
// up to that exchange's read_bytes and write_bytes; and the operations it
// counts, attached and not, are every RDMA Read and Write the engine
// handed out (analyze's engine.rpc.rdma_reads and rdma_writes, counted
// at the engine's delivery for every transport).
func TestReportLadderMatchesExchanges(t *testing.T) {
	for _, name := range []string{"rxe-nvmeof", "siw-nvmeof", "rxe-nvmeof-mix-small", "rxe-nvmeof-loss2", "siw-nvmeof-loss2", "rxe-smbdirect", "siw-smbdirect", "rxe-iser", "rxe-srp", "siw-srp", "rxe-srp-tmf"} {
		t.Run(name, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "pcaps", "ulp", name+".pcap")
			out := filepath.Join(t.TempDir(), "r.html")
			if code, _, stderr := runCmd(t, "report", capture, "-o", out); code != 0 {
				t.Fatalf("report exited %d: %s", code, stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			wellFormed(t, string(b))
			code, js, stderr := runCmd(t, "exchanges", "--format", "json", capture)
			if code != 0 {
				t.Fatalf("exchanges exited %d: %s", code, stderr)
			}
			var doc struct {
				Exchanges []struct {
					ULP            string `json:"ulp"`
					Connection     int    `json:"connection"`
					RequestPacket  *int   `json:"request_packet"`
					ResponsePacket *int   `json:"response_packet"`
					ReadBytes      uint64 `json:"read_bytes"`
					WriteBytes     uint64 `json:"write_bytes"`
				} `json:"exchanges"`
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatal(err)
			}
			code, ajs, stderr := runCmd(t, "analyze", "--format", "json", capture)
			if code != 0 {
				t.Fatalf("analyze exited %d: %s", code, stderr)
			}
			var an struct {
				Engine struct {
					RPC struct {
						RDMAWrites uint64 `json:"rdma_writes"`
						RDMAReads  uint64 `json:"rdma_reads"`
					} `json:"rpc"`
				} `json:"engine"`
			}
			if err := json.Unmarshal([]byte(ajs), &an); err != nil {
				t.Fatal(err)
			}
			type sums struct{ n, read, write uint64 }
			want := map[int]*sums{}
			var wantX []string
			for _, x := range doc.Exchanges {
				s := want[x.Connection]
				if s == nil {
					s = &sums{}
					want[x.Connection] = s
				}
				s.n++
				s.read += x.ReadBytes
				s.write += x.WriteBytes
				req, resp := 0, 0
				if x.RequestPacket != nil {
					req = *x.RequestPacket
				}
				if x.ResponsePacket != nil {
					resp = *x.ResponsePacket
				}
				wantX = append(wantX, fmt.Sprintf("conn %d req %d resp %d read %d write %d", x.Connection, req, resp, x.ReadBytes, x.WriteBytes))
			}
			secs := ladderSections(t, string(b))
			if len(secs) != len(want) {
				t.Errorf("%d neutral ladders, %d connections with exchanges", len(secs), len(want))
			}
			var gotX []string
			var ops uint64
			for _, s := range secs {
				a := s.attrs
				w := want[s.conn]
				if w == nil {
					t.Errorf("connection %d: a ladder of %s exchanges, none listed", s.conn, a["data-ulp"])
					continue
				}
				got := sums{atou(t, a["data-exchanges"]), atou(t, a["data-read-bytes"]), atou(t, a["data-write-bytes"])}
				if got != *w {
					t.Errorf("connection %d: ladder counts %+v, exchanges --format json %+v", s.conn, got, *w)
				}
				ops += atou(t, a["data-rdma-ops"]) + atou(t, a["data-unattached-ops"])
				// The drawn exchanges, each from its rows.
				type drawn struct{ req, resp, read, write, ops uint64 }
				byExch := map[string]*drawn{}
				var order []string
				var opRows uint64
				for _, r := range s.rows {
					e := r["data-exch"]
					if e == "" {
						continue
					}
					d := byExch[e]
					if d == nil {
						d = &drawn{}
						byExch[e] = d
						order = append(order, e)
					}
					switch r["data-kind"] {
					case "request":
						d.req = atou(t, r["data-last"])
					case "response":
						d.resp = atou(t, r["data-last"])
					case "rdma-read":
						d.read += atou(t, r["data-bytes"])
						opRows++
					case "rdma-write":
						d.write += atou(t, r["data-bytes"])
						opRows++
					}
				}
				if uint64(len(order)) != w.n {
					t.Errorf("connection %d: %d exchanges drawn of %d (none is past the detail limit here)", s.conn, len(order), w.n)
				}
				if opRows != atou(t, a["data-rdma-ops"]) {
					t.Errorf("connection %d: %d RDMA operations drawn under exchanges, %s counted", s.conn, opRows, a["data-rdma-ops"])
				}
				for _, e := range order {
					d := byExch[e]
					gotX = append(gotX, fmt.Sprintf("conn %d req %d resp %d read %d write %d", s.conn, d.req, d.resp, d.read, d.write))
				}
			}
			slices.Sort(wantX)
			slices.Sort(gotX)
			if !slices.Equal(gotX, wantX) {
				for i := 0; i < max(len(gotX), len(wantX)); i++ {
					var g, w string
					if i < len(gotX) {
						g = gotX[i]
					}
					if i < len(wantX) {
						w = wantX[i]
					}
					if g != w {
						t.Errorf("first difference at %d: ladder %q, exchanges %q", i, g, w)
						break
					}
				}
			}
			if all := an.Engine.RPC.RDMAReads + an.Engine.RPC.RDMAWrites; ops != all {
				t.Errorf("the ladders count %d RDMA operations, the engine reassembled %d", ops, all)
			}
			if len(doc.Exchanges) == 0 || ops == 0 {
				t.Errorf("%d exchanges, %d operations: the capture should have both", len(doc.Exchanges), ops)
			}
		})
	}
}

// TestReportLadderBounded: past --max-detail the neutral ladder draws no
// more exchanges, still counts them all, lists the rest by kind and says
// so, and the page shrinks accordingly.
func TestReportLadderBounded(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", "ulp", "rxe-nvmeof.pcap")
	dir := t.TempDir()
	size := map[string]int64{}
	pages := map[string]string{}
	for _, d := range []string{"1000", "10"} {
		out := filepath.Join(dir, d+".html")
		if code, _, stderr := runCmd(t, "report", "--max-detail", d, capture, "-o", out); code != 0 {
			t.Fatalf("report exited %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		size[d], pages[d] = int64(len(b)), string(b)
	}
	if size["10"] >= size["1000"]*2/3 {
		t.Errorf("--max-detail 10: %d bytes, 1000: %d bytes", size["10"], size["1000"])
	}
	for _, s := range ladderSections(t, pages["10"]) {
		n := atou(t, s.attrs["data-exchanges"])
		seen := map[string]bool{}
		for _, r := range s.rows {
			if e := r["data-exch"]; e != "" {
				seen[e] = true
			}
		}
		if len(seen) != int(min(n, 10)) {
			t.Errorf("connection %d: %d exchanges drawn of %d, limit 10", s.conn, len(seen), n)
		}
		if n > 10 {
			note := fmt.Sprintf("Connection %d: %d exchanges after the first 10 are not drawn", s.conn, n-10)
			if !strings.Contains(pages["10"], note) {
				t.Errorf("the page lacks %q", note)
			}
		}
	}
}

// wellFormed checks a report page as an HTML tokenizer reads it: every
// element the page opens it closes, in order (void elements and the SVG's
// self-closing ones aside); every id is non-empty and unique, and every
// link to one (href="#...") names one; nothing is fetched from elsewhere
// (no src, no link element, no URL with a scheme or a host).
func wellFormed(t *testing.T, page string) {
	t.Helper()
	void := map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true, "wbr": true, "col": true}
	z := html.NewTokenizer(strings.NewReader(page))
	var stack []string
	ids := map[string]bool{}
	var links []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if len(stack) != 0 {
				t.Errorf("unclosed elements at the end: %v", stack)
			}
			for _, l := range links {
				if !ids[l] {
					t.Errorf("link to #%s, which no element has", l)
				}
			}
			return
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			name := tok.Data
			for _, a := range tok.Attr {
				switch {
				case a.Key == "id":
					if a.Val == "" || ids[a.Val] {
						t.Errorf("<%s id=%q>: empty or not unique", name, a.Val)
					}
					ids[a.Val] = true
				case a.Key == "href" && strings.HasPrefix(a.Val, "#"):
					links = append(links, a.Val[1:])
				case a.Key == "src" || (a.Key == "href" || strings.HasSuffix(a.Key, ":href")) && strings.Contains(a.Val, "//"):
					t.Errorf("<%s %s=%q>: the page must fetch nothing", name, a.Key, a.Val)
				}
			}
			if name == "link" {
				t.Errorf("a <link> element: the page must fetch nothing")
			}
			switch {
			case tt == html.SelfClosingTagToken || tt == html.StartTagToken && void[name]:
			case tt == html.StartTagToken:
				stack = append(stack, name)
			default:
				if len(stack) == 0 || stack[len(stack)-1] != name {
					t.Fatalf("</%s> closes %v", name, stack)
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
}
