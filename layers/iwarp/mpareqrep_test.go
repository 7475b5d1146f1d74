package iwarp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gopacket/gopacket"
)

// TestMPAReqRepHandBuilt: a Reply laid out from RFC 5044 section 7.1 and
// RFC 6581 section 5, with every flag and control bit set somewhere.
func TestMPAReqRepHandBuilt(t *testing.T) {
	raw := unhex(t, `
		4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65 // "MPA ID Rep Frame"
		f5                      // M C R, enhanced (0x10), Res 0x05
		02                      // Rev 2
		00 07                   // PD_Length 7
		c0 05 80 7f             // A=1 B=1 IRD=5 | C=1 D=0 ORD=127
		61 62 63                // ULP private data "abc"
		99                      // first FPDU octet, not part of the frame`)
	var m MPAReqRep
	if err := m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	want := EnhancedData{A: true, B: true, IRD: 5, C: true, D: false, ORD: 127}
	if !m.IsReply() || m.IsRequest() || !m.M || !m.C || !m.R || !m.Enhanced || m.Res != 5 || m.ResField() != 0x15 || m.Rev != 2 ||
		m.PDLength != 7 || !m.HasEnhancedData || m.EnhancedData != want || string(m.ULPPrivateData()) != "abc" ||
		string(m.LayerPayload()) != "abc" || len(m.LayerContents()) != 24 || m.Len() != 27 {
		t.Fatalf("%+v", m)
	}
	if !m.EnhancedData.PeerToPeer() {
		t.Fatal("A is peer-to-peer")
	}
	if got := want.Append(nil); !bytes.Equal(got, raw[20:24]) {
		t.Fatalf("Append %x", got)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &m); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), raw[:27]) {
		t.Fatalf("serialized %x", buf.Bytes())
	}

	// Rev 1: the private data is all the ULP's, even with the flag.
	v1 := append([]byte(nil), raw...)
	v1[17] = 1
	if err := m.DecodeFromBytes(v1, gopacket.NilDecodeFeedback); err != nil || m.HasEnhancedData || len(m.LayerPayload()) != 7 {
		t.Fatalf("rev 1: %v %+v", err, m)
	}
	// Rev 2 without the enhanced flag: no IRD/ORD (as Linux siw reads it).
	v2 := append([]byte(nil), raw...)
	v2[16] = 0x00
	if err := m.DecodeFromBytes(v2, gopacket.NilDecodeFeedback); err != nil || m.HasEnhancedData {
		t.Fatalf("rev 2 without flag: %v %+v", err, m)
	}
	// Errors.
	if err := m.DecodeFromBytes(raw[:26], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	big := append([]byte(nil), raw[:20]...)
	big[18], big[19] = 0x02, 0x01 // 513
	if err := m.DecodeFromBytes(append(big, make([]byte, 513)...), gopacket.NilDecodeFeedback); !errors.Is(err, ErrPrivateDataTooBig) {
		t.Fatalf("PD_Length 513: %v", err)
	}
	bad := append([]byte(nil), raw...)
	bad[0] = 'm'
	if err := m.DecodeFromBytes(bad, gopacket.NilDecodeFeedback); !errors.Is(err, ErrNotMPAKey) {
		t.Fatalf("bad key: %v", err)
	}
}

// TestIsMPAKey runs the heuristic over every TCP payload of the siw
// captures: it must fire exactly on tshark's MPA Request/Reply frames.
func TestIsMPAKey(t *testing.T) {
	for _, name := range siwCaptures {
		want := map[int]bool{}
		for _, row := range readTshark(t, name+".reqrep.tsv").rows {
			want[atoi(t, row["frame.number"])] = true
		}
		for _, s := range readSegments(t, name) {
			if IsMPAKey(s.payload) != want[s.frame] {
				t.Errorf("%s frame %d: IsMPAKey %v", name, s.frame, !want[s.frame])
			}
			if n, ok := MPAReqRepLen(s.payload); ok != want[s.frame] || (ok && n != len(s.payload)) {
				t.Errorf("%s frame %d: MPAReqRepLen %d %v, payload %d", name, s.frame, n, ok, len(s.payload))
			}
		}
	}
	if IsMPAKey([]byte(MPAKeyReq[:15])) || !IsMPAKey([]byte(MPAKeyReq)) {
		t.Fatal("short key")
	}
}

