package source

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestGzipStreamErrors (issue 13 point 6): what is wrong with the gzip
// stream around a capture is said in words of the gzip stream, not as a
// truncated record header; a file of several gzip members (RFC 1952 2.2)
// reads whole.
func TestGzipStreamErrors(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	_, _, raw := walkPcap(t, orig)
	n := len(raw)
	gz := gzipped(t, orig)
	next := n + 1 // the record the reader was looking for

	t.Run("members", func(t *testing.T) {
		cut := raw[n/2].off // a record boundary
		b := append(gzipped(t, orig[:cut]), gzipped(t, orig[cut:])...)
		if recs := mustRead(t, b, "f.gz"); len(recs) != n {
			t.Errorf("%d records of %d", len(recs), n)
		}
	})
	// RFC 1952 2.3: a member ends with CRC32 and ISIZE, 4 bytes each.
	for _, k := range []int{1, 4, 8} {
		t.Run(fmt.Sprintf("trailer cut by %d", k), func(t *testing.T) {
			recs, _, err := readBytes(t, gz[:len(gz)-k], "f.gz")
			if len(recs) != n {
				t.Errorf("%d records of %d", len(recs), n)
			}
			finalErr(t, err, ErrTruncated, next, fmt.Sprintf("f.gz: packet %d: gzip stream cut short: the file ends inside gzip member 1 (its header, compressed data or 8-byte trailer)", next))
		})
	}
	t.Run("garbage after", func(t *testing.T) {
		recs, _, err := readBytes(t, append(bytes.Clone(gz), "garbage\n"...), "f.gz")
		if len(recs) != n {
			t.Errorf("%d records of %d", len(recs), n)
		}
		finalErr(t, err, ErrCompressed, next, fmt.Sprintf("f.gz: packet %d: bad gzip stream: data after the end of the gzip stream is not another gzip member (starts 67 61 72 62 61 67 65 0a)", next))
	})
	t.Run("second member cut in its header", func(t *testing.T) {
		recs, _, err := readBytes(t, append(bytes.Clone(gz), 0x1f, 0x8b, 8, 0), "f.gz")
		if len(recs) != n {
			t.Errorf("%d records of %d", len(recs), n)
		}
		finalErr(t, err, ErrTruncated, next, fmt.Sprintf("f.gz: packet %d: gzip stream cut short: the file ends inside gzip member 2 (its header, compressed data or 8-byte trailer)", next))
	})
	t.Run("bad second member", func(t *testing.T) {
		bad := append(bytes.Clone(gz), 0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0) // CM 7 is not deflate
		_, _, err := readBytes(t, bad, "f.gz")
		if !errors.Is(err, ErrCompressed) || !errors.Is(err, gzip.ErrHeader) {
			t.Errorf("%v", err)
		}
	})
}
