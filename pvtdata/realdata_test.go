package pvtdata

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

// ident is the RFC 8797 Format Identifier: consumer data the framing
// must leave alone (its parsing is package rpcrdma/rfc8797's).
var ident = []byte{0xf6, 0xab, 0x0e, 0x18}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestFrameRealRoCE(t *testing.T) {
	f := Frame(rxeNFS3REQ(t), PrefixCMA)
	// CMA header fields as tshark shows them ("IP CM Private Data").
	if f.CMAErr != nil || f.CMAProblem() != nil {
		t.Fatalf("CMA header: %v", f.CMAProblem())
	}
	wantCMA := CMAHeader{Version: 0, IPVersion: 4, SrcPort: 0x88c2,
		SrcAddr: netip.MustParseAddr("192.0.2.2"), DstAddr: netip.MustParseAddr("192.0.2.1")}
	if f.CMA != wantCMA || f.Start != 36 || f.Len != 92 {
		t.Errorf("Frame = %+v, want CMA %+v from 36 of 92", f, wantCMA)
	}
	sid := ServiceID(0x0000000001064e51)
	if got := f.CMA.DstAddrPort(sid).String(); got != "192.0.2.1:20049" {
		t.Errorf("DstAddrPort = %s", got)
	}
	if got := f.CMA.SrcAddrPort().String(); got != "192.0.2.2:35010" {
		t.Errorf("SrcAddrPort = %s", got)
	}
	// tshark 4.0: the consumer's data (RFC 8797's message) starts right
	// after the header.
	if c := f.Consumer(rxeNFS3REQ(t)); !bytes.HasPrefix(c, ident) || len(c) != 56 {
		t.Errorf("consumer %x", c)
	}
	if f := Frame(rxeNFS3REP(t), PrefixNone); f.Start != 0 || f.CMAErr != nil || f.Len != 196 {
		t.Errorf("REP: %+v", f)
	}
	// rping: a valid header, then zeros.
	if f := Frame(rxeRpingREQ(t), PrefixCMA); f.CMAErr != nil || f.CMA.SrcPort != 0x82e7 || f.Start != 36 {
		t.Errorf("rping: %+v", f)
	}
	// IPoIB connected mode given PrefixCMA anyway: the header check fails
	// (IP version 0) and the consumer's data starts at 0.
	f = Frame(ipoibCMREQ(t), PrefixCMA)
	if !errors.Is(f.CMAErr, ErrCMAIPVersion) || f.Start != 0 || !strings.Contains(f.CMAProblem().Error(), "IP version 0") {
		t.Errorf("IPoIB CM as CMA: %+v", f)
	}
}

func TestFrameRealIWARP(t *testing.T) {
	for _, pd := range [][]byte{siwNFS3MPAReq(t), siwNFS3MPARep(t)} {
		f := Frame(pd, PrefixMPAv2)
		if f.Start != 4 || f.CMAErr != nil || !bytes.HasPrefix(f.Consumer(pd), ident) {
			t.Errorf("MPA %x: %+v", pd[:8], f)
		}
	}
	// perftest over siw: MPA v2 private data is the IRD/ORD field only.
	for _, pd := range [][]byte{{0, 0, 0, 0}, {0x00, 0x80, 0x00, 0x80}, {0x00, 0x80}} {
		if f := Frame(pd, PrefixMPAv2); f.Start != len(pd) || len(f.Consumer(pd)) != 0 {
			t.Errorf("MPA %x: %+v", pd, f)
		}
	}
}

