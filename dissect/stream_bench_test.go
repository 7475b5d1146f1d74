package dissect_test

import (
	"fmt"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/source"
)

// streamRun is one pass of a long synthetic stream through the engine and
// the checks, with the heap sampled as it goes.
type streamRun struct {
	base                 uint64 // HeapAlloc after a GC before the stream starts
	peakAlloc, peakInuse uint64 // sampled every sampleEvery packets
	peakLive             uint64 // HeapAlloc after a GC at each repetition's end
	live                 []uint64
	retained             dissect.Retained
	conns                int
}

const sampleEvery = 1000

func runStream(tb testing.TB, c *longstream.Capture, n, maxConns int) streamRun {
	var out streamRun
	var ms runtime.MemStats
	sample := func(gc bool) {
		if gc {
			runtime.GC()
		}
		runtime.ReadMemStats(&ms)
		out.peakAlloc = max(out.peakAlloc, ms.HeapAlloc)
		out.peakInuse = max(out.peakInuse, ms.HeapInuse)
		if gc {
			out.peakLive = max(out.peakLive, ms.HeapAlloc)
			out.live = append(out.live, ms.HeapAlloc)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	out.base = ms.HeapAlloc
	r, err := source.NewReader(c.Reader(n), "longstream")
	if err != nil {
		tb.Fatal(err)
	}
	runner := check.NewRunner(check.Config{})
	e := dissect.NewEngine(dissect.Options{Observer: runner, MaxConnections: maxConns, ULPs: rpcULPs(nfs.NewBinding())})
	per := c.Records()
	count := 0
	err = e.Run(r, func(p *dissect.Packet) error {
		runner.Packet(p)
		count++
		switch {
		case count%per == 0:
			sample(true)
		case count%sampleEvery == 0:
			sample(false)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	res := runner.Finish(e.Conns.Connections())
	out.retained = e.Retained()
	out.conns = len(res.Connections)
	return out
}

// BenchmarkStreamPeakHeap runs N repetitions of a real NFS capture
// (internal/longstream: every repetition new connections and XIDs, each
// closed by DREQ/DREP or TCP FINs) through the engine and the conformance
// checks, as `rdmashark check -r -` would, and reports the heap:
//
//   - base-MB: the heap before the stream starts, after a GC — mostly the
//     generator's copy of the capture (longstream.Capture), which the
//     engine does not hold;
//   - peak-heap-MB: the largest HeapAlloc sampled every 1000 packets (base
//     and garbage not yet collected included: garbage follows GOGC, not the
//     input); peak-inuse-MB the same for HeapInuse;
//   - retained-MB: the largest HeapAlloc right after a forced GC at the end
//     of each repetition, less base — what the engine and the checks
//     retain.
//
// With max=default (65536 connections) the summaries of the released
// connections (and their check results) stay for the final report and
// retained grows by their size per repetition; with max=32 the table
// forgets the oldest summaries, and everything is flat. Run with
// -benchtime=1x: one iteration is one whole stream.
func BenchmarkStreamPeakHeap(b *testing.B) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		c, err := longstream.Load(filepath.Join(pcapDir, name))
		if err != nil {
			b.Fatal(err)
		}
		for _, max := range []int{0, 32} {
			for _, n := range []int{5, 50, 200} {
				label := "default"
				if max > 0 {
					label = fmt.Sprint(max)
				}
				b.Run(fmt.Sprintf("%s/max=%s/reps=%d", name, label, n), func(b *testing.B) {
					var s streamRun
					for i := 0; i < b.N; i++ {
						s = runStream(b, c, n, max)
					}
					const mb = 1 << 20
					b.ReportMetric(float64(s.base)/mb, "base-MB")
					b.ReportMetric(float64(s.peakAlloc)/mb, "peak-heap-MB")
					b.ReportMetric(float64(s.peakInuse)/mb, "peak-inuse-MB")
					b.ReportMetric(float64(s.peakLive-min(s.peakLive, s.base))/mb, "retained-MB")
					b.ReportMetric(float64(s.retained.Connections), "conns-kept")
					b.ReportMetric(float64(n*c.Records()), "packets")
				})
			}
		}
	}
}

// TestStreamRetainedIsBounded is the structural side of the benchmark: after
// 40 repetitions of each NFS capture (80 connections opened and closed),
// the engine holds reassembly, RPC and lookup state for no connection but
// those in the grace window, buffers nothing, and keeps summaries up to the
// table's bound; the live heap after the last repetition is within a small
// margin of the live heap after the tenth.
func TestStreamRetainedIsBounded(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		c, err := longstream.Load(filepath.Join(pcapDir, name))
		if err != nil {
			t.Fatal(err)
		}
		s := runStream(t, c, 40, 32)
		r := s.retained
		if r.Connections != 32 || r.QPEntries != 0 || r.PendingEntries != 0 || r.CommEntries > 2*16 ||
			r.RoCEConns != 0 || r.ULPConns != 0 || r.OpenExchanges != 0 || r.RebuildBytes != 0 ||
			r.IWARPStreams != 0 || r.IWARPKeys > 2*16 {
			t.Errorf("%s: retained after 40 repetitions: %+v", name, r)
		}
		if s.conns != 32 {
			t.Errorf("%s: %d check results kept, want 32", name, s.conns)
		}
		// Structural, not timed: the bytes the heap holds. A release that
		// leaked a connection's buffers (a megabyte of reassembly, the
		// transactions of a mount) would add them 30 times over.
		if early, late := s.live[9], s.live[len(s.live)-1]; late > early+early/4+1<<20 {
			t.Errorf("%s: live heap %d bytes after 10 repetitions, %d after 40", name, early, late)
		}
	}
}
