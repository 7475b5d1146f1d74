package dissect

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Tests of release.go: what the engine lets go of when a connection ends,
// and what it keeps.

// relObserver records the connections the engine is done with and forgets.
type relObserver struct {
	done, forgotten []*Connection
}

func (o *relObserver) Message(*Message)                  {}
func (o *relObserver) RDMAOp(*RDMAOp)                    {}
func (o *relObserver) ConnectionDone(c *Connection)      { o.done = append(o.done, c) }
func (o *relObserver) ConnectionForgotten(c *Connection) { o.forgotten = append(o.forgotten, c) }

// relRun processes frames through e, calling each after every packet.
func relRun(e *Engine, frames []iwFrame, each func(p *Packet)) {
	var p Packet
	for _, f := range frames {
		p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
		p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
		e.Process(&p, f.data)
		if each != nil {
			each(&p)
		}
	}
	e.Finish()
}

// synthFrames turns a synth sequence into frames numbered from 1.
func synthFrames(t *testing.T, s *synth.Sequence) []iwFrame {
	t.Helper()
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	out := make([]iwFrame, len(s.Frames))
	for i, f := range s.Frames {
		out[i] = iwFrame{num: i + 1, link: f.LinkType, data: f.Data,
			ci: gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: f.Length}}
	}
	return out
}

// holds reports where the engine still keeps state of c.
func holds(e *Engine, c *Connection) (where []string) {
	for _, ref := range e.Conns.byQP {
		if ref.conn == c {
			where = append(where, "QP table")
			break
		}
	}
	for _, pc := range e.Conns.pending {
		if pc == c {
			where = append(where, "pending table")
		}
	}
	if _, ok := e.rxs.conns[c]; ok {
		where = append(where, "RoCE reassembly")
	}
	if c.ulp.session != nil {
		where = append(where, "ULP session")
	}
	if e.iw != nil {
		for _, s := range e.iw.order {
			if s.conn == c {
				where = append(where, "iWARP streams")
			}
		}
	}
	return where
}

func commHeld(e *Engine, c *Connection) bool {
	for _, x := range e.Conns.byComm {
		if x == c {
			return true
		}
	}
	return false
}

// TestReleaseRoCEAfterDREP: in rxe-nfs3.pcap the first mount's connection
// ends with DREQ (3012) and DREP (3013). Once the DREP is processed the
// engine holds no QP entry, reassembly or RPC state for it — its Calls were
// all answered, none is left open — while its Comm IDs still lead to it
// (the grace window); the second connection, opened at 3036 with the same
// server QPN 0x11 (tshark: infiniband.bth.destqp of 3036's data), is a new
// connection. At the end both are released and nothing is left.
func TestReleaseRoCEAfterDREP(t *testing.T) {
	frames := iwReadFrames(t, "rxe-nfs3.pcap")
	var first, second *Connection
	e := newEngine(Options{})
	relRun(e, frames, func(p *Packet) {
		switch p.Number {
		case 38: // the RTU
			first = p.Conn
		case 3013:
			if p.Conn != first || first == nil {
				t.Fatalf("DREP on another connection than the RTU at 38")
			}
			if first.State != StateClosed {
				t.Errorf("state %v after DREP", first.State)
			}
			if w := holds(e, first); len(w) > 0 {
				t.Errorf("after the DREP the engine still holds %v of the first connection", w)
			}
			if !commHeld(e, first) || first.Released() {
				t.Errorf("the first connection left the grace window at once")
			}
		case 4000:
			second = p.Conn
		}
	})
	if second == nil || second == first || second.ID != 2 {
		t.Fatalf("packet 4000 not on a second connection")
	}
	if first.ULP != "test" {
		t.Errorf("first connection's ULP %q", first.ULP)
	}
	for _, c := range []*Connection{first, second} {
		if w := holds(e, c); len(w) > 0 {
			t.Errorf("connection %d: the engine still holds %v", c.ID, w)
		}
	}
	if r := e.Retained(); r.QPEntries != 0 || r.RoCEConns != 0 || r.ULPConns != 0 || r.OpenExchanges != 0 || r.Connections != 2 {
		t.Errorf("retained at the end: %+v", r)
	}
}

