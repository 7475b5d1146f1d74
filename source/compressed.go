package source

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is how a capture file is compressed. Wireshark (4.0 on)
// reads the three: gzip, Zstandard and LZ4 frames, as its --compress
// option and the zstd and lz4 tools write them.
type Compression uint8

const (
	CompressionNone Compression = iota
	// CompressionGzip: RFC 1952, magic 0x1f 0x8b.
	CompressionGzip
	// CompressionZstd: RFC 8878 frames (magic 0xFD2FB528, little-endian),
	// skippable frames (0x184D2A50-0x184D2A5F) allowed before and between
	// them.
	CompressionZstd
	// CompressionLZ4: LZ4 frames (magic 0x184D2204, little-endian), as
	// the lz4 tool writes them by default, skippable frames (the same as
	// Zstandard's) allowed before and between them.
	CompressionLZ4
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionZstd:
		return "zstd"
	case CompressionLZ4:
		return "lz4"
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// compressionOf tells the compression from a file's first bytes (up to 4).
func compressionOf(m []byte) Compression {
	if len(m) >= 2 && m[0] == 0x1f && m[1] == 0x8b {
		return CompressionGzip
	}
	if len(m) < 4 {
		return CompressionNone
	}
	switch magic := binary.LittleEndian.Uint32(m); {
	case magic == zstdMagic, magic&0xfffffff0 == zstdSkippableMagic:
		return CompressionZstd
	case magic == lz4Magic:
		return CompressionLZ4
	}
	return CompressionNone
}

// skipSkippable discards the skippable frames at the start of src and
// returns the first four bytes after them (fewer at the end of the file)
// and whether there were any. Zstandard (RFC 8878 section 3.1.2) and LZ4
// (LZ4 Frame Format, "Skippable Frames") share the skippable frame — magic
// 0x184D2A50-0x184D2A5F, a 4-byte little-endian size, that many bytes —
// so only the first real frame after them tells the two apart (issue 29
// point 8: an LZ4 file beginning with one was taken for Zstandard). Both
// decoders would skip the frames: they are discarded as read, whatever
// their size, without being kept.
func skipSkippable(src *bufio.Reader) (m []byte, skipped bool, err error) {
	for {
		m, err = src.Peek(4)
		if len(m) < 4 || binary.LittleEndian.Uint32(m)&0xfffffff0 != zstdSkippableMagic {
			return m, skipped, err
		}
		h, _ := src.Peek(8)
		if len(h) < 8 {
			return nil, skipped, &detail{kind: ErrTruncated, msg: "compressed stream cut short: the file ends inside a skippable frame's header", err: io.ErrUnexpectedEOF}
		}
		n := 8 + int64(binary.LittleEndian.Uint32(h[4:]))
		if k, err := io.CopyN(io.Discard, src, n); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, skipped, &detail{kind: ErrTruncated, msg: fmt.Sprintf("compressed stream cut short: the file ends inside a skippable frame (%d of its %d bytes)", k, n), err: err}
		}
		skipped = true
	}
}

const (
	zstdMagic          = 0xFD2FB528 // RFC 8878 section 3.1.1
	zstdSkippableMagic = 0x184D2A50 // RFC 8878 section 3.1.2, low 4 bits free
	lz4Magic           = 0x184D2204 // LZ4 Frame Format, "Magic Number"
)

// MaxZstdWindow bounds the window a Zstandard frame may ask the decoder
// to keep, and so the decoder's memory (about twice the window): 8 MiB,
// what zstd's levels 1-19 use at most (and tshark --compress zstd, level
// 3, 2 MiB or less). A frame asking for more — zstd --long (128 MiB at
// --long=27), --ultra -20 to -22 (32-128 MiB) — is refused before anything
// is decoded (ErrCompressed, "needs a … window"): a 1 MB file compressed
// with --long=27 took ~180 MiB to read (issue 29 point 11). Decompress such
// a file first (zstd -d --long=31), or pipe it in: zstd -dc --long=31 F |
// rdmashark … -.
const MaxZstdWindow = 8 << 20

// decompressor reads the uncompressed bytes of a Zstandard or LZ4 stream
// and says what is wrong with the stream in its own words, as gzipStream
// does for gzip: a file cut inside a frame is ErrTruncated, anything else
// the decoder refuses (a bad checksum, a damaged block, bytes after the
// last frame that are not another frame) ErrCompressed. Frame after frame
// is read, as the tools do for concatenated files.
type decompressor struct {
	kind  Compression
	read  func([]byte) (int, error)
	close func()
	err   error
}

func newDecompressor(kind Compression, src *bufio.Reader) (*decompressor, error) {
	d := &decompressor{kind: kind}
	switch kind {
	case CompressionZstd:
		// One goroutine: the pipeline already reads on a CPU of its own.
		zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(MaxZstdWindow))
		if err != nil {
			return nil, d.wrap(err)
		}
		d.read, d.close = zr.Read, zr.Close
	case CompressionLZ4:
		lr := lz4.NewReader(src)
		if err := lr.Apply(lz4.ConcurrencyOption(1)); err != nil {
			return nil, d.wrap(err)
		}
		d.read, d.close = lr.Read, func() {}
	default:
		return nil, fmt.Errorf("source: no decompressor for %s", kind)
	}
	return d, nil
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.read(p)
	if err != nil {
		if err == io.EOF {
			d.err = io.EOF
		} else {
			d.err = d.wrap(err)
		}
		if n > 0 {
			return n, nil
		}
		return 0, d.err
	}
	return n, nil
}

// wrap describes an error of the decoder.
func (d *decompressor) wrap(err error) error {
	frame := "a zstd frame"
	if d.kind == CompressionLZ4 {
		frame = "an lz4 frame"
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &detail{kind: ErrTruncated, msg: fmt.Sprintf("%s stream cut short: the file ends inside %s", d.kind, frame), err: err}
	case errors.Is(err, zstd.ErrWindowSizeExceeded):
		return &detail{kind: ErrCompressed, msg: fmt.Sprintf("zstd frame needs a decoding window larger than the %d MiB rdmashark allows (zstd --long or --ultra): decompress it first (zstd -dc --long=31 FILE | rdmashark ... -)", MaxZstdWindow>>20), err: err}
	case errors.Is(err, zstd.ErrMagicMismatch), errors.Is(err, lz4.ErrInvalidFrame):
		// The first frame's magic number was seen: what follows a frame
		// is not another.
		return &detail{kind: ErrCompressed, msg: fmt.Sprintf("bad %s stream: data after the end of %s is not another frame (%v)", d.kind, frame, err), err: err}
	}
	return &detail{kind: ErrCompressed, msg: fmt.Sprintf("bad %s stream: %v", d.kind, err), err: err}
}
