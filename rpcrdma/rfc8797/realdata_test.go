package rfc8797

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// unhex decodes hex written with spaces, newlines and "//" comments to the
// end of a line, then pads with zero octets to n (the captures' private
// data ends in zero padding).
func unhex(t testing.TB, s string, n int) []byte {
	t.Helper()
	var digits strings.Builder
	for line := range strings.Lines(s) {
		line, _, _ = strings.Cut(line, "//")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > n {
		t.Fatalf("literal of %d octets longer than %d", len(b), n)
	}
	return append(b, make([]byte, n-len(b))...)
}

// Real private data, copied from tshark -V -x of the captures and checked
// against the captures by TestLiteralsMatchCaptures.

// rxe-nfs3.pcap frame 36, CM REQ (ConnectRequest), NFSv3 client 192.0.2.2
// to server 192.0.2.1. ServiceID 0x0000000001064e51 (tshark: "IP CM
// ServiceID", Prefix 0000000001, Protocol 0x06, Destination Port 0x4e51 =
// 20049). 92 octets of private data, MAD offset 164 (frame offset 0xe2).
func rxeNFS3REQ(t testing.TB) []byte {
	return unhex(t, `
		00            // cma_version 0 (tshark: IP CM Major/Minor Version 0/0)
		40            // ip_version: IP version 4 in bits 7..4, reserved 0
		88c2          // source port 35010
		000000000000000000000000 c0000202   // src_addr: IPv4 192.0.2.2 in the last 4 octets
		000000000000000000000000 c0000201   // dst_addr: IPv4 192.0.2.1
		f6ab0e18      // [offset 36] RFC 8797 Format Identifier
		01            // Version 1
		01            // Reserved 0000000, R=1 (client supports remote invalidation)
		03            // Send Size 3: (3+1)*1024 = 4096 octets
		03            // Receive Size 3: 4096 octets
		`, 92) // then 48 zero octets
}

// rxe-nfs3.pcap frame 37, CM REP (ConnectReply) from the server. 196 octets
// of private data at MAD offset 60 (frame offset 0x7a); no CMA header.
func rxeNFS3REP(t testing.TB) []byte {
	return unhex(t, `
		f6ab0e18      // [offset 0] Format Identifier
		01            // Version 1
		00            // Reserved 0, R=0 (the Linux server never sets R)
		03            // Send Size 3: 4096 octets
		03            // Receive Size 3: 4096 octets
		`, 196) // then 188 zero octets
}

// siw-nfs3.pcap frame 39, MPA Request Frame, revision 2, flags 0x10 (tshark
// shows it as Reserved 0x10; no Marker, no CRC), Private data length 12.
func siwNFS3MPAReq(t testing.TB) []byte {
	return unhex(t, `
		0080 0000     // RFC 6581 IRD/ORD: A=0 B=0 IRD=128, C=0 D=0 ORD=0
		f6ab0e18      // [offset 4] Format Identifier
		01 01 03 03   // Version 1, R=1, Send 4096, Receive 4096
		`, 12)
}

// siw-nfs3.pcap frame 41, MPA Reply Frame, revision 2, Private data length 12.
func siwNFS3MPARep(t testing.TB) []byte {
	return unhex(t, `
		0000 0080     // RFC 6581 IRD/ORD: IRD=0, ORD=128
		f6ab0e18      // [offset 4] Format Identifier
		01 00 03 03   // Version 1, R=0, Send 4096, Receive 4096
		`, 12)
}

// rxe-rping.pcap frame 13, CM REQ of rping (not RPC-over-RDMA): ServiceID
// 0x0000000001061c06 (TCP port space, port 7174); the CMA header and then
// 56 zero octets: rping sends no private data of its own.
func rxeRpingREQ(t testing.TB) []byte {
	return unhex(t, `
		00 40 82e7    // cma_version 0, IPv4, source port 33511
		000000000000000000000000 c0000202   // 192.0.2.2
		000000000000000000000000 c0000201   // 192.0.2.1
		`, 92)
}

// srinivaskoritala-rdma-softroce-demo-infiniband.pcap frame 7 (ERF, native
// IB), CM REQ of IPoIB connected mode: ServiceID 0x1000000000000404 (IPoIB
// CM service ID base | QPN 0x404), private data = the IPoIB CM data (QPN
// 0x000405, MTU 0xfff4), not an RDMA-CM IP header and no RFC 8797 message.
func ipoibCMREQ(t testing.TB) []byte {
	return unhex(t, `00000405 0000fff4`, 92)
}

func TestLiteralsMatchCaptures(t *testing.T) {
	cases := []struct {
		file  string
		frame int
		kind  string
		want  []byte
	}{
		{"rxe-nfs3.pcap", 36, "REQ", rxeNFS3REQ(t)},
		{"rxe-nfs3.pcap", 37, "REP", rxeNFS3REP(t)},
		{"rxe-nfs41.pcap", 14, "REP", rxeNFS3REP(t)},
		{"siw-nfs3.pcap", 39, "MPAReq", siwNFS3MPAReq(t)},
		{"siw-nfs3.pcap", 41, "MPARep", siwNFS3MPARep(t)},
		{"siw-nfs41.pcap", 16, "MPAReq", siwNFS3MPAReq(t)},
		{"siw-nfs41.pcap", 18, "MPARep", siwNFS3MPARep(t)},
		{"rxe-rping.pcap", 13, "REQ", rxeRpingREQ(t)},
	}
	for _, c := range cases {
		var got *setupPD
		for _, p := range readSetupPD(t, c.file) {
			if p.Frame == c.frame {
				got = &p
				break
			}
		}
		if got == nil || got.Kind != c.kind {
			t.Errorf("%s frame %d: no %s found", c.file, c.frame, c.kind)
			continue
		}
		if !bytes.Equal(got.PD, c.want) {
			t.Errorf("%s frame %d private data\n got %x\nwant %x", c.file, c.frame, got.PD, c.want)
		}
	}
}

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
