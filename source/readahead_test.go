package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// readahead hands out src's bytes in order, then src's error, whatever
// the sizes src reads in and the reads ask for.
func TestReadahead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		data := make([]byte, rng.IntN(3*raSize))
		for k := range data {
			data[k] = byte(rng.IntN(256))
		}
		var src io.Reader = bytes.NewReader(data)
		if i%2 == 0 {
			src = iotest.HalfReader(src)
		}
		want := io.EOF
		if i%3 == 0 {
			want = errors.New("boom")
			src = io.MultiReader(src, iotest.ErrReader(want))
		}
		r := newReadahead(src)
		var got []byte
		var err error
		for err == nil {
			p := make([]byte, 1+rng.IntN(100000))
			var n int
			n, err = r.Read(p)
			got = append(got, p[:n]...)
		}
		r.close()
		if !bytes.Equal(got, data) || err != want {
			t.Fatalf("case %d: %d of %d bytes, error %v (want %v)", i, len(got), len(data), err, want)
		}
	}
	// Closed before it is read to the end: the goroutine stops.
	r := newReadahead(bytes.NewReader(make([]byte, 10*raSize)))
	p := make([]byte, 10)
	if _, err := r.Read(p); err != nil {
		t.Fatal(err)
	}
	r.close()
}

// A gzip capture read from a regular file (inflated ahead, readahead.go)
// gives what it gives from memory: the same records and the same error,
// for the gzip streams TestGzipStreamErrors damages.
func TestGzipFileSameAsStream(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	gz := gzipped(t, orig)
	cases := map[string][]byte{
		"whole":         gz,
		"trailer cut":   gz[:len(gz)-3],
		"cut inside":    gz[:len(gz)/2],
		"garbage after": append(bytes.Clone(gz), "garbage\n"...),
		"two members":   append(gzipped(t, orig[:len(orig)/3]), gzipped(t, orig[len(orig)/3:])...),
	}
	for name, b := range cases {
		want, wantSkipped, wantErr := readBytes(t, b, "f.gz")
		r, err := Open(writeTemp(t, "f.gz", b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.ra == nil {
			t.Fatalf("%s: a regular gzip file is not inflated ahead", name)
		}
		got, skipped, gotErr := readAll(t, r)
		r.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) || len(skipped) != len(wantSkipped) {
			t.Errorf("%s: %d records (%d skipped) from the file, %d (%d) from memory", name, len(got), len(skipped), len(want), len(wantSkipped))
		}
		// The file's name differs: compare what follows it.
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			var a, b *Error
			if !errors.As(gotErr, &a) || !errors.As(wantErr, &b) || a.Packet != b.Packet || a.Offset != b.Offset || a.Err.Error() != b.Err.Error() {
				t.Errorf("%s: error %v from the file, %v from memory", name, gotErr, wantErr)
			}
		}
	}
}
