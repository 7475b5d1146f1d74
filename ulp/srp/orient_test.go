package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/srp"
)

// TestOrientedWithoutSetUp (issue 28): ulp/rxe-srp.pcap without its CM exchange
// and without every frame before an RC Acknowledge — once the server's,
// once the client's — so that the first packet the engine sees of the
// connection tells neither role: the ULP alone (dissect.Orienter) must
// settle every connection's roles on a later packet, with the client the
// whole capture's CM REQ names (ulptest.Oriented).
func TestOrientedWithoutSetUp(t *testing.T) {
	ulptest.Oriented(t, "ulp/rxe-srp.pcap", func() []dissect.ULP { return []dissect.ULP{srp.New()} })
}

// FuzzSender: the Orienter never panics, seeded from ulp/rxe-srp.pcap's packets.
func FuzzSender(f *testing.F) {
	ulptest.FuzzSender(f, "ulp/rxe-srp.pcap", srp.New().(dissect.Orienter))
}

// TestSenderAllocatesNothing: the Orienter is on the per-packet path.
func TestSenderAllocatesNothing(t *testing.T) {
	ulptest.SenderAllocates(t, "ulp/rxe-srp.pcap", srp.New().(dissect.Orienter))
}
