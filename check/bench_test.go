package check

import (
	"bytes"
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

// BenchmarkChecks measures what the checks add to the engine on a real
// NFSv3 capture: ns and allocations per packet with and without the
// runner (the per-packet rules allocate nothing; a Call's record and a
// finding do).
func BenchmarkChecks(b *testing.B) {
	data, err := os.ReadFile("../testdata/pcaps/rxe-nfs3.pcap")
	if err != nil {
		b.Fatal(err)
	}
	for _, withChecks := range []bool{false, true} {
		name := "engine"
		if withChecks {
			name = "engine+checks"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var packets uint64
			for b.Loop() {
				r, err := source.NewReader(bytes.NewReader(data), "rxe-nfs3.pcap")
				if err != nil {
					b.Fatal(err)
				}
				var each func(*dissect.Packet) error
				opts := dissect.Options{}
				var run *Runner
				if withChecks {
					run = NewRunner(Config{})
					opts.Observer = run
					each = func(p *dissect.Packet) error { run.Packet(p); return nil }
				}
				eng := dissect.NewEngine(RPCTest.With(opts))
				if err := eng.Run(r, each); err != nil {
					b.Fatal(err)
				}
				if run != nil {
					run.Finish(eng.Conns.Connections())
				}
				packets = eng.Stats.Packets
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(uint64(b.N)*packets), "ns/packet")
		})
	}
}
