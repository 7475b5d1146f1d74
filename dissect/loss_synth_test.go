package dissect_test

import (
	"bytes"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Synthetic cases for what the lossy lab captures lack (issue 10): the
// frames are built by internal/synth, the expectations come from the
// script (which packet was resent, what the NAK said), not from the engine.

type lossObs struct {
	msgs [][]byte
	ops  []dissect.RDMAOp
	data [][]byte
}

func (o *lossObs) Message(m *dissect.Message) { o.msgs = append(o.msgs, slices.Clone(m.Data)) }
func (o *lossObs) RDMAOp(op *dissect.RDMAOp) {
	c := *op
	c.Packets = slices.Clone(op.Packets)
	o.ops = append(o.ops, c)
	o.data = append(o.data, slices.Clone(op.Data))
}

// lossRun sets up a connection (REQ/REP/RTU; PMTU 1024), lets script add
// its frames, and runs them through an engine with an observer.
func lossRun(t *testing.T, script func(s *synth.Sequence, c synth.Conn)) (*dissect.Engine, []*dissect.Packet, *lossObs, *dissect.Connection) {
	t.Helper()
	conn := newConn(synth.Client(), synth.Server())
	s := &synth.Sequence{Start: time.Unix(1700000000, 0), Step: time.Millisecond}
	s.CM(conn.Client, conn.Server, 1, conn.REQ())
	s.CM(conn.Server, conn.Client, 1, conn.REP())
	s.CM(conn.Client, conn.Server, 2, conn.RTU())
	script(s, conn)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	obs := &lossObs{}
	e := dissect.NewEngine(dissect.Options{Observer: obs, ULPs: rpcULPs(nil)})
	var pkts []*dissect.Packet
	for i, f := range s.Frames {
		p := &dissect.Packet{Number: i + 1, Timestamp: f.Time, LinkType: f.LinkType,
			CaptureLength: len(f.Data), Length: f.Length}
		e.Process(p, f.Data)
		pkts = append(pkts, p)
	}
	e.Finish()
	return e, pkts, obs, onlyConn(t, e)
}

func fillBytes(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

// TestLossRNRNAKRetry: the responder has no Receive posted (RNR NAK, IBA
// 9.7.5.2.8); the requester retries the Send after the timer: one message,
// one retransmission in an episode triggered by the RNR NAK.
func TestLossRNRNAKRetry(t *testing.T) {
	e, pkts, obs, c := lossRun(t, func(s *synth.Sequence, cn synth.Conn) {
		cl, sv := cn.Client, cn.Server
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN), []byte("call"))        // 4
		s.Packet(sv, cl, synth.Ack(cn.ClientQPN, cn.ClientPSN, 0, synth.RNRNAKSyndrome(14)), nil)          // 5
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN), []byte("call"))        // 6
		s.Packet(sv, cl, synth.Ack(cn.ClientQPN, cn.ClientPSN, 1, synth.ACKSyndrome(4)), nil)              // 7
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN+1), []byte("next call")) // 8
	})
	if a := pkts[4].Analysis; !a.NAK || !a.RNR || a.RNRTimer != 14 {
		t.Errorf("packet 5: %+v", a)
	}
	if a := pkts[5].Analysis; !a.Retransmission || a.Episode != 1 || a.PayloadDiffers || !a.Compared || a.OriginalPacket != 4 {
		t.Errorf("packet 6: %+v", a)
	}
	if a := pkts[7].Analysis; a.Retransmission || a.Episode != 0 {
		t.Errorf("packet 8: %+v", a)
	}
	h := c.Health.Dir[0]
	if h.RetransmittedPackets != 1 || h.RNRNAKs != 1 || h.RNRTimerMin != 14 || h.EpisodesByTrigger[dissect.TriggerRNRNAK] != 1 ||
		len(h.Episodes) != 1 || h.Episodes[0].FirstPacket != 6 {
		t.Errorf("health %+v", h)
	}
	if len(obs.msgs) != 2 || string(obs.msgs[0]) != "call" || string(obs.msgs[1]) != "next call" {
		t.Errorf("messages %q", obs.msgs)
	}
	if e.Reassembly.Duplicates != 1 {
		t.Errorf("stats %+v", e.Reassembly)
	}
}

