package pcaptest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Thin writes a copy of the capture at src without some of its frames, as a
// capture that lost them would be (the peers exchanged them: the workload
// completed, so nothing resent them): with burst 1 each frame after the
// first 12 is dropped with probability pct/100; with burst > 1, runs of
// 1..burst consecutive frames (the kernel drops frames in bursts), about
// pct% in all. It returns the new file and the frames dropped.
func Thin(t *testing.T, src string, pct float64, seed uint64, burst int) (string, int) {
	t.Helper()
	lt, frames := Read(t, src)
	dir := os.Getenv("RDMASHARK_THIN_DIR") // keep them, to look into a failure
	if dir == "" {
		dir = t.TempDir()
	}
	out := filepath.Join(dir, fmt.Sprintf("%s-%v-%d-%d.pcap", strings.TrimSuffix(filepath.Base(src), ".pcap"), pct, seed, burst))
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(262144, lt); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	dropped, run := 0, 0
	for i, fr := range frames {
		if run == 0 && i >= 12 && r.Float64() < pct/100/float64(burst+1)*2 {
			run = 1 + r.IntN(burst)
		}
		if run > 0 {
			run--
			dropped++
			continue
		}
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	return out, dropped
}

// Write writes frames into a new pcap file in a test's temporary
// directory (RDMASHARK_THIN_DIR keeps it) and returns its path.
func Write(t *testing.T, lt layers.LinkType, frames []Frame) string {
	t.Helper()
	dir := os.Getenv("RDMASHARK_THIN_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	f, err := os.CreateTemp(dir, "frames-*.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(262144, lt); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	return f.Name()
}
