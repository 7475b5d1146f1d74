package fields

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/source"
)

// record is one capture record held in memory (as dissect's tests hold them).
type record struct {
	num    int
	lt     layers.LinkType
	data   []byte
	length int
	ts     time.Time
}

func capturePath(name string) string {
	return filepath.Join("..", "testdata", "pcaps", name)
}

// loadRecords reads a capture of testdata/pcaps into memory.
func loadRecords(t testing.TB, name string) []record {
	t.Helper()
	r, err := source.Open(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, record{rec.Number, rec.LinkType, slices.Clone(rec.Data), rec.CI.Length, rec.CI.Timestamp})
	}
}