// TestLossTimeoutResend: no ACK, no NAK in the capture; the requester
// resends its two-packet Send after its timeout (9.7.6.1.1): trigger
// timeout, the message handed up once.
func TestLossTimeoutResend(t *testing.T) {
	_, pkts, obs, c := lossRun(t, func(s *synth.Sequence, cn synth.Conn) {
		cl, sv := cn.Client, cn.Server
		s.Packet(cl, sv, synth.Send(roce.OpRCSendFirst, cn.ServerQPN, cn.ClientPSN), fillBytes(1024, 'a')) // 4
		s.Packet(cl, sv, synth.Send(roce.OpRCSendLast, cn.ServerQPN, cn.ClientPSN+1), fillBytes(10, 'b'))  // 5
		s.Packet(cl, sv, synth.Send(roce.OpRCSendFirst, cn.ServerQPN, cn.ClientPSN), fillBytes(1024, 'a')) // 6
		s.Packet(cl, sv, synth.Send(roce.OpRCSendLast, cn.ServerQPN, cn.ClientPSN+1), fillBytes(10, 'b'))  // 7
		s.Packet(sv, cl, synth.Ack(cn.ClientQPN, cn.ClientPSN+1, 1, synth.ACKSyndrome(4)), nil)            // 8
	})
	for _, i := range []int{5, 6} {
		if a := pkts[i].Analysis; !a.Retransmission || a.Episode != 1 {
			t.Errorf("packet %d: %+v", i+1, a)
		}
	}
	h := c.Health.Dir[0]
	if h.RetransmittedPackets != 2 || h.EpisodesByTrigger[dissect.TriggerTimeout] != 1 || len(h.Episodes) != 1 ||
		h.Episodes[0].Packets != 2 || h.Episodes[0].Duration != 3*time.Millisecond {
		// From packet 4 (the original of the first resent PSN) to packet 7.
		t.Errorf("health %+v episodes %+v", h, h.Episodes)
	}
	// The REQ's Local ACK Timeout is 19: 4.096 µs × 2^19 (IBA 9.7.6.1.3),
	// 2.147 s; the resend came 2 ms after the original: sooner.
	if h.AckTimeout != 4096*(1<<19)*time.Nanosecond || h.EarlyTimeouts != 1 {
		t.Errorf("ACK timeout %v, early timeouts %d", h.AckTimeout, h.EarlyTimeouts)
	}
	if len(obs.msgs) != 1 || len(obs.msgs[0]) != 1034 {
		t.Errorf("messages %d", len(obs.msgs))
	}
	// ACK latency: packet 8 acknowledges the Send whose LAST went in
	// packet 5 (the original): 3 ms.
	if a := pkts[7].Analysis; !a.HasAckRTT || a.AckRTT != 3*time.Millisecond {
		t.Errorf("packet 8: %+v", a)
	}
}

