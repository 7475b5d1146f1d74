package dissect_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// Connection tracking through the CM exchange (IBA Vol 1 12.6, 12.9) and
// the RFC 8797 private data, on captures built by internal/synth. Every
// expected value is the one the test put into the bytes, or follows from
// it by the rule the test cites.

// side is one side's RFC 8797 message as the test chose it.
type side struct {
	r          bool
	send, recv int // octets
}

// pdFor builds REQ (CMA header first, message at octet 36) or REP (message
// at octet 0) private data carrying s.
func pdFor(t *testing.T, c synth.Conn, req bool, s side) []byte {
	t.Helper()
	msg, err := synth.RPCRDMAMessage(1, 0, s.r, s.send, s.recv)
	if err != nil {
		t.Fatal(err)
	}
	if !req {
		pd, err := synth.PrivateData(roce.CMREPPrivateDataLength, nil, 0, msg)
		if err != nil {
			t.Fatal(err)
		}
		return pd
	}
	return reqPD(t, c, msg, 36)
}

func reqPD(t *testing.T, c synth.Conn, msg []byte, off int) []byte {
	t.Helper()
	h := &pvtdata.CMAHeader{IPVersion: 4, SrcPort: 40001, SrcAddr: c.Client.IP, DstAddr: c.Server.IP}
	if c.Client.IP.Is6() {
		h.IPVersion = 6
	}
	pd, err := synth.PrivateData(roce.CMREQPrivateDataLength, h, off, msg)
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

func newConn(cl, sv synth.Node) synth.Conn {
	return synth.Conn{Client: cl, Server: sv, ClientCommID: 0x1000AAAA, ServerCommID: 0x2000BBBB,
		ClientQPN: 0x000101, ServerQPN: 0x000202, ClientPSN: 0x111111, ServerPSN: 0x222222,
		ServiceID: synth.NFSService}
}

// onlyConn returns the engine's only connection.
func onlyConn(t *testing.T, e *dissect.Engine) *dissect.Connection {
	t.Helper()
	cs := e.Conns.Connections()
	if len(cs) != 1 {
		t.Fatalf("%d connections, want 1", len(cs))
	}
	return cs[0]
}

func checkDir(t *testing.T, p *dissect.Packet, c *dissect.Connection, d dissect.Direction) {
	t.Helper()
	if p.Conn != c || p.Dir != d {
		t.Errorf("packet %d (%s): connection %p dir %v, want %p %v", p.Number, fields.Info(p), p.Conn, p.Dir, c, d)
	}
}

// TestCMEstablished runs REQ/REP/RTU and data both ways in each
// encapsulation: the connection is established with both QPNs, start
// PSNs, comm IDs, the service port of the service ID, the private data
// and the thresholds of RFC 8797 section 4.2, and every data packet lands
// on it in the right direction.
func TestCMEstablished(t *testing.T) {
	for _, c := range []struct {
		name           string
		o              synth.Options
		cl, sv         synth.Node
		client, server string
	}{
		{"RoCEv2/IPv4", synth.Options{}, synth.Client(), synth.Server(), "192.0.2.2", "192.0.2.1"},
		{"RoCEv2/IPv6/QinQ", synth.Options{VLANs: []uint16{100, 200}}, synth.ClientV6(), synth.ServerV6(), "2001:db8::2", "2001:db8::1"},
		{"RoCEv1", synth.Options{Encap: synth.RoCEv1}, synth.ClientGID(), synth.ServerGID(), "fe80::5054:ff:fe00:202", "fe80::5054:ff:fe00:201"},
		{"IB/LRH", synth.Options{LinkType: synth.LinkInfiniBand, Encap: synth.IBLocal}, synth.Client(), synth.Server(), "LID 2", "LID 1"},
		{"IB/LRH+GRH", synth.Options{LinkType: synth.LinkInfiniBand, Encap: synth.IBGlobal},
			synth.Client().WithIP("fe80::2"), synth.Server().WithIP("fe80::1"), "fe80::2", "fe80::1"},
		{"SLL2/IPv4", synth.Options{LinkType: synth.LinkSLL2}, synth.Client(), synth.Server(), "192.0.2.2", "192.0.2.1"},
		{"ERF/IB", synth.Options{LinkType: synth.LinkERF, Encap: synth.IBLocal}, synth.Client(), synth.Server(), "LID 2", "LID 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := newConn(c.cl, c.sv)
			conn.Native = c.o.Encap == synth.IBLocal || c.o.Encap == synth.IBGlobal
			// Client: R=1, send 8192, receive 4096; server: R=1, send
			// 2048, receive 16384.
			conn.ClientPD = pdFor(t, conn, true, side{true, 8192, 4096})
			conn.ServerPD = pdFor(t, conn, false, side{true, 2048, 16384})
			s := &synth.Sequence{Options: c.o}
			cl, sv := c.cl, c.sv
			s.CM(cl, sv, 1, conn.REQ())                                                                                                // 1
			s.CM(sv, cl, 1, conn.REP())                                                                                                // 2
			s.CM(cl, sv, 2, conn.RTU())                                                                                                // 3
			s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, conn.ServerQPN, conn.ClientPSN), []byte("call"))                            // 4
			s.Packet(sv, cl, synth.Ack(conn.ClientQPN, conn.ClientPSN, 1, synth.ACKSyndrome(4)), nil)                                  // 5
			s.Packet(sv, cl, synth.Send(roce.OpRCSendOnly, conn.ClientQPN, conn.ServerPSN), []byte("reply"))                           // 6
			s.Packet(cl, sv, synth.Ack(conn.ServerQPN, conn.ServerPSN, 1, synth.ACKSyndrome(4)), nil)                                  // 7
			s.Packet(sv, cl, synth.ReadRequest(conn.ClientQPN, conn.ServerPSN+1, 0x1000, 0x77, 64), nil)                               // 8
			s.Packet(cl, sv, synth.ReadResponse(roce.OpRCRDMAReadResponseOnly, conn.ServerQPN, conn.ServerPSN+1, 2), make([]byte, 64)) // 9
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			e, pkts := run(t, s.Frames)
			cn := onlyConn(t, e)
			if cn.State != dissect.StateEstablished {
				t.Errorf("state %v", cn.State)
			}
			if cn.Client.Address != c.client || cn.Server.Address != c.server {
				t.Errorf("client %s server %s", cn.Client.Address, cn.Server.Address)
			}
			if cn.Client.QPN != 0x101 || cn.Server.QPN != 0x202 || cn.Client.CommID != 0x1000AAAA || cn.Server.CommID != 0x2000BBBB {
				t.Errorf("QPNs %#x/%#x comm IDs %#x/%#x", cn.Client.QPN, cn.Server.QPN, cn.Client.CommID, cn.Server.CommID)
			}
			// The REQ (Starting PSN 0x111111) names where the server
			// sends from, the REP (0x222222) where the client does: a CM
			// message's Starting PSN is its sender's receive PSN, as in
			// rxe-rping.pcap (TestStartPSNsOfRealCapture).
			if !cn.Client.HasStartPSN || cn.Client.StartPSN != 0x222222 || !cn.Server.HasStartPSN || cn.Server.StartPSN != 0x111111 {
				t.Errorf("start PSNs %#x/%#x", cn.Client.StartPSN, cn.Server.StartPSN)
			}
			// Service ID 0x0000000001064e51: TCP port space 0x0106, port
			// 0x4e51 = 20049 (Linux cma_get_service_id).
			if cn.ServiceID != 0x0000000001064e51 || cn.ServicePort != 20049 {
				t.Errorf("service ID %#x port %d", cn.ServiceID, cn.ServicePort)
			}
			cs, ss := rpcordma.Summary(&cn.PrivateData[0]), rpcordma.Summary(&cn.PrivateData[1])
			if !cs.Present || cs.Offset != 36 || cs.Length != 92 || !cs.RemoteInvalidate || cs.SendSize != 8192 || cs.ReceiveSize != 4096 || cs.Packet != 1 || cs.Note != "" {
				t.Errorf("client private data %+v", cs)
			}
			if !ss.Present || ss.Offset != 0 || ss.Length != 196 || !ss.RemoteInvalidate || ss.SendSize != 2048 || ss.ReceiveSize != 16384 || ss.Packet != 2 || ss.Note != "" {
				t.Errorf("server private data %+v", ss)
			}
			// RFC 8797 4.2: client-to-server = min(client send 8192, server
			// receive 16384) = 8192; server-to-client = min(server send
			// 2048, client receive 4096) = 2048. 4.1: both R set.
			th := rpcordma.Thresholds(cn)
			if !cn.Negotiated || th.ClientToServer != 8192 || th.ServerToClient != 2048 || !th.RemoteInvalidation {
				t.Errorf("negotiated %v thresholds %+v", cn.Negotiated, th)
			}
			for _, n := range []int{1, 3, 4, 7, 9} {
				checkDir(t, pkts[n-1], cn, dissect.DirClientToServer)
			}
			for _, n := range []int{2, 5, 6, 8} {
				checkDir(t, pkts[n-1], cn, dissect.DirServerToClient)
			}
			if cn.Dir[0].Packets != 5 || cn.Dir[1].Packets != 4 || cn.FirstPacket != 1 || cn.LastPacket != 9 {
				t.Errorf("counters %+v first %d last %d", cn.Dir, cn.FirstPacket, cn.LastPacket)
			}
			var c2sBytes uint64
			for _, n := range []int{1, 3, 4, 7, 9} {
				c2sBytes += uint64(pkts[n-1].Length)
			}
			if cn.Dir[0].Bytes != c2sBytes {
				t.Errorf("client-to-server bytes %d, frames add up to %d", cn.Dir[0].Bytes, c2sBytes)
			}
		})
	}
}

