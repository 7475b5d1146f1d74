package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

const (
	nfs3Pcap  = "../../testdata/pcaps/rxe-nfs3.pcap"
	rpingPcap = "../../testdata/pcaps/rxe-rping.pcap"
	mutated   = "../../testdata/pcaps/mutated/"
)

func TestCheckExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		// The Linux server's Send With Invalidate under R=0 is an error.
		{"errors fail the gate", []string{"check", nfs3Pcap}, 1, "INV-NOT-NEGOTIATED"},
		// rping carries no RPC-over-RDMA: nothing for the gate to judge.
		{"nothing to judge on rping", []string{"check", rpingPcap}, 3, "no RPC-over-RDMA traffic"},
		{"nothing on rping, allowed", []string{"check", "--allow-empty", rpingPcap}, 0, "fail-on error: passed"},
		{"disable the rule", []string{"check", "--disable", "INV-NOT-*", nfs3Pcap}, 0, "passed"},
		// A NAK no retransmission answers is a warning (the planted
		// fault turns an ACK into a NAK); rxe-nfs3's own retransmissions
		// are acknowledged, info, and pass a gate on warnings.
		{"fail on warnings", []string{"check", "--disable", "INV-NOT-*", "--fail-on", "warning", mutated + "rxe-nfs3-conn2--ack-to-nak.pcap"}, 1, "NAK"},
		{"recovered retransmissions pass", []string{"check", "--disable", "INV-NOT-*", "--fail-on", "warning", nfs3Pcap}, 0, "fail-on warning: passed"},
		{"enable one rule", []string{"check", "--enable", "PSN-GAP", nfs3Pcap}, 0, "PSN-GAP"},
		{"several files sum", []string{"check", rpingPcap, nfs3Pcap}, 1, "2 files (0 unreadable)"},
		{"unreadable input", []string{"check", rpingPcap, "/nonexistent.pcap"}, 2, "could not be read"},
		{"unknown rule", []string{"check", "--enable", "NO-SUCH", rpingPcap}, 2, "no rule matches"},
		{"bad severity", []string{"check", "--fail-on", "fatal", rpingPcap}, 2, "unknown severity"},
		{"bad format", []string{"check", "--format", "html", rpingPcap}, 2, "--format"},
		{"no file", []string{"check"}, 2, "no capture file"},
		{"planted fault", []string{"check", "--disable", "INV-NOT-*", mutated + "rxe-nfs3-conn2--foreign-stag.pcap"}, 1, "INV-FOREIGN-STAG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCmd(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out+errs, tc.want) {
				t.Errorf("output lacks %q:\n%s%s", tc.want, out, errs)
			}
		})
	}
}

