package iser_test

import (
	"encoding/binary"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/iser"
)

// BenchmarkEngineISER: the engine with the iSER plug-in over the real
// RoCE capture: time and allocations per pass (compare with
// BenchmarkEngineNVMe, ulp/nvmeof).
func BenchmarkEngineISER(b *testing.B) {
	ulptest.Bench(b, "ulp/rxe-iser.pcap", 151, func() []dissect.ULP { return []dissect.ULP{iser.New()} })
}

// TestSessionAllocatesNothingInSteadyState: once warm, a task's command,
// its RDMA Write and its response by Send With Invalidate go through the
// session, exchange and all, without an allocation (the per-packet hot
// path of the project's rules).
func TestSessionAllocatesNothingInSteadyState(t *testing.T) {
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServicePort: iser.Port, State: dissect.StateEstablished}
	u := iser.New()
	exchanges := 0
	s := u.Start(c, &dissect.Env{Exchange: func(*dissect.Exchange) { exchanges++ }})
	cmd := pdu(ctrl|rsv, 0, 0, 0x16cd, 0x1000, opCmd, 0xc1, 7, nil)
	binary.BigEndian.PutUint32(cmd[28+20:], 4096)
	cmd[28+32] = 0x28
	resp := pdu(ctrl, 0, 0, 0, 0, opResp, 0x80, 7, nil)
	pk := []int{1}
	mc := &dissect.Message{Conn: c, Dir: dissect.DirClientToServer, Packets: pk, Data: cmd, Length: len(cmd)}
	mr := &dissect.Message{Conn: c, Dir: dissect.DirServerToClient, Packets: pk, Data: resp, Length: len(resp), Invalidate: true, InvalidatedSTag: 0x16cd}
	op := &dissect.RDMAOp{Kind: dissect.RDMAWrite, Conn: c, Dir: dissect.DirServerToClient, STag: 0x16cd, Offset: 0x1000, Length: 4096, Packets: pk, Complete: true}
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
		t.Errorf("%v allocations per task", n)
	}
	if op.Attach.Owner == nil || exchanges < 200 {
		t.Errorf("attach %+v, %d exchanges", op.Attach, exchanges)
	}
}
