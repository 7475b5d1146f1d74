package iwarp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
)

// TestDDPTaggedHandBuilt: an RDMA Write segment laid out from RFC 5041
// section 4.3 and RFC 5040 section 4.2.
func TestDDPTaggedHandBuilt(t *testing.T) {
	seg := unhex(t, `
		c1                      // T=1 L=1 Rsvd=0 DV=1
		40                      // RDMAP control: RV=1 Rsv=0 Opcode 0 (RDMA Write)
		bd a3 17 00             // STag
		00 00 55 b0 ae f3 97 c0 // TO
		68 65 6c 6c 6f          // "hello"`)
	var d DDP
	if err := d.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if !d.T || !d.L || d.Rsvd != 0 || d.DV != 1 || d.RsvdULP[0] != 0x40 || d.STag != 0xbda31700 || d.TO != 0x000055b0aef397c0 ||
		string(d.Data) != "hello" || d.HeaderLen() != 14 || d.NextLayerType() != LayerTypeRDMAP || !bytes.Equal(d.LayerPayload(), seg) {
		t.Fatalf("%+v", d)
	}
	var r RDMAP
	if err := r.DecodeFromBytes(d.LayerPayload(), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if r.RV != 1 || r.Opcode != OpRDMAWrite || !r.Tagged || len(r.LayerContents()) != 0 || string(r.LayerPayload()) != "hello" {
		t.Fatalf("%+v", r)
	}
	for n := 0; n < 14; n++ {
		if err := d.DecodeFromBytes(seg[:n], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d octets: %v", n, err)
		}
	}
}

// TestSendWithInvalidateHandBuilt: RFC 5040 section 4.3 puts the Invalidate
// STag in the 32 RsvdULP bits of the untagged DDP header after the RDMAP
// control octet.
func TestSendWithInvalidateHandBuilt(t *testing.T) {
	seg := unhex(t, `
		41                      // T=0 L=1 DV=1
		46                      // RV=1 Opcode 6: Send with SE and Invalidate
		12 34 56 78             // Invalidate STag
		00 00 00 00 00 00 00 09 00 00 00 00 // QN 0, MSN 9, MO 0
		ff`)
	var d DDP
	var r RDMAP
	if err := d.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if err := r.DecodeFromBytes(d.LayerPayload(), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if d.QN != 0 || d.MSN != 9 || d.MO != 0 || r.Opcode != OpSendWithSEAndInvalidate || r.InvalidateSTag != 0x12345678 || r.Reserved != 0 ||
		!bytes.Equal(r.LayerPayload(), []byte{0xff}) || r.Opcode.String() != "Send with SE and Invalidate" {
		t.Fatalf("%+v %+v", d, r)
	}
	// A Send with Invalidate on a tagged segment is the wrong buffer model.
	bad := append([]byte(nil), seg...)
	bad[0] |= 0x80
	if err := r.DecodeFromBytes(bad, gopacket.NilDecodeFeedback); !errors.Is(err, ErrOpcodeBufferModel) {
		t.Fatalf("tagged Send: %v", err)
	}
}

// TestTerminateHandBuilt lays out a Terminate the way Linux siw sends one
// for a remote protection error on an RDMA Read Request (RFC 5040 section
// 4.8): Terminate Control with M, D and R, the offending FPDU's ULPDU_Length
// slot as DDP Segment Length, its 18-octet untagged DDP header and its
// 28-octet Read Request header.
func TestTerminateHandBuilt(t *testing.T) {
	seg := unhex(t, `
		41 47 00 00 00 00       // DDP untagged L=1, RDMAP Terminate, reserved
		00 00 00 02 00 00 00 01 00 00 00 00 // QN 2, MSN 1, MO 0
		01                      // Layer 0 (RDMAP), EType 1 (Remote Protection Error)
		00                      // Error Code 0 (Invalid STag)
		e0 00                   // M D R, reserved 0
		00 1c                   // DDP Segment Length 28
		41 41 00 00 00 00 00 00 00 01 00 00 00 05 00 00 00 00 // terminated DDP header (Read Request, QN 1, MSN 5)
		19 b7 25 00 00 00 56 13 9b e3 07 c0 00 00 00 64 2e 6d c1 00 00 00 55 b0 ae f3 be 60 // Read Request header`)
	var r RDMAP
	if err := r.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	tm := r.Terminate
	if r.Opcode != OpTerminate || tm.Layer != TermLayerRDMAP || tm.EType != 1 || tm.ErrorCode != 0 || !tm.M || !tm.D || !tm.R ||
		tm.Reserved != 0 || tm.DDPSegmentLength != 28 || len(tm.TerminatedDDPHeader) != 18 || len(tm.TerminatedRDMAHeader) != 28 ||
		len(r.LayerPayload()) != 0 || len(r.LayerContents()) != 4+2+18+28 {
		t.Fatalf("%+v", tm)
	}
	if tm.ETypeString() != "Remote Protection Error" || tm.ErrorCodeString() != "Invalid STag" || tm.Layer.String() != "RDMA" {
		t.Fatalf("names %q %q %q", tm.Layer, tm.ETypeString(), tm.ErrorCodeString())
	}
	d, ok := tm.TerminatedDDP()
	if !ok || d.QN != 1 || d.MSN != 5 || d.RsvdULP[0] != 0x41 {
		t.Fatalf("terminated DDP %+v", d)
	}
	var rr RDMAP
	if err := rr.DecodeFromBytes(append(append([]byte(nil), tm.TerminatedDDPHeader...), tm.TerminatedRDMAHeader...), gopacket.NilDecodeFeedback); err != nil ||
		rr.ReadRequest.RDMAReadMessageSize != 100 || rr.ReadRequest.SinkSTag != 0x19b72500 {
		t.Fatalf("terminated Read Request %+v %v", rr.ReadRequest, err)
	}
	roundTrip(t, seg, &r)

	// Names per layer (RFC 5040 section 4.8; LLP codes 5-7 from RFC 6581).
	for _, c := range []struct {
		tm        Terminate
		etype, ec string
	}{
		{Terminate{Layer: TermLayerDDP, EType: 1, ErrorCode: 3}, "Tagged Buffer Error", "TO wrap"},
		{Terminate{Layer: TermLayerDDP, EType: 2, ErrorCode: 5}, "Untagged Buffer Error", "DDP Message too long for available buffer"},
		{Terminate{Layer: TermLayerLLP, EType: 0, ErrorCode: 2}, "MPA Error", "MPA CRC Error"},
		{Terminate{Layer: TermLayerLLP, EType: 0, ErrorCode: 7}, "MPA Error", "No Matching RTR Option"},
		{Terminate{Layer: TermLayerRDMAP, EType: 2, ErrorCode: 6}, "Remote Operation Error", "Unexpected OpCode"},
	} {
		if c.tm.ETypeString() != c.etype || c.tm.ErrorCodeString() != c.ec {
			t.Errorf("%+v: %q %q", c.tm, c.tm.ETypeString(), c.tm.ErrorCodeString())
		}
	}

	// Catastrophic: no optional parts.
	short := append(append([]byte(nil), seg[:18]...), 0x00, 0x00, 0x00, 0x00)
	if err := r.DecodeFromBytes(short, gopacket.NilDecodeFeedback); err != nil || r.Terminate.D || r.Terminate.TerminatedDDPHeader != nil {
		t.Fatalf("catastrophic %v %+v", err, r.Terminate)
	}
	// D set but no header: truncated.
	if err := r.DecodeFromBytes(seg[:25], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated terminate: %v", err)
	}
}

// TestAtomicHandBuilt lays out RFC 7306 Atomic Request and Response headers
// in the order tshark 4.0 decodes them.
func TestAtomicHandBuilt(t *testing.T) {
	req := unhex(t, `
		41 4a 00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 00 // untagged, Atomic Request, QN 3, MSN 1
		00 00 00 02                     // reserved, AtomicOpcode 2 (CmpSwap)
		00 00 00 2a                     // Request Identifier 42
		11 22 33 44                     // Remote STag
		00 00 00 00 00 00 10 00         // Remote Tagged Offset
		00 00 00 00 00 00 00 05         // Swap Data
		ff ff ff ff ff ff ff ff         // Swap Mask
		00 00 00 00 00 00 00 04         // Compare Data
		ff ff ff ff ff ff ff ff         // Compare Mask`)
	var r RDMAP
	if err := r.DecodeFromBytes(req, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	a := r.AtomicRequest
	if r.Opcode != OpAtomicRequest || a.AtomicOpcode != AtomicCompareSwap || a.RequestIdentifier != 42 || a.RemoteSTag != 0x11223344 ||
		a.RemoteTaggedOffset != 0x1000 || a.AddOrSwapData != 5 || a.AddOrSwapMask != ^uint64(0) || a.CompareData != 4 || a.CompareMask != ^uint64(0) {
		t.Fatalf("%+v", a)
	}
	roundTrip(t, req, &r)
	resp := unhex(t, `
		41 4b 00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 00 // Atomic Response
		00 00 00 2a                     // Original Request Identifier
		00 00 00 00 00 00 00 04         // Original Remote Data Value`)
	if err := r.DecodeFromBytes(resp, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if r.Opcode != OpAtomicResponse || r.AtomicResponse.OriginalRequestIdentifier != 42 || r.AtomicResponse.OriginalRemoteDataValue != 4 {
		t.Fatalf("%+v", r.AtomicResponse)
	}
	roundTrip(t, resp, &r)
	if err := r.DecodeFromBytes(resp[:25], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestOpcodeStrings(t *testing.T) {
	want := []string{"RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send", "Send with Invalidate",
		"Send with SE", "Send with SE and Invalidate", "Terminate", "Immediate Data", "Immediate Data with SE",
		"Atomic Request", "Atomic Response"}
	for i, w := range want {
		if Opcode(i).String() != w {
			t.Errorf("opcode %d: %q want %q", i, Opcode(i), w)
		}
	}
	if Opcode(0xc).Known() || Opcode(0xc).String() != "Reserved opcode 0xc" {
		t.Errorf("opcode 0xc: %q", Opcode(0xc))
	}
}

// roundTrip serializes the DDP segment r was decoded from (DDP header via
// FillDDP, RDMAP header, payload) and compares with seg.
func roundTrip(t testing.TB, seg []byte, r *RDMAP) {
	t.Helper()
	var d DDP
	if err := d.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	var d2 DDP = d
	d2.RsvdULP = [5]byte{}
	r.FillDDP(&d2)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &d2, r, gopacket.Payload(r.LayerPayload())); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), seg) {
		t.Fatalf("round trip\n%x\nwant\n%x", buf.Bytes(), seg)
	}
}

// TestRoundTripCaptures re-serializes every FPDU and MPA Request/Reply of
// the siw captures and requires the octets on the wire.
func TestRoundTripCaptures(t *testing.T) {
	n := 0
	for _, name := range siwCaptures {
		for _, h := range mpaStreams(t, name) {
			var rr MPAReqRep
			seg, _ := segmentByFrame(readSegments(t, name), h.reqFrame)
			if err := rr.DecodeFromBytes(seg.payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &rr); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), seg.payload[:rr.Len()]) {
				t.Fatalf("%s frame %d: Req/Rep round trip\n%x\n%x", name, h.reqFrame, buf.Bytes(), seg.payload)
			}
			fr := NewFramer(h.framerConfig())
			fr.Feed(h.bytes())
			for {
				fp, err := fr.Next()
				if err == ErrNeedMore {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var m MPA
				var d DDP
				var r RDMAP
				if err := m.DecodeFromBytes(fp.Raw, gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				d.DecodeFromBytes(m.LayerPayload(), gopacket.NilDecodeFeedback)
				if err := r.DecodeFromBytes(d.LayerPayload(), gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				buf := gopacket.NewSerializeBuffer()
				if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &m, &d, &r, gopacket.Payload(r.LayerPayload())); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), fp.Raw) {
					t.Fatalf("%s FPDU at seq %d: round trip\n%x\nwant\n%x", name, fp.Seq, buf.Bytes(), fp.Raw)
				}
				n++
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d FPDUs", n)
	}
}

// TestPacketAndParser decodes a real Read Request FPDU through
// gopacket.NewPacket and through a DecodingLayerParser.
func TestPacketAndParser(t *testing.T) {
	h := mpaStreams(t, "siw-rping")[1] // server to client: RDMA Read Requests
	fr := NewFramer(h.framerConfig())
	fr.Feed(h.bytes())
	var raw []byte
	for {
		fp, err := fr.Next()
		if err != nil {
			t.Fatalf("no Read Request found: %v", err)
		}
		if fp.ULPDU[1]&0x0f == byte(OpRDMAReadRequest) {
			raw = append([]byte(nil), fp.Raw...)
			break
		}
	}
	p := gopacket.NewPacket(raw, LayerTypeMPA, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatal(el.Error())
	}
	var types []gopacket.LayerType
	for _, l := range p.Layers() {
		types = append(types, l.LayerType())
	}
	if len(types) != 3 || types[0] != LayerTypeMPA || types[1] != LayerTypeDDP || types[2] != LayerTypeRDMAP {
		t.Fatalf("layers %v", types)
	}
	r := p.Layer(LayerTypeRDMAP).(*RDMAP)
	// siw-rping frame 25: tshark sinkstag 0x19b72500, rdmardsz 100.
	if r.ReadRequest.SinkSTag != 0x19b72500 || r.ReadRequest.RDMAReadMessageSize != 100 || r.ReadRequest.SourceSTag != 0x2e6dc100 {
		t.Fatalf("%+v", r.ReadRequest)
	}

	var m MPA
	var d DDP
	var rd RDMAP
	var pl gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(LayerTypeMPA, &m, &d, &rd, &pl)
	decoded := []gopacket.LayerType{}
	if err := parser.DecodeLayers(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 3 || rd.ReadRequest != r.ReadRequest {
		t.Fatalf("parser decoded %v %+v", decoded, rd.ReadRequest)
	}
}

// TestTerminateSiwOrder: Linux siw's struct iwarp_terminate
// (drivers/infiniband/sw/siw/iwarp.h) declares layer:4, etype:4, ecode:8,
// flag_m, flag_d, flag_r, reserved:13 as C bit fields; on a little-endian
// host they fill each octet from its low bit, so DDP (1), untagged buffer
// (2), invalid MSN - no buffer (2), M and D go out as 21 02 03 00 where RFC
// 5040 section 4.8 writes 12 02 c0 00. Read by the RFC, 21 02 03 00 is
// layer 2 (LLP), error type 1 — which RFC 5040 section 7 does not define for
// MPA — with reserved bits set: impossible; read as siw wrote it, it is the
// DDP error, and the D flag says the offending DDP header follows.
func TestTerminateSiwOrder(t *testing.T) {
	hdr := unhex(t, `41 47 00 00 00 00  00 00 00 02 00 00 00 01 00 00 00 00`) // Terminate, QN 2, MSN 1
	offending := unhex(t, `00 10 41 43 00 00 00 00 00 00 00 00 00 00 00 02 00 00 00 00`)
	for _, c := range []struct {
		ctl   string
		order TermOrder
	}{
		{`12 02 c0 00`, TermOrderRFC},
		{`21 02 03 00`, TermOrderSiwLE},
		{`00 03 02 21`, TermOrderSiwBE},
	} {
		seg := append(append(append([]byte(nil), hdr...), unhex(t, c.ctl)...), offending...)
		var r RDMAP
		if err := r.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s: %v", c.ctl, err)
		}
		tm := &r.Terminate
		m := tm.Meaning()
		if tm.AltOrder != c.order || m.Layer != TermLayerDDP || m.EType != 2 || m.ErrorCode != 2 || !m.M || !m.D || m.R || m.Reserved != 0 {
			t.Errorf("%s: order %v, meaning %+v", c.ctl, tm.AltOrder, m)
		}
		if m.ETypeString() != "Untagged Buffer Error" || m.ErrorCodeString() != "Invalid MSN - no buffer available" {
			t.Errorf("%s: %q %q", c.ctl, m.ETypeString(), m.ErrorCodeString())
		}
		if tm.DDPSegmentLength != 16 || len(tm.TerminatedDDPHeader) != 18 || len(r.LayerPayload()) != 0 {
			t.Errorf("%s: DDP Segment Length %d, terminated header %x, payload %x", c.ctl, tm.DDPSegmentLength, tm.TerminatedDDPHeader, r.LayerPayload())
		}
		if d, ok := tm.TerminatedDDP(); !ok || d.QN != 0 || d.MSN != 2 {
			t.Errorf("%s: terminated DDP %+v", c.ctl, d)
		}
		if got := fmt.Sprintf("% x", tm.Control()); got != c.ctl {
			t.Errorf("Control() %q, want %q", got, c.ctl)
		}
		roundTrip(t, seg, &r)
	}
	// The RFC reading of siw's octets is what tshark shows.
	rfc := ReadTermControl([4]byte{0x21, 0x02, 0x03, 0x00}, TermOrderRFC)
	if rfc.Layer != TermLayerLLP || rfc.EType != 1 || rfc.ErrorCode != 2 || rfc.M || rfc.D || rfc.R || rfc.Reserved != 0x0300 || rfc.Meaningful() {
		t.Errorf("RFC reading %+v", rfc)
	}
	// A meaningful RFC reading is left alone, even where siw's layout
	// would give another (LLP CRC error, no flags: 20 02 00 00).
	seg := append(append([]byte(nil), hdr...), 0x20, 0x02, 0x00, 0x00)
	var r RDMAP
	if err := r.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil || r.Terminate.AltOrder != TermOrderRFC ||
		r.Terminate.Meaning().ErrorCodeString() != "MPA CRC Error" {
		t.Errorf("RFC Terminate %v %+v", err, r.Terminate)
	}
	// Impossible in every layout: the RFC reading, no alternative.
	seg = append(append([]byte(nil), hdr...), 0xf0, 0xff, 0x1f, 0xff)
	if err := r.DecodeFromBytes(seg, gopacket.NilDecodeFeedback); err != nil || r.Terminate.AltOrder != TermOrderRFC || r.Terminate.Layer != 0xf {
		t.Errorf("garbage Terminate %v %+v", err, r.Terminate)
	}
}
