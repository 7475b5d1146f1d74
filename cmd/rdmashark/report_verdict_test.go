package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReportVerdictIsChecks: the HTML report's verdict is check's on the
// same capture — the exit status check gives it (0 PASS, 1 FAIL, 3
// nothing to judge) — not PASS whenever no finding is an error: rxe-rping
// has no upper-layer protocol (check exits 3) and the report said PASS.
// Connections of other protocols get no RFC 8797 defaults either.
func TestReportVerdictIsChecks(t *testing.T) {
	verdict := regexp.MustCompile(`<span class="verdict [a-z]+"[^>]*>([A-Z ]+)</span>`)
	for _, name := range []string{"rxe-rping.pcap", "rxe-nfs3.pcap", "ulp/rxe-nvmeof.pcap"} {
		capture := filepath.Join("..", "..", "testdata", "pcaps", name)
		code, _, _ := runCmd(t, "check", capture)
		want := map[int]string{0: "PASS", 1: "FAIL", 3: "NOTHING TO JUDGE"}[code]
		if want == "" {
			t.Fatalf("%s: check exited %d", name, code)
		}
		out := filepath.Join(t.TempDir(), "r.html")
		if code, _, stderr := runCmd(t, "report", capture, "-o", out); code != 0 {
			t.Fatalf("%s: report exited %d: %s", name, code, stderr)
		}
		page, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		m := verdict.FindAllSubmatch(page, -1)
		if len(m) == 0 {
			t.Fatalf("%s: no verdict on the page", name)
		}
		for _, v := range m {
			if string(v[1]) != want {
				t.Errorf("%s: the report says %s, check exits %d (%s)", name, v[1], code, want)
			}
		}
		if name == "ulp/rxe-nvmeof.pcap" && regexp.MustCompile(`defaults: 1024 B`).Match(page) {
			t.Errorf("%s: RFC 8797's 1024-byte default on an NVMe/RDMA connection", name)
		}
	}
}

// TestReportFileName: where report writes when standard output is a
// terminal (issue 31: it wrote HTML onto the terminal).
func TestReportFileName(t *testing.T) {
	for in, want := range map[string]string{
		"testdata/pcaps/rxe-nfs3.pcap": "rxe-nfs3.html",
		"/x/cap.pcapng.gz":             "cap.html",
		"a.erf":                        "a.html",
		"-":                            "stdin.html",
		"noext":                        "noext.html",
	} {
		if got := reportFileName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