// TestCMThresholds: RFC 8797 sections 4.1, 4.2 and 5.1 on chosen R bits
// and sizes.
func TestCMThresholds(t *testing.T) {
	for _, c := range []struct {
		name             string
		client, server   *side // nil: no RFC 8797 message
		serverAt         int   // octet of the message in the REP
		c2s, s2c         int
		ri               bool
		clientDef, svDef bool
	}{
		// min(8192,16384), min(2048,4096); both R.
		{"both R", &side{true, 8192, 4096}, &side{true, 2048, 16384}, 0, 8192, 2048, true, false, false},
		// The NFS capture's values: server R clear withholds invalidation.
		{"server R clear", &side{true, 4096, 4096}, &side{false, 4096, 4096}, 0, 4096, 4096, false, false, false},
		{"client R clear", &side{false, 4096, 4096}, &side{true, 4096, 4096}, 0, 4096, 4096, false, false, false},
		// min(1024,1024), min(262144,262144): the extremes of the Size
		// fields (encoded 0 and 255).
		{"extremes", &side{false, 1024, 262144}, &side{true, 262144, 1024}, 0, 1024, 262144, false, false, false},
		// Server without a message: it counts as R clear, 1024/1024 (5.1):
		// min(8192,1024), min(1024,8192).
		{"server default", &side{true, 8192, 8192}, nil, 0, 1024, 1024, false, false, true},
		{"client default", nil, &side{true, 8192, 8192}, 0, 1024, 1024, false, true, false},
		// The identifier at an odd offset is found (5.2: no alignment).
		{"odd offset", &side{true, 2048, 2048}, &side{true, 4096, 3072}, 13, 2048, 2048, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := newConn(synth.Client(), synth.Server())
			if c.client != nil {
				conn.ClientPD = pdFor(t, conn, true, *c.client)
			} else {
				conn.ClientPD = reqPD(t, conn, nil, 36) // the CMA header only
			}
			conn.ServerPD = make([]byte, roce.CMREPPrivateDataLength)
			if c.server != nil {
				msg, err := synth.RPCRDMAMessage(1, 0, c.server.r, c.server.send, c.server.recv)
				if err != nil {
					t.Fatal(err)
				}
				copy(conn.ServerPD[c.serverAt:], msg)
			}
			s := &synth.Sequence{}
			s.CM(conn.Client, conn.Server, 1, conn.REQ())
			s.CM(conn.Server, conn.Client, 1, conn.REP())
			s.CM(conn.Client, conn.Server, 2, conn.RTU())
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			e, _ := run(t, s.Frames)
			cn := onlyConn(t, e)
			th := rpcordma.Thresholds(cn)
			if th.ClientToServer != c.c2s || th.ServerToClient != c.s2c || th.RemoteInvalidation != c.ri ||
				th.ClientDefault != c.clientDef || th.ServerDefault != c.svDef {
				t.Errorf("thresholds %+v, want %d/%d R %v defaults %v/%v", th, c.c2s, c.s2c, c.ri, c.clientDef, c.svDef)
			}
			ss := rpcordma.Summary(&cn.PrivateData[1])
			if c.server != nil && (!ss.Present || ss.Offset != c.serverAt) {
				t.Errorf("server message %+v, want at %d", ss, c.serverAt)
			}
			if c.server == nil && (ss.Present || ss.Found || !ss.Seen || !strings.Contains(ss.Note, "not found")) {
				t.Errorf("server without message: %+v", ss)
			}
		})
	}
}

