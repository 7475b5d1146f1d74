package iwarp

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var words []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		words = append(words, strings.Fields(line)...)
	}
	b, err := hex.DecodeString(strings.Join(words, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCRC32cVectors uses the CRC32c test vectors of RFC 3720 appendix B.4
// (repeated in RFC 7143 appendix B.4), which MPA's CRC follows (RFC 5044
// section 4 refers to iSCSI). The "CRC" octets are as the RFC prints them,
// in transmission order.
func TestCRC32cVectors(t *testing.T) {
	inc := make([]byte, 32)
	dec := make([]byte, 32)
	for i := range inc {
		inc[i] = byte(i)
		dec[i] = byte(31 - i)
	}
	vectors := []struct {
		name string
		data []byte
		wire string
	}{
		{"32 octets of zero", make([]byte, 32), "aa 36 91 8a"},
		{"32 octets of ones", bytes.Repeat([]byte{0xff}, 32), "43 ab a8 62"},
		{"32 incrementing octets", inc, "4e 79 dd 46"},
		{"32 decrementing octets", dec, "5c db 3f 11"},
		{"iSCSI SCSI Read (10) command PDU", unhex(t, `
			01 c0 00 00 00 00 00 00 00 00 00 00 00 00 00 00
			14 00 00 00 00 00 04 00 00 00 00 14 00 00 00 18
			28 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00`), "56 3a 96 d9"},
	}
	for _, v := range vectors {
		want := binary.BigEndian.Uint32(unhex(t, v.wire))
		if got := CRC32c(v.data); got != want {
			t.Errorf("%s: CRC field 0x%08x, RFC 3720 B.4 says %s", v.name, got, v.wire)
		}
		// Split input gives the same CRC.
		if got := CRC32c(v.data[:7], v.data[7:]); got != want {
			t.Errorf("%s split: 0x%08x", v.name, got)
		}
	}
}

// TestMPAHandBuilt decodes an FPDU written out by hand from RFC 5044
// section 4: a 21-octet ULPDU (untagged DDP Send header + "abc") needs one pad
// octet so that 2 + 21 + 1 is a multiple of four, then four CRC octets.
func TestMPAHandBuilt(t *testing.T) {
	raw := unhex(t, `
		00 15                                           // ULPDU_Length = 21
		41 43 00 00 00 00 00 00 00 00 00 00 00 07 00 00 // DDP ctrl T=0 L=1 DV=1, RDMAP RV=1 Send, reserved, QN 0, MSN 7,
		00 00 61 62 63                                  // MO 0, "abc"
		00                                              // PAD
		de ad be ef                                     // CRC (not negotiated: any value)
		ff ff                                           // next FPDU, not ours`)
	var m MPA
	if err := m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if m.ULPDULength != 21 || len(m.LayerPayload()) != 21 || !bytes.Equal(m.Pad, []byte{0}) || m.CRC != 0xdeadbeef || m.Len() != 28 {
		t.Fatalf("decoded %+v len %d", m, m.Len())
	}
	if m.NextLayerType() != LayerTypeDDP {
		t.Fatalf("next layer %v", m.NextLayerType())
	}
	// With CRC the field would be the CRC32c of the first 24 octets.
	if got, want := m.ComputeCRC(), CRC32c(raw[:24]); got != want {
		t.Fatalf("ComputeCRC 0x%08x want 0x%08x", got, want)
	}
	for n := 0; n < 28; n++ {
		if err := m.DecodeFromBytes(raw[:n], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d octets: %v", n, err)
		}
	}

	// Serialize the same FPDU: FixLengths sets ULPDU_Length and zero pad,
	// ComputeChecksums the CRC32c in iSCSI byte order.
	buf := gopacket.NewSerializeBuffer()
	out := MPA{}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, &out, gopacket.Payload(raw[2:23])); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), raw[:24]...)
	c := crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli))
	want = binary.LittleEndian.AppendUint32(want, c)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("serialized\n%x\nwant\n%x", buf.Bytes(), want)
	}
}

func TestPadLen(t *testing.T) {
	// header (2) + ULPDU + pad is a multiple of 4 (RFC 5044 section 4).
	for l, want := range map[int]int{0: 2, 1: 1, 2: 0, 3: 3, 14: 0, 18: 0, 21: 1, 1442: 0, 65535: 3} {
		if got := PadLen(l); got != want {
			t.Errorf("PadLen(%d) = %d, want %d", l, got, want)
		}
	}
}

