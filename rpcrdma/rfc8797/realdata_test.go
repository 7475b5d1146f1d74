package rfc8797

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestRealNFSRoCE(t *testing.T) {
	req := Parse(rxeNFS3REQ(t), PrefixCMA)
	// CMA header fields as tshark shows them ("IP CM Private Data").
	if req.CMAErr != nil {
		t.Fatalf("CMA header: %v", req.CMAErr)
	}
	wantCMA := CMAHeader{Version: 0, IPVersion: 4, SrcPort: 0x88c2,
		SrcAddr: netip.MustParseAddr("192.0.2.2"), DstAddr: netip.MustParseAddr("192.0.2.1")}
	if req.CMA != wantCMA {
		t.Errorf("CMA = %+v, want %+v", req.CMA, wantCMA)
	}
	sid := ServiceID(0x0000000001064e51)
	if got := req.CMA.DstAddrPort(sid).String(); got != "192.0.2.1:20049" {
		t.Errorf("DstAddrPort = %s", got)
	}
	if got := req.CMA.SrcAddrPort().String(); got != "192.0.2.2:35010" {
		t.Errorf("SrcAddrPort = %s", got)
	}
	if !req.Valid() || req.Start != 36 || req.Offset != 36 {
		t.Fatalf("REQ: valid %v start %d offset %d err %v", req.Valid(), req.Start, req.Offset, req.Err)
	}
	wantReq := Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}
	if req.Message != wantReq || req.Message.SendBytes() != 4096 || req.Message.ReceiveBytes() != 4096 {
		t.Errorf("REQ message = %+v", req.Message)
	}

	rep := Parse(rxeNFS3REP(t), PrefixNone)
	wantRep := Message{Version: 1, SendSize: 3, ReceiveSize: 3}
	if !rep.Valid() || rep.Offset != 0 || rep.Message != wantRep {
		t.Fatalf("REP: %+v", rep)
	}

	th := Negotiate(req.Peer(), rep.Peer())
	want := Thresholds{ClientToServer: 4096, ServerToClient: 4096, RemoteInvalidation: false, ClientR: true}
	if th != want {
		t.Errorf("Negotiate = %+v, want %+v", th, want)
	}
}

func TestRealNFSiWARP(t *testing.T) {
	req := Parse(siwNFS3MPAReq(t), PrefixMPAv2)
	rep := Parse(siwNFS3MPARep(t), PrefixMPAv2)
	for _, r := range []Result{req, rep} {
		if !r.Valid() || r.Start != 4 || r.Offset != 4 {
			t.Fatalf("MPA: valid %v start %d offset %d: %s", r.Valid(), r.Start, r.Offset, r.Reason())
		}
	}
	if m := req.Message; m != (Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}) {
		t.Errorf("MPA Request message %+v", m)
	}
	if m := rep.Message; m != (Message{Version: 1, SendSize: 3, ReceiveSize: 3}) {
		t.Errorf("MPA Reply message %+v", m)
	}
	// Without the prefix the search still finds it at 4 (RFC 8797 5.2:
	// any offset).
	if r := Parse(siwNFS3MPAReq(t), PrefixNone); !r.Valid() || r.Offset != 4 || r.Start != 0 {
		t.Errorf("PrefixNone: %+v", r)
	}
	th := Negotiate(req.Peer(), rep.Peer())
	if th != (Thresholds{ClientToServer: 4096, ServerToClient: 4096, ClientR: true}) {
		t.Errorf("Negotiate = %+v", th)
	}
}

func TestRealNotRPCoverRDMA(t *testing.T) {
	// rping: valid CMA header, then zeros: absent, defaults apply.
	r := Parse(rxeRpingREQ(t), PrefixCMA)
	if r.CMAErr != nil || r.CMA.SrcPort != 0x82e7 {
		t.Errorf("rping CMA: %+v %v", r.CMA, r.CMAErr)
	}
	if !errors.Is(r.Err, ErrAbsent) || r.Offset != -1 || r.Peer() != nil {
		t.Errorf("rping: %+v", r)
	}
	if !strings.Contains(r.Reason(), "not found in octets 36..92") {
		t.Errorf("rping reason %q", r.Reason())
	}
	// The REP of rping and perftest: 196 zero octets.
	rep := Parse(make([]byte, 196), PrefixNone)
	if !errors.Is(rep.Err, ErrAbsent) {
		t.Errorf("zero REP: %v", rep.Err)
	}
	th := Negotiate(r.Peer(), rep.Peer())
	if th != (Thresholds{ClientToServer: 1024, ServerToClient: 1024, ClientDefault: true, ServerDefault: true}) {
		t.Errorf("defaults: %+v", th)
	}
	// perftest over siw: MPA v2 private data is the IRD/ORD field only.
	for _, pd := range [][]byte{{0, 0, 0, 0}, {0x00, 0x80, 0x00, 0x80}, {0x00, 0x01, 0x00, 0x01}} {
		if r := Parse(pd, PrefixMPAv2); !errors.Is(r.Err, ErrAbsent) || r.Start != 4 {
			t.Errorf("MPA %x: %+v", pd, r)
		}
	}
	// IPoIB connected mode: not an IP CM service ID, no message.
	sid := ServiceID(0x1000000000000404)
	if sid.IsIP() || sid.PortSpace() != 0 {
		t.Errorf("IPoIB CM service ID: IsIP %v, port space %v", sid.IsIP(), sid.PortSpace())
	}
	if r := Parse(ipoibCMREQ(t), PrefixNone); !errors.Is(r.Err, ErrAbsent) {
		t.Errorf("IPoIB CM: %+v", r)
	}
	// Given PrefixCMA anyway, the header check fails (IP version 0) and
	// the search starts at 0.
	if r := Parse(ipoibCMREQ(t), PrefixCMA); !errors.Is(r.CMAErr, ErrCMAIPVersion) || r.Start != 0 {
		t.Errorf("IPoIB CM as CMA: %+v", r)
	}
}

