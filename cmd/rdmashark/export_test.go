package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// export: flags checked, each capture its own part file in every table,
// an unreadable capture leaves no files and exit status 2, NDJSON rows
// are the transactions command's (same XIDs, in the same number).
func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range [][]string{
		{"export", nfs3Pcap},
		{"export", "-o", dir, "--format", "csv", nfs3Pcap},
		{"export", "-o", dir},
	} {
		if code, _, _ := runCmd(t, bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}
	code, out, errs := runCmd(t, "export", "-o", dir, "--format", "ndjson", "--label", "host1", "--jobs", "2",
		nfs3Pcap, "/nonexistent.pcap", rpingPcap)
	if code != exitUsage || !strings.Contains(errs, "nonexistent") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "rxe-nfs3.pcap: 7245 packets") || !strings.Contains(out, "(part-2)") {
		t.Errorf("summary:\n%s", out)
	}
	for _, table := range []string{"connections", "transactions", "rdma_ops", "findings", "exchanges"} {
		ents, err := os.ReadDir(filepath.Join(dir, table, "label=host1"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "part-0.ndjson part-2.ndjson" {
			t.Errorf("%s: %v", table, names)
		}
	}
	// The transactions table holds the XIDs `transactions --format json`
	// lists.
	_, tj, _ := runCmd(t, "transactions", "--format", "json", "--max", "100000", nfs3Pcap)
	var list struct {
		Transactions []struct {
			XID        string `json:"xid"`
			Connection int    `json:"connection"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(tj), &list); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, x := range list.Transactions {
		want[x.XID+"/"+strconv.Itoa(x.Connection)]++
	}
	f, err := os.Open(filepath.Join(dir, "transactions", "label=host1", "part-0.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			XIDHex       string `json:"xid_hex"`
			ConnectionID int    `json:"connection_id"`
			Label        string `json:"label"`
			Capture      string `json:"capture"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.Label != "host1" || row.Capture != nfs3Pcap {
			t.Fatalf("row %s", sc.Bytes())
		}
		got[row.XIDHex+"/"+strconv.Itoa(row.ConnectionID)]++
	}
	if len(want) < 600 || len(got) != len(want) {
		t.Fatalf("%d transactions exported, %d listed", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: exported %d times, listed %d", k, got[k], n)
		}
	}
	// Again into the same directory: new part files, none overwritten.
	if code, out, errs := runCmd(t, "export", "-o", dir, "--format", "ndjson", "--label", "host1", rpingPcap); code != 0 || !strings.Contains(out, "(part-3)") {
		t.Errorf("second export: exit %d\n%s%s", code, out, errs)
	}
}

// TestExportAgainWarnsOrReplaces: exporting the same capture twice into
// one directory under one label adds its rows a second time — the second
// export warns so; with --replace the label's parts are those of one
// export again, and another label's parts are kept.
func TestExportAgainWarnsOrReplaces(t *testing.T) {
	dir := t.TempDir()
	capture := "../../testdata/pcaps/rxe-rping.pcap"
	exportOnce := func(extra ...string) string {
		var out, errb bytes.Buffer
		args := append([]string{"export", "-o", dir, "--format", "ndjson"}, extra...)
		if rc := run(append(args, capture), bytes.NewReader(nil), &out, &errb); rc != 0 {
			t.Fatalf("rc %d: %s", rc, errb.String())
		}
		return errb.String()
	}
	parts := func(label string) int {
		m, _ := filepath.Glob(filepath.Join(dir, "connections", "label="+label, "part-*"))
		return len(m)
	}
	if w := exportOnce(); strings.Contains(w, "warning") {
		t.Fatalf("first export warned: %s", w)
	}
	exportOnce("--label", "other")
	if w := exportOnce(); !strings.Contains(w, "already holds 1 earlier part") || parts("unlabelled") != 2 {
		t.Fatalf("second export: %d parts, stderr %q", parts("unlabelled"), w)
	}
	if w := exportOnce("--replace"); strings.Contains(w, "warning") || parts("unlabelled") != 1 || parts("other") != 1 {
		t.Fatalf("--replace: %d parts (other label %d), stderr %q", parts("unlabelled"), parts("other"), w)
	}
}
