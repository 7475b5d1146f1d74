package roce

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
)

type extLayer interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
	LayerContents() []byte
}

// Hand-checked bytes for every extended header (offsets per IBA Vol 1 §9.3,
// Annex A14, IBTA 1.5 FETH, Annex A17.9.2 CNP), decoded, checked field by
// field, serialized back, and cut short.
func TestExtendedHeaders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		layer func() extLayer
		in    []byte
		check func(l extLayer) bool
	}{
		{"RDETH", func() extLayer { return &RDETH{} },
			// 0: reserved 0xAA; 1-3: EECnxt 0x123456
			[]byte{0xAA, 0x12, 0x34, 0x56},
			func(l extLayer) bool { h := l.(*RDETH); return h.Reserved == 0xAA && h.EECnxt == 0x123456 }},
		{"DETH", func() extLayer { return &DETH{} },
			// 0-3: Q_Key 0x80010000 (GSI well-known Q_Key); 4: reserved; 5-7: SrcQP 1
			[]byte{0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01},
			func(l extLayer) bool { h := l.(*DETH); return h.QKey == 0x80010000 && h.Reserved == 0 && h.SrcQP == 1 }},
		{"XRCETH", func() extLayer { return &XRCETH{} },
			// 0: reserved; 1-3: XRCSRQ 0xABCDEF
			[]byte{0x00, 0xAB, 0xCD, 0xEF},
			func(l extLayer) bool { h := l.(*XRCETH); return h.XRCSRQ == 0xABCDEF }},
		{"FETH", func() extLayer { return &FETH{} },
			// bits 31-6 reserved (1), 5-4 SEL = 2, 3-0 PLT = 1: 0x00000061
			[]byte{0x00, 0x00, 0x00, 0x61},
			func(l extLayer) bool { h := l.(*FETH); return h.Reserved == 1 && h.SEL == 2 && h.PLT == 1 }},
		{"RETH", func() extLayer { return &RETH{} },
			// 0-7: VA; 8-11: R_Key; 12-15: DMA length
			[]byte{0xC4, 0xAD, 0x31, 0x5D, 0xCC, 0x51, 0x30, 0x00, 0x00, 0x00, 0x0C, 0xAA, 0x00, 0x00, 0x50, 0x00},
			func(l extLayer) bool {
				h := l.(*RETH)
				return h.VA == 0xc4ad315dcc513000 && h.RKey == 0xcaa && h.DMALen == 20480
			}},
		{"AtomicETH", func() extLayer { return &AtomicETH{} },
			// 0-7: VA; 8-11: R_Key; 12-19: swap/add data; 20-27: compare data
			[]byte{0, 0, 0, 0, 0, 0, 0x10, 0x00, 0x11, 0x22, 0x33, 0x44,
				0, 0, 0, 0, 0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE},
			func(l extLayer) bool {
				h := l.(*AtomicETH)
				return h.VA == 0x1000 && h.RKey == 0x11223344 && h.SwapDt == 5 && h.CmpDt == 0xFFFFFFFFFFFFFFFE
			}},
		{"AETH", func() extLayer { return &AETH{} },
			// 0: syndrome 0x1F (ACK, credit code 31); 1-3: MSN 16
			[]byte{0x1F, 0x00, 0x00, 0x10},
			func(l extLayer) bool { h := l.(*AETH); return h.Syndrome == 0x1F && h.MSN == 16 }},
		{"AtomicAckETH", func() extLayer { return &AtomicAckETH{} },
			[]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08},
			func(l extLayer) bool { return l.(*AtomicAckETH).OrigRemDt == 0x0102030405060708 }},
		{"ImmDt", func() extLayer { return &ImmDt{} },
			[]byte{0xCA, 0xFE, 0xBA, 0xBE},
			func(l extLayer) bool { return l.(*ImmDt).Data == 0xCAFEBABE }},
		{"IETH", func() extLayer { return &IETH{} },
			// the R_Key of frame 1448 of rxe-nfs3 (tshark: 0000092c)
			[]byte{0x00, 0x00, 0x09, 0x2C},
			func(l extLayer) bool { return l.(*IETH).RKey == 0x92c }},
		{"CNP", func() extLayer { return &CNP{} },
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
			func(l extLayer) bool { return l.(*CNP).Reserved[15] == 16 && l.(*CNP).Reserved[0] == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layer()
			in := append(bytes.Clone(tc.in), 0xEE, 0xFF) // 2 bytes of payload after it
			if err := l.DecodeFromBytes(in, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if !tc.check(l) {
				t.Errorf("fields wrong: %+v", l)
			}
			if !bytes.Equal(l.LayerContents(), tc.in) || !bytes.Equal(l.LayerPayload(), []byte{0xEE, 0xFF}) {
				t.Error("contents/payload split wrong")
			}
			if l.NextLayerType() != gopacket.LayerTypePayload || l.CanDecode() != l.LayerType() {
				t.Error("layer type plumbing")
			}
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, l, gopacket.Payload{0xEE, 0xFF}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), in) {
				t.Errorf("round trip: % x, want % x", buf.Bytes(), in)
			}
			err := tc.layer().DecodeFromBytes(tc.in[:len(tc.in)-1], gopacket.NilDecodeFeedback)
			if !errors.Is(err, ErrTooShort) {
				t.Errorf("cut by one byte: %v", err)
			}
			// Alone through gopacket.NewPacket, by its registered layer type.
			p := gopacket.NewPacket(in, l.LayerType(), gopacket.Default)
			if p.ErrorLayer() != nil || p.Layer(l.LayerType()) == nil || p.ApplicationLayer() == nil {
				t.Errorf("NewPacket: %v", p.Layers())
			}
		})
	}
}

