package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// exchangeDoc is the part of `exchanges --format json` the tests read.
type exchangeDoc struct {
	File      string `json:"file"`
	Exchanges []struct {
		ULP             string  `json:"ulp"`
		Connection      int     `json:"connection"`
		Key             string  `json:"key"`
		Initiator       string  `json:"initiator"`
		Name            string  `json:"name"`
		Status          *string `json:"status"`
		OK              *bool   `json:"ok"`
		RequestPacket   *int    `json:"request_packet"`
		ResponsePacket  *int    `json:"response_packet"`
		LatencyNS       *int64  `json:"latency_ns"`
		ReadBytes       uint64  `json:"read_bytes"`
		WriteBytes      uint64  `json:"write_bytes"`
		InvalidatedSTag *string `json:"invalidated_stag"`
		Outcome         string  `json:"outcome"`
	} `json:"exchanges"`
}

func exchangesJSON(t *testing.T, args ...string) exchangeDoc {
	t.Helper()
	r := cli(t, nil, append([]string{"exchanges", "--format", "json"}, args...)...)
	if r.code != 0 && r.code != exitUsage {
		t.Fatalf("exchanges %v: exit %d: %s", args, r.code, r.stderr)
	}
	var doc exchangeDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("exchanges %v: %v\n%s", args, err, r.stdout)
	}
	return doc
}

// txnDoc is the part of `transactions --format json` the tests read.
type txnDoc struct {
	Transactions []struct {
		XID           string `json:"xid"`
		Connection    int    `json:"connection"`
		Direction     string `json:"direction"`
		ProcedureName string `json:"procedure_name"`
		Reply         *struct {
			Status string `json:"status"`
		} `json:"reply"`
		RDMA struct {
			ReadBytes  uint64 `json:"read_bytes"`
			WriteBytes uint64 `json:"write_bytes"`
		} `json:"rdma"`
		InvalidatedSTag *string  `json:"invalidated_stag"`
		LatencyUS       *float64 `json:"latency_us"`
		Outcome         string   `json:"outcome"`
	} `json:"transactions"`
}

// The transactions' outcomes and their neutral names.
var txnOutcome = map[string]string{
	"replied": "responded", "no-reply": "no-response", "evicted": "evicted", "superseded": "superseded",
	"reply-without-call": "response-without-request",
}

// TestExchangesMatchTransactions: on every real, lossy and mutated capture,
// `exchanges` lists as many exchanges as `transactions` lists
// transactions, and each exchange (connection, key) has the values of the
// transaction of the same connection and XID — key, name, status,
// outcome, latency, RDMA bytes, invalidated STag — though the two
// documents are built by two independent conversions (the engine's
// neutral Exchange, report's of the RPC Transaction).
func TestExchangesMatchTransactions(t *testing.T) {
	withExchanges, compared := 0, 0
	for _, c := range everyCapture(t) {
		r := cli(t, nil, "transactions", "--format", "json", c)
		if r.code == exitUsage && r.stdout == "" {
			continue // unreadable from the start
		}
		var txns txnDoc
		if err := json.Unmarshal([]byte(r.stdout), &txns); err != nil {
			t.Fatalf("%s: transactions JSON: %v", c, err)
		}
		ex := exchangesJSON(t, c)
		if len(ex.Exchanges) != len(txns.Transactions) {
			t.Errorf("%s: %d exchanges, %d transactions", c, len(ex.Exchanges), len(txns.Transactions))
			continue
		}
		if len(ex.Exchanges) > 0 {
			withExchanges++
		}
		// Both lists, keyed by connection and XID, each key's entries in
		// the order of the list (a superseded Call and its successor
		// share an XID): compared as sorted strings of the values.
		want := map[string][]string{}
		for _, x := range txns.Transactions {
			status := "-"
			if x.Reply != nil && x.Reply.Status != "" {
				status = x.Reply.Status
			}
			lat := "-"
			if x.LatencyUS != nil {
				lat = strconv.FormatInt(int64(math.Round(*x.LatencyUS*1e3)), 10)
			}
			inv := "-"
			if x.InvalidatedSTag != nil {
				inv = *x.InvalidatedSTag
			}
			init := map[string]string{"forward": "client-to-server", "backchannel": "server-to-client"}[x.Direction]
			k := fmt.Sprintf("%d %s", x.Connection, x.XID)
			want[k] = append(want[k], fmt.Sprintf("%s %s %s %s lat=%s read=%d write=%d inv=%s", init, x.ProcedureName, status,
				txnOutcome[x.Outcome], lat, x.RDMA.ReadBytes, x.RDMA.WriteBytes, inv))
		}
		got := map[string][]string{}
		for _, x := range ex.Exchanges {
			if x.ULP != "rpcordma" {
				t.Errorf("%s: an exchange of ULP %q", c, x.ULP)
			}
			status := "-"
			if x.Status != nil {
				status = *x.Status
				if x.OK == nil || *x.OK != (status == "SUCCESS") {
					t.Errorf("%s: %s status %s, ok %v", c, x.Key, status, x.OK)
				}
			}
			lat := "-"
			if x.LatencyNS != nil {
				lat = strconv.FormatInt(*x.LatencyNS, 10)
			}
			inv := "-"
			if x.InvalidatedSTag != nil {
				inv = *x.InvalidatedSTag
			}
			k := fmt.Sprintf("%d %s", x.Connection, x.Key)
			got[k] = append(got[k], fmt.Sprintf("%s %s %s %s lat=%s read=%d write=%d inv=%s", x.Initiator, x.Name, status,
				x.Outcome, lat, x.ReadBytes, x.WriteBytes, inv))
		}
		for k, w := range want {
			g := got[k]
			sort.Strings(g)
			sort.Strings(w)
			if strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s: connection and XID %s: exchanges\n%s\ntransactions\n%s", c, k, strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			compared += len(w)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d connection and key pairs, transactions have %d", c, len(got), len(want))
		}
	}
	if withExchanges < 8 || compared < 2000 {
		t.Errorf("only %d captures with exchanges, %d exchanges compared", withExchanges, compared)
	}
	t.Logf("%d captures with exchanges, %d exchanges compared with their transactions", withExchanges, compared)
}