// exchange builds frames with s and runs them, failing on a build error.
func exchange(t *testing.T, build func(s *synth.Sequence)) (*dissect.Engine, []*dissect.Packet) {
	t.Helper()
	s := &synth.Sequence{}
	build(s)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	return run(t, s.Frames)
}

// TestCMRetransmittedREQ: a REQ sent again with the same Local Comm ID
// (IBA 12.9.5: the active side resends after a timeout) is the same
// connection.
func TestCMRetransmittedREQ(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	conn.ClientPD = pdFor(t, conn, true, side{true, 4096, 4096})
	conn.ServerPD = pdFor(t, conn, false, side{false, 4096, 4096})
	cl, sv := conn.Client, conn.Server
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(sv, cl, 1, conn.REP())
		s.CM(sv, cl, 1, conn.REP()) // the REP retransmitted too
		s.CM(cl, sv, 2, conn.RTU())
	})
	cn := onlyConn(t, e)
	if cn.State != dissect.StateEstablished || cn.Dir[0].Packets != 4 || cn.Dir[1].Packets != 2 {
		t.Errorf("state %v counters %+v", cn.State, cn.Dir)
	}
	if cn.PrivateData[0].Packet != 1 || cn.PrivateData[1].Packet != 4 {
		t.Errorf("private data from packets %d and %d, want the first REQ and REP", cn.PrivateData[0].Packet, cn.PrivateData[1].Packet)
	}
	for _, p := range pkts {
		if p.Conn != cn {
			t.Errorf("packet %d not on the connection", p.Number)
		}
	}
}

// TestCMMRA: MRAs (IBA 12.6.6) for the REQ (from the server) and for the
// REP (from the client) belong to the connection and do not change its
// course.
func TestCMMRA(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	cl, sv := conn.Client, conn.Server
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(sv, cl, 1, conn.MRA(roce.MRAMessageREQ, 18))
		s.CM(sv, cl, 1, conn.REP())
		s.CM(cl, sv, 1, conn.MRA(roce.MRAMessageREP, 18))
		s.CM(cl, sv, 2, conn.RTU())
	})
	cn := onlyConn(t, e)
	if cn.State != dissect.StateEstablished {
		t.Errorf("state %v", cn.State)
	}
	if pkts[1].CM.Attr != roce.LayerTypeCMMRA || pkts[1].CM.MRA.MessageMRAed != roce.MRAMessageREQ || pkts[1].CM.MRA.ServiceTimeout != 18 {
		t.Errorf("MRA decoded as %v %+v", pkts[1].CM.Attr, pkts[1].CM.MRA)
	}
	checkDir(t, pkts[1], cn, dissect.DirServerToClient)
	checkDir(t, pkts[3], cn, dissect.DirClientToServer)
	// Without private data on either side the RFC 8797 defaults apply
	// (5.1): 1024 each way.
	if th := rpcordma.Thresholds(cn); !cn.Negotiated || th.ClientToServer != 1024 || th.ServerToClient != 1024 || !th.ClientDefault || !th.ServerDefault {
		t.Errorf("thresholds %+v", th)
	}
}

