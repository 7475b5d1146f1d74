package source

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// zstdFrame compresses b into one Zstandard frame (with its checksum).
func zstdFrame(t testing.TB, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// lz4Frame compresses b into one LZ4 frame, its blocks and content checked
// by checksums.
func lz4Frame(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if err := w.Apply(lz4.BlockChecksumOption(true), lz4.ChecksumOption(true), lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// skippableFrame is a Zstandard skippable frame (RFC 8878 section 3.1.2)
// of n bytes of user data.
func skippableFrame(n int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, zstdSkippableMagic|7)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return append(b, bytes.Repeat([]byte{0xAA}, n)...)
}

// TestCompressedCaptures: a capture compressed with Zstandard or LZ4 reads
// record for record as the uncompressed file does — real captures of both
// formats and of three link types, in one frame, in two frames split at an
// arbitrary byte (the frames are independent of the records), and for
// Zstandard with skippable frames before and between them — and the reader
// says which compression it undid.
func TestCompressedCaptures(t *testing.T) {
	files := []string{
		filepath.Join(pcapDir, "rxe-rping.pcap"),
		filepath.Join(pcapDir, "siw-rping-any-sll.pcap"),
		filepath.Join(pcapDir, "rxe-rping-any-sll2.pcap"),
		filepath.Join(pcapDir, "rxe-nfs3.pcap"),
		mixedPcapNG,
	}
	for _, name := range files {
		orig := readFile(t, name)
		want := mustRead(t, orig, name)
		if len(want) == 0 {
			t.Fatalf("%s: no records", name)
		}
		cut := len(orig)/2 + 3
		cases := []struct {
			what string
			kind Compression
			b    []byte
		}{
			{"zstd", CompressionZstd, zstdFrame(t, orig)},
			{"zstd, two frames", CompressionZstd, append(zstdFrame(t, orig[:cut]), zstdFrame(t, orig[cut:])...)},
			{"zstd, skippable frames", CompressionZstd, bytes.Join([][]byte{skippableFrame(5), zstdFrame(t, orig[:cut]),
				skippableFrame(0), zstdFrame(t, orig[cut:])}, nil)},
			{"lz4", CompressionLZ4, lz4Frame(t, orig)},
			{"lz4, two frames", CompressionLZ4, append(lz4Frame(t, orig[:cut]), lz4Frame(t, orig[cut:])...)},
		}
		for _, c := range cases {
			r, err := Open(writeTemp(t, filepath.Base(name)+"."+c.kind.String(), c.b))
			if err != nil {
				t.Fatalf("%s, %s: %v", name, c.what, err)
			}
			got, skipped, err := readAll(t, r)
			r.Close()
			if err != nil || len(skipped) > 0 || !r.Compressed() || r.Compression() != c.kind {
				t.Fatalf("%s, %s: %v %v compressed %v %s", name, c.what, err, skipped, r.Compressed(), r.Compression())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, %s: records differ from the uncompressed file", name, c.what)
			}
		}
	}
}

// TestCompressedByTheTools: files the zstd (1.5.4, -19) and lz4 (1.9.4, -9)
// command-line tools compressed read as their uncompressed captures, and as
// tshark reads the compressed files (Wireshark reads both formats since
// 4.0).
func TestCompressedByTheTools(t *testing.T) {
	for _, c := range []struct {
		file, orig string
		kind       Compression
	}{
		{"rxe-rping.pcap.zst", "rxe-rping.pcap", CompressionZstd},
		{"siw-rping.pcap.lz4", "siw-rping.pcap", CompressionLZ4},
	} {
		path := filepath.Join(pcapDir, "compressed", c.file)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, skipped, err := readAll(t, r)
		r.Close()
		if err != nil || len(skipped) > 0 || r.Compression() != c.kind {
			t.Fatalf("%s: %v %v %s", c.file, err, skipped, r.Compression())
		}
		want := mustRead(t, readFile(t, filepath.Join(pcapDir, c.orig)), c.orig)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: records differ from %s", c.file, c.orig)
		}
		t.Run(c.file+" against tshark", func(t *testing.T) { compareTshark(t, path, got) })
	}
}

// TestCompressedStreamErrors: what is wrong with a Zstandard or LZ4 stream
// is said in its words, after the records before the damage were read: a
// file cut inside a frame is ErrTruncated, "… stream cut short"; a damaged
// frame (its content checksum) and bytes after the last frame that start
// no frame are ErrCompressed, "bad … stream: …", wrapping the decoder's
// error. None of them is taken for a truncated record header.
func TestCompressedStreamErrors(t *testing.T) {
	// Large enough for many blocks: a cut or a damaged checksum at the end
	// leaves the records of the blocks before it to read.
	orig := readFile(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	_, _, raw := walkPcap(t, orig)
	n := len(raw)
	next := n + 1
	for _, c := range []struct {
		kind      Compression
		frame     []byte
		frameName string
	}{
		{CompressionZstd, zstdFrame(t, orig), "a zstd frame"},
		{CompressionLZ4, lz4Frame(t, orig), "an lz4 frame"},
	} {
		name := "f." + c.kind.String()
		t.Run(c.kind.String()+" cut", func(t *testing.T) {
			for _, k := range []int{1, 4, 100} {
				recs, _, err := readBytes(t, c.frame[:len(c.frame)-k], name)
				// Cut in the trailer (checksum, end mark), every record
				// is there.
				if len(recs) == 0 || len(recs) > n || k == 100 && len(recs) == n {
					t.Errorf("cut by %d: %d records of %d", k, len(recs), n)
				}
				finalErr(t, err, ErrTruncated, len(recs)+1, fmt.Sprintf("%s: packet %d: %s stream cut short: the file ends inside %s", name, len(recs)+1, c.kind, c.frameName))
			}
		})
		t.Run(c.kind.String()+" garbage after", func(t *testing.T) {
			recs, _, err := readBytes(t, append(bytes.Clone(c.frame), "garbage\n"...), name)
			if len(recs) != n {
				t.Errorf("%d records of %d", len(recs), n)
			}
			e := compressedErr(t, err, c.kind)
			if e != nil && e.Packet != next {
				t.Errorf("error at packet %d, want %d", e.Packet, next)
			}
			if want := fmt.Sprintf("bad %s stream: data after the end of %s is not another frame (", c.kind, c.frameName); !strings.Contains(err.Error(), want) {
				t.Errorf("%v: want %q in it", err, want)
			}
		})
		t.Run(c.kind.String()+" checksum", func(t *testing.T) {
			bad := bytes.Clone(c.frame)
			bad[len(bad)-1] ^= 0xff // the frame's content checksum
			recs, _, err := readBytes(t, bad, name)
			if len(recs) == 0 || len(recs) > n {
				t.Errorf("%d records of %d", len(recs), n)
			}
			compressedErr(t, err, c.kind)
		})
		t.Run(c.kind.String()+" cut before the first record", func(t *testing.T) {
			// The file header is in the frame's first block: the error
			// is the file's, as for a plain file cut in its header.
			_, _, err := readBytes(t, c.frame[:20], name)
			var e *Error
			if !errors.As(err, &e) || !e.Final || e.Packet != 0 || !errors.Is(err, ErrTruncated) ||
				err.Error() != fmt.Sprintf("%s: %s stream cut short: the file ends inside %s", name, c.kind, c.frameName) {
				t.Errorf("%v", err)
			}
		})
	}
	t.Run("zstd window too large", func(t *testing.T) {
		// A frame header asking for a 2 GiB window (RFC 8878 3.1.1.1.2:
		// Window_Descriptor exponent 21, mantissa 0) is refused at once,
		// before any memory is taken for it.
		hdr := binary.LittleEndian.AppendUint32(nil, zstdMagic)
		hdr = append(hdr, 0x00, 21<<3, 0, 0, 0, 0)
		_, _, err := readBytes(t, hdr, "f.zst")
		if !errors.Is(err, ErrCompressed) || !errors.Is(err, zstd.ErrWindowSizeExceeded) || !strings.HasPrefix(err.Error(), "f.zst: ") {
			t.Errorf("%v", err)
		}
	})
}

// compressedErr checks that err is a final *Error of kind ErrCompressed
// whose message names the stream's format.
func compressedErr(t *testing.T, err error, kind Compression) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !e.Final || !errors.Is(err, ErrCompressed) || errors.Is(err, ErrTruncated) ||
		!strings.Contains(err.Error(), fmt.Sprintf(": bad %s stream: ", kind)) {
		t.Errorf("%v", err)
		return nil
	}
	return e
}

func TestCompressionOf(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want Compression
	}{
		{[]byte{0x1f, 0x8b}, CompressionGzip},
		{[]byte{0x28, 0xb5, 0x2f, 0xfd}, CompressionZstd},
		{[]byte{0x50, 0x2a, 0x4d, 0x18}, CompressionZstd},
		{[]byte{0x5f, 0x2a, 0x4d, 0x18}, CompressionZstd},
		{[]byte{0x60, 0x2a, 0x4d, 0x18}, CompressionNone},
		{[]byte{0x04, 0x22, 0x4d, 0x18}, CompressionLZ4},
		{[]byte{0x02, 0x21, 0x4c, 0x18}, CompressionNone}, // legacy LZ4: not read
		{[]byte{0xd4, 0xc3, 0xb2, 0xa1}, CompressionNone},
		{[]byte{0x28, 0xb5, 0x2f}, CompressionNone},
	} {
		if got := compressionOf(c.b); got != c.want {
			t.Errorf("% x: %s, want %s", c.b, got, c.want)
		}
	}
}