// tsharkRPCFrames reads testdata/tshark/NAME.rpc-xid.tsv (gen-exchanges.sh):
// the first frame in which tshark shows each XID's Call and its Reply.
func tsharkRPCFrames(t *testing.T, name string) (calls, replies map[string]int) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "tshark", name+".rpc-xid.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, replies = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 3 {
			t.Fatalf("%s: %q", name, sc.Text())
		}
		frame, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatal(err)
		}
		xids, types := strings.Split(cols[1], ","), strings.Split(cols[2], ",")
		if len(xids) != len(types) {
			t.Fatalf("%s: %q", name, sc.Text())
		}
		for i, xid := range xids {
			m := calls
			if types[i] == "1" {
				m = replies
			}
			if _, ok := m[xid]; !ok {
				m[xid] = frame
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return calls, replies
}

// TestExchangesPacketsAsTshark: each exchange's request and response
// packets are the frames in which tshark first shows its XID's Call and
// Reply (tshark shows an RPC message on the frame that completes it: the
// Send, or the last RDMA Read Response of a Read chunk it was rebuilt
// from; a retransmitted Reply's second frame is the duplicate).
func TestExchangesPacketsAsTshark(t *testing.T) {
	for _, name := range []string{"rxe-nfs3", "siw-nfs3"} {
		calls, replies := tsharkRPCFrames(t, name)
		ex := exchangesJSON(t, filepath.Join("..", "..", "testdata", "pcaps", name+".pcap"))
		checked := 0
		for _, x := range ex.Exchanges {
			call, ok := calls[x.Key]
			if !ok || x.RequestPacket == nil || *x.RequestPacket != call {
				t.Errorf("%s: XID %s: request packet %v, tshark's Call frame %d (%v)", name, x.Key, deref(x.RequestPacket), call, ok)
			}
			reply, ok := replies[x.Key]
			if !ok || x.ResponsePacket == nil || *x.ResponsePacket != reply {
				t.Errorf("%s: XID %s: response packet %v, tshark's Reply frame %d (%v)", name, x.Key, deref(x.ResponsePacket), reply, ok)
			}
			checked++
		}
		if checked < 500 {
			t.Errorf("%s: only %d exchanges checked", name, checked)
		}
		t.Logf("%s: %d exchanges' packets checked against tshark", name, checked)
	}
}

// TestExchangesJSONLSameAsDocument: the streamed lines are the JSON
// document's exchanges — the same objects, as many — on every capture,
// whole, for one connection and with --max (both keep the first to end),
// only in the order they ended.
func TestExchangesJSONLSameAsDocument(t *testing.T) {
	lined := 0
	for _, c := range everyCapture(t) {
		for _, extra := range [][]string{nil, {"--max", "5"}, {"--connection", "2"}} {
			args := append([]string{"exchanges"}, extra...)
			doc := cli(t, nil, append(append(args, "--format", "json"), c)...)
			lines := cli(t, nil, append(append(args, "--format", "jsonl"), c)...)
			if doc.code != lines.code {
				t.Errorf("%s %v: exit %d as JSON, %d as JSON lines (%s)", c, extra, doc.code, lines.code, lines.stderr)
				continue
			}
			if doc.code == exitUsage {
				continue
			}
			var d struct {
				Exchanges []map[string]any `json:"exchanges"`
			}
			if err := json.Unmarshal([]byte(doc.stdout), &d); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, m := range d.Exchanges {
				b, _ := json.Marshal(m)
				want = append(want, string(b))
			}
			got := jsonlLines(t, lines.stdout, c)
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %v: %d lines differ from the document's %d exchanges", c, extra, len(got), len(want))
			}
			lined += len(got)
		}
	}
	if lined < 2000 {
		t.Errorf("only %d lines compared", lined)
	}
}