// TestCMReject: a REQ refused with REJ reason 28 (IBA 12.6.7: Consumer
// reject) is rejected with the reason; a REJ with Local Comm ID 0 (sent
// before the passive side chose one) still finds its REQ.
func TestCMReject(t *testing.T) {
	for _, local := range []uint32{0x2000BBBB, 0} {
		t.Run(fmt.Sprintf("local=%#x", local), func(t *testing.T) {
			conn := newConn(synth.Client(), synth.Server())
			conn.ServerCommID = local
			conn.ClientPD = pdFor(t, conn, true, side{true, 4096, 4096})
			cl, sv := conn.Client, conn.Server
			e, pkts := exchange(t, func(s *synth.Sequence) {
				s.CM(cl, sv, 1, conn.REQ())
				s.CM(sv, cl, 1, conn.REJ(roce.RejConsumer, []byte{1, 2}, []byte("go away")))
			})
			cn := onlyConn(t, e)
			if cn.State != dissect.StateRejected || cn.RejectReason != "Consumer reject" {
				t.Errorf("state %v reason %q", cn.State, cn.RejectReason)
			}
			checkDir(t, pkts[1], cn, dissect.DirServerToClient)
			if r := &pkts[1].CM.REJ; r.Reason != 28 || !bytes.Equal(r.ARI, []byte{1, 2}) || !bytes.HasPrefix(r.PrivateData, []byte("go away")) {
				t.Errorf("REJ %+v", r)
			}
			if cn.Negotiated || cn.Server.QPN != 0 {
				t.Errorf("a rejected connection negotiated %v, server QPN %#x", cn.Negotiated, cn.Server.QPN)
			}
			if !strings.Contains(fields.Info(pkts[1]), "Reason=28 (Consumer reject)") {
				t.Errorf("info %q", fields.Info(pkts[1]))
			}
		})
	}
}

// TestCMDisconnect: DREQ/DREP (IBA 12.6.10, 12.6.11) from either side
// close the connection; data before stays counted.
func TestCMDisconnect(t *testing.T) {
	for _, fromServer := range []bool{false, true} {
		t.Run(fmt.Sprintf("fromServer=%v", fromServer), func(t *testing.T) {
			conn := newConn(synth.Client(), synth.Server())
			cl, sv := conn.Client, conn.Server
			e, pkts := exchange(t, func(s *synth.Sequence) {
				s.CM(cl, sv, 1, conn.REQ())
				s.CM(sv, cl, 1, conn.REP())
				s.CM(cl, sv, 2, conn.RTU())
				s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, conn.ServerQPN, 1), nil)
				if fromServer {
					s.CM(sv, cl, 3, conn.DREQ(true))
					s.CM(cl, sv, 3, conn.DREP(true))
				} else {
					s.CM(cl, sv, 3, conn.DREQ(false))
					s.CM(sv, cl, 3, conn.DREP(false))
				}
			})
			cn := onlyConn(t, e)
			if cn.State != dissect.StateClosed || cn.LastPacket != 6 {
				t.Errorf("state %v last %d", cn.State, cn.LastPacket)
			}
			dreq, drep := dissect.DirClientToServer, dissect.DirServerToClient
			if fromServer {
				dreq, drep = drep, dreq
			}
			checkDir(t, pkts[4], cn, dreq)
			checkDir(t, pkts[5], cn, drep)
		})
	}
}

// TestCMIncomplete: a REQ without an answer, and a REQ/REP without RTU,
// stay incomplete; only the first negotiated anything.
func TestCMIncomplete(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	conn.ClientPD = pdFor(t, conn, true, side{true, 4096, 4096})
	other := conn
	other.ClientCommID, other.ServerCommID, other.ClientQPN, other.ServerQPN = 0x3000CCCC, 0x4000DDDD, 0x303, 0x404
	cl, sv := conn.Client, conn.Server
	e, _ := exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(cl, sv, 2, other.REQ())
		s.CM(sv, cl, 2, other.REP())
	})
	cs := e.Conns.Connections()
	if len(cs) != 2 {
		t.Fatalf("%d connections", len(cs))
	}
	if cs[0].State != dissect.StateIncomplete || cs[0].Negotiated || cs[0].Server.QPN != 0 || !cs[0].PrivateData[0].Seen || cs[0].PrivateData[1].Seen {
		t.Errorf("REQ only: %+v", cs[0])
	}
	if cs[1].State != dissect.StateIncomplete || cs[1].Server.QPN != 0x404 || !cs[1].Negotiated {
		t.Errorf("REQ/REP: state %v QPN %#x negotiated %v", cs[1].State, cs[1].Server.QPN, cs[1].Negotiated)
	}
}

