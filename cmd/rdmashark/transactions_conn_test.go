package main

import (
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
