package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportShowsNVMeControllers: the HTML report of an NVMe/RDMA capture
// has a section of the upper-layer protocols whose nvme-rdma table names
// each queue's controller (CNTLID), host NQN and subsystem NQN — the
// values tshark 4.0 decodes from the Connect data and the Identify
// Controller data (testdata/tshark/nvme/rxe-nvmeof.data.tsv, frames 17
// and 50) — and links each queue to its connection's section.
func TestReportShowsNVMeControllers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	capture := filepath.Join("..", "..", "testdata", "pcaps", "ulp", "rxe-nvmeof.pcap")
	if code, _, stderr := runCmd(t, "report", capture, "-o", out); code != 0 {
		t.Fatalf("report exited %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, `<section id="ulps">`)
	if i < 0 {
		t.Fatal("no section of the upper-layer protocols")
	}
	sec := page[i:]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{`<h3 id="ulp-nvme-rdma">nvme-rdma (2 connections)</h3>`, "<th>Controller</th><th>Host</th><th>Subsystem</th>",
		`<a href="#conn-1">1</a>`, `<a href="#conn-2">2</a>`, "1 (cntlid 1; conns 1 2)", "1 (cntlid 1)",
		"nqn.2014-08.org.nvmexpress:uuid:ab50e0c3-0e48-4521-832b-c532feb5fd1f", "nqn.2026-11.lab:nvme"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the section lacks %q:\n%s", want, sec)
		}
	}
}
