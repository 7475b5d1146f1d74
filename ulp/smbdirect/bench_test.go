package smbdirect_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

// BenchmarkEngineSMBDirect: the engine with the SMB Direct plug-in over
// the real RoCE capture: ns and allocations per packet.
func BenchmarkEngineSMBDirect(b *testing.B) {
	ulptest.Bench(b, "ulp/rxe-smbdirect.pcap", 135, func() []dissect.ULP { return []dissect.ULP{smbdirect.New()} })
}

// TestSessionAllocatesNothingInSteadyState: once its records and request
// pool have grown, a session handles a READ with RDMA and its response,
// a compound request in fragments and its responses, without allocating.
func TestSessionAllocatesNothingInSteadyState(t *testing.T) {
	r := newRig(t)
	r.start()
	rd := data(1, 0, 0, smb2(read, 2, false, 0, readWrite(read, rdmaV1Inv, 0x20000, 0x484, 4096)))
	rs := data(0, 0, 0, smb2(read, 2, true, 0, make([]byte, 16)))
	msg := smb2(5, 3, false, 0, make([]byte, 200))
	f1, f2 := data(1, 0, uint32(len(msg)-100), msg[:100]), data(1, 0, 0, msg[100:])
	cr := data(0, 0, 0, smb2(5, 3, true, 0, make([]byte, 16)))
	m := &dissect.Message{Conn: r.c, Packets: []int{1}}
	op := &dissect.RDMAOp{Kind: dissect.RDMAWrite, Conn: r.c, Dir: s2c, STag: 0x484, Offset: 0x20000, Length: 4096, Packets: []int{1}, Complete: true}
	p := &dissect.Packet{}
	pkt := 100
	sendTo := func(dir dissect.Direction, b []byte, inv bool) {
		pkt++
		p.Number, p.ULP = pkt, p.ULP[:0]
		m.Dir, m.Data, m.Length, m.Invalidate, m.InvalidatedSTag, m.ULP = dir, b, len(b), inv, 0x484, nil
		r.s.Message(p, m)
	}
	round := func() {
		sendTo(c2s, rd, false)
		r.s.RDMAOp(p, op)
		sendTo(s2c, rs, true)
		sendTo(c2s, f1, false)
		sendTo(c2s, f2, false)
		sendTo(s2c, cr, false)
	}
	for range 3 {
		round()
	}
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations per round", n)
	}
	// 3 + 101 rounds (AllocsPerRun warms up once), each pairing two
	// requests and attaching one 4 KiB RDMA Write.
	if q := r.c.ULPData.(*smbdirect.Conn); q.Requests != 208 || q.Responses != 208 || q.WriteBytes != 104*4096 ||
		q.Client.Fragmented != 104 || q.RemoteInvalidations != 104 {
		t.Errorf("%+v", q)
	}
}