// TestExchangesSeveralCaptures: several captures are listed in the order
// given, as a JSON array of the one-capture documents; one that cannot be
// read keeps its place with its error and makes the exit status 2; the
// table names each capture with its count, and one line per exchange.
func TestExchangesSeveralCaptures(t *testing.T) {
	siw := filepath.Join("..", "..", "testdata", "pcaps", "siw-nfs3.pcap")
	missing := filepath.Join(t.TempDir(), "missing.pcap")
	r := cli(t, nil, "exchanges", "--format", "json", nfs3Pcap, missing, siw)
	if r.code != exitUsage {
		t.Errorf("exit %d with a missing capture, want %d", r.code, exitUsage)
	}
	var docs []struct {
		File      string            `json:"file"`
		Exchanges []json.RawMessage `json:"exchanges"`
		Errors    []string          `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &docs); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(docs) != 3 || docs[0].File != nfs3Pcap || docs[1].File != missing || docs[2].File != siw {
		t.Fatalf("documents %+v", docs)
	}
	if len(docs[0].Exchanges) != 618 || len(docs[1].Errors) != 1 || len(docs[2].Exchanges) != 510 {
		t.Errorf("%d, %d (errors %v), %d exchanges", len(docs[0].Exchanges), len(docs[1].Exchanges), docs[1].Errors, len(docs[2].Exchanges))
	}
	t.Setenv("COLUMNS", "100") // the width the table fits
	tb := cli(t, nil, "exchanges", nfs3Pcap, siw)
	if tb.code != 0 {
		t.Fatalf("exit %d: %s", tb.code, tb.stderr)
	}
	lines := strings.Split(tb.stdout, "\n")
	if !strings.Contains(tb.stdout, nfs3Pcap+": 618 exchanges\n") || !strings.Contains(tb.stdout, siw+": 510 exchanges\n") {
		t.Errorf("table heads:\n%s", lines[0])
	}
	// Two heads, two column headers, the exchanges, a blank line between.
	if n := len(lines) - 1; n != 618+510+5 {
		t.Errorf("%d lines", n)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
}

// TestExportExchangesAsListed: the export's exchanges table holds the
// exchanges `exchanges --format json` lists, value for value (the STag as
// an integer there, a hexadecimal string here).
func TestExportExchangesAsListed(t *testing.T) {
	for _, c := range []string{nfs3Pcap, filepath.Join("..", "..", "testdata", "pcaps", "siw-nfs41.pcap")} {
		dir := t.TempDir()
		if r := cli(t, nil, "export", "-o", dir, "--format", "ndjson", c); r.code != 0 && r.code != 1 {
			t.Fatalf("export: exit %d: %s", r.code, r.stderr)
		}
		var want []string
		for _, x := range exchangesJSON(t, c).Exchanges {
			inv := "-"
			if x.InvalidatedSTag != nil {
				inv = *x.InvalidatedSTag
			}
			want = append(want, fmt.Sprintf("%d %s %s %s %s %v %v %s %v %v %v %d %d %s", x.Connection, x.ULP, x.Key, x.Initiator,
				x.Name, deref(x.Status), deref(x.OK), x.Outcome, deref(x.RequestPacket), deref(x.ResponsePacket),
				deref(x.LatencyNS), x.ReadBytes, x.WriteBytes, inv))
		}
		b, err := os.ReadFile(filepath.Join(dir, "exchanges", "label=unlabelled", "part-0.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var row struct {
				ConnectionID    int     `json:"connection_id"`
				ULP             string  `json:"ulp"`
				Key             string  `json:"key"`
				KeyNum          int64   `json:"key_num"`
				Initiator       string  `json:"initiator"`
				Name            *string `json:"name"`
				Status          *string `json:"status"`
				OK              *bool   `json:"ok"`
				Outcome         string  `json:"outcome"`
				RequestPacket   *int    `json:"request_packet"`
				ResponsePacket  *int    `json:"response_packet"`
				LatencyNS       *int64  `json:"latency_ns"`
				ReadBytes       uint64  `json:"read_bytes"`
				WriteBytes      uint64  `json:"write_bytes"`
				InvalidatedSTag *int64  `json:"invalidated_stag"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			if row.Key != fmt.Sprintf("0x%08x", row.KeyNum) {
				t.Errorf("key %s, key_num %d", row.Key, row.KeyNum)
			}
			inv := "-"
			if row.InvalidatedSTag != nil {
				inv = fmt.Sprintf("0x%08x", *row.InvalidatedSTag)
			}
			name := ""
			if row.Name != nil {
				name = *row.Name
			}
			got = append(got, fmt.Sprintf("%d %s %s %s %s %v %v %s %v %v %v %d %d %s", row.ConnectionID, row.ULP, row.Key, row.Initiator,
				name, deref(row.Status), deref(row.OK), row.Outcome, deref(row.RequestPacket), deref(row.ResponsePacket),
				deref(row.LatencyNS), row.ReadBytes, row.WriteBytes, inv))
		}
		sort.Strings(got)
		sort.Strings(want)
		if len(want) < 100 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d rows exported, %d exchanges listed; first rows\n%v\n%v", c, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
