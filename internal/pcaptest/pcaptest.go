// Package pcaptest reads a whole classic pcap file for tests, with gopacket's
// pcapgo reader. It is for the leaf packages' tests (layers/*, pvtdata),
// which may not use the engine's source, and for tests that need
// whole frames with their capture info; production code streams through
// source instead.
package pcaptest

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Frame is one record: its 1-based number (as tshark counts), its captured
// bytes, and its timestamp and lengths (CI.Length is the length on the wire).
type Frame struct {
	Num  int
	Data []byte
	CI   gopacket.CaptureInfo
}

// Read returns the link type and every record of the pcap file at path
// (microsecond or nanosecond, either byte order), failing t on any error.
func Read(t testing.TB, path string) (layers.LinkType, []Frame) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []Frame
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return r.LinkType(), out
		}
		if err != nil {
			t.Fatalf("%s: packet %d: %v", path, n, err)
		}
		out = append(out, Frame{Num: n, Data: data, CI: ci})
	}
}

// Records returns only the records' bytes.
func Records(t testing.TB, path string) [][]byte {
	t.Helper()
	_, frames := Read(t, path)
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = f.Data
	}
	return out
}
