package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestCaptureLossIsNoProtocolError is issue 28's proof on NVMe/RDMA: the
// real captures (RoCE and iWARP; the workload completed, verified) thinned
// by removing 5% of their frames, at random and in bursts of up to 200, as
// a capture that dropped them. A completion the capture lost is not a
// reused CID, a command it lost makes no unmatched completion or
// unadvertised RDMA, a reordered segment no RDMA after the completion: no
// error or warning (the whole captures have none).
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	for _, name := range []string{"ulp/rxe-nvmeof.pcap", "ulp/siw-nvmeof.pcap"} {
		for _, burst := range []int{1, 200} {
			for seed := uint64(1); seed <= 3; seed++ {
				path, n := pcaptest.Thin(t, "../../testdata/pcaps/"+name, 5, seed, burst)
				_, xs, res := run(t, path)
				if len(xs) == 0 {
					t.Fatalf("%s less %d frames: no exchanges", name, n)
				}
				for _, f := range res.Findings {
					if f.Severity >= check.Warning {
						t.Errorf("%s less %d frames (bursts of up to %d, seed %d): %s %s: %s", name, n, burst, seed, f.Severity, f.Rule, f.Message)
					}
				}
			}
		}
	}
}

// TestLostConnectKeepsKeepAliveUnjudged: rxe-nvmeof without its I/O
// queue's Connect capsule (frames 93-94, SEND_FIRST/LAST at PSN
// 13506647-13506648 to QP 0x12, as tshark shows them). The admin queue's
// Keep Alive (frame 190, 5.068 s) and its next command (9174, 10.662 s)
// are 5.59 s apart, more than the KATO of 5000 ms; the target supports
// Traffic Based Keep Alive, and the I/O queue's commands in between
// restarted the timer — but the capture no longer says which controller
// that queue is of. NVME-KEEP-ALIVE must not be a warning: not evaluated.
func TestLostConnectKeepsKeepAliveUnjudged(t *testing.T) {
	src := "../../testdata/pcaps/ulp/rxe-nvmeof.pcap"
	lt, frames := pcaptest.Read(t, src)
	kept := frames[:0:0]
	for _, f := range frames {
		if f.Num != 93 && f.Num != 94 {
			kept = append(kept, f)
		}
	}
	_, _, res := run(t, pcaptest.Write(t, lt, kept))
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("%s %s %v: %s", f.Severity, f.Rule, f.Packets, f.Message)
		}
	}
}
