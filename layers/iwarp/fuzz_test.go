package iwarp

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket"
)

// seedFPDUs returns up to n FPDUs of each siw capture, every opcode present
// represented.
func seedFPDUs(t testing.TB, n int) [][]byte {
	var out [][]byte
	for _, name := range []string{"siw-rping", "siw-nfs41", "siw-ib_read_bw"} {
		seen := map[byte]int{}
		for _, h := range mpaStreams(t, name) {
			fr := NewFramer(h.framerConfig())
			fr.Feed(h.bytes())
			for {
				fp, err := fr.Next()
				if err != nil {
					break
				}
				op := fp.ULPDU[1] & 0x0f
				if seen[op] < n {
					seen[op]++
					out = append(out, append([]byte(nil), fp.Raw...))
				}
			}
		}
	}
	return out
}

func FuzzMPAReqRep(f *testing.F) {
	for _, name := range []string{"siw-rping", "siw-nfs41"} {
		for _, h := range mpaStreams(f, name) {
			s, _ := segmentByFrame(readSegments(f, name), h.reqFrame)
			f.Add(s.payload)
		}
	}
	f.Add([]byte(MPAKeyRep + "\xe0\x01\x02\x00"))
	// The MPA Request and Reply of the Wireshark wiki's SMB Direct over
	// iWARP capture (packets 4 and 6): the legacy IRD/ORD header.
	f.Add([]byte(MPAKeyReq + "\x40\x01\x00\x08\x00\x00\x00\x10\x00\x00\x00\x00"))
	f.Add([]byte(MPAKeyRep + "\x40\x01\x00\x08\x00\x00\x00\x00\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m MPAReqRep
		if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		if m.Len() > len(data) || len(m.LayerContents())+len(m.LayerPayload()) != m.Len() {
			t.Fatalf("lengths: %d contents %d payload %d", m.Len(), len(m.LayerContents()), len(m.LayerPayload()))
		}
		var l MPAReqRep = m
		if l.DecodeLegacy() {
			if len(l.LayerContents())+len(l.LayerPayload()) != l.Len() || len(l.ULPPrivateData()) != len(l.PrivateData)-LegacyIRDORDLen {
				t.Fatalf("legacy lengths: contents %d payload %d", len(l.LayerContents()), len(l.LayerPayload()))
			}
		}
		if n, ok := MPAReqRepLen(data); !ok || n != m.Len() {
			t.Fatalf("MPAReqRepLen %d %v, decoded %d", n, ok, m.Len())
		}
		buf := gopacket.NewSerializeBuffer()
		if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data[:m.Len()]) {
			t.Fatalf("round trip\n%x\n%x", buf.Bytes(), data[:m.Len()])
		}
	})
}

func FuzzMPA(f *testing.F) {
	for _, s := range seedFPDUs(f, 2) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m MPA
		if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &m, gopacket.Payload(m.LayerPayload())); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data[:m.Len()]) {
			t.Fatalf("round trip\n%x\n%x", buf.Bytes(), data[:m.Len()])
		}
	})
}

func FuzzDDP(f *testing.F) {
	for _, s := range seedFPDUs(f, 2) {
		f.Add(s[2:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d DDP
		if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &d, gopacket.Payload(d.Data)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("round trip\n%x\n%x", buf.Bytes(), data)
		}
	})
}

func FuzzRDMAP(f *testing.F) {
	for _, s := range seedFPDUs(f, 2) {
		f.Add(s[2:])
	}
	f.Add(unhex(f, `41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 01 00 e0 00 00 1c
		41 41 00 00 00 00 00 00 00 01 00 00 00 05 00 00 00 00 19 b7`))
	f.Add(append(unhex(f, `41 4a 00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 00`), make([]byte, 52)...))
	f.Add(append(unhex(f, `41 4b 00 00 00 00 00 00 00 03 00 00 00 01 00 00 00 00`), make([]byte, 12)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r RDMAP
		if err := r.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		if !r.Opcode.Known() {
			return
		}
		var d DDP
		if err := d.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("RDMAP decoded, DDP not: %v", err)
		}
		want := append([]byte(nil), d.RsvdULP[:]...)
		r.FillDDP(&d)
		if !bytes.Equal(want, d.RsvdULP[:]) {
			t.Fatalf("FillDDP %x, segment %x", d.RsvdULP, want)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &d, &r, gopacket.Payload(r.LayerPayload())); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("round trip\n%x\n%x", buf.Bytes(), data)
		}
	})
}