// TestLossReadReissuedTwice: the server reads 4096 bytes (4 responses of
// 1024); response 3 is lost twice, and each time the server re-issues the
// Read for the rest (rxe: PSN of the missing response, VA and length
// advanced): one Read, complete, data from three transmissions.
func TestLossReadReissuedTwice(t *testing.T) {
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i * 7)
	}
	_, pkts, obs, c := lossRun(t, func(s *synth.Sequence, cn synth.Conn) {
		cl, sv := cn.Client, cn.Server
		r := cn.ServerPSN
		rsp := func(op roce.OpCode, k uint32) {
			s.Packet(cl, sv, synth.ReadResponse(op, cn.ServerQPN, r+k, 1), data[k*1024:(k+1)*1024])
		}
		s.Packet(sv, cl, synth.ReadRequest(cn.ClientQPN, r, 0x10000, 0x77, 4096), nil)   // 4
		rsp(roce.OpRCRDMAReadResponseFirst, 0)                                           // 5
		rsp(roce.OpRCRDMAReadResponseMiddle, 1)                                          // 6
		rsp(roce.OpRCRDMAReadResponseLast, 3)                                            // 7: response 2 lost
		s.Packet(sv, cl, synth.ReadRequest(cn.ClientQPN, r+2, 0x10800, 0x77, 2048), nil) // 8: re-issued
		rsp(roce.OpRCRDMAReadResponseLast, 3)                                            // 9: its FIRST lost again
		s.Packet(sv, cl, synth.ReadRequest(cn.ClientQPN, r+2, 0x10800, 0x77, 2048), nil) // 10: re-issued again
		rsp(roce.OpRCRDMAReadResponseFirst, 2)                                           // 11
		rsp(roce.OpRCRDMAReadResponseLast, 3)                                            // 12
	})
	for _, i := range []int{7, 9} {
		if a := pkts[i].Analysis; !a.Retransmission || !a.Reissue || a.Episode != 1 {
			t.Errorf("packet %d: %+v", i+1, a)
		}
	}
	for _, i := range []int{8, 11} {
		if a := pkts[i].Analysis; !a.Retransmission || !a.Duplicate {
			t.Errorf("packet %d: %+v", i+1, a)
		}
	}
	if a := pkts[10].Analysis; a.Retransmission {
		t.Errorf("packet 11 (first copy of response 2): %+v", a)
	}
	if len(obs.ops) != 1 {
		t.Fatalf("%d operations", len(obs.ops))
	}
	op := obs.ops[0]
	// Retransmitted while it was outstanding: the two re-issues and the
	// repeated response in packet 9 (packet 12 came after it completed).
	if op.Kind != dissect.RDMARead || !op.Complete || op.Length != 4096 || !bytes.Equal(obs.data[0], data) || op.Retransmitted != 3 ||
		!slices.Equal(op.Packets, []int{4, 5, 6, 7, 11}) {
		t.Errorf("read: complete %v, length %d, %d bytes, retransmitted %d, packets %v", op.Complete, op.Length, len(obs.data[0]), op.Retransmitted, op.Packets)
	}
	if h := c.Health.Dir[1]; h.EpisodesByTrigger[dissect.TriggerReissuedRead] != 1 || h.RetransmittedPackets != 2 {
		t.Errorf("server health %+v", h)
	}
	if h := c.Health.Dir[0]; h.RetransmittedPackets != 2 || h.DuplicatePackets != 2 {
		t.Errorf("client health %+v", h)
	}
}

// TestLossECNThenCNP: a Send marked Congestion Experienced (IP ECN 11,
// RFC 3168) and the CNP the receiver sends back (RoCEv2 Annex A17.9).
func TestLossECNThenCNP(t *testing.T) {
	_, pkts, _, c := lossRun(t, func(s *synth.Sequence, cn synth.Conn) {
		cl, sv := cn.Client, cn.Server
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN), []byte("x"), func(o *synth.Options) { o.TClass = 0x03 }) // 4
		s.Packet(sv, cl, synth.Ack(cn.ClientQPN, cn.ClientPSN, 1, synth.ACKSyndrome(4)), nil)                                                // 5
		s.Packet(sv, cl, synth.CNP(cn.ClientQPN), nil)                                                                                       // 6
	})
	if !pkts[3].Analysis.ECNCE || pkts[4].Analysis.ECNCE || !pkts[5].Analysis.CNP {
		t.Errorf("CE %v %v, CNP %v", pkts[3].Analysis.ECNCE, pkts[4].Analysis.ECNCE, pkts[5].Analysis.CNP)
	}
	if pkts[5].Conn != c {
		t.Fatalf("the CNP is not on the connection")
	}
	h0, h1 := c.Health.Dir[0], c.Health.Dir[1]
	if h0.ECNCE != 1 || h1.CNPs != 1 || h0.CEToCNP.N != 1 || h0.CEToCNP.Max != 2*time.Millisecond {
		t.Errorf("CE %d, CNPs %d, CE->CNP %+v", h0.ECNCE, h1.CNPs, h0.CEToCNP)
	}
}

// TestLossRetransmissionDiffers: a resend of a PSN with another payload is
// a retransmission that differs from its original; it adds no data.
func TestLossRetransmissionDiffers(t *testing.T) {
	_, pkts, obs, c := lossRun(t, func(s *synth.Sequence, cn synth.Conn) {
		cl, sv := cn.Client, cn.Server
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN), []byte("original")) // 4
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, cn.ServerQPN, cn.ClientPSN), []byte("changed!")) // 5
	})
	if a := pkts[4].Analysis; !a.Retransmission || !a.PayloadDiffers || a.OriginalPacket != 4 {
		t.Errorf("packet 5: %+v", a)
	}
	if c.Health.Dir[0].PayloadMismatches != 1 {
		t.Errorf("health %+v", c.Health.Dir[0])
	}
	if len(obs.msgs) != 1 || string(obs.msgs[0]) != "original" {
		t.Errorf("messages %q", obs.msgs)
	}
}