// TestNoSetupPairing: RC traffic whose CM exchange is not in the capture
// gets one connection per QP pair: the first packet's destination QP is
// the "server", the first packet the other way names the "client" QP.
func TestNoSetupPairing(t *testing.T) {
	cl, sv := synth.Client(), synth.Server()
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, 0x22, 10), []byte("a"))                // 1
		s.Packet(sv, cl, synth.Ack(0x33, 10, 1, synth.ACKSyndrome(31)), nil)                  // 2
		s.Packet(cl, sv, synth.Write(roce.OpRCRDMAWriteOnly, 0x22, 11, 0, 1, 1), []byte("b")) // 3
		s.Packet(sv, cl, synth.Ack(0x33, 11, 2, synth.ACKSyndrome(31)), nil)                  // 4
		s.Packet(sv, cl, synth.Send(roce.OpUCSendOnly, 0x55, 1), []byte("c"))                 // 5: UC, another pair
		s.Packet(cl, sv, synth.Send(roce.OpUCSendOnly, 0x44, 1), []byte("d"))                 // 6
	})
	cs := e.Conns.Connections()
	if len(cs) != 2 {
		t.Fatalf("%d connections", len(cs))
	}
	a, b := cs[0], cs[1]
	if a.State != dissect.StateNoSetup || a.Server.QPN != 0x22 || a.Client.QPN != 0x33 || a.Client.Address != "192.0.2.2" || a.Server.Address != "192.0.2.1" {
		t.Errorf("first pair: %+v", a)
	}
	for _, n := range []int{1, 3} {
		checkDir(t, pkts[n-1], a, dissect.DirClientToServer)
	}
	for _, n := range []int{2, 4} {
		checkDir(t, pkts[n-1], a, dissect.DirServerToClient)
	}
	// The UC pair starts from the server's address: that side is the
	// "client" of the no-setup connection.
	if b.Server.QPN != 0x55 || b.Client.QPN != 0x44 || b.Client.Address != "192.0.2.1" || b.Negotiated {
		t.Errorf("second pair: %+v", b)
	}
	checkDir(t, pkts[4], b, dissect.DirClientToServer)
	checkDir(t, pkts[5], b, dissect.DirServerToClient)
}

// TestUDAndCNPMakeNoConnection: UD datagrams and CNPs have no connection to
// track (a CNP is counted on the connection of the QP it is sent to, if
// there is one); SIDR resolves a UD service without one.
func TestUDAndCNPMakeNoConnection(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	cl, sv := conn.Client, conn.Server
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, synth.SIDRREQ(7, 0x1000000000000abc, nil))                                // 1
		s.CM(sv, cl, 1, synth.SIDRREP(7, roce.SIDRSuccess, 0x1000000000000abc, 0x71, 0x11111111)) // 2
		s.Packet(cl, sv, synth.UDSend(0x71, 1, 0x11111111, 0x72), []byte("dgram"))                // 3
		s.Packet(sv, cl, synth.CNP(0x72), make([]byte, 16))                                       // 4
		s.Packet(sv, cl, synth.UDSend(0x72, 1, 0x11111111, 0x71), []byte("back"))                 // 5
	})
	if n := len(e.Conns.Connections()); n != 0 {
		t.Fatalf("%d connections from UD, SIDR and CNP", n)
	}
	for _, p := range pkts {
		if p.Conn != nil {
			t.Errorf("packet %d on a connection", p.Number)
		}
	}
	if r := &pkts[1].CM.SIDRREP; pkts[1].CM.Attr != roce.LayerTypeCMSIDRREP || r.QPN != 0x71 || r.QKey != 0x11111111 || r.ServiceID != 0x1000000000000abc {
		t.Errorf("SIDR_REP %v %+v", pkts[1].CM.Attr, r)
	}
	if p := pkts[3]; dissect.Classify(p) != dissect.ProtoCNP || p.BTH.OpCode != roce.OpCNP || !p.BTH.BECN || !strings.HasPrefix(fields.Info(p), "CNP QP=0x000072") {
		t.Errorf("CNP: class %v info %q", dissect.Classify(p), fields.Info(p))
	}
	if e.Stats.ByProto[dissect.ProtoCNP] != 1 || e.Stats.ByProto[dissect.ProtoCM] != 2 {
		t.Errorf("protocol counts %v", e.Stats.ByProto)
	}

	// A CNP to a connection's QP is counted on it, towards that QP's side.
	e, pkts = exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(sv, cl, 1, conn.REP())
		s.CM(cl, sv, 2, conn.RTU())
		s.Packet(sv, cl, synth.CNP(conn.ClientQPN), make([]byte, 16))
		s.Packet(cl, sv, synth.CNP(0x999), make([]byte, 16))
	})
	cn := onlyConn(t, e)
	checkDir(t, pkts[3], cn, dissect.DirServerToClient)
	if pkts[4].Conn != nil {
		t.Error("a CNP to an unknown QP made or found a connection")
	}
}

// TestXRCOpcodesNamed: every XRC opcode (Annex A14: 0xA0-0xBF with RC's
// operation numbers, 25 of them) is named "XRC <RC's operation>", the
// requests carry the XRCETH and the responses do not (A14: the XRCETH
// names the responder's SRQ; responses go to the requester's QP); an XRC
// SEND and WRITE decode with theirs.
func TestXRCOpcodesNamed(t *testing.T) {
	n := 0
	for op := roce.OpCode(0xA0); op <= 0xBF; op++ {
		if !op.Valid() {
			continue
		}
		n++
		rc := op & 0x1F
		if !rc.Valid() || op.String() != "XRC "+rc.Name() {
			t.Errorf("%#02x: %q, RC's is %q", uint8(op), op.String(), rc.Name())
		}
		if op.ExtHeaders().Has(roce.ExtXRCETH) != op.IsRequest() {
			t.Errorf("%v: request %v, extended headers %v", op, op.IsRequest(), op.ExtHeaders())
		}
	}
	if n != 25 {
		t.Errorf("%d XRC opcodes, want 25", n)
	}
	cl, sv := synth.Client(), synth.Server()
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.Packet(cl, sv, synth.XRCSend(roce.OpXRCSendOnly, 0x44, 20, 0x55), []byte("xrc"))
		h := synth.Write(roce.OpXRCRDMAWriteOnly, 0x44, 21, 0x2000, 0x99, 3)
		h.XRCETH.XRCSRQ = 0x56
		s.Packet(cl, sv, h, []byte("abc"))
	})
	p := pkts[0]
	if p.Err != nil || !p.BTH.Has(roce.ExtXRCETH) || p.BTH.XRCETH.XRCSRQ != 0x55 || !bytes.Equal(p.BTH.Payload, []byte("xrc")) ||
		!strings.HasPrefix(fields.Info(p), "XRC SEND_ONLY QP=0x000044 PSN=20") || p.ICRC.Status != dissect.CRCGood {
		t.Errorf("XRC SEND: %q %+v err %v", fields.Info(p), p.BTH.XRCETH, p.Err)
	}
	p = pkts[1]
	if p.BTH.XRCETH.XRCSRQ != 0x56 || p.BTH.RETH.DMALen != 3 || !strings.HasPrefix(fields.Info(p), "XRC RDMA_WRITE_ONLY") {
		t.Errorf("XRC WRITE: %q", fields.Info(p))
	}
	// XRC is connected: traffic without set-up gets a connection.
	if cn := onlyConn(t, e); cn.Server.QPN != 0x44 || cn.State != dissect.StateNoSetup {
		t.Errorf("XRC connection %+v", cn)
	}
}