// markerExample is an FPDU sequence worked out by hand from RFC 5044
// section 5: markers every 512 octets counted from the first FPDU of full
// operation (MarkerSeq), each marker 16 reserved bits and FPDUPTR, the
// distance back to its FPDU's first octet. A marker that falls where an
// FPDU starts leads that FPDU with FPDUPTR 0; one that falls where the CRC
// starts belongs to the FPDU before the CRC; one right after a CRC leads the
// next FPDU. Offsets are from MarkerSeq.
//
//	FPDU 1 at    0: ULPDU 1000 octets, pad 2. Markers at 0 (FPDUPTR 0) and
//	                512 (FPDUPTR 512); raw 2+1000+2+4 + 8 = 1016 octets.
//	FPDU 2 at 1016: ULPDU 18, no pad. Marker at 1024 = FPDU offset 8
//	                (FPDUPTR 8), inside the DDP header; raw 24 + 4 = 28.
//	FPDU 3 at 1044: ULPDU 490, no pad; the CRC would start at 1044+492 =
//	                1536, a marker position: marker (FPDUPTR 492), then the
//	                CRC; raw 496 + 4 = 500.
//	FPDU 4 at 1544: ULPDU 498, no pad; raw 504, its CRC ends at 2048, so the
//	                marker at 2048 is not its own.
//	FPDU 5 at 2048: ULPDU 14 (tagged header only), pad 0; leading marker
//	                (FPDUPTR 0); raw 20 + 4 = 24.
var markerExample = []struct {
	at, ulpdu, raw int
	markers        []Marker
}{
	{0, 1000, 1016, []Marker{{Offset: 0, FPDUPTR: 0}, {Offset: 512, FPDUPTR: 512}}},
	{1016, 18, 28, []Marker{{Offset: 8, FPDUPTR: 8}}},
	{1044, 490, 500, []Marker{{Offset: 492, FPDUPTR: 492}}},
	{1544, 498, 504, nil},
	{2048, 14, 24, []Marker{{Offset: 0, FPDUPTR: 0}}},
}

// exampleULPDU returns a DDP-looking ULPDU of n octets (control octet DV=1).
func exampleULPDU(n int, fill byte) []byte {
	u := bytes.Repeat([]byte{fill}, n)
	u[0] = 0xc1 // T=1 L=1 DV=1
	return u
}

// handMarkedStream builds the example stream octet by octet from the layout
// above, independently of the encoder, with CRC32c over everything before
// each CRC field (markers included).
func handMarkedStream(t testing.TB) []byte {
	var s []byte
	tab := crc32.MakeTable(crc32.Castagnoli)
	for i, e := range markerExample {
		if len(s) != e.at {
			t.Fatalf("FPDU %d at %d, layout says %d", i+1, len(s), e.at)
		}
		u := exampleULPDU(e.ulpdu, byte(i+1))
		nonMarker := binary.BigEndian.AppendUint16(nil, uint16(e.ulpdu))
		nonMarker = append(nonMarker, u...)
		nonMarker = append(nonMarker, make([]byte, PadLen(e.ulpdu))...)
		var f []byte
		mi := 0
		for _, b := range nonMarker {
			if mi < len(e.markers) && len(f) == e.markers[mi].Offset {
				f = append(f, 0, 0, byte(e.markers[mi].FPDUPTR>>8), byte(e.markers[mi].FPDUPTR))
				mi++
			}
			f = append(f, b)
		}
		if mi < len(e.markers) && len(f) == e.markers[mi].Offset {
			f = append(f, 0, 0, byte(e.markers[mi].FPDUPTR>>8), byte(e.markers[mi].FPDUPTR))
			mi++
		}
		if mi != len(e.markers) {
			t.Fatalf("FPDU %d: placed %d of %d markers", i+1, mi, len(e.markers))
		}
		f = binary.LittleEndian.AppendUint32(f, crc32.Checksum(f, tab))
		if len(f) != e.raw {
			t.Fatalf("FPDU %d: %d octets, layout says %d", i+1, len(f), e.raw)
		}
		s = append(s, f...)
	}
	return s
}

