package pvtdata

import (
	"bytes"
	"errors"
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"net/netip"
	"strings"
	"testing"
)

// ident is the RFC 8797 Format Identifier: consumer data the framing
// must leave alone (its parsing is package rpcrdma/rfc8797's).
var ident = pdtest.Ident

var cat = pdtest.Cat

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