// TestAtomicsAndNAKs: the atomic and acknowledgement headers decode to
// the values built (IBA 9.3.4-9.3.6) and land on the connection.
func TestAtomicsAndNAKs(t *testing.T) {
	cl, sv := synth.Client(), synth.Server()
	_, pkts := exchange(t, func(s *synth.Sequence) {
		s.Packet(cl, sv, synth.CompareSwap(0x22, 1, 0x7f00, 0xabc, 5, 4), nil)
		s.Packet(sv, cl, synth.AtomicAck(0x33, 1, 1, 4), nil)
		s.Packet(cl, sv, synth.FetchAdd(0x22, 2, 0x7f08, 0xabc, 10), nil)
		s.Packet(sv, cl, synth.Ack(0x33, 2, 1, synth.RNRNAKSyndrome(14)), nil)
		s.Packet(sv, cl, synth.Ack(0x33, 2, 1, synth.NAKSyndrome(roce.NAKRemoteAccessError)), nil)
	})
	if a := pkts[0].BTH.AtomicETH; a.VA != 0x7f00 || a.RKey != 0xabc || a.SwapDt != 5 || a.CmpDt != 4 {
		t.Errorf("CmpSwap %+v", a)
	}
	if b := &pkts[1].BTH; b.AtomicAckETH.OrigRemDt != 4 || !b.AETH.Syndrome.IsACK() {
		t.Errorf("AtomicAck %+v", b.AtomicAckETH)
	}
	if a := pkts[2].BTH.AtomicETH; a.SwapDt != 10 || pkts[2].BTH.OpCode != roce.OpRCFetchAdd {
		t.Errorf("FetchAdd %+v", a)
	}
	// RNR NAK timer code 14 is 1.28 ms (IBA Table 45); NAK code 2 is a
	// remote access error (9.3.5).
	if s := pkts[3].BTH.AETH.Syndrome; !s.IsRNRNAK() || s.RNRTimer() != 14 || !strings.Contains(fields.Info(pkts[3]), "RNR NAK timer 1.28 ms") {
		t.Errorf("RNR NAK %v: %q", s, fields.Info(pkts[3]))
	}
	if s := pkts[4].BTH.AETH.Syndrome; !s.IsNAK() || s.NAKCode() != roce.NAKRemoteAccessError {
		t.Errorf("NAK %v", s)
	}
	for _, p := range pkts {
		if p.Conn == nil || p.ICRC.Status != dissect.CRCGood {
			t.Errorf("packet %d: conn %v ICRC %v", p.Number, p.Conn, p.ICRC.Status)
		}
	}
}

// TestPrivateDataOddities: an RFC 8797 message of an unknown version is
// reported and the defaults apply to that side (5.1, 5.2); one with
// reserved flag bits set is reported, and the bits are ignored as section
// 4 tells receivers to ("Senders MUST set these bits to zero and receivers
// MUST ignore their value"): its R and sizes count.
func TestPrivateDataOddities(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	v2, err := synth.RPCRDMAMessage(2, 0, true, 8192, 8192)
	if err != nil {
		t.Fatal(err)
	}
	resv, err := synth.RPCRDMAMessage(1, 0x55, true, 8192, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if resv[5] != 0xAB { // 0x55<<1 | R
		t.Fatalf("flags octet %#x", resv[5])
	}
	for _, c := range []struct {
		name     string
		msg      []byte
		present  bool
		note     string
		c2s, s2c int
		ri       bool
	}{
		// Client counts as 1024/1024, R clear: min(1024, 4096),
		// min(4096, 1024); no invalidation though both sent R.
		{"unknown version", v2, false, "unrecognized version: version 2 at offset 36", 1024, 1024, false},
		// min(8192, 4096), min(4096, 2048), both R.
		{"reserved bits", resv, true, "reserved", 4096, 2048, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn.ClientPD = reqPD(t, conn, c.msg, 36)
			conn.ServerPD = pdFor(t, conn, false, side{true, 4096, 4096})
			e, _ := exchange(t, func(s *synth.Sequence) {
				s.CM(conn.Client, conn.Server, 1, conn.REQ())
				s.CM(conn.Server, conn.Client, 1, conn.REP())
				s.CM(conn.Client, conn.Server, 2, conn.RTU())
			})
			cn := onlyConn(t, e)
			cs := rpcordma.Summary(&cn.PrivateData[0])
			if cs.Present != c.present || !cs.Found || cs.Offset != 36 || !strings.Contains(cs.Note, c.note) {
				t.Errorf("client private data %+v", cs)
			}
			th := rpcordma.Thresholds(cn)
			if th.ClientToServer != c.c2s || th.ServerToClient != c.s2c || th.RemoteInvalidation != c.ri || th.ClientDefault == c.present {
				t.Errorf("thresholds %+v", th)
			}
		})
	}
}