func TestSyndrome(t *testing.T) {
	for _, tc := range []struct {
		s       Syndrome
		kind    AckKind
		str     string
		credits int
		ok      bool
	}{
		// bits 6-5 = 00: ACK; bits 4-0 credit code (0x1F: invalid)
		{0x1F, AckKindACK, "ACK credits invalid (code 31)", 0, false},
		{0x00, AckKindACK, "ACK credits 0 (code 0)", 0, true},
		{0x05, AckKindACK, "ACK credits 6 (code 5)", 6, true},
		{0x07, AckKindACK, "ACK credits 12 (code 7)", 12, true},
		{0x1E, AckKindACK, "ACK credits 32768 (code 30)", 32768, true},
		// 01: RNR NAK, bits 4-0 timer code (Table 45)
		{0x20, AckKindRNRNAK, "RNR NAK timer 655.36 ms (code 0)", 0, false},
		{0x21, AckKindRNRNAK, "RNR NAK timer 0.01 ms (code 1)", 0, false},
		{0x2E, AckKindRNRNAK, "RNR NAK timer 1.28 ms (code 14)", 0, false},
		{0x3F, AckKindRNRNAK, "RNR NAK timer 491.52 ms (code 31)", 0, false},
		// 10: reserved
		{0x45, AckKindReserved, "reserved syndrome 0x45", 0, false},
		// 11: NAK, bits 4-0 NAK code
		{0x60, AckKindNAK, "NAK PSN sequence error", 0, false},
		{0x61, AckKindNAK, "NAK invalid request", 0, false},
		{0x62, AckKindNAK, "NAK remote access error", 0, false},
		{0x63, AckKindNAK, "NAK remote operational error", 0, false},
		{0x64, AckKindNAK, "NAK invalid RD request", 0, false},
		{0x65, AckKindNAK, "NAK reserved NAK code 5", 0, false},
	} {
		if tc.s.Kind() != tc.kind {
			t.Errorf("0x%02x: kind %v, want %v", uint8(tc.s), tc.s.Kind(), tc.kind)
		}
		if s := tc.s.String(); s != tc.str {
			t.Errorf("0x%02x: %q, want %q", uint8(tc.s), s, tc.str)
		}
		if n, ok := tc.s.Credits(); n != tc.credits || ok != tc.ok {
			t.Errorf("0x%02x: credits %d %v", uint8(tc.s), n, ok)
		}
	}
	if d := Syndrome(0x2E).RNRTimer().Duration(); d != 1280*time.Microsecond {
		t.Errorf("RNR code 14: %v", d)
	}
	if d := RNRTimer(0).Duration(); d != 655360*time.Microsecond {
		t.Errorf("RNR code 0: %v", d)
	}
	if !Syndrome(0x9F).Reserved() || Syndrome(0x1F).Reserved() {
		t.Error("reserved bit 7")
	}
	if Syndrome(0x63).NAKCode() != NAKRemoteOperationalError || !Syndrome(0x63).IsNAK() || !Syndrome(0x21).IsRNRNAK() || !Syndrome(0x1F).IsACK() {
		t.Error("kind helpers")
	}
	for k, s := range map[AckKind]string{AckKindACK: "ACK", AckKindRNRNAK: "RNR NAK", AckKindReserved: "reserved", AckKindNAK: "NAK"} {
		if k.String() != s {
			t.Errorf("%d: %s", k, k)
		}
	}
}

// TestExtInfoBitOrder: extInfo's k-th entry is bit k of ExtHeaders, and
// every opcode's headers are among them, as BTH decoding (which indexes
// extInfo by bit number) assumes.
func TestExtInfoBitOrder(t *testing.T) {
	for k, i := range extInfo {
		if i.ext != 1<<k {
			t.Errorf("extInfo[%d] is %s (%#x), want bit %d", k, i.name, uint16(i.ext), k)
		}
	}
	if extLast != 1<<len(extInfo) {
		t.Errorf("extLast %#x, %d entries in extInfo", uint16(extLast), len(extInfo))
	}
	for code := range opTable {
		if e := opTable[code].ext; e >= extLast {
			t.Errorf("opcode %#x: headers %#x beyond extInfo", code, uint16(e))
		}
	}
}
