package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TestOrientedWithoutSetUp (issue 28): ulp/rxe-nvmeof.pcap without its CM exchange
// and without every frame before an RC Acknowledge — once the server's,
// once the client's — so that the first packet the engine sees of the
// connection tells neither role: the ULP alone (dissect.Orienter) must
// settle every connection's roles on a later packet, with the client the
// whole capture's CM REQ names (ulptest.Oriented).
func TestOrientedWithoutSetUp(t *testing.T) {
	ulptest.Oriented(t, "ulp/rxe-nvmeof.pcap", func() []dissect.ULP { return []dissect.ULP{nvmeof.New()} })
}

// FuzzSender: the Orienter never panics, seeded from ulp/rxe-nvmeof.pcap's packets.
func FuzzSender(f *testing.F) {
	ulptest.FuzzSender(f, "ulp/rxe-nvmeof.pcap", nvmeof.New().(dissect.Orienter))
}

// TestSenderAllocatesNothing: the Orienter is on the per-packet path.
func TestSenderAllocatesNothing(t *testing.T) {
	ulptest.SenderAllocates(t, "ulp/rxe-nvmeof.pcap", nvmeof.New().(dissect.Orienter))
}
