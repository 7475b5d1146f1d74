package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/source"
)

// sampleCommented is pcapwrite's sample capture: packets with none, one
// and two opt_comments, which tshark read as pcapwrite/testdata/sample.tshark.txt.
var sampleCommented = filepath.Join("..", "..", "pcapwrite", "testdata", "sample.pcapng")

// TestFrameCommentTshark: frame.comment is what tshark reads from the
// sample, and a filter on it selects the packets tshark's values say.
func TestFrameCommentTshark(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "pcapwrite", "testdata", "sample.tshark.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		cols := strings.Split(l, "\t")
		want = append(want, cols[0]+"\t"+cols[5])
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-T", "fields", "-e", "frame.number", "-e", "frame.comment", sampleCommented}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\ntshark\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out.Reset()
	if code := run([]string{"dissect", "-Y", `frame.comment contains "second"`, "-T", "fields", "-e", "frame.number", sampleCommented}, nil, &out, &errOut); code != 0 || out.String() != "3\n" {
		t.Errorf("filter on frame.comment: exit %d, %q", code, out.String())
	}
}

// TestWriteKeepsComments: -w writes each packet's comments as read.
func TestWriteKeepsComments(t *testing.T) {
	w := filepath.Join(t.TempDir(), "out.pcapng")
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-w", w, sampleCommented}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	orig, err := source.Open(sampleCommented)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	got, err := source.Open(w)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	n := 0
	for {
		o, err := orig.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		oc := string(bytes.Join(o.Comments, []byte{0}))
		od := append([]byte(nil), o.Data...)
		g, err := got.Next()
		if err != nil {
			t.Fatal(err)
		}
		if gc := string(bytes.Join(g.Comments, []byte{0})); gc != oc || !bytes.Equal(g.Data, od) {
			t.Errorf("record %d: comments %q, want %q", o.Number, gc, oc)
		}
		n += len(o.Comments)
	}
	if n != 3 {
		t.Errorf("%d comments in the sample", n)
	}
}
