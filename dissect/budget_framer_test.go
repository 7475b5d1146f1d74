package dissect

import (
	"bytes"
	"testing"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// TestBufferBudgetFramers (issue 13 point 1): iWARP connections each
// holding part of a large FPDU — the MPA exchange, then the first 3000
// octets of a 40,000-octet Send FPDU — count their framers' buffers in the
// budget: the engine's total equals what the framers hold at every packet
// and stays within a budget that cannot hold them all, the largest partial
// FPDUs being dropped (BudgetCuts, LostSync). Then every connection sends
// a whole FPDU that starts a segment: the ones cut pick up again there
// (Resyncs), the others complete their big FPDU first and frame the small
// one after it.
func TestBufferBudgetFramers(t *testing.T) {
	const conns, part, budget = 40, 3000, 64 << 10
	big := fpdus(false, false, 0, 0, untaggedULPDU(iwarp.OpSend, true, 0, 0, 1, 0, bytes.Repeat([]byte{7}, 40000)))
	var frames []iwFrame
	cs := make([]*iwConn, conns)
	for i := range cs {
		c := newIWConn(t, uint16(40000+i), 20049)
		c.send(0, mpaFrame(true, false, false, false, 1, nil))
		c.send(1, mpaFrame(false, false, false, false, 1, nil))
		c.sendSplit(0, big[:part], 1500)
		cs[i] = c
	}
	for _, c := range cs {
		frames = append(frames, c.out...)
		c.out = nil
	}
	for _, c := range cs {
		// The rest of the big FPDU, then a small one in its own segment.
		c.sendSplit(0, big[part:], 1500)
		c.send(0, fpdus(false, false, 0, 0, untaggedULPDU(iwarp.OpSend, true, 0, 0, 2, 0, []byte("small"))))
		frames = append(frames, c.out...)
	}
	for i := range frames {
		frames[i].num = i + 1
	}
	e := newEngine(Options{MaxBufferedBytes: budget})
	most := 0
	// Control: under the default budget nothing is cut and every
	// connection frames both FPDUs.
	ctl := iwRun(frames, Options{}, nil)
	if ctl.Reassembly.BudgetCuts != 0 {
		t.Fatalf("default budget: %d cuts", ctl.Reassembly.BudgetCuts)
	}
	for _, c := range ctl.Conns.Connections() {
		if d := c.IWARP.Dir[0]; d.FPDUs != 2 || d.LostSync != 0 {
			t.Fatalf("default budget: connection %d framed %d FPDUs, lost sync %d times", c.ID, d.FPDUs, d.LostSync)
		}
	}
	relRun(e, frames, func(p *Packet) {
		held := e.Retained().BufferedBytes
		if got := heldNow(e); got != held {
			t.Fatalf("packet %d: buffers hold %d bytes, the engine counts %d", p.Number, got, held)
		}
		if held > budget {
			t.Fatalf("packet %d: %d bytes buffered, budget %d", p.Number, held, budget)
		}
		most = max(most, held)
	})
	if e.Reassembly.BudgetCuts == 0 || most < budget/2 {
		t.Fatalf("%d cuts, at most %d held: the test does not press the budget", e.Reassembly.BudgetCuts, most)
	}
	var lost, resyncs, fpduCount uint64
	for _, c := range e.Conns.Connections() {
		d := c.IWARP.Dir[0]
		lost += d.LostSync
		resyncs += d.Resyncs
		fpduCount += d.FPDUs
	}
	// Each cut is a partial FPDU given up: its direction lost sync, and
	// picked up again at the small FPDU; the others framed both FPDUs.
	cuts := e.Reassembly.BudgetCuts
	if lost != cuts || resyncs < cuts || fpduCount != cuts+2*(conns-cuts) {
		t.Errorf("%d cuts: lost sync %d, resyncs %d, FPDUs %d (want %d)", cuts, lost, resyncs, fpduCount, cuts+2*(conns-cuts))
	}
	t.Logf("%d connections, %d cut, at most %d bytes held", conns, cuts, most)
}