// TestSkippableFramesFirst (issue 29 point 8): Zstandard and LZ4 share the
// skippable frame; an LZ4 file that began with one was taken for
// Zstandard. The frame after the skippable ones tells them apart, however
// large the skippable frames (past the 4 KiB peeked at first).
func TestSkippableFramesFirst(t *testing.T) {
	name := filepath.Join(pcapDir, "rxe-rping.pcap")
	orig := readFile(t, name)
	want := mustRead(t, orig, name)
	cut := len(orig) / 3
	for _, c := range []struct {
		what string
		kind Compression
		b    []byte
	}{
		{"lz4 after a skippable frame", CompressionLZ4, bytes.Join([][]byte{skippableFrame(5), lz4Frame(t, orig)}, nil)},
		{"lz4 after skippable frames, between frames", CompressionLZ4, bytes.Join([][]byte{skippableFrame(0), skippableFrame(100 << 10), lz4Frame(t, orig[:cut]),
			skippableFrame(3), lz4Frame(t, orig[cut:])}, nil)},
		{"zstd after a large skippable frame", CompressionZstd, bytes.Join([][]byte{skippableFrame(100 << 10), zstdFrame(t, orig)}, nil)},
	} {
		r, err := Open(writeTemp(t, "c", c.b))
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		got, skipped, err := readAll(t, r)
		r.Close()
		if err != nil || len(skipped) > 0 || r.Compression() != c.kind {
			t.Fatalf("%s: %v %v %s", c.what, err, skipped, r.Compression())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: records differ from the uncompressed file", c.what)
		}
	}
	// Cut inside the skippable frame: truncated, said so.
	b := skippableFrame(1000)[:500]
	if _, err := Open(writeTemp(t, "cut", b)); !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "skippable frame") {
		t.Errorf("a file cut in its skippable frame: %v", err)
	}
}

