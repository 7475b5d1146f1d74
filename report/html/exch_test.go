package html

import (
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// request is a ULP's request record in the synthetic tests: the Owner of
// the operations attached to it and the Detail of its exchange, as every
// ULP on the seam hands them out.
type request struct{ n int }

// feedExchanges hands the collector n exchanges on dc, each with ops RDMA
// Writes of 4096 bytes attached (request Send, operations, response Send
// With Invalidate, as the engine orders them: the session ends the
// exchange before its response's Send reaches the observers), and one
// Send no exchange claims every 10 exchanges.
func feedExchanges(c *Collector, dc *dissect.Connection, n, ops int) {
	obs := c.Observe(nil)
	t0 := time.Unix(1000, 0)
	pkt := 1
	c.Packet(&dissect.Packet{Number: pkt, Timestamp: t0, Conn: dc, Dir: dissect.DirClientToServer, Length: 100})
	rec := &request{}
	for i := 0; i < n; i++ {
		rec.n = i
		pkt++
		req := pkt
		obs.Message(&dissect.Message{Conn: dc, Dir: dissect.DirClientToServer, Packets: []int{req}, Length: 64, ULP: rec, Time: t0})
		for j := 0; j < ops; j++ {
			pkt++
			obs.RDMAOp(&dissect.RDMAOp{Kind: dissect.RDMAWrite, Conn: dc, Dir: dissect.DirServerToClient, STag: 0x100, Length: 4096,
				Packets: []int{pkt}, Complete: true, Start: t0, Attach: dissect.OpAttachment{Owner: rec}})
		}
		pkt++
		x := &dissect.Exchange{ULP: "test-ulp", Conn: dc, Key: uint64(i), Initiator: dissect.DirClientToServer, Name: "Read",
			Status: "Success", OK: true, RequestPacket: req, ResponsePacket: pkt, RequestTime: t0, ResponseTime: t0.Add(time.Millisecond),
			Latency: time.Millisecond, WriteBytes: uint64(ops) * 4096, Invalidated: true, InvalidatedSTag: 0x100,
			Outcome: dissect.Responded, Detail: rec}
		c.Exchange(x)
		obs.Message(&dissect.Message{Conn: dc, Dir: dissect.DirServerToClient, Packets: []int{pkt}, Length: 16, ULP: rec,
			Invalidate: true, InvalidatedSTag: 0x100, Time: t0})
		if i%10 == 0 {
			pkt++
			obs.Message(&dissect.Message{Conn: dc, Dir: dissect.DirServerToClient, Packets: []int{pkt}, Length: 20, ULP: rec, Time: t0})
		}
	}
}

func testConn() (*dissect.Connection, *report.Connection) {
	dc := &dissect.Connection{ID: 1}
	dc.Client.Address, dc.Server.Address = "192.0.2.2", "192.0.2.1"
	ulp := "test-ulp"
	return dc, &report.Connection{ID: 1, Client: report.Endpoint{Address: "192.0.2.2"}, Server: report.Endpoint{Address: "192.0.2.1"}, ULP: &ulp}
}

// TestExchangeLadderDraws: every exchange is a request, its RDMA operations
// drawn in the direction their data moved (a Write: responder to
// requester), and its response by Send With Invalidate; the Sends no
// exchange claimed are drawn as Sends, those of the exchanges are not
// drawn twice; the counts are the exchanges'.
func TestExchangeLadderDraws(t *testing.T) {
	c := NewCollector(Options{})
	dc, ac := testConn()
	feedExchanges(c, dc, 20, 2)
	cd := c.conns[1]
	l, err := ladder(ac, cd, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.ULP != "test-ulp" || l.Exchanges != 20 || l.Ops != 40 || l.WriteBytes != 20*2*4096 || l.ReadBytes != 0 || l.Unattached != 0 {
		t.Fatalf("ladder counts %q %d exchanges, %d ops, %d/%d bytes, %d unattached", l.ULP, l.Exchanges, l.Ops, l.ReadBytes, l.WriteBytes, l.Unattached)
	}
	kinds := map[string]int{}
	for _, b := range l.Blocks {
		for _, r := range b.Rows {
			kinds[r.Kind]++
			switch r.Kind {
			case "request":
				if !r.LeftToRight || r.Src != "192.0.2.2" || r.Exch == 0 {
					t.Errorf("request row %+v", r)
				}
			case "rdma-write":
				if r.LeftToRight || r.Bytes != 4096 || !strings.Contains(r.Label, "STag 0x00000100") {
					t.Errorf("RDMA Write row %+v", r)
				}
			case "response":
				if r.LeftToRight || !r.Inv || !strings.Contains(r.Sub, "Send With Invalidate of STag 0x00000100") || !strings.Contains(r.Label, "Success") {
					t.Errorf("response row %+v", r)
				}
			case "send":
				if r.Exch != 0 || !strings.HasPrefix(r.Label, "Send 20 B") {
					t.Errorf("send row %+v", r)
				}
			}
		}
	}
	if kinds["request"] != 20 || kinds["response"] != 20 || kinds["rdma-write"] != 40 || kinds["send"] != 2 || len(kinds) != 4 {
		t.Errorf("rows by kind: %v", kinds)
	}
	if !strings.HasPrefix(l.ClientLabel, "requester: ") || !strings.HasPrefix(l.ServerLabel, "responder: ") {
		t.Errorf("lanes %q, %q", l.ClientLabel, l.ServerLabel)
	}
	if s := cd.sends; s.nPending != 0 || len(s.pending) != 0 || len(s.claims) != 0 {
		t.Errorf("held after every exchange ended: %d pending operations, %d claims", s.nPending, len(s.claims))
	}
}

// TestExchangeLadderBounded: on a connection of 20000 exchanges of 100
// RDMA operations each the ladder keeps MaxDetail exchanges of at most
// maxOpsPerExchange operations and one Send per claimed-Send slot, counts
// everything, lists the rest by signature, and its HTML stays the size of
// MaxDetail exchanges.
func TestExchangeLadderBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("2 million operations")
	}
	const limit = 50
	c := NewCollector(Options{MaxDetail: limit})
	dc, ac := testConn()
	feedExchanges(c, dc, 20000, 100)
	cd := c.conns[1]
	e := cd.exch
	if len(e.recs) != limit || e.cut != 20000-limit || e.total != 20000 || e.ops != 20000*100 {
		t.Fatalf("%d drawn, %d cut, %d total, %d ops", len(e.recs), e.cut, e.total, e.ops)
	}
	for i := range e.recs {
		if r := &e.recs[i]; len(r.ops) != maxOpsPerExchange || r.opsCut != 100-maxOpsPerExchange || r.opsCutBytes != uint64(100-maxOpsPerExchange)*4096 {
			t.Fatalf("exchange %d: %d operations drawn, %d cut (%d B)", i, len(r.ops), r.opsCut, r.opsCutBytes)
		}
	}
	if s := cd.sends; len(s.sends) > limit || len(s.loose) > limit || s.nPending != 0 || len(s.claims) != 0 {
		t.Errorf("held: %d Sends, %d loose operations, %d pending, %d claims", len(s.sends), len(s.loose), s.nPending, len(s.claims))
	}
	l, err := ladder(ac, cd, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.OmittedTotal < e.cut || len(l.Omitted) == 0 || l.Omitted[0].K != "19950" || l.Omitted[0].V != "Read, Send With Invalidate" {
		t.Errorf("omitted %d: %v", l.OmittedTotal, l.Omitted)
	}
	var html int
	for _, b := range l.Blocks {
		html += len(ladderBlock(l, b))
	}
	// A drawn exchange is 66 rows of some 600 bytes.
	if html > limit*70*700 {
		t.Errorf("%d bytes of ladder for %d exchanges drawn", html, limit)
	}
	notes := ladderNotes(ac, cd, limit)
	if len(notes) != 1 || !strings.Contains(notes[0], "19950 exchanges after the first 50 are not drawn") {
		t.Errorf("notes %q", notes)
	}
}

// fakeNext is an observer after the collector's.
type fakeNext struct{ msgs, ops, done, forgotten int }

func (f *fakeNext) Message(*dissect.Message)                { f.msgs++ }
func (f *fakeNext) RDMAOp(*dissect.RDMAOp)                  { f.ops++ }
func (f *fakeNext) ConnectionDone(*dissect.Connection)      { f.done++ }
func (f *fakeNext) ConnectionForgotten(*dissect.Connection) { f.forgotten++ }

// TestObserveForwards: the collector's observer hands everything on to
// the next one (report's spill of released connections depends on
// ConnectionDone and ConnectionForgotten), and a release lets go of what
// the connection held for requests that will not end.
func TestObserveForwards(t *testing.T) {
	c := NewCollector(Options{})
	next := &fakeNext{}
	obs := c.Observe(next)
	dc, _ := testConn()
	rec := &request{}
	obs.Message(&dissect.Message{Conn: dc, Packets: []int{1}, ULP: rec})
	obs.RDMAOp(&dissect.RDMAOp{Kind: dissect.RDMARead, Conn: dc, Packets: []int{2}, Attach: dissect.OpAttachment{Owner: rec}})
	if s := c.conns[1].sends; s.nPending != 1 || len(s.sends) != 1 {
		t.Fatalf("%d pending operations, %d Sends", s.nPending, len(s.sends))
	}
	obs.(dissect.ConnObserver).ConnectionDone(dc)
	obs.(dissect.ConnForgetter).ConnectionForgotten(dc)
	if *next != (fakeNext{1, 1, 1, 1}) {
		t.Errorf("forwarded %+v", *next)
	}
	if s := c.conns[1].sends; s.nPending != 0 || s.pending != nil {
		t.Errorf("after the release: %d pending operations", s.nPending)
	}
	// An observer with nothing after it.
	c.Observe(nil).(dissect.ConnForgetter).ConnectionForgotten(dc)
}
