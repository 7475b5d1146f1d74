package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReady: Ready is true exactly when the next record is wholly in the
// read buffer. A real pcap cut in the middle of its third record: the
// first two are buffered whole (Ready), the third is not (not Ready, and
// Next indeed needs more input: it fails as truncated), and after the
// final error Ready is true (Next returns at once).
func TestReady(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(pcapDir, "rxe-rping.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// Record ends, from the record headers' captured lengths.
	off, ends := 24, []int{}
	for len(ends) < 3 {
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
		ends = append(ends, off)
	}
	cut := data[:ends[1]+(ends[2]-ends[1])/2]
	r, err := NewReader(bytes.NewReader(cut), "cut")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if !r.Ready() {
			t.Fatalf("record %d is buffered whole but Ready is false", i+1)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if r.Ready() {
		t.Fatal("half of record 3 buffered, Ready is true")
	}
	if _, err := r.Next(); !errors.Is(err, ErrTruncated) {
		t.Fatalf("record 3: %v, want truncated", err)
	}
	if !r.Ready() {
		t.Fatal("after the final error Ready is false")
	}

	// The whole file, through a reader that counts its reads: Next reads
	// the input exactly when Ready said it would have to.
	cr := &readCounter{r: bytes.NewReader(data)}
	r, err = NewReader(cr, "whole")
	if err != nil {
		t.Fatal(err)
	}
	notReady := 0
	for {
		ready, before := r.Ready(), cr.reads
		_, err := r.Next()
		if ready != (cr.reads == before) {
			t.Fatalf("Ready %v, and Next read its input %d times", ready, cr.reads-before)
		}
		if !ready {
			notReady++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if notReady < 2 {
		t.Errorf("Ready was false only %d times: the buffer refilled too seldom for the test to mean much", notReady)
	}
}

type readCounter struct {
	r     io.Reader
	reads int
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestRegular: a file opened by name is regular; a capture from memory or
// through a pipe is not (its reads may wait for a writer).
func TestRegular(t *testing.T) {
	name := filepath.Join(pcapDir, "rxe-rping.pcap")
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Regular() {
		t.Error("a file opened by name is not Regular")
	}
	r.Close()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := NewReader(bytes.NewReader(data), "mem"); err != nil || r.Regular() {
		t.Errorf("from memory: Regular %v, %v", err == nil && r.Regular(), err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { pw.Write(data); pw.Close() }()
	defer pr.Close()
	if r, err := NewReader(pr, "pipe"); err != nil || r.Regular() {
		t.Errorf("from a pipe: Regular %v, %v", err == nil && r.Regular(), err)
	}
}
