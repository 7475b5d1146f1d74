package roce

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// An RC RDMA WRITE ONLY WITH IMMEDIATE packet built by hand (IBA Vol 1
// §9.2 BTH, §9.3.3 RETH, §9.3.7 ImmDt).
var handWriteImm = []byte{
	0x0B,       // 0: OpCode RC RDMA_WRITE_ONLY_WITH_IMMEDIATE
	0xE0,       // 1: SE=1 M=1 PadCnt=2 TVer=0
	0x12, 0x34, // 2-3: P_Key 0x1234
	0xC5,             // 4: Resv8a: FECN=1 BECN=1 reserved=5
	0x00, 0x00, 0x11, // 5-7: DestQP 0x11
	0x81,             // 8: AckReq=1 Resv7=1
	0xAB, 0xCD, 0xEF, // 9-11: PSN 0xABCDEF
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // 12-19: RETH VA
	0xDE, 0xAD, 0xBE, 0xEF, // 20-23: RETH R_Key
	0x00, 0x00, 0x00, 0x06, // 24-27: RETH DMA length 6
	0xCA, 0xFE, 0xBA, 0xBE, // 28-31: ImmDt
	'h', 'e', 'l', 'l', 'o', '!', // 32-37: payload
	0x00, 0x00, // 38-39: pad (PadCnt 2)
	0x11, 0x22, 0x33, 0x44, // 40-43: ICRC
}

func TestBTHHandBytes(t *testing.T) {
	var b BTH
	if err := b.DecodeFromBytes(handWriteImm, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if b.OpCode != OpRCRDMAWriteOnlyWithImmediate || !b.SE || !b.M || b.PadCnt != 2 || b.TVer != 0 ||
		b.PKey != 0x1234 || !b.FECN || !b.BECN || b.Resv6 != 5 || b.DestQP != 0x11 || !b.AckReq ||
		b.Resv7 != 1 || b.PSN != 0xABCDEF {
		t.Errorf("BTH fields: %+v", b)
	}
	if b.Ext != ExtRETH|ExtImmDt || !b.Has(ExtRETH) || !b.Has(ExtImmDt) || b.Has(ExtAETH) {
		t.Errorf("Ext = %v", b.Ext)
	}
	if b.RETH.VA != 0x0102030405060708 || b.RETH.RKey != 0xDEADBEEF || b.RETH.DMALen != 6 || b.ImmDt.Data != 0xCAFEBABE {
		t.Errorf("RETH %+v ImmDt %+v", b.RETH, b.ImmDt)
	}
	if string(b.Payload) != "hello!" || b.PayloadLen != 6 || !bytes.Equal(b.Pad, []byte{0, 0}) {
		t.Errorf("payload %q len %d pad % x", b.Payload, b.PayloadLen, b.Pad)
	}
	if !b.HasICRC || b.ICRC != 0x11223344 || b.Truncated {
		t.Errorf("ICRC 0x%08x has %v truncated %v", b.ICRC, b.HasICRC, b.Truncated)
	}
	if !bytes.Equal(b.Contents, handWriteImm[:12]) || !bytes.Equal(b.RETH.Contents, handWriteImm[12:28]) ||
		!bytes.Equal(b.RETH.Payload, handWriteImm[28:38]) || !bytes.Equal(b.ImmDt.Payload, handWriteImm[32:38]) {
		t.Error("contents/payload slices")
	}
	if b.NextLayerType() != gopacket.LayerTypePayload {
		t.Error("next layer")
	}

	// Round trip, with the pad and ICRC carried over.
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &b, gopacket.Payload(b.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), handWriteImm) {
		t.Errorf("round trip\n got % x\nwant % x", buf.Bytes(), handWriteImm)
	}
	// FixLengths recomputes PadCnt: 7 payload bytes need 1 pad byte.
	buf = gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &b, gopacket.Payload("hello!!")); err != nil {
		t.Fatal(err)
	}
	if out := buf.Bytes(); len(out) != 32+7+1+4 || out[1]&0x30 != 0x10 || b.PadCnt != 1 {
		t.Errorf("FixLengths: % x", out)
	}
}

