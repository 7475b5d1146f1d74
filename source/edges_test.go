package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"
)

// TestUnsupportedInterface (issue 12): a pcapng file whose only interface
// has a link type rdmashark does not read (editcap -F pcapng -T user0)
// fails at its first packet, as a pcap file of that link type fails at
// Open; a file that also describes a supported interface is read.
func TestUnsupportedInterface(t *testing.T) {
	data := bytes.Repeat([]byte{0xaa}, 60)
	w := &ngFile{}
	w.shb(binary.LittleEndian, 0)
	w.idb(147, 0) // LINKTYPE_USER0
	w.epb(0, 1, data, 60)
	_, _, err := readBytes(t, w.buf.Bytes(), "u.pcapng")
	var le *LinkTypeError
	if !errors.As(err, &le) || le.LinkType != 147 || !errors.Is(err, ErrUnsupportedLinkType) {
		t.Fatalf("%v", err)
	}
	finalErr(t, err, ErrUnsupportedLinkType, 1, "u.pcapng: packet 1: "+Supported(147).Error())

	w = &ngFile{}
	w.shb(binary.LittleEndian, 0)
	w.idb(147, 0)
	w.idb(1, 0)
	w.epb(0, 1, data, 60)
	w.epb(1, 2, data, 60)
	if recs := mustRead(t, w.buf.Bytes(), "mixed.pcapng"); len(recs) != 2 {
		t.Errorf("mixed: %d records", len(recs))
	}
}

// TestOverSnapLen (issue 13): records longer than their interface's snap
// length are read, and counted for a warning.
func TestOverSnapLen(t *testing.T) {
	p := newPcap(binary.LittleEndian, false, 64, 1)
	for _, n := range []int{64, 65, 60, 100} {
		p.record(1, 0, uint32(n), uint32(n), make([]byte, n))
	}
	w := &ngFile{}
	w.shb(binary.LittleEndian, 0)
	w.idb(1, 0)  // no limit
	w.idb(1, 64) // 64 bytes
	w.epb(0, 1, make([]byte, 100), 100)
	w.epb(1, 1, make([]byte, 64), 100)
	w.epb(1, 1, make([]byte, 68), 100)
	for _, c := range []struct {
		name               string
		b                  []byte
		recs, count, first int
	}{{"f.pcap", p.buf.Bytes(), 4, 2, 2}, {"f.pcapng", w.buf.Bytes(), 3, 1, 3}} {
		r, err := NewReader(bytes.NewReader(c.b), c.name)
		if err != nil {
			t.Fatal(err)
		}
		recs, skipped, err := readAll(t, r)
		if err != nil || len(skipped) != 0 {
			t.Fatalf("%s: %v %v", c.name, err, skipped)
		}
		if n, first := r.OverSnapLen(); n != c.count || first != c.first || len(recs) != c.recs {
			t.Errorf("%s: %d over the snap length (first %d), want %d (first %d); %d records", c.name, n, first, c.count, c.first, len(recs))
		}
	}
}

// TestDirectory (issue 13): a directory's error names it once.
func TestDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir)
	if !errors.Is(err, ErrIsDirectory) || err.Error() != dir+": is a directory, not a capture file" {
		t.Errorf("%v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
