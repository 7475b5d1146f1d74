package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestCaptureLossIsNoProtocolError is issue 28's proof on SRP: the real
// captures thinned by removing 5% of their frames, at random and in
// bursts of up to 200, as captures that dropped them. A lost SRP_RSP
// (whose credits the request limit then lacks), a lost SRP_CMD (whose
// RDMA and response then match nothing) or a Send cut short make no
// finding: the rules that would need them are not evaluated.
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	for _, name := range realCaptures {
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