// TestReleaseCrossingDisconnect: in rxe-ib_send_bw.pcap both sides of the
// first connection (Comm IDs 0x7388f2c9 / 0x2c47b6a7, checked with tshark)
// send a DREQ (103 from the server, 104 from the client) and both answer
// with a DREP (105, 106). The first DREP releases the connection; the
// second still counts on it (the grace window), and starts nothing.
func TestReleaseCrossingDisconnect(t *testing.T) {
	e := newEngine(Options{})
	var conn *Connection
	relRun(e, iwReadFrames(t, "rxe-ib_send_bw.pcap"), func(p *Packet) {
		switch p.Number {
		case 103:
			conn = p.Conn
		case 104, 105, 106:
			if p.Conn == nil || p.Conn != conn {
				t.Errorf("packet %d on %v, want the connection of 103", p.Number, p.Conn)
			}
			if p.Number == 106 {
				if w := holds(e, conn); len(w) > 0 {
					t.Errorf("the engine still holds %v", w)
				}
				if _, ok := e.rxs.conns[conn]; ok {
					t.Errorf("the trailing DREP made new reassembly state")
				}
			}
		}
	})
	if conn == nil || conn.LastPacket != 106 || conn.State != StateClosed {
		t.Fatalf("connection %+v", conn)
	}
}

// qpnReuseConn is a connection of the synthetic tests; n varies its Comm
// IDs.
func qpnReuseConn(n uint32) synth.Conn {
	return synth.Conn{Client: synth.Client(), Server: synth.Server(), ClientCommID: 0x1000AAAA + n, ServerCommID: 0x2000BBBB + n,
		ClientQPN: 0x000101, ServerQPN: 0x000202, ClientPSN: 0x111111, ServerPSN: 0x222222, ServiceID: synth.NFSService}
}

// TestReleaseQPNReuse: after DREQ/DREP the QPNs lead nowhere: a Send to the
// server's QPN without a CM exchange is a new (no-setup) connection, and a
// new CM exchange with the same QPNs — and even the same client Comm ID —
// is another new connection, which the Sends after it reach.
func TestReleaseQPNReuse(t *testing.T) {
	a, b := qpnReuseConn(0), qpnReuseConn(0)
	b.ServerCommID++ // the server picks a new Comm ID; the client reuses its own
	cl, sv := a.Client, a.Server
	s := &synth.Sequence{}
	s.CM(cl, sv, 1, a.REQ())
	s.CM(sv, cl, 1, a.REP())
	s.CM(cl, sv, 2, a.RTU())
	s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, a.ServerQPN, a.ServerPSN), []byte("first"))
	s.CM(cl, sv, 3, a.DREQ(false))
	s.CM(sv, cl, 3, a.DREP(false))
	s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, a.ServerQPN, a.ServerPSN+1), []byte("stray")) // 7
	s.CM(cl, sv, 4, b.REQ())
	s.CM(sv, cl, 4, b.REP())
	s.CM(cl, sv, 5, b.RTU())
	s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, b.ServerQPN, b.ServerPSN), []byte("second")) // 11
	s.Packet(sv, cl, synth.Send(roce.OpRCSendOnly, b.ClientQPN, b.ClientPSN), []byte("answer")) // 12
	o := &relObserver{}
	e := newEngine(Options{Observer: o})
	ids := map[int]int{}
	relRun(e, synthFrames(t, s), func(p *Packet) {
		if p.Conn != nil {
			ids[p.Number] = p.Conn.ID
		}
	})
	cs := e.Conns.Connections()
	if len(cs) != 3 {
		t.Fatalf("%d connections, want 3", len(cs))
	}
	if ids[4] != 1 || ids[6] != 1 || ids[7] != 2 || ids[8] != 3 || ids[11] != 3 || ids[12] != 3 {
		t.Errorf("packets on connections %v; want 1-6 on 1, 7 on 2, 8-12 on 3", ids)
	}
	if cs[0].State != StateClosed || cs[1].State != StateNoSetup || cs[2].State != StateEstablished {
		t.Errorf("states %v %v %v", cs[0].State, cs[1].State, cs[2].State)
	}
	if len(o.done) != 0 {
		t.Errorf("connections done %v: the first is still in the grace window", o.done)
	}
}

// cmCycle appends a whole connection: REQ/REP/RTU, one Send, DREQ/DREP.
func cmCycle(s *synth.Sequence, c synth.Conn, tid uint64) {
	s.CM(c.Client, c.Server, tid, c.REQ())
	s.CM(c.Server, c.Client, tid, c.REP())
	s.CM(c.Client, c.Server, tid+1, c.RTU())
	s.Packet(c.Client, c.Server, synth.Send(roce.OpRCSendOnly, c.ServerQPN, c.ServerPSN), []byte("hello"))
	s.CM(c.Client, c.Server, tid+2, c.DREQ(false))
	s.CM(c.Server, c.Client, tid+2, c.DREP(false))
}

