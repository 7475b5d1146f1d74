package smbdirect_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestNegotiation: SMB Direct's neutral Negotiated. In rxe-smbdirect both
// the Negotiate Request and Response name MaxReceiveSize 1364 (tshark 4.0:
// smb_direct.max_receive_size 1364, frames 18 and 20, 2935 and 2937): no
// Send may be longer either way. Connections 1 and 3 (port 5445, refused)
// carry no ULP and know nothing; remote invalidation is asked per request.
func TestNegotiation(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-smbdirect.pcap")
	n := 0
	for _, c := range e.Conns.Connections() {
		neg := c.Negotiation()
		if _, k := neg.RemoteInvalidation(); k {
			t.Errorf("connection %d: remote invalidation known", c.ID)
		}
		a, k1 := neg.InlineLimit(dissect.DirClientToServer)
		b, k2 := neg.InlineLimit(dissect.DirServerToClient)
		if c.ULP == "" {
			if k1 || k2 {
				t.Errorf("connection %d, no ULP: limits %d %d", c.ID, a, b)
			}
			continue
		}
		n++
		if !k1 || !k2 || a != 1364 || b != 1364 {
			t.Errorf("connection %d: limits %d/%v %d/%v, want 1364 each way", c.ID, a, k1, b, k2)
		}
	}
	if n != 2 {
		t.Errorf("%d SMB Direct connections, want 2", n)
	}
}
