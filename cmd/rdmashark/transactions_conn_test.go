package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransactionsUnknownConnection: --connection N on a capture without
// connection N is a mistake in the command, exit 2 as analyze and check
// (it printed 0 rows and exited 0); a connection the capture has lists
// its transactions (rxe-nfs3's connection 2: 578 Calls, as analyze counts).
func TestTransactionsUnknownConnection(t *testing.T) {
	code, _, stderr := runCmd(t, "transactions", "--connection", "9", nfs3Pcap)
	if code != 2 || !strings.Contains(stderr, "--connection 9: no such connection") {
		t.Errorf("--connection 9: exit %d, %q", code, stderr)
	}
	code, out, stderr := runCmd(t, "transactions", "--connection", "2", "--format", "json", nfs3Pcap)
	if code != 0 || !strings.Contains(out, `"transactions"`) || strings.Count(out, `"xid"`) != 578 {
		t.Errorf("--connection 2: exit %d, %d transactions, %q", code, strings.Count(out, `"xid"`), stderr)
	}
}

// TestTransactionsUnknownProcedure: --procedure with a name no transaction
// of the capture has is a mistake, exit 2 naming the procedures it has (it
// printed 0 rows and exited 0), in the table and in JSON lines; a name or
// NFSv4 operation it has lists them (rxe-nfs3: 19 READ Calls, as
// tshark -Y 'nfs.procedure_v3 == 6 && rpc.msgtyp == 0' counts them).
func TestTransactionsUnknownProcedure(t *testing.T) {
	for _, format := range []string{"table", "jsonl"} {
		code, _, stderr := runCmd(t, "transactions", "--format", format, "--procedure", "BOGUS", nfs3Pcap)
		if code != 2 || !strings.Contains(stderr, "--procedure BOGUS: no transaction of that procedure") || !strings.Contains(stderr, "GETATTR") {
			t.Errorf("%s --procedure BOGUS: exit %d, %q", format, code, stderr)
		}
	}
	code, out, stderr := runCmd(t, "transactions", "--procedure", "read", "--format", "json", nfs3Pcap)
	if code != 0 || strings.Count(out, `"xid"`) != 19 {
		t.Errorf("--procedure read: exit %d, %d transactions, %q", code, strings.Count(out, `"xid"`), stderr)
	}
}

// TestOneCaptureMessage: dissect and report given two captures say so in
// words, exit 2 (cobra said "accepts at most 1 arg(s), received 2").
func TestOneCaptureMessage(t *testing.T) {
	for _, c := range []string{"dissect", "report"} {
		code, _, stderr := runCmd(t, c, nfs3Pcap, rpingPcap)
		if code != 2 || !strings.Contains(stderr, c+" reads one capture, not 2") || !strings.Contains(stderr, "mergecap") {
			t.Errorf("%s with two captures: exit %d, %q", c, code, stderr)
		}
	}
}

// TestExportStdinName: standard input is <stdin> in export's capture
// column and summary line, as in every other output (it was "-").
func TestExportStdinName(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(rpingPcap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"export", "-o", dir, "--format", "ndjson", "-"}, f, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String()+errb.String(), "<stdin>: ") && !strings.Contains(out.String()+errb.String(), "<stdin>: 77 packets") {
		t.Errorf("summary: %q %q", out.String(), errb.String())
	}
	found := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var row struct{ Capture string }
			if l == "" || json.Unmarshal([]byte(l), &row) != nil {
				continue
			}
			found++
			if row.Capture != "<stdin>" {
				t.Errorf("%s: capture %q", p, row.Capture)
			}
		}
		return nil
	})
	if err != nil || found == 0 {
		t.Errorf("%d rows read: %v", found, err)
	}
}
