package rpcordma

import (
	"errors"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

type record struct {
	num    int
	lt     layers.LinkType
	data   []byte
	length int
	ts     time.Time
}

// loadRecords reads a capture of testdata/pcaps into memory.
func loadRecords(t testing.TB, name string) []record {
	t.Helper()
	r, err := source.Open(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, record{rec.Number, rec.LinkType, slices.Clone(rec.Data), rec.CI.Length, rec.CI.Timestamp})
	}
}

func processRecords(e *testEngine, p *dissect.Packet, recs []record) {
	for _, r := range recs {
		p.Number, p.Timestamp, p.LinkType = r.num, r.ts, r.lt
		p.CaptureLength, p.Length = len(r.data), r.length
		e.Process(p, r.data)
	}
}

// BenchmarkEngineRxeNFS3 runs the whole engine — decoding, connection
// tracking, Send reassembly, RDMA operation tracking, RPC-over-RDMA
// transactions and rebuilding — over rxe-nfs3.pcap (7245 packets, two NFSv3
// mounts, 1 MiB written and read back) once per op, on a fresh engine.
// steady-allocs/pkt is measured over the second mount, after the first one
// warmed the pools up.
func BenchmarkEngineRxeNFS3(b *testing.B) {
	recs := loadRecords(b, "rxe-nfs3.pcap")
	half := len(recs) / 2
	var p dissect.Packet
	b.ReportAllocs()
	var steady float64
	for i := 0; i < b.N; i++ {
		e := NewEngine(Options{Transaction: func(*Transaction) {}, ULP: nfs.NewBinding()})
		processRecords(e, &p, recs[:half])
		var m0, m1 runtime.MemStats
		if i == 0 {
			runtime.ReadMemStats(&m0)
		}
		processRecords(e, &p, recs[half:])
		if i == 0 {
			runtime.ReadMemStats(&m1)
			steady = float64(m1.Mallocs-m0.Mallocs) / float64(len(recs)-half)
		}
		e.Finish()
	}
	b.ReportMetric(float64(len(recs)), "packets/op")
	b.ReportMetric(steady, "steady-allocs/pkt")
}
