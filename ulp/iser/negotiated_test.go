package iser_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestNegotiation: iSER's neutral Negotiated. Both CM REQs of rxe-iser
// carry the iSER CM REQ flags 0x80 (tshark 4.0:
// infiniband.cm.req.ip_cm.private starts 80, frames 13 and 26): ZBVA not
// supported, SIE (0x40) clear, so the target may use Send With Invalidate
// (RFC 7145 section 5.1.3). The largest Send is the login's, not read.
func TestNegotiation(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-iser.pcap")
	n := 0
	for _, c := range e.Conns.Connections() {
		if c.ULP == "" {
			continue
		}
		n++
		neg := c.Negotiation()
		if ok, k := neg.RemoteInvalidation(); !ok || !k {
			t.Errorf("connection %d: remote invalidation %v/%v, want allowed", c.ID, ok, k)
		}
		if _, k := neg.InlineLimit(dissect.DirClientToServer); k {
			t.Errorf("connection %d: an inline limit known", c.ID)
		}
	}
	if n != 2 {
		t.Errorf("%d iSER connections, want 2", n)
	}
}