// FuzzFramer frames a stream fed whole and fed in pieces cut by the fuzzer
// (the first octet chooses markers/CRC, the next two the piece sizes): the
// two must agree FPDU for FPDU and in whether and where sync was lost, and
// the buffer must never grow.
func FuzzFramer(f *testing.F) {
	h := mpaStreams(f, "siw-rping")[0]
	f.Add(append([]byte{0, 7, 200}, h.bytes()...))
	for _, s := range seedFPDUs(f, 1) {
		f.Add(append([]byte{0, 1, 3}, s...))
	}
	enc := Encoder{Framing: Framing{Markers: true, CRC: true}}
	var marked []byte
	for _, s := range seedFPDUs(f, 1)[:6] {
		marked, _ = enc.AppendFPDU(marked, s[2:len(s)-CRCLen-PadLen(int(binary.BigEndian.Uint16(s)))])
	}
	f.Add(append([]byte{3, 5, 100}, marked...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 3 {
			return
		}
		cfg := FramerConfig{Framing: Framing{Markers: data[0]&1 != 0, CRC: data[0]&2 != 0}, MaxULPDULength: int(data[0]>>2) * 1024}
		a, b := int(data[1])+1, int(data[2])+1
		stream := data[3:]
		type res struct {
			fpdus []framed
			err   error
		}
		run := func(chunks [][]byte) res {
			fr := NewFramer(cfg)
			if fr.Held() != 0 {
				t.Fatalf("a new framer holds %d octets", fr.Held())
			}
			var r res
			for _, c := range chunks {
				if err := fr.Feed(c); err != nil {
					break
				}
				for {
					fp, err := fr.Next()
					if err == ErrNeedMore {
						break
					}
					if err != nil {
						r.err = err
						break
					}
					if len(fp.Raw) > MaxFPDULen || int(fp.ULPDULength) != len(fp.ULPDU) || fp.Offset != uint64(fp.Seq) {
						t.Fatalf("bad FPDU: raw %d ulpdu %d/%d offset %d seq %d", len(fp.Raw), fp.ULPDULength, len(fp.ULPDU), fp.Offset, fp.Seq)
					}
					var m MPA
					if !cfg.Markers && (m.DecodeFromBytes(fp.Raw, gopacket.NilDecodeFeedback) != nil || !bytes.Equal(m.LayerPayload(), fp.ULPDU)) {
						t.Fatal("MPA layer disagrees with the framer")
					}
					r.fpdus = append(r.fpdus, framed{fp.Offset, fp.Seq, [32]byte{}, [32]byte{}})
				}
				if r.err != nil {
					break
				}
			}
			// Buffers grow with need, never past one FPDU.
			if cap(fr.buf) > MaxFPDULen || cap(fr.scratch) > MaxFPDULen || cap(fr.markers) > MaxFPDULen/MarkerInterval+2 {
				t.Fatalf("buffers of %d, %d octets and %d markers", cap(fr.buf), cap(fr.scratch), cap(fr.markers))
			}
			return r
		}
		whole := run([][]byte{stream})
		var chunks [][]byte
		for i, s := 0, stream; len(s) > 0; i++ {
			n := a
			if i%2 == 1 {
				n = b
			}
			n = min(n, len(s))
			chunks = append(chunks, s[:n])
			s = s[n:]
		}
		cut := run(chunks)
		if len(whole.fpdus) != len(cut.fpdus) || (whole.err == nil) != (cut.err == nil) {
			t.Fatalf("whole: %d FPDUs, %v; cut: %d FPDUs, %v", len(whole.fpdus), whole.err, len(cut.fpdus), cut.err)
		}
		for i := range whole.fpdus {
			if whole.fpdus[i] != cut.fpdus[i] {
				t.Fatalf("FPDU %d differs", i)
			}
		}
		if whole.err != nil && whole.err.Error() != cut.err.Error() {
			t.Fatalf("errors differ: %v / %v", whole.err, cut.err)
		}
	})
}