func TestBTHTruncation(t *testing.T) {
	dlp := func(data []byte, cut bool) (*BTH, error) {
		var b BTH
		p := gopacket.NewDecodingLayerParser(LayerTypeBTH, &b)
		p.IgnoreUnsupported = true
		var decoded []gopacket.LayerType
		// A parser whose earlier layer found the packet cut: simulate by
		// setting the flag the way DecodeLayers leaves it for later layers.
		if cut {
			p.SetTruncated()
			return &b, b.DecodeFromBytes(data, p)
		}
		return &b, p.DecodeLayers(data, &decoded)
	}

	// Cut in the payload, reported by the layer before.
	b, err := dlp(handWriteImm[:35], true)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Truncated || b.HasICRC || string(b.Payload) != "hel" || b.PayloadLen != -1 || b.Pad != nil {
		t.Errorf("cut in payload: truncated %v icrc %v payload %q len %d", b.Truncated, b.HasICRC, b.Payload, b.PayloadLen)
	}
	if b.RETH.DMALen != 6 || b.ImmDt.Data != 0xCAFEBABE {
		t.Error("headers before the cut not decoded")
	}
	// Same with the wire length known: exact payload length, pad if present.
	var w BTH
	if err := w.DecodeWithLength(handWriteImm[:39], len(handWriteImm), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if !w.Truncated || w.HasICRC || string(w.Payload) != "hello!" || w.PayloadLen != 6 || len(w.Pad) != 1 {
		t.Errorf("with length: truncated %v payload %q len %d pad %d", w.Truncated, w.Payload, w.PayloadLen, len(w.Pad))
	}
	// Wire length given, data complete (plus trailing garbage): not truncated.
	if err := w.DecodeWithLength(append(bytes.Clone(handWriteImm), 0xFF, 0xFF), len(handWriteImm), gopacket.NilDecodeFeedback); err != nil || w.Truncated || w.ICRC != 0x11223344 {
		t.Errorf("complete with length: %v %+v", err, w)
	}
	if err := w.DecodeWithLength(handWriteImm, 20, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Errorf("wire length below headers: %v", err)
	}
	// No signal, but no room for an ICRC after the headers: truncated.
	b, err = dlp(handWriteImm[:34], false)
	if err != nil || !b.Truncated || b.HasICRC {
		t.Errorf("no room for ICRC: %v %v %v", err, b.Truncated, b.HasICRC)
	}
	// Cut inside an extended header the opcode implies: error, even when
	// the layer before says truncated.
	for _, n := range []int{0, 5, 11, 12, 27, 30, 31} {
		if _, err := dlp(handWriteImm[:n], true); !errors.Is(err, ErrTooShort) {
			t.Errorf("cut at %d: %v", n, err)
		}
	}
	// PadCnt larger than the payload in a complete packet.
	bad := bytes.Clone(handWriteImm[:12])
	bad[0] = byte(OpRCSendOnly)
	bad[1] = 0x30 // PadCnt 3
	bad = append(bad, 0xAA, 0xBB, 1, 2, 3, 4)
	if _, err := dlp(bad, false); !errors.Is(err, ErrBadLength) {
		t.Errorf("pad > payload: %v", err)
	}
}

// A real RDMA WRITE FIRST cut by a snap length: through a
// DecodingLayerParser from Ethernet (IPv4 and UDP report truncation) and
// through gopacket.NewPacket (which also knows the UDP length).
func TestBTHTruncatedRealPacket(t *testing.T) {
	var f capRoCEFrame
	for _, x := range capRoCE(t, filepath.Join(capDir, "rxe-nfs3.pcap")) {
		if OpCode(x.bth[0]) == OpRCRDMAWriteFirst {
			f = x
			break
		}
	}
	if f.data == nil {
		t.Fatal("no RDMA WRITE FIRST")
	}
	snap := len(f.l2) + 20 + 8 + 28 + 100 // 100 payload bytes survive
	cut := f.data[:snap]
	wantPay := len(f.bth) - 28 - int(f.bth[1]>>4&3) - 4

	var (
		eth     layers.Ethernet
		ip4     layers.IPv4
		udp     layers.UDP
		bth     BTH
		payload gopacket.Payload
	)
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &udp, &bth, &payload)
	var decoded []gopacket.LayerType
	if err := p.DecodeLayers(cut, &decoded); err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || !bth.Truncated || bth.HasICRC || len(bth.Payload) != 100 || bth.PayloadLen != -1 || !bth.Has(ExtRETH) {
		t.Errorf("DLP: truncated %v/%v icrc %v payload %d len %d", p.Truncated, bth.Truncated, bth.HasICRC, len(bth.Payload), bth.PayloadLen)
	}
	// The engine, knowing the UDP length, can ask for the exact layout.
	if err := bth.DecodeWithLength(udp.Payload, int(udp.Length)-8, p); err != nil || bth.PayloadLen != wantPay {
		t.Errorf("DecodeWithLength: %v, payload length %d, want %d", err, bth.PayloadLen, wantPay)
	}
	// The same packet whole is not truncated.
	if err := p.DecodeLayers(f.data, &decoded); err != nil || bth.Truncated || !bth.HasICRC || bth.PayloadLen != wantPay {
		t.Errorf("whole packet: %v truncated %v", err, bth.Truncated)
	}

	pk := gopacket.NewPacket(cut, layers.LinkTypeEthernet, gopacket.Default)
	nb, ok := pk.Layer(LayerTypeBTH).(*BTH)
	if !ok {
		t.Fatalf("NewPacket: %v", pk.Layers())
	}
	if !nb.Truncated || nb.HasICRC || nb.PayloadLen != wantPay || len(nb.Payload) != 100 || !pk.Metadata().Truncated {
		t.Errorf("NewPacket: truncated %v payload %d/%d", nb.Truncated, len(nb.Payload), nb.PayloadLen)
	}
	if pk.Layer(LayerTypeRETH) == nil {
		t.Error("NewPacket: no RETH layer")
	}
	// Cut inside the RETH: an error layer, no BTH.
	pk = gopacket.NewPacket(f.data[:len(f.l2)+20+8+20], layers.LinkTypeEthernet, gopacket.Default)
	if pk.ErrorLayer() == nil || pk.Layer(LayerTypeBTH) != nil {
		t.Errorf("cut in RETH: %v", pk.Layers())
	}
	// Lazy decoding finds the UDP length too.
	pk = gopacket.NewPacket(cut, layers.LinkTypeEthernet, gopacket.Lazy)
	if nb, ok := pk.Layer(LayerTypeBTH).(*BTH); !ok || nb.PayloadLen != wantPay {
		t.Errorf("lazy: %v", pk.Layers())
	}
}