// TestCheckBaseline: a baseline written from the real capture suppresses
// the Linux server's findings on a later run — on another cut of the same
// connection too, since it matches on endpoints and keys, not on packets or
// XIDs — while a planted fault still fails the gate.
func TestCheckBaseline(t *testing.T) {
	dir := t.TempDir()
	bl := filepath.Join(dir, "baseline.json")
	// Writing a baseline records the findings: not a failed gate.
	if code, out, errs := runCmd(t, "check", "--wide", "--write-baseline", bl, nfs3Pcap); code != 0 ||
		!strings.Contains(out, "passed (writing a baseline: 14 findings at or above error recorded, not failed)") {
		t.Fatalf("exit %d writing the baseline\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(bl)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format  string
		Entries []struct{ Rule, Client, Server, Key string }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range doc.Entries {
		if e.Rule == "INV-NOT-NEGOTIATED" && e.Client == "192.0.2.2" && e.Server == "192.0.2.1" && e.Key == "server R=0" {
			found = true
		}
	}
	if doc.Format != "rdmashark-baseline/1" || !found {
		t.Fatalf("baseline %s", b)
	}
	code, out, _ := runCmd(t, "check", "--baseline", bl, nfs3Pcap)
	if code != 0 || !strings.Contains(out, "suppressed by the baseline") {
		t.Errorf("same capture with its baseline: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "check", "--baseline", bl, mutated+"rxe-nfs3-conn2.pcap")
	if code != 0 {
		t.Errorf("a cut of the same connection: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "check", "--baseline", bl, mutated+"rxe-nfs3-conn2--foreign-stag.pcap")
	if code != 1 || !strings.Contains(out, "INV-FOREIGN-STAG") || strings.Contains(out, "INV-NOT-NEGOTIATED ") {
		t.Errorf("a new fault: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(bl, []byte(`{"format":"rdmashark-baseline/1","entries":[{"rule":"NOPE"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd(t, "check", "--baseline", bl, rpingPcap); code != 2 || !strings.Contains(errs, "unknown rule") {
		t.Errorf("bad baseline: exit %d %s", code, errs)
	}
}

func TestCheckFormats(t *testing.T) {
	for _, f := range []string{"json", "junit", "sarif"} {
		code, out, errs := runCmd(t, "check", "--format", f, nfs3Pcap)
		if code != 1 || len(out) == 0 {
			t.Errorf("%s: exit %d, %d bytes\n%s", f, code, len(out), errs)
		}
		switch f {
		case "json", "sarif":
			if !json.Valid([]byte(out)) {
				t.Errorf("%s: not JSON", f)
			}
		case "junit":
			if !strings.HasPrefix(out, "<?xml") || !strings.Contains(out, `<failure message="7 error finding(s)`) {
				t.Errorf("junit: %.300s", out)
			}
		}
	}
	dir := t.TempDir()
	o := filepath.Join(dir, "report.xml")
	if code, out, _ := runCmd(t, "check", "--allow-empty", "--format", "junit", "-o", o, rpingPcap); code != 0 || out != "" {
		t.Errorf("-o: exit %d, stdout %q", code, out)
	}
	if b, err := os.ReadFile(o); err != nil || !bytes.Contains(b, []byte("<testsuites")) {
		t.Errorf("-o wrote %q, %v", b, err)
	}
}

func TestRulesCommand(t *testing.T) {
	code, out, _ := runCmd(t, "rules")
	if code != 0 || !strings.Contains(out, "INV-NOT-NEGOTIATED") || !strings.Contains(out, "RFC 8797 section 4.1") {
		t.Errorf("rules: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "rules", "inv-not-negotiated")
	if code != 0 || !strings.Contains(out, "the responder MUST use only RDMA Send") {
		t.Errorf("rules ID: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "rules", "CHUNK-*", "--format", "json")
	if code != 0 || !json.Valid([]byte(out)) || strings.Contains(out, `"INV-`) || !strings.Contains(out, `"CHUNK-ROUNDUP"`) {
		t.Errorf("rules CHUNK-* json: exit %d\n%.400s", code, out)
	}
	if code, _, _ := runCmd(t, "rules", "NOPE"); code != 2 {
		t.Errorf("unknown rule: exit %d", code)
	}
}

// TestAnalyzeFindings: analyze carries the checks in its JSON contract.
func TestAnalyzeFindings(t *testing.T) {
	code, out, _ := runCmd(t, "analyze", "--format", "json", nfs3Pcap)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Findings    []map[string]any
		Connections []struct {
			ID                 int
			RemoteInvalidation *struct {
				Negotiated            *bool `json:"negotiated"`
				Replies               int   `json:"replies"`
				RepliesWithInvalidate int   `json:"replies_with_invalidate"`
			} `json:"remote_invalidation"`
			Chunks *struct {
				Calls   int `json:"calls"`
				Replies int `json:"replies"`
			} `json:"chunks"`
			Checks []struct{ Rule, Status string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) == 0 || doc.Findings[0]["rule"] == nil || doc.Findings[0]["reference"] == nil {
		t.Fatalf("findings %v", doc.Findings)
	}
	// Checked against tshark: 7 of the 40 Replies of connection 1 are
	// SEND_*_WITH_INVALIDATE (infiniband.bth.opcode 22/23); the server's
	// REP has R=0.
	c := doc.Connections[0]
	ri := c.RemoteInvalidation
	if ri == nil || ri.Negotiated == nil || *ri.Negotiated || ri.Replies != 40 || ri.RepliesWithInvalidate != 7 {
		t.Errorf("remote_invalidation %+v", ri)
	}
	if c.Chunks == nil || c.Chunks.Calls != 40 || c.Chunks.Replies != 40 || len(c.Checks) == 0 {
		t.Errorf("chunks %v, %d checks", c.Chunks, len(c.Checks))
	}
	code, out, _ = runCmd(t, "analyze", nfs3Pcap)
	if code != 0 || !strings.Contains(out, "Findings: 14 errors, 0 warnings, 7 info") || !strings.Contains(out, "error INV-NOT-NEGOTIATED ×7") {
		t.Errorf("analyze: exit %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "analyze", "--wide", nfs3Pcap)
	if code != 0 || !strings.Contains(out, "Conformance") || !strings.Contains(out, "INV-NOT-NEGOTIATED") {
		t.Errorf("analyze --wide: exit %d\n%s", code, out)
	}
}