// TestLossPFCPauseFrames: PFC frames (IEEE 802.1Qbb, EtherType 0x8808
// opcode 0x0101) as a switch mirror port shows them, built with gopacket's
// Ethernet layer and pfc.MACControl: pause priority 3 twice (the longer
// 0xffff quanta), then resume it; one 802.3 PAUSE.
func TestLossPFCPauseFrames(t *testing.T) {
	frame := func(m *pfc.MACControl) []byte {
		buf := gopacket.NewSerializeBuffer()
		eth := &layers.Ethernet{SrcMAC: synth.Server().MAC, DstMAC: net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x01},
			EthernetType: pfc.EtherTypeMACControl}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, m); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	frames := [][]byte{
		frame(&pfc.MACControl{Opcode: pfc.OpPFC, ClassEnable: 1 << 3, Quanta: [8]uint16{3: 0x100}}),
		frame(&pfc.MACControl{Opcode: pfc.OpPFC, ClassEnable: 1 << 3, Quanta: [8]uint16{3: 0xffff}}),
		frame(&pfc.MACControl{Opcode: pfc.OpPFC, ClassEnable: 1 << 3}),
		frame(&pfc.MACControl{Opcode: pfc.OpPause, Quanta: [8]uint16{0: 10}}),
	}
	e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
	for i, f := range frames {
		p := &dissect.Packet{Number: i + 1, Timestamp: time.Unix(0, int64(i)), LinkType: layers.LinkTypeEthernet,
			CaptureLength: len(f), Length: len(f)}
		e.Process(p, f)
		if p.Err != nil || p.PFC.Opcode == 0 {
			t.Fatalf("packet %d: %v %+v", i+1, p.Err, p.PFC)
		}
	}
	s := e.PFC
	if s.PFCFrames != 3 || s.PauseFrames != 1 || s.Pauses[3] != 2 || s.Resumes[3] != 1 || s.MaxQuanta[3] != 0xffff || s.Pauses[0] != 0 || s.FirstPacket != 1 {
		t.Errorf("%+v", s)
	}
}

// TestLossUDFlows: UD traffic has no connection; its figures are per flow
// (addresses, QPNs, Q_Keys). Four datagrams with one PSN missing.
func TestLossUDFlows(t *testing.T) {
	s := &synth.Sequence{Start: time.Unix(1700000000, 0), Step: time.Millisecond}
	cl, sv := synth.Client(), synth.Server()
	for _, psn := range []uint32{100, 101, 103} {
		s.Packet(cl, sv, synth.UDSend(0x55, psn, 0x11111111, 0x66), []byte("datagram"))
	}
	s.Packet(sv, cl, synth.UDSend(0x66, 7, 0x22222222, 0x55), []byte("answer"), func(o *synth.Options) { o.TClass = 3 })
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	e, pkts := run(t, s.Frames)
	if n := len(e.Conns.Connections()); n != 0 {
		t.Errorf("%d connections", n)
	}
	fl := e.UD.Flows
	if len(fl) != 2 {
		t.Fatalf("%d flows", len(fl))
	}
	f := fl[0]
	if f.Src.String() != "192.0.2.2" || f.Dst.String() != "192.0.2.1" || f.SrcQPN != 0x66 || f.DstQPN != 0x55 ||
		!slices.Equal(f.QKeys, []uint32{0x11111111}) || f.Health.Packets != 3 || f.Health.LostSegments != 1 || f.Health.MissingPSNs != 1 ||
		f.FirstPacket != 1 || f.LastPacket != 3 {
		t.Errorf("flow %+v", f)
	}
	if pkts[2].Analysis.LostSegment != 1 || !pkts[3].Analysis.ECNCE || fl[1].Health.ECNCE != 1 {
		t.Errorf("analysis %+v %+v", pkts[2].Analysis, pkts[3].Analysis)
	}
}