// TestCaptures runs Parse and Negotiate on every connection-setup message
// of the Ethernet captures, pairing each request with the next reply.
func TestCaptures(t *testing.T) {
	type want struct {
		rpcrdma bool // RFC 8797 messages present
		roce    bool
		conns   int
	}
	files := map[string]want{
		"rxe-nfs3.pcap":                               {true, true, 2},
		"rxe-nfs41.pcap":                              {true, true, 2},
		"rxe-nfs42-small.pcap":                        {true, true, 2},
		"siw-nfs3.pcap":                               {true, false, 2},
		"siw-nfs41.pcap":                              {true, false, 2},
		"siw-nfs42-small.pcap":                        {true, false, 2},
		"rxe-rping.pcap":                              {false, true, 1},
		"rxe-ib_send_bw.pcap":                         {false, true, 4},
		"rxe-ib_write_bw.pcap":                        {false, true, 4},
		"siw-rping.pcap":                              {false, false, 1},
		"siw-ib_send_bw.pcap":                         {false, false, 4},
		"siw-ib_read_bw.pcap":                         {false, false, 4},
		"public/montybeatnik-rdma-roce-lab-test.pcap": {false, true, 1},
	}
	for name, w := range files {
		t.Run(name, func(t *testing.T) {
			var client *Result
			conns := 0
			for _, p := range readSetupPD(t, name) {
				if isCM := p.Kind == "REQ" || p.Kind == "REP"; isCM != w.roce {
					t.Errorf("frame %d: %s in a capture with roce=%v", p.Frame, p.Kind, w.roce)
				}
				r := Parse(p.PD, prefixFor(p))
				if r.CMAErr != nil {
					t.Errorf("frame %d: %v", p.Frame, r.CMAProblem())
				}
				if p.Kind == "REQ" {
					if r.Prefix != PrefixCMA || r.CMA.IPVersion != 4 || !r.CMA.SrcAddr.Is4() ||
						r.CMA.SrcAddr.String() != p.Src {
						t.Errorf("frame %d: CMA %+v, packet from %s", p.Frame, r.CMA, p.Src)
					}
				}
				if w.rpcrdma != r.Valid() {
					t.Errorf("frame %d %s: valid %v: %s", p.Frame, p.Kind, r.Valid(), r.Reason())
				}
				if w.rpcrdma {
					wantOff := map[string]int{"REQ": 36, "REP": 0, "MPAReq": 4, "MPARep": 4}[p.Kind]
					if r.Offset != wantOff || r.Offset != r.Start {
						t.Errorf("frame %d %s: offset %d start %d, want %d", p.Frame, p.Kind, r.Offset, r.Start, wantOff)
					}
				}
				switch p.Kind {
				case "REQ", "MPAReq":
					rr := r
					client = &rr
				case "REP", "MPARep":
					if client == nil {
						t.Fatalf("frame %d: reply without request", p.Frame)
					}
					th := Negotiate(client.Peer(), r.Peer())
					exp := Thresholds{ClientToServer: 1024, ServerToClient: 1024, ClientDefault: true, ServerDefault: true}
					if w.rpcrdma {
						exp = Thresholds{ClientToServer: 4096, ServerToClient: 4096, ClientR: true}
					}
					if th != exp {
						t.Errorf("frame %d: Negotiate = %+v, want %+v", p.Frame, th, exp)
					}
					conns++
					client = nil
				}
			}
			// Retransmitted CM messages would add pairs; these captures
			// have none in the setup messages.
			if conns != w.conns {
				t.Errorf("%d request/reply pairs, want %d", conns, w.conns)
			}
		})
	}
}
