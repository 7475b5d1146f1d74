package iwarp

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand"
	"testing"

	"github.com/gopacket/gopacket"
)

type framed struct {
	offset uint64
	seq    uint32
	sum    [32]byte // of the raw FPDU
	ulpdu  [32]byte
}

// frameAll feeds chunks to a framer and returns every FPDU; it fails on any
// error other than ErrNeedMore.
func frameAll(t testing.TB, cfg FramerConfig, chunks [][]byte) ([]framed, *Framer) {
	t.Helper()
	fr := NewFramer(cfg)
	var out []framed
	for _, c := range chunks {
		if err := fr.Feed(c); err != nil {
			t.Fatal(err)
		}
		for {
			fp, err := fr.Next()
			if err == ErrNeedMore {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, framed{fp.Offset, fp.Seq, sha256.Sum256(fp.Raw), sha256.Sum256(fp.ULPDU)})
		}
	}
	return out, fr
}

// randomChunks cuts b at random points: mostly small pieces, some single
// octets, some large merges.
func randomChunks(rng *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		var n int
		switch rng.Intn(4) {
		case 0:
			n = 1 + rng.Intn(3)
		case 1:
			n = 1 + rng.Intn(100)
		case 2:
			n = 1 + rng.Intn(3000)
		default:
			n = 1 + rng.Intn(70000)
		}
		n = min(n, len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// TestFramerResegmentation frames each MPA half-connection of the siw
// captures three ways: as TCP delivered it, cut at random points, and all
// at once; the FPDU sequence (offset, sequence number, octets) must be the
// same.
func TestFramerResegmentation(t *testing.T) {
	rng := rand.New(rand.NewSource(5044))
	total := 0
	for _, name := range siwCaptures {
		for _, h := range mpaStreams(t, name) {
			var bySegment [][]byte
			for _, p := range h.pieces {
				bySegment = append(bySegment, p.data)
			}
			ref, fr := frameAll(t, h.framerConfig(), bySegment)
			if fr.Buffered() != 0 {
				t.Fatalf("%s %s: %d octets left over", name, h.dir, fr.Buffered())
			}
			all := h.bytes()
			for round := 0; round < 3; round++ {
				got, _ := frameAll(t, h.framerConfig(), randomChunks(rng, all))
				if len(got) != len(ref) {
					t.Fatalf("%s %s round %d: %d FPDUs, by segment %d", name, h.dir, round, len(got), len(ref))
				}
				for i := range ref {
					if got[i] != ref[i] {
						t.Fatalf("%s %s round %d: FPDU %d differs: %+v vs %+v", name, h.dir, round, i, got[i], ref[i])
					}
				}
			}
			got, fr := frameAll(t, h.framerConfig(), [][]byte{all})
			if len(got) != len(ref) || fr.Stats.Carried != 0 {
				t.Fatalf("%s %s whole: %d FPDUs, %d carried", name, h.dir, len(got), fr.Stats.Carried)
			}
			total += len(ref)
		}
	}
	if total < 10000 {
		t.Fatalf("only %d FPDUs", total)
	}
}

// TestFramerMarkersCRCOnRealStream re-frames a real siw stream with markers
// and CRC32c (which siw does not negotiate), cut at random points: the same
// ULPDUs come out, every CRC checks, every marker points home.
func TestFramerMarkersCRCOnRealStream(t *testing.T) {
	h := mpaStreams(t, "siw-nfs41")[0]
	var ulpdus [][]byte
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
		ulpdus = append(ulpdus, append([]byte(nil), fp.ULPDU...))
	}
	const start = 0x7fffff00
	enc := Encoder{Framing: Framing{Markers: true, CRC: true}, Seq: start, MarkerSeq: start}
	var stream []byte
	for _, u := range ulpdus {
		var err error
		if stream, err = enc.AppendFPDU(stream, u); err != nil {
			t.Fatal(err)
		}
	}
	if enc.Seq != start+uint32(len(stream)) {
		t.Fatalf("encoder seq %d after %d octets", enc.Seq-start, len(stream))
	}
	rng := rand.New(rand.NewSource(6581))
	cfg := FramerConfig{Framing: Framing{Markers: true, CRC: true}, Seq: start, MarkerSeq: start}
	fr = NewFramer(cfg)
	i, markers := 0, 0
	for _, c := range randomChunks(rng, stream) {
		if err := fr.Feed(c); err != nil {
			t.Fatal(err)
		}
		for {
			fp, err := fr.Next()
			if err == ErrNeedMore {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fp.ULPDU, ulpdus[i]) || !fp.CRCValid() {
				t.Fatalf("FPDU %d: ULPDU equal %v, CRC 0x%08x vs 0x%08x", i, bytes.Equal(fp.ULPDU, ulpdus[i]), fp.CRC, fp.CRCComputed)
			}
			for _, m := range fp.Markers {
				if (fp.Seq+uint32(m.Offset)-start)%MarkerInterval != 0 {
					t.Fatalf("FPDU %d: marker off the 512 grid", i)
				}
			}
			markers += len(fp.Markers)
			i++
		}
	}
	if i != len(ulpdus) || fr.Stats.CRCErrors != 0 {
		t.Fatalf("%d of %d FPDUs, %d CRC errors", i, len(ulpdus), fr.Stats.CRCErrors)
	}
	if want := (len(stream) + MarkerInterval - 1) / MarkerInterval; markers != want {
		t.Fatalf("%d markers in %d octets, want %d", markers, len(stream), want)
	}
}

func TestFramerLostSync(t *testing.T) {
	good := unhex(t, `00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00`) // tagged, ULPDU 14, no pad, CRC 0
	cases := []struct {
		name string
		cfg  FramerConfig
		in   []byte
	}{
		{"ULPDU shorter than a DDP header", FramerConfig{}, unhex(t, `00 0d c1 40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`)},
		{"ULPDU over the limit", FramerConfig{MaxULPDULength: 1000}, unhex(t, `03 e9 c1`)},
		{"not DDP version 1", FramerConfig{}, unhex(t, `00 0e c2 40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`)},
		{"text", FramerConfig{}, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
	}
	for _, c := range cases {
		fr := NewFramer(c.cfg)
		fr.Feed(append(append([]byte(nil), good...), c.in...))
		fp, err := fr.Next()
		if err != nil || fp.ULPDULength != 14 {
			t.Fatalf("%s: first FPDU: %v", c.name, err)
		}
		_, err = fr.Next()
		var se *SyncError
		if !errors.As(err, &se) || se.Offset != 20 || !errors.Is(err, ErrLostSync) {
			t.Fatalf("%s: %v", c.name, err)
		}
		// Sticky: Next keeps failing, Feed drops and counts.
		if _, err2 := fr.Next(); err2 != err {
			t.Fatalf("%s: not sticky: %v", c.name, err2)
		}
		if err2 := fr.Feed(good); err2 != err || fr.Stats.Discarded != uint64(len(c.in)+len(good)) {
			t.Fatalf("%s: Feed after loss: %v, discarded %d", c.name, err2, fr.Stats.Discarded)
		}
		// Reset recovers at a known FPDU boundary.
		fr.Reset(FramerConfig{Seq: 1000})
		fr.Feed(good)
		if fp, err := fr.Next(); err != nil || fp.Seq != 1000 {
			t.Fatalf("%s: after Reset: %v", c.name, err)
		}
	}
	// A gap loses sync.
	fr := NewFramer(FramerConfig{})
	fr.Feed(good[:5])
	if _, err := fr.Next(); err != ErrNeedMore || fr.Buffered() != 5 {
		t.Fatalf("partial: %v %d", err, fr.Buffered())
	}
	if err := fr.Skip(100); !errors.Is(err, ErrLostSync) || fr.Stats.Discarded != 105 {
		t.Fatalf("skip: %v discarded %d", err, fr.Stats.Discarded)
	}
	var se *SyncError
	if !errors.As(fr.Err(), &se) || se.Code != LLPStreamLost {
		t.Fatalf("skip error %v", fr.Err())
	}
	// Feeding before the previous input is used up is refused.
	fr = NewFramer(FramerConfig{})
	fr.Feed(append(append([]byte(nil), good...), good...))
	fr.Next()
	if err := fr.Feed(good); err != ErrUnconsumed {
		t.Fatalf("Feed with input pending: %v", err)
	}
}

// TestMPALayerMatchesFramer: on segment-aligned FPDUs the MPA layer and the
// framer agree (the MPA layer is what a per-packet dissector uses).
func TestMPALayerMatchesFramer(t *testing.T) {
	for _, h := range mpaStreams(t, "siw-ib_send_bw") {
		fr := NewFramer(h.framerConfig())
		fr.Feed(h.bytes())
		for {
			fp, err := fr.Next()
			if err == ErrNeedMore {
				break
			}
			var m MPA
			if err := m.DecodeFromBytes(fp.Raw, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			if m.Len() != len(fp.Raw) || !bytes.Equal(m.LayerPayload(), fp.ULPDU) || m.CRC != fp.CRC || !bytes.Equal(m.Pad, fp.Pad) {
				t.Fatalf("MPA layer and framer differ at seq %d", fp.Seq)
			}
		}
	}
}

func TestFramerZeroAlloc(t *testing.T) {
	h := mpaStreams(t, "siw-nfs41")[0]
	var pieces [][]byte
	for _, p := range h.pieces {
		pieces = append(pieces, p.data)
	}
	fr := NewFramer(h.framerConfig())
	allocs := testing.AllocsPerRun(5, func() {
		fr.Reset(h.framerConfig())
		for _, p := range pieces {
			fr.Feed(p)
			for {
				if _, err := fr.Next(); err != nil {
					break
				}
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per stream", allocs)
	}
}

// TestFramerSkipInside: a gap inside an FPDU whose ULPDU_Length the framer
// already holds (RFC 5044 section 4: the FPDU is ULPDU_Length + 2 octets
// padded to four, plus the CRC) keeps sync: that FPDU is lost and the next
// is framed at the sequence number its length gives; a gap that runs past
// the FPDU, or one where no header is held, loses sync as Skip does.
func TestFramerSkipInside(t *testing.T) {
	// Tagged, ULPDU 14 (DDP tagged header only), no pad, CRC 0: 20 octets.
	good := unhex(t, `00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00`)
	second := append([]byte(nil), good...)
	second[7] = 2 // STag 2
	fr := NewFramer(FramerConfig{Seq: 100})
	fr.Feed(good[:6])
	if _, err := fr.Next(); err != ErrNeedMore {
		t.Fatal(err)
	}
	// Octets 6-9 missing; 10-19 arrive, then the next FPDU.
	if !fr.SkipInside(4) || fr.Stats.Discarded != 6 || fr.Stats.LostInside != 1 {
		t.Fatalf("SkipInside: err %v, discarded %d", fr.Err(), fr.Stats.Discarded)
	}
	fr.Feed(append(append([]byte(nil), good[10:]...), second...))
	fp, err := fr.Next()
	if err != nil || fp.Seq != 120 || fp.Raw[7] != 2 {
		t.Fatalf("after the gap: %v %+v", err, fp)
	}
	if fr.Stats.Discarded != 16 {
		t.Fatalf("discarded %d, want the 6 held and the 10 after the gap", fr.Stats.Discarded)
	}
	// A gap past the FPDU's end loses sync.
	fr = NewFramer(FramerConfig{})
	fr.Feed(good[:6])
	fr.Next()
	if fr.SkipInside(15) || !errors.Is(fr.Err(), ErrLostSync) {
		t.Fatalf("gap past the FPDU kept sync: %v", fr.Err())
	}
	// No header held: the next FPDU's start is unknown.
	fr = NewFramer(FramerConfig{})
	fr.Feed(good)
	fr.Next()
	fr.Next()
	if fr.SkipInside(4) || !errors.Is(fr.Err(), ErrLostSync) {
		t.Fatalf("gap at an FPDU boundary kept sync: %v", fr.Err())
	}
}
