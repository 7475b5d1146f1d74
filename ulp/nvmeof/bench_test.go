package nvmeof_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// BenchmarkEngineNVMe: the engine with the NVMe/RDMA plug-in over the real
// RoCE capture (issue 26: within 1.5x RPC-over-RDMA's time per byte, no
// allocation per packet in steady state): ns and allocations per packet.
func BenchmarkEngineNVMe(b *testing.B) {
	data, err := os.ReadFile("../../testdata/pcaps/ulp/rxe-nvmeof.pcap")
	if err != nil {
		b.Fatal(err)
	}
	var packets uint64
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := source.NewReader(bytes.NewReader(data), "rxe-nvmeof.pcap")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()},
			Exchange: func(*dissect.Exchange) { n++ }})
		if err := e.Run(r, nil); err != nil {
			b.Fatal(err)
		}
		if n != 172 {
			b.Fatalf("%d exchanges", n)
		}
		packets = e.Stats.Packets
	}
	b.ReportMetric(float64(packets), "packets/op")
}
