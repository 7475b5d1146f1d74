package iwarp

import (
	"errors"
	"testing"
)

// TestFramerMemory (issue 13 point 1): a framer holds nothing until an
// FPDU spans pieces, then no more than that FPDU's length; FreeSpare lets
// go of a buffer no partial FPDU needs and keeps one that does; DropPartial
// gives up a partial FPDU, losing sync.
func TestFramerMemory(t *testing.T) {
	var big []byte
	for _, s := range seedFPDUs(t, 1) {
		if len(s) > 600 {
			big = s
			break
		}
	}
	if big == nil {
		t.Fatal("no FPDU over 600 octets in the seed captures")
	}
	n := len(big)
	fr := NewFramer(FramerConfig{})
	if fr.Held() != 0 {
		t.Fatalf("a new framer holds %d octets (it held about 73 KB before issue 13)", fr.Held())
	}
	// A whole FPDU in one piece is framed in place.
	fr.Feed(big)
	if fp, err := fr.Next(); err != nil || len(fp.Raw) != n || fr.Held() != 0 {
		t.Fatalf("%v; held %d", err, fr.Held())
	}
	fr.Next()
	// One split in three: held grows with what is buffered, up to n.
	for _, cut := range [][2]int{{100, 300}, {1, 2}} {
		fr.Reset(FramerConfig{Seq: fr.NextSeq()})
		fr.FreeSpare()
		fr.Feed(big[:cut[0]])
		if _, err := fr.Next(); err != ErrNeedMore || fr.Buffered() != cut[0] || fr.Held() > max(256, cut[0]) {
			t.Fatalf("after %d octets: %v, buffered %d, held %d", cut[0], err, fr.Buffered(), fr.Held())
		}
		fr.FreeSpare() // a partial FPDU keeps its buffer
		if fr.Buffered() != cut[0] {
			t.Fatalf("FreeSpare dropped a partial FPDU")
		}
		fr.Feed(big[cut[0]:cut[1]])
		if _, err := fr.Next(); err != ErrNeedMore || fr.Held() > n {
			t.Fatalf("after %d octets: %v, held %d", cut[1], err, fr.Held())
		}
		fr.Feed(big[cut[1]:])
		fp, err := fr.Next()
		if err != nil || len(fp.Raw) != n || fr.Held() > n || fr.Held() < n {
			t.Fatalf("complete: %v, held %d, want %d", err, fr.Held(), n)
		}
		fr.Next()
		fr.FreeSpare()
		if fr.Held() != 0 {
			t.Fatalf("FreeSpare after the FPDU: held %d", fr.Held())
		}
	}
	fr.Reset(FramerConfig{Seq: fr.NextSeq()})
	fr.Feed(big[:50])
	fr.Next()
	if err := fr.DropPartial("budget"); !errors.Is(err, ErrLostSync) || fr.Held() != 0 || fr.Buffered() != 0 {
		t.Fatalf("DropPartial: %v, held %d", err, fr.Held())
	}
	if _, err := fr.Next(); !errors.Is(err, ErrLostSync) {
		t.Fatalf("after DropPartial Next says %v", err)
	}
	if err := NewFramer(FramerConfig{}).DropPartial("budget"); err != nil {
		t.Fatalf("DropPartial with nothing held: %v", err)
	}
}
