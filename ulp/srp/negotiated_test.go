package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestNegotiation: SRP's neutral Negotiated. rxe-srp's CM REP carries the
// SRP_LOGIN_RSP c0 000000 00000080 <tag> 00002044 00002044 (tshark 4.0
// infiniband.cm.rep.private, frame 16): MAXIMUM INITIATOR TO TARGET and
// TARGET TO INITIATOR IU LENGTH 0x2044 = 8260 octets. SRP negotiates no
// remote invalidation.
func TestNegotiation(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-srp.pcap")
	cs := e.Conns.Connections()
	if len(cs) != 1 || cs[0].ULP == "" {
		t.Fatalf("%d connections", len(cs))
	}
	neg := cs[0].Negotiation()
	a, k1 := neg.InlineLimit(dissect.DirClientToServer)
	b, k2 := neg.InlineLimit(dissect.DirServerToClient)
	if !k1 || !k2 || a != 8260 || b != 8260 {
		t.Errorf("limits %d/%v %d/%v, want 8260 each way", a, k1, b, k2)
	}
	if _, k := neg.RemoteInvalidation(); k {
		t.Error("remote invalidation known")
	}
}