// TestReleaseGraceWindow: closed connections stay reachable by their Comm
// IDs for graceConns closes; then the ConnObserver hears ConnectionDone,
// their keys are gone, and a late DREP of theirs reaches nothing — while
// one of a connection still in the window counts on it.
func TestReleaseGraceWindow(t *testing.T) {
	s := &synth.Sequence{}
	n := graceConns + 2
	for i := 0; i < n; i++ {
		cmCycle(s, qpnReuseConn(uint32(i)), uint64(10*i))
	}
	late := func(i int) {
		c := qpnReuseConn(uint32(i))
		s.CM(c.Server, c.Client, uint64(10*i+2), c.DREP(false))
	}
	late(0)     // retired: reaches nothing
	late(n - 1) // in the window
	o := &relObserver{}
	e := newEngine(Options{Observer: o})
	frames := synthFrames(t, s)
	var lastConn [2]*Connection
	relRun(e, frames, func(p *Packet) {
		if p.Number > len(frames)-2 {
			lastConn[p.Number-(len(frames)-1)] = p.Conn
		}
	})
	cs := e.Conns.Connections()
	if len(cs) != n {
		t.Fatalf("%d connections, want %d", len(cs), n)
	}
	if len(o.done) != 2 || o.done[0] != cs[0] || o.done[1] != cs[1] || !cs[0].Released() || cs[2].Released() {
		t.Errorf("done %v", o.done)
	}
	for _, c := range cs[:2] {
		if commHeld(e, c) {
			t.Errorf("connection %d: Comm IDs still held after its grace", c.ID)
		}
	}
	if lastConn[0] != nil || lastConn[1] != cs[n-1] {
		t.Errorf("late DREPs on %v and %v, want none and connection %d", lastConn[0], lastConn[1], n)
	}
	if cs[n-1].LastPacket != len(frames) {
		t.Errorf("last connection's last packet %d", cs[n-1].LastPacket)
	}
	if r := e.Retained(); r.QPEntries != 0 || r.CommEntries != 2*graceConns || r.Summaries != 2 || r.RoCEConns != 0 {
		t.Errorf("retained %+v", r)
	}
}

// TestReleaseForgetsSummaries: with room for 4 connections, 10 connections
// one after the other are all tracked: the oldest released summaries are
// forgotten to make room (each Done before it is Forgotten), none is
// dropped. With room for 2, a third connection open at the same time as
// two live ones is dropped.
func TestReleaseForgetsSummaries(t *testing.T) {
	s := &synth.Sequence{}
	for i := 0; i < 10; i++ {
		cmCycle(s, qpnReuseConn(uint32(i)), uint64(10*i))
	}
	o := &relObserver{}
	e := newEngine(Options{Observer: o, MaxConnections: 4})
	relRun(e, synthFrames(t, s), nil)
	cs := e.Conns.Connections()
	if len(cs) != 4 || e.Conns.Forgotten != 6 || e.Conns.Dropped != 0 || len(o.forgotten) != 6 {
		t.Fatalf("%d connections, forgotten %d, dropped %d", len(cs), e.Conns.Forgotten, e.Conns.Dropped)
	}
	for i, c := range o.forgotten {
		if c.ID != i+1 || !c.Released() || o.done[i] != c {
			t.Errorf("forgotten #%d: connection %d (released %v)", i, c.ID, c.Released())
		}
	}
	if cs[0].ID != 7 || cs[3].ID != 10 {
		t.Errorf("kept connections %d..%d, want 7..10", cs[0].ID, cs[3].ID)
	}

	s = &synth.Sequence{}
	for i := 0; i < 3; i++ {
		c := qpnReuseConn(uint32(i))
		c.ClientQPN, c.ServerQPN = c.ClientQPN+uint32(i), c.ServerQPN+uint32(i)
		s.CM(c.Client, c.Server, uint64(i), c.REQ())
	}
	e = newEngine(Options{MaxConnections: 2})
	relRun(e, synthFrames(t, s), nil)
	if len(e.Conns.Connections()) != 2 || e.Conns.Dropped != 1 || e.Conns.Forgotten != 0 {
		t.Errorf("live: %d connections, dropped %d, forgotten %d", len(e.Conns.Connections()), e.Conns.Dropped, e.Conns.Forgotten)
	}
}

