package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkPeakRSSZstdWindow (issue 29 point 11): the peak RSS of analyze
// --max-buffered 64MiB on rxe-nfs3's records repeated 40 times (~190 MB)
// and compressed by the zstd tool with a long window (--long=27: 128 MiB,
// now refused before decoding; ~180 MiB of RSS before the bound) and with
// an 8 MiB window (source.MaxZstdWindow, read whole). The compression runs
// in zstd's process, not in this one: a child's ru_maxrss starts from its
// parent's peak. It measures; it asserts nothing:
//
//	go test ./cmd/rdmashark -run '^$' -bench BenchmarkPeakRSSZstdWindow -benchtime 1x
func BenchmarkPeakRSSZstdWindow(b *testing.B) {
	zstdTool, err := exec.LookPath("zstd")
	if err != nil {
		b.Skip("needs the zstd tool")
	}
	orig, err := os.ReadFile(nfs3Pcap)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	plain := filepath.Join(dir, "capture.pcap")
	f, err := os.Create(plain)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.Write(orig[:24])
	for range 40 {
		for off := 24; off+16 <= len(orig); {
			n := int(binary.LittleEndian.Uint32(orig[off+8:]))
			w.Write(orig[off : off+16+n])
			off += 16 + n
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	orig = nil
	for _, c := range []struct {
		name string
		args []string
	}{
		{"long27-128MiB-window-refused", []string{"--long=27", "-3"}},
		{"8MiB-window", []string{"--zstd=wlog=23", "-3"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			name := filepath.Join(dir, c.name+".pcap.zst")
			if out, err := exec.Command(zstdTool, append(c.args, "-q", "-f", "-T1", plain, "-o", name)...).CombinedOutput(); err != nil {
				b.Fatalf("zstd: %v %s", err, out)
			}
			fi, err := os.Stat(name)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var rss float64
			code := 0
			for range b.N {
				a, _ := json.Marshal([]string{"analyze", "--max-buffered", "64MiB", name})
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), childEnv+"="+string(a))
				_ = cmd.Run()
				code = cmd.ProcessState.ExitCode()
				rss = float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024
			}
			b.ReportMetric(rss, "peak-RSS-MiB")
			b.ReportMetric(float64(code), "exit")
			b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
		})
	}
}
