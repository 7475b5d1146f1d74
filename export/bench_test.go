package export_test

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

// countingReader counts the capture's bytes.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// BenchmarkExport exports rxe-nfs3.pcap repeated 1, 20 and 40 times
// (internal/longstream: every repetition new connections, XIDs and
// timestamps, 7,245 packets each), Parquet, every table but packets and
// then with packets, and reports the throughput and the peak heap: the
// largest HeapInuse sampled every 1,000 packets, and the largest live heap
// (HeapAlloc after a GC at the end of each repetition). Peak memory should
// stop growing once every table has filled a row group (64k rows):
//
//	go test ./export -run '^$' -bench Export -benchtime 1x
func BenchmarkExport(b *testing.B) {
	c, err := longstream.Load(pcaps + "rxe-nfs3.pcap")
	if err != nil {
		b.Fatal(err)
	}
	for _, packets := range []bool{false, true} {
		for _, reps := range []int{1, 20, 40} {
			b.Run(fmt.Sprintf("packets=%v/reps=%d", packets, reps), func(b *testing.B) {
				var peakInuse, peakLive, bytes, pkts uint64
				var rows int64
				for b.Loop() {
					dir := b.TempDir()
					cfg := export.Config{Dir: dir, Label: "bench", Packets: packets, RowGroupRows: benchRowGroup}
					if _, err := export.Reserve(cfg, 1); err != nil {
						b.Fatal(err)
					}
					cr := &countingReader{r: c.Reader(reps)}
					r, err := source.NewReader(cr, "longstream")
					if err != nil {
						b.Fatal(err)
					}
					xc, err := export.NewCapture(cfg, "longstream", 0)
					if err != nil {
						b.Fatal(err)
					}
					runner := check.NewRunner(check.Config{Next: xc.Observer(nil)})
					xc.SetRunner(runner)
					eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: runner}, nfs.NewBinding(), rpcpresent.ExportTransactions(xc)))
					var ms runtime.MemStats
					runtime.GC()
					per, count := c.Records(), 0
					err = eng.Run(r, func(p *dissect.Packet) error {
						runner.Packet(p)
						count++
						switch {
						case count%per == 0:
							runtime.GC()
							runtime.ReadMemStats(&ms)
							peakLive = max(peakLive, ms.HeapAlloc)
						case count%1000 == 0:
							runtime.ReadMemStats(&ms)
							peakInuse = max(peakInuse, ms.HeapInuse)
						}
						return xc.Packet(p)
					})
					if err != nil {
						b.Fatal(err)
					}
					if err := xc.Finish(eng, runner.Finish(eng.Conns.Connections())); err != nil {
						b.Fatal(err)
					}
					bytes, pkts = uint64(cr.n), eng.Stats.Packets
					rows = 0
					for _, n := range xc.Rows() {
						rows += n
					}
				}
				b.SetBytes(int64(bytes))
				b.ReportAllocs()
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(pkts)/sec, "packets/s")
				b.ReportMetric(float64(rows)/sec, "rows/s")
				b.ReportMetric(float64(peakInuse)/(1<<20), "peak-inuse-MiB")
				b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-MiB")
			})
		}
	}
}

// benchRowGroup is the benchmark's row group size (export.DefaultRowGroupRows
// unless EXPORT_BENCH_ROWGROUP says otherwise).
var benchRowGroup = func() int {
	if v, err := strconv.Atoi(os.Getenv("EXPORT_BENCH_ROWGROUP")); err == nil {
		return v
	}
	return export.DefaultRowGroupRows
}()
