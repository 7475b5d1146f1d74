package smbdirect_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

// TestBudgetCutsReassembly: with a buffer budget smaller than the
// server's 15,592-octet fragmented responses, the session gives their
// reassembly up and counts it, and the rules
// that would need the lost messages are not evaluated rather than finding
// anything.
func TestBudgetCutsReassembly(t *testing.T) {
	e, _, res := ulptest.RunWith(t, "ulp/rxe-smbdirect.pcap", dissect.Options{ULPs: []dissect.ULP{smbdirect.New()}, MaxBufferedBytes: 8 << 10})
	cut := uint64(0)
	for _, q := range sdConns(e) {
		cut += q.Server.FragmentsCut + q.Client.FragmentsCut
	}
	if cut != 3 {
		t.Errorf("%d reassemblies cut, want the server's three of 15,592+ octets", cut)
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning && f.ULP == smbdirect.Name {
			t.Errorf("finding %s: %s", f.Rule, f.Message)
		}
	}
	t.Logf("%d reassemblies cut", cut)
}