func TestFrameEdgeCases(t *testing.T) {
	hdr := rxeNFS3REQ(t)[:CMAHeaderLen]
	cases := []struct {
		name   string
		pd     []byte
		prefix Prefix
		cmaErr error
		start  int
	}{
		{"empty, none", nil, PrefixNone, nil, 0},
		{"empty, CMA", nil, PrefixCMA, ErrCMATruncated, 0},
		{"empty, MPA", []byte{}, PrefixMPAv2, nil, 0},
		{"MPA 3 octets", []byte{0, 0x80, 0}, PrefixMPAv2, nil, 3},
		{"CMA header only", hdr, PrefixCMA, nil, 36},
		{"CMA 20 octets", hdr[:20], PrefixCMA, ErrCMATruncated, 0},
		// AF_IB addressing: no header under an IP CM service ID.
		{"no header after all", cat(ident, []byte{1, 1, 3, 3}, make([]byte, 84)), PrefixCMA, ErrCMAVersion, 0},
		{"unknown prefix value", hdr, Prefix(9), nil, 0},
	}
	for _, c := range cases {
		f := Frame(c.pd, c.prefix)
		if !errors.Is(f.CMAErr, c.cmaErr) || (c.cmaErr == nil) != (f.CMAErr == nil) || (c.cmaErr == nil) != (f.CMAProblem() == nil) {
			t.Errorf("%s: CMAErr %v, want %v", c.name, f.CMAErr, c.cmaErr)
		}
		if f.Start != c.start || f.Len != len(c.pd) || f.Prefix != c.prefix {
			t.Errorf("%s: %+v, want start %d len %d", c.name, f, c.start, len(c.pd))
		}
	}
	if f := Frame(hdr[:20], PrefixCMA); !strings.Contains(f.CMAProblem().Error(), "fewer than 36 octets (20 octets") {
		t.Errorf("CMAProblem %v", f.CMAProblem())
	}
}

func TestPrefixString(t *testing.T) {
	for p, s := range map[Prefix]string{PrefixNone: "none", PrefixCMA: "RDMA-CM IP header", PrefixMPAv2: "MPA v2 IRD/ORD", 7: "Prefix(7)"} {
		if p.String() != s {
			t.Errorf("%d: %q", p, p.String())
		}
	}
}

func TestFrameAllocs(t *testing.T) {
	for _, pd := range [][]byte{rxeNFS3REQ(t), rxeNFS3REP(t), ipoibCMREQ(t), nil} {
		for _, prefix := range []Prefix{PrefixNone, PrefixCMA, PrefixMPAv2} {
			if n := testing.AllocsPerRun(100, func() { _ = Frame(pd, prefix) }); n != 0 {
				t.Errorf("Frame(%x..., %v): %v allocations", pd[:min(8, len(pd))], prefix, n)
			}
		}
	}
}

// TestFrameCaptures frames every connection-setup message of the Ethernet
// captures: every REQ's header decodes and names the packet's source
// (tshark 4.0 "IP CM Private Data"), the consumer's data starts where
// tshark's does.
func TestFrameCaptures(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "rxe-nfs41.pcap", "siw-nfs3.pcap", "rxe-rping.pcap", "rxe-ib_send_bw.pcap",
		"siw-rping.pcap", "siw-ib_read_bw.pcap", "public/montybeatnik-rdma-roce-lab-test.pcap"} {
		t.Run(name, func(t *testing.T) {
			n := 0
			for _, p := range readSetupPD(t, name) {
				n++
				f := Frame(p.PD, prefixFor(p))
				if f.CMAErr != nil {
					t.Errorf("frame %d: %v", p.Frame, f.CMAProblem())
				}
				if p.Kind == "REQ" && (f.Prefix != PrefixCMA || f.CMA.IPVersion != 4 || f.CMA.SrcAddr.String() != p.Src) {
					t.Errorf("frame %d: CMA %+v, packet from %s", p.Frame, f.CMA, p.Src)
				}
				want := map[string]int{"REQ": 36, "REP": 0, "MPAReq": 4, "MPARep": 4}[p.Kind]
				if f.Start != want {
					t.Errorf("frame %d %s: start %d, want %d", p.Frame, p.Kind, f.Start, want)
				}
			}
			if n == 0 {
				t.Error("no set-up messages")
			}
		})
	}
}
