package srp_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// BenchmarkEngineSRP: the engine with the SRP plug-in over the real RoCE
// capture: time and allocations per pass.
func BenchmarkEngineSRP(b *testing.B) {
	data, err := os.ReadFile("../../testdata/pcaps/ulp/rxe-srp.pcap")
	if err != nil {
		b.Fatal(err)
	}
	var packets uint64
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := source.NewReader(bytes.NewReader(data), "rxe-srp.pcap")
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{srpulp.New()},
			Exchange: func(*dissect.Exchange) { n++ }})
		if err := e.Run(r, nil); err != nil {
			b.Fatal(err)
		}
		if n != 51 {
			b.Fatalf("%d exchanges", n)
		}
		packets = e.Stats.Packets
	}
	b.ReportMetric(float64(packets), "packets/op")
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
