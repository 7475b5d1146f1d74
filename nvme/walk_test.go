package nvme

import "testing"

func TestWalkSummary(t *testing.T) {
	for _, c := range []*nvmeCapture{roceCapture(t, "rxe-nvmeof.pcap"), iwarpCapture(t, "siw-nvmeof.pcap")} {
		nc, nr, multi, inv := 0, 0, 0, 0
		for _, s := range c.capsules {
			if s.toCtrl {
				nc++
			} else {
				nr++
			}
			if len(s.frames) > 1 {
				multi++
			}
			if s.invalid {
				inv++
			}
		}
		t.Logf("%s: %d cm, %d commands, %d responses (%d multi-packet, %d with invalidate), %d transfers, %d dup", c.name, len(c.cm), nc, nr, multi, inv, len(c.transfers), c.dupPSN)
		for _, e := range c.cm {
			t.Logf("  cm %d %s % x", e.frame, e.kind, e.pd[:min(len(e.pd), 16)])
		}
	}
}