// TestZstdWindowBounded (issue 29 point 11): a frame asking for a window
// past MaxZstdWindow (zstd --long=27: 128 MiB, which took ~180 MiB of
// memory) is refused before anything is decoded, in words that say what
// to do; one at the limit is read.
func TestZstdWindowBounded(t *testing.T) {
	name := filepath.Join(pcapDir, "rxe-rping.pcap")
	orig := readFile(t, name)
	stream := func(window int) []byte {
		var out bytes.Buffer
		// A stream (no content size): the frame header carries the window.
		enc, err := zstd.NewWriter(&out, zstd.WithWindowSize(window), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(false))
		if err != nil {
			t.Fatal(err)
		}
		// More than the window, or the encoder shrinks the window to fit.
		big := append(append([]byte(nil), orig...), make([]byte, 2*window)...)
		if _, err := enc.Write(big); err != nil {
			t.Fatal(err)
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	ok := stream(MaxZstdWindow)
	r, err := Open(writeTemp(t, "ok.zst", ok))
	if err != nil {
		t.Fatalf("a %d MiB window: %v", MaxZstdWindow>>20, err)
	}
	// rping's records come out (zeros follow them).
	for range 5 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	_, err = Open(writeTemp(t, "long.zst", stream(2*MaxZstdWindow)))
	if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), "decoding window larger than the 8 MiB") {
		t.Errorf("a %d MiB window: %v, want a refusal", 2*MaxZstdWindow>>20, err)
	}
}
