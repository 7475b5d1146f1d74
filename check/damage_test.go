package check

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// thin writes a copy of the capture at src without some of its frames, as a
// capture that lost them would be (the peers exchanged them: the workload
// completed, so nothing resent them): with burst 1 each frame after the
// first 12 is dropped with probability pct/100; with burst > 1, runs of
// 1..burst consecutive frames (the kernel drops frames in bursts), about
// pct% in all. It returns the new file and the frames dropped.
func thin(t *testing.T, src string, pct float64, seed uint64, burst int) (string, int) {
	t.Helper()
	lt, frames := pcaptest.Read(t, src)
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

// severe returns the rules with error or warning findings.
func severe(res *Result) []string {
	var ids []string
	for _, f := range res.Findings {
		if f.Severity >= Warning && !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestCaptureLossIsNoProtocolError is issue 28's proof on NFS: real
// captures (RoCE and iWARP, clean and lossy — every workload completed)
// thinned by removing a few percent of their frames at random, alone or
// in bursts, as a capture that dropped them. check reports no error or
// warning rule that the whole capture lacks: missing evidence makes a rule
// not evaluated (or a PSN gap information), never a protocol error.
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	caps := []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-nfs41.pcap", "siw-nfs41.pcap",
		"lossy/rxe-nfs3-lossy.pcap", "lossy/siw-nfs3-lossy.pcap", "lossy/rxe-nfs3-loss5.pcap", "lossy/rxe-nfs41-loss3.pcap"}
	if testing.Short() {
		caps = caps[:2]
	}
	for _, name := range caps {
		src := "../testdata/pcaps/" + name
		base := severe(runFile(t, src, Config{}))
		for _, v := range []struct {
			pct   float64
			burst int
		}{{3, 1}, {5, 1}, {5, 200}} {
			for seed := uint64(1); seed <= 2; seed++ {
				path, n := thin(t, src, v.pct, seed, v.burst)
				res := runFile(t, path, Config{})
				for _, id := range severe(res) {
					if slices.Contains(base, id) {
						continue
					}
					for _, f := range res.Findings {
						if f.Rule == id && f.Severity >= Warning {
							t.Errorf("%s less %d frames (%v%%, bursts of up to %d, seed %d): %s %s: %s", name, n, v.pct, v.burst, seed, f.Severity, id, f.Message)
							break
						}
					}
				}
			}
		}
	}
}