// TestCMLAPAPR: an alternate path load (IBA 12.6.12-13) on an established
// connection decodes, leaves it established, and its LAP and APR, which
// carry the connection's comm IDs like an MRA, are counted on it.
func TestCMLAPAPR(t *testing.T) {
	conn := newConn(synth.Client(), synth.Server())
	cl, sv := conn.Client, conn.Server
	e, pkts := exchange(t, func(s *synth.Sequence) {
		s.CM(cl, sv, 1, conn.REQ())
		s.CM(sv, cl, 1, conn.REP())
		s.CM(cl, sv, 2, conn.RTU())
		s.CM(cl, sv, 3, conn.LAP())
		s.CM(sv, cl, 3, conn.APR(roce.APRejected))
	})
	cn := onlyConn(t, e)
	if cn.State != dissect.StateEstablished {
		t.Errorf("state %v", cn.State)
	}
	if l := &pkts[3].CM.LAP; pkts[3].CM.Attr != roce.LayerTypeCMLAP || l.RemoteQPN != 0x202 || l.LocalCommID != 0x1000AAAA ||
		l.AlternatePath.RemotePortGID != conn.Server.GID() {
		t.Errorf("LAP %v %+v", pkts[3].CM.Attr, l)
	}
	if a := &pkts[4].CM.APR; pkts[4].CM.Attr != roce.LayerTypeCMAPR || a.APStatus != roce.APRejected || a.RemoteCommID != 0x1000AAAA {
		t.Errorf("APR %v %+v", pkts[4].CM.Attr, a)
	}
	checkDir(t, pkts[3], cn, dissect.DirClientToServer)
	checkDir(t, pkts[4], cn, dissect.DirServerToClient)
	if cn.Dir[0].Packets != 3 || cn.Dir[1].Packets != 2 {
		t.Errorf("counters %+v", cn.Dir)
	}
}

