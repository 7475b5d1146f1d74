package dissect

import "testing"

// negULP claims nfsrdma's port; its sessions say, as what they
// negotiated, how many Sends they were handed so far (to tell the open
// session's answer from the one the engine kept).
type negULP struct {
	open   map[*Connection]*negSession
	closed map[*Connection]int
}

func (u *negULP) Name() string                            { return "neg" }
func (u *negULP) Ports() []uint16                         { return []uint16{IWARPHintPort} }
func (u *negULP) Probe(c *Connection, m *Message) Verdict { return No }
func (u *negULP) Claim(c *Connection) Verdict {
	if c.ServicePort == IWARPHintPort {
		return Yes
	}
	return No
}
func (u *negULP) Start(c *Connection, env *Env) Session {
	s := &negSession{u: u, c: c}
	u.open[c] = s
	return s
}

type negSession struct {
	u    *negULP
	c    *Connection
	msgs int
}

func (s *negSession) Message(p *Packet, m *Message) { s.msgs++ }
func (s *negSession) RDMAOp(p *Packet, op *RDMAOp)  {}
func (s *negSession) Close()                        { delete(s.u.open, s.c); s.u.closed[s.c] = s.msgs }
func (s *negSession) Negotiated() Negotiated        { return negCount(s.msgs) }

type negCount int

func (n negCount) RemoteInvalidation() (allowed, known bool) { return n%2 == 1, true }
func (n negCount) InlineLimit(d Direction) (int, bool)       { return int(n), d == DirClientToServer }

// TestNegotiation: Connection.Negotiation asks the open session
// (Negotiator), keeps its last answer when the session closes, and says
// nothing known of a connection no ULP claimed; it is never nil.
func TestNegotiation(t *testing.T) {
	u := &negULP{open: map[*Connection]*negSession{}, closed: map[*Connection]int{}}
	live := 0
	e, err := runCapture(t, "rxe-nfs3.pcap", Options{ULPs: []ULP{u}}, func(p *Packet) {
		if p.Conn == nil {
			return
		}
		s := u.open[p.Conn]
		if s == nil {
			return
		}
		live++
		if n, known := p.Conn.Negotiation().InlineLimit(DirClientToServer); !known || n != s.msgs {
			t.Fatalf("packet %d: open session says %d/%v, has %d Sends", p.Number, n, known, s.msgs)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if live == 0 || len(u.open) != 0 {
		t.Fatalf("%d packets of open sessions, %d sessions still open", live, len(u.open))
	}
	claimed := 0
	for _, c := range e.Conns.Connections() {
		n := c.Negotiation()
		if n == nil {
			t.Fatalf("connection %d: nil Negotiated", c.ID)
		}
		limit, known := n.InlineLimit(DirClientToServer)
		if c.ULP != "neg" {
			if _, k := n.RemoteInvalidation(); known || k {
				t.Errorf("connection %d, no ULP: something known", c.ID)
			}
			continue
		}
		claimed++
		if want, ok := u.closed[c]; !ok || !known || limit != want || want == 0 {
			t.Errorf("connection %d: kept %d/%v after close, the session had %d Sends (closed %v)", c.ID, limit, known, want, ok)
		}
		if _, k := n.InlineLimit(DirServerToClient); k {
			t.Errorf("connection %d: the kept answer is not the session's", c.ID)
		}
	}
	if claimed == 0 {
		t.Fatal("no connection claimed")
	}
	// No ULP at all: nothing known, but an answer.
	var none Connection
	if n := none.Negotiation(); n == nil {
		t.Fatal("nil Negotiated")
	} else if _, k := n.RemoteInvalidation(); k {
		t.Error("no ULP: remote invalidation known")
	}
}
