package pcaptest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// gsiQP is the General Services Interface's QP, to which every CM MAD is
// sent (IBA Vol 1 13.4.1: QP1).
const gsiQP = 1

// CMMAD tells whether fr is a RoCEv2 packet to QP 1: a Communication
// Manager MAD (REQ, REP, RTU, DREQ, ...), what a connection's set-up is
// made of.
func CMMAD(fr Frame) bool {
	r, ok := ParseRoCEv2(fr.Data)
	return ok && r.DestQP == gsiQP
}

// WithoutSetUp writes a copy of the capture at src as one that lacks its
// connections' set-up would be — a capture started late, or one whose
// kernel drops took the CM exchange: without its first skip frames, its CM
// MADs (CMMAD) and the frames drop says (nil: none). The copy is a pcapng
// file whose first frame after each run of frames left out after the
// first skip counts them as dropped (epb_dropcount), as a live capture's
// does; the first skip are not counted (the capture had not started). It returns the new
// file's path (in the test's temporary directory, or RDMASHARK_THIN_DIR)
// and the numbers, in src, of the frames it kept, in order.
func WithoutSetUp(t *testing.T, src string, skip int, drop func(Frame) bool) (string, []int) {
	t.Helper()
	lt, frames := Read(t, src)
	dir := os.Getenv("RDMASHARK_THIN_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+"-nosetup.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pcapgo.NewNgWriter(f, lt)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int
	lost := uint64(0)
	for _, fr := range frames {
		if fr.Num <= skip {
			continue // before the capture started: no drop to count
		}
		if CMMAD(fr) || drop != nil && drop(fr) {
			lost++
			continue
		}
		var opts pcapgo.NgPacketOptions
		if lost > 0 {
			n := lost
			opts.DropCount = &n
			lost = 0
		}
		if err := w.WritePacketWithOptions(fr.CI, fr.Data, opts); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, fr.Num)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path, kept
}