func TestMarkersHandExample(t *testing.T) {
	var markerSeq uint32 = 0xfffffe00 // the example wraps the sequence space
	want := handMarkedStream(t)

	// The encoder writes the same octets.
	enc := Encoder{Framing: Framing{Markers: true, CRC: true}, Seq: markerSeq, MarkerSeq: markerSeq}
	var got []byte
	for i, e := range markerExample {
		var err error
		if got, err = enc.AppendFPDU(got, exampleULPDU(e.ulpdu, byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Fatalf("encoder differs from the hand layout at stream offset %d (len %d vs %d)", i, len(got), len(want))
			}
		}
		t.Fatalf("encoder wrote %d octets, hand layout %d", len(got), len(want))
	}

	// The framer finds the FPDUs, markers removed, CRC good, in every
	// segmentation.
	for _, step := range []int{1, 3, 4, 7, 100, 511, 512, 513, 5000} {
		fr := NewFramer(FramerConfig{Framing: Framing{Markers: true, CRC: true}, Seq: markerSeq, MarkerSeq: markerSeq})
		n := 0
		for off := 0; off < len(want); off += step {
			if err := fr.Feed(want[off:min(off+step, len(want))]); err != nil {
				t.Fatal(err)
			}
			for {
				fp, err := fr.Next()
				if err == ErrNeedMore {
					break
				}
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				e := markerExample[n]
				if int(fp.Offset) != e.at || fp.Seq != markerSeq+uint32(e.at) || len(fp.Raw) != e.raw || int(fp.ULPDULength) != e.ulpdu {
					t.Fatalf("step %d FPDU %d: offset %d seq %#x raw %d ulpdu %d", step, n+1, fp.Offset, fp.Seq, len(fp.Raw), fp.ULPDULength)
				}
				if !bytes.Equal(fp.ULPDU, exampleULPDU(e.ulpdu, byte(n+1))) {
					t.Fatalf("step %d FPDU %d: ULPDU differs", step, n+1)
				}
				if !fp.CRCChecked || !fp.CRCValid() {
					t.Fatalf("step %d FPDU %d: CRC 0x%08x computed 0x%08x", step, n+1, fp.CRC, fp.CRCComputed)
				}
				if len(fp.Markers) != len(e.markers) {
					t.Fatalf("step %d FPDU %d: markers %+v want %+v", step, n+1, fp.Markers, e.markers)
				}
				for i := range e.markers {
					if fp.Markers[i] != e.markers[i] {
						t.Fatalf("step %d FPDU %d: markers %+v want %+v", step, n+1, fp.Markers, e.markers)
					}
				}
				n++
			}
		}
		if n != len(markerExample) || fr.Buffered() != 0 {
			t.Fatalf("step %d: %d FPDUs, %d octets left", step, n, fr.Buffered())
		}
	}

	// MPA.SerializeTo with Markers places the markers too (FPDU 2).
	buf := gopacket.NewSerializeBuffer()
	m := MPA{Markers: &MarkerPosition{Seq: markerSeq + 1016, MarkerSeq: markerSeq}}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, &m, gopacket.Payload(exampleULPDU(18, 2))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want[1016:1044]) {
		t.Fatalf("MPA.SerializeTo with markers\n%x\nwant\n%x", buf.Bytes(), want[1016:1044])
	}
}

func TestMarkerErrors(t *testing.T) {
	s := handMarkedStream(t)
	cfg := FramerConfig{Framing: Framing{Markers: true, CRC: true}}

	// A wrong FPDUPTR is LLP error 3, lost sync.
	bad := append([]byte(nil), s...)
	bad[512+3] = 0x04 // FPDUPTR 516 instead of 512
	fr := NewFramer(cfg)
	fr.Feed(bad)
	_, err := fr.Next()
	var se *SyncError
	if !errors.As(err, &se) || se.Code != LLPMarkerMismatch || !errors.Is(err, ErrLostSync) {
		t.Fatalf("bad FPDUPTR: %v", err)
	}

	// A flipped ULPDU octet is a CRC error, not lost sync.
	bad = append([]byte(nil), s...)
	bad[20] ^= 1
	fr = NewFramer(cfg)
	fr.Feed(bad)
	fp, err := fr.Next()
	if err != nil || fp.CRCValid() || fr.Stats.CRCErrors != 1 {
		t.Fatalf("flipped octet: %v valid %v errors %d", err, fp != nil && fp.CRCValid(), fr.Stats.CRCErrors)
	}
	// A flipped marker RESERVED octet is covered by the CRC too.
	bad = append([]byte(nil), s...)
	bad[512] = 0x80
	fr = NewFramer(cfg)
	fr.Feed(bad)
	if fp, err = fr.Next(); err != nil || fp.CRCValid() {
		t.Fatalf("flipped marker: %v", err)
	}
	// An FPDU start off the four-octet marker grid cannot be framed.
	fr = NewFramer(FramerConfig{Framing: Framing{Markers: true}, Seq: 2, MarkerSeq: 0})
	fr.Feed(s)
	if _, err := fr.Next(); !errors.Is(err, ErrLostSync) {
		t.Fatalf("misaligned: %v", err)
	}
}