// TestReleaseIWARPClose: in siw-nfs3.pcap the first NFS/RDMA connection
// (42249 -> 20049) ends with a FIN each way (1993, 1994; tshark
// tcp.flags.fin) and the client's last ACK (1995). After 1994 the stream is
// released — TCP reassembly let go of it, its RPC state is gone — and 1995
// still counts on it. At the end no stream is left.
func TestReleaseIWARPClose(t *testing.T) {
	e := newEngine(Options{})
	var conn *Connection
	relRun(e, iwReadFrames(t, "siw-nfs3.pcap"), func(p *Packet) {
		switch p.Number {
		case 1993:
			conn = p.Conn
			if conn == nil || conn.Transport != TransportIWARP {
				t.Fatalf("FIN on %v", conn)
			}
		case 1994:
			s := conn.rel.stream
			if s == nil || !s.complete || !s.closed {
				t.Fatalf("after both FINs: stream %+v", s)
			}
			if w := holds(e, conn); len(w) > 0 {
				t.Errorf("the engine still holds %v", w)
			}
		case 1995:
			if p.Conn != conn {
				t.Errorf("last ACK on %v", p.Conn)
			}
		}
	})
	if conn.LastPacket != 1995 || conn.State != StateClosed || conn.ULP != "test" {
		t.Errorf("connection: last packet %d, state %v, ULP %q", conn.LastPacket, conn.State, conn.ULP)
	}
	if r := e.Retained(); r.IWARPStreams != 0 || r.ULPConns != 0 || r.IWARPKeys != 4 {
		t.Errorf("retained %+v", r)
	}
}

// rst writes a RST segment of direction d at sequence number seq (RFC 793
// 3.1: flags RST; no ACK, as a reset of an abort is sent).
func (c *iwConn) rst(d int, seq uint32) iwFrame {
	f := c.frame(d, seq, nil)
	pkt := gopacket.NewPacket(f.data, layers.LayerTypeEthernet, gopacket.Default)
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	tcp.ACK, tcp.RST, tcp.Ack = false, true, 0
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		c.t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp); err != nil {
		c.t.Fatal(err)
	}
	f.data = append([]byte(nil), buf.Bytes()...)
	f.ci.CaptureLength, f.ci.Length = len(f.data), len(f.data)
	return f
}

// TestReleaseIWARPReset: a RST out of the window (RFC 5961: dropped by the
// receiver) leaves the connection alone; a RST at the next sequence number
// ends it — both directions leave TCP reassembly (ours ends the server's
// with a RST of its own) — the server's answering RST still counts on it,
// and a new MPA Request on the same 4-tuple elsewhere in the sequence space
// is a new connection.
func TestReleaseIWARPReset(t *testing.T) {
	c := newIWConn(t, 40100, 20049)
	c.send(0, mpaFrame(true, false, false, false, 1, nil))
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	c.send(0, fpdus(false, false, c.seq[0], 0, untaggedULPDU(iwarp.OpSend, false, 0, 0, 1, 0, []byte("part of a Send"))))
	c.out = append(c.out, c.rst(0, c.seq[0]+100000)) // 4: out of the window
	c.out = append(c.out, c.rst(0, c.seq[0]))        // 5
	c.out = append(c.out, c.rst(1, c.seq[1]))        // 6
	c.seq[0] += 1 << 20
	c.send(0, mpaFrame(true, false, false, false, 1, nil)) // 7
	var first *Connection
	var liveAfter4 bool
	e := newEngine(Options{})
	relRun(e, c.out, func(p *Packet) {
		switch p.Number {
		case 1:
			first = p.Conn
		case 4:
			liveAfter4 = first.rel.state == relLive && len(e.iw.order) == 1
		case 5:
			if s := first.rel.stream; s == nil || !s.complete || len(e.iw.order) != 0 {
				t.Errorf("after the RST: stream %+v, %d streams followed", s, len(e.iw.order))
			}
			if w := holds(e, first); len(w) > 0 {
				t.Errorf("the engine still holds %v", w)
			}
		case 6:
			if p.Conn != first {
				t.Errorf("the answering RST on %v", p.Conn)
			}
		}
	})
	if !liveAfter4 {
		t.Errorf("the out-of-window RST closed the connection")
	}
	cs := e.Conns.Connections()
	if len(cs) != 2 || cs[1].Transport != TransportIWARP || first.State != StateClosed || first.LastPacket != 6 {
		t.Fatalf("%d connections; first: state %v, last packet %d", len(cs), first.State, first.LastPacket)
	}
}
