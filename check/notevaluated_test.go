package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writeCut writes the frames of a capture that keep says to keep, cut to
// snap bytes when snap > 0, to a temporary pcap.
func writeCut(t *testing.T, src string, keep func(n int) bool, snap int) string {
	t.Helper()
	frames := readFrames(t, src)
	name := filepath.Join(t.TempDir(), "cut.pcap")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, d := range frames {
		if !keep(i + 1) {
			continue
		}
		ci := gopacket.CaptureInfo{CaptureLength: len(d), Length: len(d)}
		if snap > 0 && len(d) > snap {
			d, ci.CaptureLength = d[:snap], snap
		}
		if err := w.WritePacket(ci, d); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// TestNotEvaluated: a rule that lacks its evidence says so, with the
// reason, instead of passing or guessing.
func TestNotEvaluated(t *testing.T) {
	base := filepath.Join(mutatedDir, "rxe-nfs3-conn2.pcap")

	// The capture starts after the CM exchange (packets 1-3 of the cut).
	res := runFile(t, writeCut(t, base, func(n int) bool { return n > 3 }, 0), Config{})
	c := res.Connections[0]
	if c.State != "no-setup" {
		t.Fatalf("state %s", c.State)
	}
	for _, id := range []string{"THRESH-C2S", "THRESH-S2C", "PD-FORMAT", "PD-ABSENT"} {
		ch := status(t, res, c.ID, id)
		if ch.Status != StatusNotEvaluated || !strings.Contains(ch.Reason, "no CM exchange in the capture") {
			t.Errorf("%s without the CM exchange: %+v", id, ch)
		}
	}
	// A plain Send complies whatever was negotiated; the one Send With
	// Invalidate cannot be judged, and the result says so.
	if ch := status(t, res, c.ID, "INV-NOT-NEGOTIATED"); ch.Findings != 0 ||
		ch.Reason != "1 not evaluated: no CM exchange in the capture" {
		t.Errorf("INV-NOT-NEGOTIATED without the CM exchange: %+v", ch)
	}
	// Rules that need no set-up still run.
	if ch := status(t, res, c.ID, "HDR-XID-MISMATCH"); ch.Status != StatusPassed {
		t.Errorf("HDR-XID-MISMATCH: %+v", ch)
	}

	// The capture starts mid-transaction: the READ Call (packet 44 of the
	// cut) is missing, its RDMA Write and Reply are there.
	res = runFile(t, writeCut(t, base, func(n int) bool { return n > 3 && n != 44 }, 0), Config{})
	c = res.Connections[0]
	for id, why := range map[string]string{
		"INV-FOREIGN-STAG": "capture started mid-transaction",
		// The responder acknowledged the Call's PSN, which the capture
		// lacks: the capture lost it (docs/loss.md).
		"RDMA-WRITE-UNADVERTISED": "the capture lost packets it needs",
	} {
		ch := status(t, res, c.ID, id)
		if ch.Findings != 0 || !strings.Contains(ch.Reason, why) {
			t.Errorf("%s without the Call: %+v", id, ch)
		}
	}

	// The snap length cut every frame to 80 bytes.
	res = runFile(t, writeCut(t, base, func(int) bool { return true }, 80), Config{})
	c = res.Connections[0]
	for _, id := range []string{"ICRC-BAD", "HDR-TRUNCATED"} {
		ch := status(t, res, c.ID, id)
		if ch.Findings != 0 || !strings.Contains(ch.Reason, "payload cut by snap length") {
			t.Errorf("%s on a cut capture: %+v", id, ch)
		}
	}
}
