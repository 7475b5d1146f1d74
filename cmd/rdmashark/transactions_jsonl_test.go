package main

import (
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
)

// jsonlLines splits transactions --format jsonl output into its objects,
// each checked to name file and re-encoded without its "file" key, in the
// canonical form encoding/json gives a map (sorted keys).
func jsonlLines(t *testing.T, out, file string) []string {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not one JSON object per line: %v\n%s", err, l)
		}
		if m["file"] != file {
			t.Fatalf("line names file %v, want %q", m["file"], file)
		}
		delete(m, "file")
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	return lines
}

// docTransactions re-encodes the transactions of a transactions --format
// json document as jsonlLines does.
func docTransactions(t *testing.T, out string) []string {
	t.Helper()
	var doc struct {
		Transactions []map[string]any `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("transactions JSON: %v", err)
	}
	var s []string
	for _, m := range doc.Transactions {
		b, _ := json.Marshal(m)
		s = append(s, string(b))
	}
	return s
}

// TestTransactionsJSONLSameAsDocument: the streamed lines are the JSON
// document's transactions — the same objects, as many, no other — on every
// real, lossy and mutated capture, with and without the filters and the
// limit (both keep the first --max transactions to end), only in the order
// they ended.
func TestTransactionsJSONLSameAsDocument(t *testing.T) {
	caps := everyCapture(t)
	withTxns := 0
	for _, c := range caps {
		for _, extra := range [][]string{nil, {"--procedure", "READ"}, {"--max", "5"}, {"--connection", "2"}} {
			args := append([]string{"transactions"}, extra...)
			doc := cli(t, nil, append(append(args, "--format", "json"), c)...)
			lines := cli(t, nil, append(append(args, "--format", "jsonl"), c)...)
			if doc.code != lines.code {
				t.Errorf("%s %v: exit %d as JSON, %d as JSON lines (%s)", c, extra, doc.code, lines.code, lines.stderr)
				continue
			}
			if doc.code == exitUsage {
				continue // unreadable from the start: no document to compare
			}
			want := docTransactions(t, doc.stdout)
			got := jsonlLines(t, lines.stdout, c)
			if extra == nil && len(want) > 0 {
				withTxns++
			}
			if len(got) != len(want) {
				t.Errorf("%s %v: %d lines, the document has %d transactions", c, extra, len(got), len(want))
				continue
			}
			sort.Strings(got)
			sort.Strings(want)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s %v: a line differs from the document's transactions:\n%s\nwant\n%s", c, extra, got[i], want[i])
					break
				}
			}
		}
	}
	if withTxns < 8 {
		t.Errorf("only %d captures have transactions", withTxns)
	}
}

// TestTransactionsJSONLStreams feeds rxe-nfs3 through a pipe up to its
// packet 45, the Reply of the second transaction (FSINFO: Call in 43),
// and holds the rest back: both transactions' lines must be out while the
// input waits, and they must be the first two lines of the whole listing.
// (The bound on the wait only keeps a failure from hanging the test.)
func TestTransactionsJSONLStreams(t *testing.T) {
	data, err := os.ReadFile(nfs3Pcap)
	if err != nil {
		t.Fatal(err)
	}
	ends := pcapRecordEnds(t, data)
	const k = 45
	whole := cli(t, nil, "transactions", "--format", "jsonl", nfs3Pcap)
	if whole.code != 0 {
		t.Fatalf("exit %d: %s", whole.code, whole.stderr)
	}
	first := strings.SplitAfterN(whole.stdout, "\n", 3)
	if len(first) < 3 || !strings.Contains(first[1], `"packets":[45]`) {
		t.Fatalf("the second transaction to end is not the one replied in packet 45:\n%s", strings.Join(first[:2], ""))
	}
	// From standard input the lines name "<stdin>".
	stdin := func(s string) string {
		return strings.ReplaceAll(s, `"file":"`+nfs3Pcap+`"`, `"file":"<stdin>"`)
	}
	code, out, stderr := runHeld(t, []string{"transactions", "--format", "jsonl", "-"}, data[:ends[k-1]], data[ends[k-1]:], stdin(first[0]+first[1]))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != stdin(whole.stdout) {
		t.Errorf("from the pipe the listing differs from the file's")
	}
}
