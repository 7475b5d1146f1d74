package dissect

import (
	"testing"
	"time"
)

type exReq struct {
	OpsMoved
	id int
}

// TestExchangeTable: the open requests come back oldest first, a pool
// hands a record back only after Recycle, the statistics sum what they
// are told, and Attach accounts an RDMA operation's bytes to its request
// and connection — or says why none — without allocating once warm.
func TestExchangeTable(t *testing.T) {
	var out Outstanding[uint16, exReq]
	a, b, c := &exReq{id: 1}, &exReq{id: 2}, &exReq{id: 3}
	out.Put(7, b)
	out.Put(3, a)
	out.Put(9, c)
	out.Delete(3)
	if out.Len() != 2 || out.Get(9) != c || out.Get(3) != nil || out.Oldest() != b {
		t.Errorf("len %d, oldest %+v", out.Len(), out.Oldest())
	}
	if o := out.InOrder(); len(o) != 2 || o[0].Req != b || o[1].Req != c {
		t.Errorf("in order: %v", o)
	}

	var p Pool[exReq]
	x := p.Get()
	x.id = 5
	p.Done(x)
	if y := p.Get(); y == x {
		t.Error("a record given back was reused before Recycle")
	}
	p.Recycle()
	if y := p.Get(); y != x || y.id != 0 {
		t.Errorf("after Recycle: %p %+v, want %p zeroed", y, y, x)
	}

	var table map[string]*ExchangeStats
	st := StatsFor(&table, "Read")
	st.Ended(4096)
	st.Answered(3*time.Millisecond, true)
	StatsFor(&table, "Read").Ended(0)
	st.Answered(time.Millisecond, false)
	if *st != (ExchangeStats{Count: 2, Errors: 1, Bytes: 4096, Completed: 2, LatencyTotal: 4 * time.Millisecond,
		LatencyMaxNS: 3e6, LatencyAvgNS: 2e6}) || len(table) != 1 {
		t.Errorf("%+v", *st)
	}

	var m Memory[*exReq]
	var conn Moved
	var unattached uint64
	m.Advertise(a, DirClientToServer, 0, 1, Region{STag: 0x11, Offset: 0x1000, Length: 4096})
	w := &RDMAOp{Kind: RDMAWrite, Dir: DirServerToClient, STag: 0x11, Offset: 0x1000, Length: 4096, Complete: true}
	miss := &RDMAOp{Kind: RDMARead, Dir: DirServerToClient, STag: 0x11, Offset: 0x1000, Length: 4096, Complete: true}
	if _, ok := Attach(&m, w, &conn, &unattached); !ok || w.Attach.Owner != a || w.Attach.J != 1 {
		t.Errorf("attach %+v", w.Attach)
	}
	if _, ok := Attach(&m, miss, &conn, &unattached); ok || miss.Attach.Reason != UnattachedNoRegion || unattached != 1 {
		t.Errorf("an RDMA Read of a Write region: %+v", miss.Attach)
	}
	if a.Ops != 1 || a.WriteBytes != 4096 || a.ReadBytes != 0 || conn.WriteBytes != 4096 {
		t.Errorf("request %+v, connection %+v", a.OpsMoved, conn)
	}
	if n := testing.AllocsPerRun(100, func() { Attach(&m, w, &conn, &unattached) }); n != 0 {
		t.Errorf("%v allocations per attach", n)
	}
}
