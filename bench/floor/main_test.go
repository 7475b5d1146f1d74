package main

import (
	"path/filepath"
	"testing"
)

// TestPassCounts holds each stage's tally to tshark 4.0's counts on the
// real captures (`tshark -r F | wc -l`, and `-Y infiniband.bth` for the
// BTHs), so that a floor is never a pass that skipped records or failed to
// decode the packets it claims to time.
func TestPassCounts(t *testing.T) {
	for _, c := range []struct {
		name          string
		records, bths int
	}{
		{"rxe-nfs3.pcap", 7245, 7128},
		{"siw-nfs3.pcap", 5225, 0},
	} {
		name := filepath.Join("..", "..", "testdata", "pcaps", c.name)
		for s := stageRead; s <= stageDecode; s++ {
			got, _, err := pass(name, s)
			if err != nil {
				t.Fatalf("%s %v: %v", c.name, s, err)
			}
			if got.records != c.records {
				t.Errorf("%s %v: %d records, tshark reads %d", c.name, s, got.records, c.records)
			}
			want := 0
			if s == stageDecode {
				want = c.bths
			}
			if got.bths != want {
				t.Errorf("%s %v: %d BTHs decoded, want %d", c.name, s, got.bths, want)
			}
			if (got.crc != 0) != (s >= stageCRC) {
				t.Errorf("%s %v: CRC tally %#x", c.name, s, got.crc)
			}
		}
	}
}
