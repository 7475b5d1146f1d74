package dissect

import (
	"encoding/binary"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// iwSeen is one FPDU as a run decoded it.
type iwSeen struct {
	pkt    int
	seq    uint32
	op     iwarp.Opcode
	ulpdu  uint16
	offset []int // its markers' offsets
}

// iwFPDUsOf runs frames and returns the client's FPDUs and the connection.
func iwFPDUsOf(frames []iwFrame) ([]iwSeen, *Connection) {
	var out []iwSeen
	e := iwRun(frames, Options{}, func(p *Packet) {
		if p.Dir != DirClientToServer {
			return
		}
		for _, f := range p.IWARP.FPDUs {
			s := iwSeen{pkt: p.Number, seq: f.Seq, op: f.RDMAP.Opcode, ulpdu: f.ULPDULength}
			for _, m := range f.Markers {
				s.offset = append(s.offset, m.Offset)
			}
			out = append(out, s)
		}
	})
	return out, e.Conns.Connections()[0]
}

// refixFPDU recomputes the CRC32c of the FPDU that is the whole TCP payload
// of frame (RFC 5044 section 6: over the FPDU, markers included, in
// network byte order) and the TCP checksum: what a sender that wrote the
// edited octets would have sent.
func refixFPDU(t *testing.T, frame []byte) {
	pay, _, ok := pcaptest.TCPPayload(frame)
	if !ok {
		t.Fatal("not a TCP frame")
	}
	n := len(pay)
	binary.BigEndian.PutUint32(pay[n-4:], iwarp.CRC32c(pay[:n-4]))
	pcaptest.FixTCPChecksum(t, frame)
}

// TestMPABadMarkers: the synthetic capture with markers and CRC32c both
// ways (iwarp-markers-crc, checked against tshark 4.0 by
// TestIWARPSyntheticAgainstTshark), its client's markers edited the two
// ways a 2008-era implementation got them wrong, CRC32c and TCP checksum
// recomputed as that sender would have:
//   - every interior marker's FPDUPTR byte-swapped (little-endian): the
//     first is named (MPA-MARKER-BAD), and every FPDU still decodes as in
//     the capture before the edit — the markers carry nothing else;
//   - the first interior marker moved 8 octets later (its FPDUPTR then 8
//     more, pointing back to the same FPDU from where it is): that marker
//     is named with where it is, its FPDU is lost, and no FPDU is decoded
//     that the unedited capture does not have at the same sequence number
//     with the same opcode (no header read from misframed octets).
func TestMPABadMarkers(t *testing.T) {
	base := iwSynthetic(t)["iwarp-markers-crc"]
	want, conn := iwFPDUsOf(base)
	if conn.IWARP.BadMarker[0] != nil || conn.IWARP.BadMarker[1] != nil || len(want) < 10 {
		t.Fatalf("unedited capture: bad markers %v %v, %d FPDUs", conn.IWARP.BadMarker[0], conn.IWARP.BadMarker[1], len(want))
	}
	byPkt := map[int]iwSeen{}
	bySeq := map[uint32]iwSeen{}
	var first *iwSeen
	for i, f := range want {
		byPkt[f.pkt] = f
		bySeq[f.seq] = f
		if first == nil {
			for _, o := range f.offset {
				if o > 0 {
					first = &want[i]
				}
			}
		}
	}
	if first == nil {
		t.Fatal("no FPDU with an interior marker")
	}
	interior := func(f iwSeen) int {
		for _, o := range f.offset {
			if o > 0 {
				return o
			}
		}
		return 0
	}
	edit := func(each func(pay []byte, f iwSeen) bool) []iwFrame {
		out := make([]iwFrame, len(base))
		for i, fr := range base {
			out[i] = fr
			f, ok := byPkt[fr.num]
			if !ok || interior(f) == 0 {
				continue
			}
			out[i].data = append([]byte(nil), fr.data...)
			pay, _, _ := pcaptest.TCPPayload(out[i].data)
			if len(pay) != iwarp.FPDULen(int(f.ulpdu))+4*len(f.offset) {
				t.Fatalf("packet %d: payload %d octets, not the FPDU", fr.num, len(pay))
			}
			if each(pay, f) {
				refixFPDU(t, out[i].data)
			}
		}
		return out
	}

	// Byte-swapped FPDUPTRs.
	swapped := edit(func(pay []byte, f iwSeen) bool {
		o := interior(f)
		if binary.BigEndian.Uint16(pay[o:]) != 0 || int(binary.BigEndian.Uint16(pay[o+2:])) != o {
			t.Fatalf("packet %d: no marker at %d: % x", f.pkt, o, pay[o:o+4])
		}
		pay[o+2], pay[o+3] = pay[o+3], pay[o+2]
		return true
	})
	got, conn := iwFPDUsOf(swapped)
	b := conn.IWARP.BadMarker[0]
	o := interior(*first)
	if b == nil || !b.Swapped || b.Packet != first.pkt || b.Seq != first.seq+uint32(o) || b.Want != uint16(o) ||
		b.Octets != [4]byte{0, 0, byte(o), byte(o >> 8)} {
		t.Fatalf("swapped: bad marker %+v, want packet %d, sequence %d, FPDUPTR %d", b, first.pkt, first.seq+uint32(o), o)
	}
	if len(got) != len(want) || conn.IWARP.Dir[0].LostSync != 0 {
		t.Errorf("swapped: %d FPDUs (want %d), lost sync %d times", len(got), len(want), conn.IWARP.Dir[0].LostSync)
	}

	// The first interior marker 8 octets later.
	moved := edit(func(pay []byte, f iwSeen) bool {
		if f.pkt != first.pkt {
			return false
		}
		o := interior(f)
		copy(pay[o:], pay[o+4:o+12])
		binary.BigEndian.PutUint32(pay[o+8:], uint32(o+8))
		return true
	})
	got, conn = iwFPDUsOf(moved)
	b = conn.IWARP.BadMarker[0]
	if b == nil || b.Swapped || b.Packet != first.pkt || b.Seq != first.seq+uint32(o) || b.Elsewhere != 8 {
		t.Fatalf("moved: bad marker %+v, want packet %d, sequence %d, 8 octets off", b, first.pkt, first.seq+uint32(o))
	}
	for _, g := range got {
		if w, ok := bySeq[g.seq]; !ok || w.op != g.op || w.ulpdu != g.ulpdu {
			t.Errorf("moved: FPDU at %d (packet %d, %v, ULPDU %d) is not in the capture", g.seq, g.pkt, g.op, g.ulpdu)
		}
	}
	if len(got) != len(want)-1 {
		t.Errorf("moved: %d FPDUs, want %d (all but the one with the moved marker)", len(got), len(want)-1)
	}
	t.Logf("moved: first bad marker %s", b.MarkerFault.String())

	// The same in the capture whose TCP segments cut FPDUs at 700 octets
	// and carry several: after the lost FPDU a segment starts mid-FPDU, and
	// framing must not start there.
	split := iwSynthetic(t)["iwarp-markers-crc-split"]
	want, _ = iwFPDUsOf(split)
	bySeq = map[uint32]iwSeen{}
	first = nil
	for i, f := range want {
		bySeq[f.seq] = f
		if first == nil && interior(f) > 0 {
			first = &want[i]
		}
	}
	if first == nil {
		t.Fatal("split: no FPDU with an interior marker")
	}
	o = interior(*first)
	moved = editClientStream(t, split, func(stream []byte, seq0 uint32) {
		fp := stream[first.seq-seq0:][:iwarp.FPDULen(int(first.ulpdu))+4*len(first.offset)]
		copy(fp[o:], fp[o+4:o+12])
		binary.BigEndian.PutUint32(fp[o+8:], uint32(o+8))
		binary.BigEndian.PutUint32(fp[len(fp)-4:], iwarp.CRC32c(fp[:len(fp)-4]))
	})
	got, conn = iwFPDUsOf(moved)
	if b = conn.IWARP.BadMarker[0]; b == nil || b.Seq != first.seq+uint32(o) || b.Elsewhere != 8 {
		t.Fatalf("split, moved: bad marker %+v, want sequence %d, 8 octets off", b, first.seq+uint32(o))
	}
	for _, g := range got {
		if w, ok := bySeq[g.seq]; !ok || w.op != g.op || w.ulpdu != g.ulpdu {
			t.Errorf("split, moved: FPDU at %d (packet %d, %v, ULPDU %d) is not in the capture", g.seq, g.pkt, g.op, g.ulpdu)
		}
	}
	t.Logf("split, moved: %d of %d FPDUs decoded", len(got), len(want))

	// Every interior marker of the client 8 octets later, as a sender
	// counting its grid from elsewhere would put them.
	moved = editClientStream(t, split, func(stream []byte, seq0 uint32) {
		for _, f := range want {
			if interior(f) == 0 {
				continue
			}
			fp := stream[f.seq-seq0:][:iwarp.FPDULen(int(f.ulpdu))+4*len(f.offset)]
			for _, o := range f.offset {
				if o > 0 && o+12 <= len(fp)-4 {
					copy(fp[o:], fp[o+4:o+12])
					binary.BigEndian.PutUint32(fp[o+8:], uint32(o+8))
				}
			}
			binary.BigEndian.PutUint32(fp[len(fp)-4:], iwarp.CRC32c(fp[:len(fp)-4]))
		}
	})
	got, conn = iwFPDUsOf(moved)
	if b = conn.IWARP.BadMarker[0]; b == nil || b.Seq != first.seq+uint32(o) || b.Elsewhere != 8 {
		t.Fatalf("split, all moved: bad marker %+v, want sequence %d, 8 octets off", b, first.seq+uint32(o))
	}
	for _, g := range got {
		if w, ok := bySeq[g.seq]; !ok || w.op != g.op || w.ulpdu != g.ulpdu {
			t.Errorf("split, all moved: FPDU at %d (packet %d, %v, ULPDU %d) is not in the capture", g.seq, g.pkt, g.op, g.ulpdu)
		}
	}
	t.Logf("split, all moved: %d of %d FPDUs decoded", len(got), len(want))
}

// editClientStream lets edit change the client's TCP stream after its
// MPA Request (seq0 is the sequence number of stream[0]) and writes it back
// into copies of the frames, TCP checksums recomputed.
func editClientStream(t *testing.T, frames []iwFrame, edit func(stream []byte, seq0 uint32)) []iwFrame {
	t.Helper()
	type seg struct {
		i   int
		seq uint32
	}
	var segs []seg
	var stream []byte
	var seq0 uint32
	for i, fr := range frames {
		pay, off, ok := pcaptest.TCPPayload(fr.data)
		if !ok || len(pay) == 0 || binary.BigEndian.Uint16(fr.data[off-20:]) != 41000 || iwarp.IsMPAKey(pay) {
			continue
		}
		seq := binary.BigEndian.Uint32(fr.data[off-20+4:])
		if len(segs) == 0 {
			seq0 = seq
		}
		if seq != seq0+uint32(len(stream)) {
			t.Fatalf("frame %d: sequence %d, not %d", fr.num, seq, seq0+uint32(len(stream)))
		}
		segs = append(segs, seg{i, seq})
		stream = append(stream, pay...)
	}
	edit(stream, seq0)
	out := append([]iwFrame(nil), frames...)
	for _, s := range segs {
		out[s.i].data = append([]byte(nil), frames[s.i].data...)
		pay, _, _ := pcaptest.TCPPayload(out[s.i].data)
		copy(pay, stream[s.seq-seq0:])
		pcaptest.FixTCPChecksum(t, out[s.i].data)
	}
	return out
}
