package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/internal/longstream"
)

// BenchmarkAnalyzeJobs reads 20 captures (each rxe-nfs3.pcap repeated 5
// times by internal/longstream: about 36,000 packets, 14 MB) with analyze
// at --jobs 1 and at --jobs GOMAXPROCS. Run both back to back, several
// times, on a machine others share:
//
//	go test ./cmd/rdmashark -run '^$' -bench AnalyzeJobs -count 5
func BenchmarkAnalyzeJobs(b *testing.B) {
	dir := b.TempDir()
	c, err := longstream.Load("../../testdata/pcaps/rxe-nfs3.pcap")
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for i := range 20 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("capture-%02d.pcap", i)))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(f, c.Reader(5))
		if err != nil {
			b.Fatal(err)
		}
		size += n
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	for _, jobs := range []int{1, 0} {
		name := "jobs=1"
		args := []string{"analyze", "--format", "json", "--jobs", "1", dir}
		if jobs == 0 {
			name = "jobs=GOMAXPROCS"
			args = []string{"analyze", "--format", "json", dir}
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if code := run(args, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("%v: exit %d", args, code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/20captures")
		})
	}
}
