package outfile

import (
	"io"
	"os"
)

// WholeWrites is a file written in place (capture -w) that never ends
// with part of a write: a Write that fails part-way — the disk full — is
// cut off again, so the file ends with the last whole Write. A writer that
// writes whole blocks (a pcapng block, or several) then leaves a file
// every reader can read to its end. On a file that cannot be truncated (a
// FIFO, a device) it is a plain writer.
type WholeWrites struct {
	f   *os.File
	off int64 // end of the last whole write
}

// NewWholeWrites writes f from its current offset.
func NewWholeWrites(f *os.File) *WholeWrites {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		off = -1 // not seekable: nothing to cut
	}
	return &WholeWrites{f: f, off: off}
}

// Write writes p; when that fails after writing some of p, the part written
// is removed and Write reports 0 bytes written.
func (w *WholeWrites) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err == nil {
		if w.off >= 0 {
			w.off += int64(n)
		}
		return n, nil
	}
	if n > 0 && w.off >= 0 {
		if w.f.Truncate(w.off) == nil {
			_, _ = w.f.Seek(w.off, io.SeekStart)
			n = 0
		}
	}
	return n, err
}
