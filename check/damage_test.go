package check

import (
	"slices"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

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
				path, n := pcaptest.Thin(t, src, v.pct, seed, v.burst)
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