// TestRealNFSPrivateData: what the connections of the real NFSv3 capture
// report is what the bytes of its CM REQ and REP carry. The bytes, as
// tshark -x shows them (frame 36, the REQ, and 37, the REP, of
// testdata/pcaps/rxe-nfs3.pcap; the MAD data area starts at frame offset
// 0x56, the REQ's 92 octets of private data at 0x56+140 = 0xe2, the REP's
// 196 at 0x56+36 = 0x7a):
//
//	REQ 0x0e2: 00 40 88 c2                cma_version 0, IP version 4, source port 0x88c2 = 35010
//	    0x0e6: 00×12 c0 00 02 02          source 192.0.2.2
//	    0x0f6: 00×12 c0 00 02 01          destination 192.0.2.1
//	    0x106: f6 ab 0e 18 01 01 03 03    at private-data offset 36: RFC 8797 v1, flags 0x01 (R=1),
//	                                      send (3+1)*1024 = 4096, receive (3+1)*1024 = 4096
//	REP 0x07a: f6 ab 0e 18 01 00 03 03    at offset 0: v1, R=0, send 4096, receive 4096
//
// so client-to-server = min(4096, 4096) = 4096 and server-to-client =
// min(4096, 4096) = 4096 (RFC 8797 4.2), and remote invalidation is not
// negotiated: the server's R is 0 (4.1). The REQ's service ID
// 0x0000000001064e51 (REQ octets 8-15, frame 0x5e) is the TCP port space
// and port 0x4e51 = 20049. Second connection: REQ frame 3036 (source port
// 0x93f6, same message bytes), REP 3037. Both end with DREQ/DREP (frames
// 3012/3013 and 7244/7245). QPNs 0x11/0x11 and 0x12/0x12 (REQ octet 32,
// REP octet 12).
func TestRealNFSPrivateData(t *testing.T) {
	pkts := loadCapture(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	// First check the bytes quoted above, so the test says what it tests.
	req, rep := pkts[35].data, pkts[36].data
	for _, q := range []struct {
		b    []byte
		at   int
		want string
	}{
		{req, 0x4e, "0010"}, {req, 0x5e, "0000000001064e51"}, {req, 0x76, "000011"},
		{req, 0xe2, "004088c2"}, {req, 0xf2, "c0000202"}, {req, 0x102, "c0000201"}, {req, 0x106, "f6ab0e1801010303"},
		{rep, 0x4e, "0013"}, {rep, 0x62, "000011"}, {rep, 0x7a, "f6ab0e1801000303"},
	} {
		if got := fmt.Sprintf("%x", q.b[q.at:q.at+len(q.want)/2]); got != q.want {
			t.Fatalf("bytes at %#x: %s, want %s", q.at, got, q.want)
		}
	}
	if n := len(req) - 4 - 0xe2; n != 92 {
		t.Fatalf("REQ private data %d octets", n)
	}
	if binary.BigEndian.Uint32(req[0x56:]) != 0x66627b8f || binary.BigEndian.Uint32(rep[0x5a:]) != 0x66627b8f {
		t.Fatal("REP does not answer the REQ's comm ID")
	}

	e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
	for _, cp := range pkts {
		p := &dissect.Packet{Number: cp.num, Timestamp: cp.ts, LinkType: cp.lt, CaptureLength: len(cp.data), Length: cp.length}
		e.Process(p, cp.data)
	}
	cs := e.Conns.Connections()
	if len(cs) != 2 {
		t.Fatalf("%d connections, want 2", len(cs))
	}
	for i, want := range []struct {
		req, rep, dreq int
		qpn            uint32
	}{{36, 37, 3012, 0x11}, {3036, 3037, 7244, 0x12}} {
		c := cs[i]
		if c.ServicePort != 20049 || c.State != dissect.StateClosed || c.FirstPacket != want.req || c.LastPacket != want.dreq+1 {
			t.Errorf("connection %d: port %d state %v packets %d..%d", c.ID, c.ServicePort, c.State, c.FirstPacket, c.LastPacket)
		}
		if c.Client.Address != "192.0.2.2" || c.Server.Address != "192.0.2.1" || c.Client.QPN != want.qpn || c.Server.QPN != want.qpn {
			t.Errorf("connection %d: %s QP %#x → %s QP %#x", c.ID, c.Client.Address, c.Client.QPN, c.Server.Address, c.Server.QPN)
		}
		cl, sv := rpcordma.Summary(&c.PrivateData[0]), rpcordma.Summary(&c.PrivateData[1])
		if cl.Packet != want.req || !cl.Present || cl.Length != 92 || cl.Offset != 36 || cl.Version != 1 ||
			!cl.RemoteInvalidate || cl.SendSize != 4096 || cl.ReceiveSize != 4096 || cl.Note != "" {
			t.Errorf("connection %d client: %+v", c.ID, cl)
		}
		if sv.Packet != want.rep || !sv.Present || sv.Length != 196 || sv.Offset != 0 || sv.Version != 1 ||
			sv.RemoteInvalidate || sv.SendSize != 4096 || sv.ReceiveSize != 4096 {
			t.Errorf("connection %d server: %+v", c.ID, sv)
		}
		cma := c.PrivateData[0].Framing.CMA
		if port := []uint16{35010, 0x93f6}[i]; cma.SrcPort != port || cma.SrcAddr.String() != "192.0.2.2" || cma.DstAddr.String() != "192.0.2.1" {
			t.Errorf("connection %d CMA header %+v", c.ID, cma)
		}
		th := rpcordma.Thresholds(c)
		if !c.Negotiated || th.ClientToServer != 4096 || th.ServerToClient != 4096 || th.RemoteInvalidation || !th.ClientR || th.ServerR {
			t.Errorf("connection %d thresholds %+v", c.ID, th)
		}
	}
}

// TestSnapLengthCutAfterLoss: a capture with a small snap length (tcpdump
// -s 64 keeps the headers only) that also lost a packet of a multi-packet
// Send: the engine must go on. Found by FuzzEngine: a SEND_MIDDLE two
// PSNs after the SEND_FIRST, cut right after its BTH, has no payload bytes
// at offset 2 × 1024. It made reassembly.go's messagePacket panic
// (copy(cur.data[off:], payload) with off past the data); fixed in
// d7d03b0.
func TestSnapLengthCutAfterLoss(t *testing.T) {
	cl, sv := synth.Client(), synth.Server()
	for _, op := range []roce.OpCode{roce.OpRCSendMiddle, roce.OpRCSendLast, roce.OpUCSendMiddle} {
		t.Run(op.String(), func(t *testing.T) {
			first := roce.OpRCSendFirst
			if op.Transport() == roce.TransportUC {
				first = roce.OpUCSendFirst
			}
			s := &synth.Sequence{}
			s.Packet(cl, sv, synth.Send(first, 0x22, 100), make([]byte, 1024))
			// PSN 101 is lost; 102 keeps only its headers.
			s.Packet(cl, sv, synth.Send(op, 0x22, 102), make([]byte, 1024), synth.WithSnap(14+20+8+12))
			s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, 0x22, 103), []byte("next"))
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			e, pkts := run(t, s.Frames)
			if e.Stats.Packets != 3 || pkts[1].ICRC.Status != dissect.CRCTruncated || pkts[2].Conn == nil {
				t.Errorf("packets %d, ICRC %v", e.Stats.Packets, pkts[1].ICRC.Status)
			}
		})
	}
}

// TestStartPSNsOfRealCapture: in rxe-rping.pcap the REQ (frame 13) carries
// Starting PSN 16174010 and the REP (frame 14) 4152345; the client's first
// SEND (frame 16) has PSN 4152345 and the server's first request, an RDMA
// Read Request (frame 18), PSN 16174010.
func TestStartPSNsOfRealCapture(t *testing.T) {
	r, err := source.Open("../testdata/pcaps/rxe-rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
	first := map[dissect.Direction]uint32{}
	if err := e.Run(r, func(p *dissect.Packet) error {
		if p.Conn != nil && p.CM.Attr == 0 && p.BTH.OpCode.IsRequest() {
			if _, seen := first[p.Dir]; !seen {
				first[p.Dir] = p.BTH.PSN
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c := e.Conns.Connections()[0]
	if c.Client.StartPSN != 4152345 || c.Server.StartPSN != 16174010 {
		t.Errorf("start PSNs: client %d, server %d; want 4152345, 16174010", c.Client.StartPSN, c.Server.StartPSN)
	}
	if first[dissect.DirClientToServer] != c.Client.StartPSN || first[dissect.DirServerToClient] != c.Server.StartPSN {
		t.Errorf("first request PSNs %v do not start where the CM said", first)
	}
}
