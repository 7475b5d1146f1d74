package pvtdata

import (
	"bytes"
	"errors"
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"testing"
)

func FuzzFrame(f *testing.F) {
	for _, s := range pdtest.Seeds(f, pcapDir) {
		f.Add(s.PD, s.Prefix)
	}
	f.Fuzz(func(t *testing.T, pd []byte, prefix uint8) {
		in := bytes.Clone(pd)
		p := Prefix(prefix % 4)
		fr := Frame(pd, p)
		if !bytes.Equal(in, pd) {
			t.Fatal("Frame modified its input")
		}
		if fr.Start < 0 || fr.Start > len(pd) || fr.Len != len(pd) || fr.Prefix != p {
			t.Fatalf("start %d len %d prefix %v of %d octets, %v", fr.Start, fr.Len, fr.Prefix, len(pd), p)
		}
		switch {
		case p == PrefixCMA && fr.CMAErr == nil:
			if fr.Start != CMAHeaderLen {
				t.Fatalf("valid CMA header, start %d", fr.Start)
			}
			if h, err := DecodeCMAHeader(pd); err != nil || h != fr.CMA {
				t.Fatalf("Frame's header %+v, DecodeCMAHeader %+v %v", fr.CMA, h, err)
			}
		case p == PrefixCMA:
			if fr.Start != 0 || fr.CMAProblem() == nil || !errors.Is(fr.CMAProblem(), fr.CMAErr) {
				t.Fatalf("invalid CMA header %v, start %d, problem %v", fr.CMAErr, fr.Start, fr.CMAProblem())
			}
		case p == PrefixMPAv2:
			if fr.Start != min(len(pd), MPAv2PrefixLen) || fr.CMAErr != nil {
				t.Fatalf("MPA v2: start %d, CMA error %v", fr.Start, fr.CMAErr)
			}
		default:
			if fr.Start != 0 || fr.CMAErr != nil {
				t.Fatalf("%v: start %d, CMA error %v", p, fr.Start, fr.CMAErr)
			}
		}
		if c := fr.Consumer(pd); len(c) != len(pd)-fr.Start {
			t.Fatalf("consumer %d octets of %d from %d", len(c), len(pd), fr.Start)
		}
	})
}

func FuzzDecodeCMAHeader(f *testing.F) {
	for _, s := range pdtest.Seeds(f, pcapDir) {
		f.Add(s.PD)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeCMAHeader(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(b) < CMAHeaderLen || h.Version != 0 || (h.IPVersion != 4 && h.IPVersion != 6) {
			t.Fatalf("accepted %+v from %d octets", h, len(b))
		}
		enc, err := h.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encode %+v: %v", h, err)
		}
		// IPv4 leaves the 12 octets in front of each address unread;
		// everything else must come back.
		if h.IPVersion == 4 {
			for _, r := range [][2]int{{0, 4}, {16, 20}, {32, 36}} {
				if !bytes.Equal(enc[r[0]:r[1]], b[r[0]:r[1]]) {
					t.Fatalf("octets %d..%d: %x, input %x", r[0], r[1], enc[r[0]:r[1]], b[r[0]:r[1]])
				}
			}
			return
		}
		if !bytes.Equal(enc, b[:CMAHeaderLen]) {
			t.Fatalf("re-encoded %x, input %x", enc, b[:CMAHeaderLen])
		}
	})
}
