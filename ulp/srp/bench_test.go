package srp_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// BenchmarkEngineSRP: the engine with the SRP plug-in over the real RoCE
// capture: time and allocations per pass (compare with BenchmarkEngineISER,
// ulp/iser).
func BenchmarkEngineSRP(b *testing.B) {
	ulptest.Bench(b, "ulp/rxe-srp.pcap", 51, func() []dissect.ULP { return []dissect.ULP{srpulp.New()} })
}

// TestSessionAllocatesNothingInSteadyState: once warm, a command (the
// capture's first SRP_CMD, an INQUIRY into a direct data-in descriptor),
// the target's RDMA Write into it and the SRP_RSP go through the session,
// exchange and all, without an allocation.
func TestSessionAllocatesNothingInSteadyState(t *testing.T) {
	var cmd, rsp []byte
	for _, r := range tsv(t, "rxe-srp.sends.tsv") {
		switch r["frame.number"] {
		case "20":
			cmd = unhex(t, r["data.data"])
		case "23":
			rsp = unhex(t, r["data.data"])
		}
	}
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, State: dissect.StateEstablished}
	exchanges := 0
	s := srpulp.New().Start(c, &dissect.Env{Exchange: func(*dissect.Exchange) { exchanges++ }})
	pk := []int{1}
	mc := &dissect.Message{Conn: c, Dir: dissect.DirClientToServer, Packets: pk, Data: cmd, Length: len(cmd)}
	mr := &dissect.Message{Conn: c, Dir: dissect.DirServerToClient, Packets: pk, Data: rsp, Length: len(rsp)}
	op := &dissect.RDMAOp{Kind: dissect.RDMAWrite, Conn: c, Dir: dissect.DirServerToClient, STag: 0x357, Offset: 0xff1dd256c2d0a600,
		Length: 36, Packets: pk, Complete: true}
	p := &dissect.Packet{}
	task := func() {
		p.Number++
		p.ULP = p.ULP[:0]
		s.Message(p, mc)
		op.Attach = dissect.OpAttachment{}
		s.RDMAOp(p, op)
		p.Number++
		p.ULP = p.ULP[:0]
		s.Message(p, mr)
	}
	for i := 0; i < 10; i++ {
		task()
	}
	if n := testing.AllocsPerRun(200, task); n != 0 {
		t.Errorf("%v allocations per command", n)
	}
	if op.Attach.Owner == nil || exchanges < 200 {
		t.Errorf("attach %+v, %d exchanges", op.Attach, exchanges)
	}
}
