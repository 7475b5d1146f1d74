package smbdirect_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestCaptureLossIsNoProtocolError is issue 28's proof on SMB Direct: the
// real captures (RoCE and iWARP; the workload completed, read back equal)
// thinned by removing 5% of their frames, at random and in bursts of up
// to 200, as a capture that dropped them. A Negotiate the capture lost
// leaves no data transfer message taken for one (with its sizes and
// credits), a request it lost makes no RDMA outside any descriptor, a
// message it lost packets of has no size to judge: no error or warning
// (the whole captures have none). Before: SMBD-RDMA-DESCRIPTOR on 5 of 6
// random thinnings and SMBD-RECV-SIZE on one.
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	for _, name := range []string{"ulp/rxe-smbdirect.pcap", "ulp/siw-smbdirect.pcap"} {
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