// TestNegotiatedFraming: siw offers neither markers nor CRC, so every
// direction of every connection runs without either (RFC 5044 section 7.1).
func TestNegotiatedFraming(t *testing.T) {
	for _, name := range siwCaptures {
		hs := mpaStreams(t, name)
		for i := 0; i+1 < len(hs); i += 2 {
			req, rep := &hs[i].reqRep, &hs[i+1].reqRep
			if !req.IsRequest() || !rep.IsReply() {
				t.Fatalf("%s: streams out of order", name)
			}
			a, b := Negotiate(req, rep)
			if a != (Framing{}) || b != (Framing{}) {
				t.Errorf("%s: %+v %+v", name, a, b)
			}
		}
	}
	req := &MPAReqRep{M: true}
	rep := &MPAReqRep{C: true}
	a, b := Negotiate(req, rep)
	if a != (Framing{Markers: false, CRC: true}) || b != (Framing{Markers: true, CRC: true}) {
		t.Fatalf("M in the Request asks the responder for markers: %+v %+v", a, b)
	}
}

// TestDDPReservedBits: the four Rsvd bits sit at mask 0x3c of the control
// octet (RFC 5041 section 4.2) and come out shifted, as tshark's
// iwarp_ddp.rsvd shows bitmask fields.
func TestDDPReservedBits(t *testing.T) {
	seg := unhex(t, `3d 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00`) // T=0 L=0 Rsvd=0xf DV=1
	var d DDP
	if err := d.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if d.T || d.L || d.Rsvd != 0xf || d.DV != 1 || d.Control() != 0x3d {
		t.Fatalf("%+v", d)
	}
	d.DV = 2
	if d.NextLayerType() != gopacket.LayerTypePayload {
		t.Fatal("DDP version 2 is not RDMAP")
	}
}

// TestLegacyIRDORD: the IRD/ORD Negotiate Header of [MS-SMBD] section 6.1
// (IRD, 4 octets, then ORD, 4 octets, leading the MPA private data), on
// frames built from that layout: the depths in network byte order, in
// little-endian (what Wireshark 4.6 calls broken_le_legacy), and private
// data that is neither (RFC 8797's, read as IRD 0xf6ab0e18); only a
// revision 1 frame without the RFC 6581 field carries it.
func TestLegacyIRDORD(t *testing.T) {
	frame := func(rev, flags byte, pd []byte) *MPAReqRep {
		b := append([]byte(MPAKeyReq), flags, rev, 0, byte(len(pd)))
		var m MPAReqRep
		if err := m.DecodeFromBytes(append(b, pd...), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		return &m
	}
	for _, tc := range []struct {
		name     string
		rev      byte
		flags    byte
		pd       string
		ok       bool
		ird, ord uint32
		le       bool
		ulp      int
	}{
		{"network order", 1, 0x40, "00000010 00000000", true, 16, 0, false, 0},
		{"with ULP data after", 1, 0x00, "00000008 00000004 abcd", true, 8, 4, false, 2},
		{"little-endian", 1, 0x00, "20000000 08000000", true, 32, 8, true, 0},
		{"RFC 8797 private data", 1, 0x00, "f6ab0e18 01010303", false, 0, 0, false, 8},
		{"shorter than 8", 1, 0x00, "00000010 0000", false, 0, 0, false, 6},
		{"revision 2 with RFC 6581", 2, 0x10, "00100008 00000000", false, 0, 0, false, 4},
	} {
		pd := unhex(t, tc.pd)
		m := frame(tc.rev, tc.flags, pd)
		ok := m.DecodeLegacy()
		if ok != tc.ok || m.HasLegacyIRDORD != tc.ok || m.LegacyIRDORD != (LegacyIRDORD{tc.ird, tc.ord, tc.le}) {
			t.Errorf("%s: %v %+v", tc.name, ok, m.LegacyIRDORD)
		}
		if len(m.ULPPrivateData()) != tc.ulp || len(m.LayerContents())+len(m.LayerPayload()) != m.Len() {
			t.Errorf("%s: ULP private data %d octets, contents %d, payload %d", tc.name, len(m.ULPPrivateData()), len(m.LayerContents()), len(m.LayerPayload()))
		}
	}
}
