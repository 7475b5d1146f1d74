package dissect

import "testing"

type req struct{ id int }

func TestMemoryFindsTheLatestRegionOfTheOtherDirection(t *testing.T) {
	var m Memory[*req]
	a, b, back := &req{1}, &req{2}, &req{3}
	// Two requests from the client advertise STag 7; the later one wins
	// where both hold the range (RFC 8166 section 3.4.3 names no order, the
	// latest is the one the responder serves).
	m.Advertise(a, DirClientToServer, 0, 0, Region{STag: 7, Offset: 0x1000, Length: 0x1000, Read: true})
	m.Advertise(b, DirClientToServer, 1, 2, Region{STag: 7, Offset: 0x1000, Length: 0x800, Read: true})
	// A backchannel request's region with the same STag: never for an
	// operation requested by the server.
	m.Advertise(back, DirServerToClient, 0, 0, Region{STag: 7, Offset: 0x1000, Length: 0x1000, Read: true})

	read := func(dir Direction, off uint64, n uint32) *RDMAOp {
		return &RDMAOp{Kind: RDMARead, Dir: dir, STag: 7, Offset: off, Length: n}
	}
	// The server reads for the client's requests.
	if r, ok := m.Find(read(DirServerToClient, 0x1000, 0x800)); !ok || r.Owner != b || r.I != 1 || r.J != 2 {
		t.Errorf("within both: %+v %v, want the later request", r, ok)
	}
	if r, ok := m.Find(read(DirServerToClient, 0x1800, 0x800)); !ok || r.Owner != a {
		t.Errorf("past the later one's end: %+v %v, want the earlier", r, ok)
	}
	if _, ok := m.Find(read(DirServerToClient, 0x1800, 0x801)); ok {
		t.Error("a range past every region was found")
	}
	if r, ok := m.Find(read(DirClientToServer, 0x1000, 0x10)); !ok || r.Owner != back {
		t.Errorf("client's read: %+v %v, want the backchannel request", r, ok)
	}
	// A Write never fills a Read region.
	if _, ok := m.Find(&RDMAOp{Kind: RDMAWrite, Dir: DirServerToClient, STag: 7, Offset: 0x1000, Length: 1}); ok {
		t.Error("a Write found a Read region")
	}
	if o, ok := m.Owner(7, DirClientToServer, b); !ok || o != a {
		t.Errorf("owner other than b: %v %v", o, ok)
	}
	m.Withdraw(b, 7)
	if r, ok := m.Find(read(DirServerToClient, 0x1000, 0x800)); !ok || r.Owner != a {
		t.Errorf("after b withdrew: %+v %v", r, ok)
	}
	m.Withdraw(a, 7)
	m.Withdraw(back, 7)
	if m.Regions() != 0 || len(m.byTag) != 0 {
		t.Errorf("%d regions left", m.Regions())
	}
}

func TestMemoryRetiredAndUnknown(t *testing.T) {
	var m Memory[*req]
	r := m.Retire(DirClientToServer, 0xabc, 42)
	for i := 0; i < retiredMaxRegions+2; i++ {
		if !r.Add(Region{STag: uint32(i), Offset: 0, Length: 100}) && i < retiredMaxRegions {
			t.Fatalf("region %d refused", i)
		}
	}
	op := &RDMAOp{Kind: RDMAWrite, Dir: DirServerToClient, STag: 1, Offset: 10, Length: 90}
	if k, pk, ok := m.Retired(op); !ok || k != 0xabc || pk != 42 {
		t.Errorf("retired: %x %d %v", k, pk, ok)
	}
	op.Length = 91
	if _, _, ok := m.Retired(op); ok {
		t.Error("a range past the region was found retired")
	}
	op.Length, op.STag = 1, retiredMaxRegions // not kept
	if _, _, ok := m.Retired(op); ok {
		t.Error("a region past the kept ones was found")
	}
	op.STag, op.Dir = 1, DirClientToServer
	if _, _, ok := m.Retired(op); ok {
		t.Error("a retired client request served a client operation")
	}
	// The ring keeps the last RetiredRequests.
	for i := 0; i < RetiredRequests; i++ {
		m.Retire(DirClientToServer, uint64(i), 0)
	}
	op.Dir = DirServerToClient
	if _, _, ok := m.Retired(op); ok {
		t.Error("a request older than the ring was found")
	}
	if m.HasUnknown(DirClientToServer) {
		t.Error("unknown before any")
	}
	m.Unknown(DirClientToServer, 5)
	if !m.HasUnknown(DirClientToServer) || m.HasUnknown(DirServerToClient) {
		t.Error("unknown by direction")
	}
	if m.Known(DirServerToClient, 5) || !m.Known(DirClientToServer, 5) || m.HasUnknown(DirClientToServer) {
		t.Error("known")
	}
}

func TestMemoryAllocatesNothingInSteadyState(t *testing.T) {
	var m Memory[*req]
	a := &req{1}
	op := &RDMAOp{Kind: RDMARead, Dir: DirServerToClient, STag: 9, Offset: 0, Length: 1}
	round := func() {
		m.Advertise(a, DirClientToServer, 0, 0, Region{STag: 9, Length: 10, Read: true})
		if _, ok := m.Find(op); !ok {
			t.Fatal("not found")
		}
		m.Withdraw(a, 9)
		m.Retire(DirClientToServer, 1, 2).Add(Region{STag: 9, Length: 10})
	}
	round()
	if n := testing.AllocsPerRun(100, round); n != 0 {
		t.Errorf("%v allocations a round", n)
	}
}
