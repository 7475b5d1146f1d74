package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// BenchmarkEngineNVMe: the engine with the NVMe/RDMA plug-in over the real
// RoCE capture (issue 26: within 1.5x RPC-over-RDMA's time per byte, no
// allocation per packet in steady state): ns and allocations per packet.
func BenchmarkEngineNVMe(b *testing.B) {
	ulptest.Bench(b, "ulp/rxe-nvmeof.pcap", 172, func() []dissect.ULP { return []dissect.ULP{nvmeof.New()} })
}