func TestBTHNextLayerMAD(t *testing.T) {
	mk := func(op OpCode, qp uint32) *BTH {
		d := make([]byte, op.HeaderLen()+8+4)
		d[0] = byte(op)
		putBE24(d[5:], qp)
		var b BTH
		if err := b.DecodeFromBytes(d, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	for _, tc := range []struct {
		op   OpCode
		qp   uint32
		want gopacket.LayerType
	}{
		{OpUDSendOnly, 0, LayerTypeMAD},
		{OpUDSendOnly, 1, LayerTypeMAD},
		{OpUDSendOnly, 2, gopacket.LayerTypePayload},
		{OpUDSendOnlyWithImmediate, 1, gopacket.LayerTypePayload},
		{OpRCSendOnly, 1, gopacket.LayerTypePayload},
	} {
		if got := mk(tc.op, tc.qp).NextLayerType(); got != tc.want {
			t.Errorf("%v QP %d: %v, want %v", tc.op, tc.qp, got, tc.want)
		}
	}
}

// Every opcode with valid headers decodes and serializes back to the same
// bytes; undefined opcodes keep everything after the BTH as payload.
func TestBTHAllOpcodesRoundTrip(t *testing.T) {
	for i := 0; i < 256; i++ {
		op := OpCode(i)
		d := make([]byte, op.HeaderLen()+5+3+4) // 5 payload, 3 pad, ICRC
		for j := range d {
			d[j] = byte(j*7 + i)
		}
		d[0] = byte(op)
		d[1] = d[1]&^0x30 | 0x30 // PadCnt 3
		var b BTH
		if err := b.DecodeFromBytes(d, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		if len(b.Payload) != 5 || b.Ext != op.ExtHeaders() {
			t.Errorf("%v: payload %d ext %v", op, len(b.Payload), b.Ext)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &b, gopacket.Payload(b.Payload)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), d) {
			t.Errorf("%v: round trip\n got % x\nwant % x", op, buf.Bytes(), d)
		}
	}
}

// CNP (RoCEv2, Annex A17.9.2): BTH with opcode 0x81, 16 reserved bytes,
// ICRC; through NewPacket the CNP body is its own layer.
func TestCNP(t *testing.T) {
	d := make([]byte, 12+16+4)
	d[0] = byte(OpCNP)
	putBE24(d[5:], 0x123)
	d[12] = 0x77
	p := gopacket.NewPacket(d, LayerTypeBTH, gopacket.Default)
	b, _ := p.Layer(LayerTypeBTH).(*BTH)
	c, _ := p.Layer(LayerTypeCNP).(*CNP)
	if b == nil || c == nil || p.ErrorLayer() != nil {
		t.Fatalf("layers %v", p.Layers())
	}
	if b.OpCode.String() != "CNP" || c.Reserved[0] != 0x77 || len(b.Payload) != 0 || !b.HasICRC {
		t.Errorf("CNP decode: %v %+v", b.OpCode, c)
	}
}
