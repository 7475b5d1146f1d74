package iser_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestCaptureLossIsNoProtocolError is issue 28's proof on iSER: the
// real capture (RoCE; the workload completed, read back equal) thinned by
// removing 5% of its frames, at random and in bursts of up to 200, as a
// capture that dropped them. A task the capture lost makes no unmatched
// response, no invalidation of a task no one advertised and no RDMA
// outside any task; RDMA the capture lost packets of is not after the
// response: no error or warning (the whole capture has none). Before:
// ISER-RDMA-AFTER-RESPONSE on every random thinning, ISER-INVALIDATE,
// ISER-RDMA-BOUNDS and ISER-RESPONSE-UNMATCHED on two.
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	for _, name := range []string{"ulp/rxe-iser.pcap"} {
		for _, burst := range []int{1, 200} {
			for seed := uint64(1); seed <= 4; seed++ {
				path, n := pcaptest.Thin(t, "../../testdata/pcaps/"+name, 5, seed, burst)
				_, _, res := run(t, path)
				for _, f := range res.Findings {
					if f.Severity >= check.Warning {
						t.Errorf("%s less %d frames (bursts of up to %d, seed %d): %s %s: %s", name, n, burst, seed, f.Severity, f.Rule, f.Message)
					}
				}
			}
		}
	}
}
