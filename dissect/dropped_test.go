package dissect

import (
	"testing"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// TestDroppedCountsConnections (issue 13 point 3): with a full table,
// "connections not tracked" counts connections, each once however many
// packets it sends, both ways; DroppedPackets counts their packets.
func TestDroppedCountsConnections(t *testing.T) {
	const max, noSetup, withCM, perConn = 2, 5, 3, 7
	s := &synth.Sequence{}
	cl, sv := synth.Client(), synth.Server()
	// Two live connections fill the table; they stay live (no DREQ).
	for i := range max {
		c := qpnReuseConn(uint32(i))
		c.ClientQPN, c.ServerQPN = c.ClientQPN+uint32(i), c.ServerQPN+uint32(i)
		s.CM(cl, sv, uint64(i), c.REQ())
		s.CM(sv, cl, uint64(i), c.REP())
		s.CM(cl, sv, uint64(i), c.RTU())
	}
	wantPackets := 0
	// No-setup connections: Sends one way, ACKs the other, interleaved.
	for k := range perConn {
		for i := range noSetup {
			q := uint32(0x500 + 2*i)
			s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, q, uint32(k)), []byte("data"))
			s.Packet(sv, cl, synth.Ack(q+1, uint32(k), uint32(k), synth.ACKSyndrome(31)), nil)
			wantPackets += 2
		}
	}
	// CM connections turned away: a REQ sent twice (retransmitted), then
	// data both ways to the QPs it and the REP name.
	for i := range withCM {
		c := qpnReuseConn(uint32(10 + i))
		c.ClientQPN, c.ServerQPN = 0x900+uint32(i), 0xa00+uint32(i)
		s.CM(cl, sv, uint64(10+i), c.REQ())
		s.CM(cl, sv, uint64(10+i), c.REQ())
		wantPackets += 2
		for k := range perConn {
			s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, c.ServerQPN, uint32(k)), []byte("data"))
			s.Packet(sv, cl, synth.Ack(c.ClientQPN, uint32(k), uint32(k), synth.ACKSyndrome(31)), nil)
			wantPackets += 2
		}
	}
	e := newEngine(Options{MaxConnections: max})
	relRun(e, synthFrames(t, s), nil)
	if n := len(e.Conns.Connections()); n != max {
		t.Fatalf("%d connections tracked, want %d", n, max)
	}
	if e.Conns.Dropped != noSetup+withCM || e.Conns.DroppedPackets != uint64(wantPackets) || e.Conns.DroppedSaturated {
		t.Errorf("dropped %d connections (%d packets, saturated %v), want %d (%d packets)",
			e.Conns.Dropped, e.Conns.DroppedPackets, e.Conns.DroppedSaturated, noSetup+withCM, wantPackets)
	}
}

// TestDroppedIWARP: iWARP connections turned away are counted by 4-tuple,
// whichever side sends first.
func TestDroppedIWARP(t *testing.T) {
	var frames []iwFrame
	const conns = 4
	for i := range conns {
		c := newIWConn(t, uint16(40000+i), 20049)
		c.send(0, mpaFrame(true, false, false, false, 1, nil))
		c.send(1, mpaFrame(false, false, false, false, 1, nil))
		for k := range 5 {
			c.send(0, fpdus(false, false, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, true, 0, 0, uint32(k+1), 0, []byte("hello"))))
			c.send(1, fpdus(false, false, c.seq[1], c.seq[1], untaggedULPDU(iwarp.OpSend, true, 0, 0, uint32(k+1), 0, []byte("world"))))
		}
		frames = append(frames, c.out...)
	}
	for i := range frames {
		frames[i].num = i + 1
	}
	e := iwRun(frames, Options{MaxConnections: 1}, nil)
	// Every packet of those connections asked for a new one.
	if e.Conns.Dropped != conns-1 || e.Conns.DroppedPackets < 2*(conns-1) {
		t.Errorf("dropped %d connections (%d packets), want %d", e.Conns.Dropped, e.Conns.DroppedPackets, conns-1)
	}
}
