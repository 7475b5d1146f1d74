package source

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/klauspost/compress/gzip"
)

// MaxRecordLength is the longest record (captured length) accepted: libpcap's
// MAXIMUM_SNAPLEN, which Wireshark also enforces for the link types we read.
const MaxRecordLength = 262144

const (
	// bufferSize is the read buffer: a whole pcap record, or a whole pcapng
	// block other than a skipped one, must fit, so that it is checked
	// entirely before anything of it is used, and Data can point into it.
	bufferSize = 320 << 10
	// maxBlockLength bounds a pcapng block we skip without buffering it.
	maxBlockLength = 16 << 20
	// maxInterfaces bounds the interfaces of one pcapng section.
	maxInterfaces = 4096
	// maxKeptInterfaces bounds the list Interfaces returns.
	maxKeptInterfaces = 4096
)

// pcap and pcapng magic numbers, as the first four bytes read big-endian.
const (
	magicPcapMicro        = 0xa1b2c3d4
	magicPcapMicroSwapped = 0xd4c3b2a1
	magicPcapNano         = 0xa1b23c4d
	magicPcapNanoSwapped  = 0x4d3cb2a1
	magicPcapNG           = 0x0a0d0d0a // the Section Header Block type
)

// Format is the container format of a capture.
type Format uint8

// Formats.
const (
	FormatPcap   Format = 1
	FormatPcapNG Format = 2
)

func (f Format) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapNG:
		return "pcapng"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Record is one packet of a capture.
type Record struct {
	// Number is the record's position in the capture, from 1, as Wireshark
	// numbers frames.
	Number int
	// Data holds the captured bytes. It belongs to the Reader and is
	// overwritten by the next call to Next: copy it to keep it.
	Data []byte
	// CI has the timestamp (converted from the interface's resolution),
	// captured and original lengths, and the pcapng interface index.
	// CI.AncillaryData is reused like Data.
	CI gopacket.CaptureInfo
	// LinkType is the link type of the interface the record came from.
	LinkType layers.LinkType
	// Offset and Length locate the record in the (uncompressed) file: the
	// pcap record header and data, or the whole pcapng block.
	Offset int64
	Length int
	// Comments are a pcapng Enhanced Packet Block's opt_comments; like
	// Data they belong to the Reader and are overwritten by Next.
	Comments [][]byte
	// LostBefore counts the frames a live capture lost just before this
	// record: dropped by the kernel, or captured but skipped by the
	// analysis (source/live); in a pcapng file, the Enhanced Packet
	// Block's epb_dropcount (which rdmashark capture -w writes). A
	// consumer may treat it as a gap here.
	LostBefore uint64
}

// Interface describes a capture interface: the single one of a pcap file, or
// a pcapng Interface Description Block.
type Interface struct {
	Section  int // pcapng section, from 0; 0 for pcap
	ID       int // interface ID within its section
	LinkType layers.LinkType
	SnapLen  uint32 // 0: no limit
	Name     string // pcapng if_name, if given
	// Description is the pcapng if_description, if given.
	Description string
	Resolution  gopacket.TimestampResolution
}

// Reader reads the records of one capture, one at a time. It is not safe
// for concurrent use.
type Reader struct {
	name   string
	closer io.Closer
	gz     *gzip.Reader
	dc     *decompressor // a Zstandard or LZ4 stream
	ra     *readahead    // gzip's inflate ahead, on a regular file
	cnt    countReader   // counts the uncompressed bytes br has taken in
	br     *bufio.Reader
	format Format
	comp   Compression

	// pcap
	order    binary.ByteOrder
	nanoMul  int64 // 1000 for microsecond timestamps, 1 for nanosecond ones
	linkType layers.LinkType
	snapLen  uint32

	// pcapng
	ng *ngState

	regular bool // the input is a regular file: reads never wait for a writer

	n         int   // records returned or skipped so far
	err       error // final error (or io.EOF), returned again by Next
	linkTypes []layers.LinkType
	ifaces    []Interface
	// anySupported: an interface so far has a link type Supported.
	anySupported bool
	// overSnap counts records longer than their interface's snap length,
	// firstOverSnap is the first of them (OverSnapLen).
	overSnap, firstOverSnap int
}

// OverSnapLen returns how many records so far had a captured length
// greater than their interface's snap length (the pcap header's SnapLen,
// the pcapng IDB's SnapLen; 0 means no limit), and the number of the first.
// Such a record is read as it is, but a capture that lies about its snap
// length may lie about more: callers warn (issue 13).
func (r *Reader) OverSnapLen() (records, first int) { return r.overSnap, r.firstOverSnap }

// checkSnap counts record num if caplen exceeds snap.
func (r *Reader) checkSnap(num int, caplen, snap uint32) {
	if snap != 0 && caplen > snap {
		if r.overSnap == 0 {
			r.firstOverSnap = num
		}
		r.overSnap++
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// StdinName is the name standard input goes by in errors and reports.
const StdinName = "<stdin>"

// Open opens the capture file name, or standard input if name is "-"
// (reported as StdinName). The caller must Close the Reader.
func Open(name string) (*Reader, error) {
	if name == "-" {
		return NewReader(os.Stdin, StdinName)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		// Not "name: read name: is a directory" (issue 13).
		f.Close()
		return nil, &Error{File: name, Err: ErrIsDirectory, Final: true}
	}
	r, err := NewReader(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a capture from rd; name is used in errors and reports.
// It reads the file header (and, for pcapng, the first Section Header Block)
// before returning.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	r := &Reader{name: name}
	if f, ok := rd.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			r.regular = true
		}
	}
	head := bufio.NewReaderSize(rd, 4096)
	m, skipped, err := skipSkippable(head)
	if err != nil && !isEOF(err) {
		return nil, r.headerErr(err)
	}
	r.comp = compressionOf(m)
	if skipped && r.comp != CompressionLZ4 {
		r.comp = CompressionZstd // its decoder says what is wrong after them
	}
	switch r.comp {
	case CompressionGzip:
		gz, err := gzip.NewReader(head)
		if err != nil {
			return nil, r.headerErr(fmt.Errorf("gzip: %w", err))
		}
		gz.Multistream(false) // members are followed by gzipStream
		r.gz = gz
		r.cnt.r = &gzipStream{src: head, gz: gz}
		if r.regular {
			// Inflate on a goroutine of its own (readahead.go).
			r.ra = newReadahead(r.cnt.r)
			r.cnt.r = r.ra
		}
	case CompressionZstd, CompressionLZ4:
		dc, err := newDecompressor(r.comp, head)
		if err != nil {
			return nil, r.headerErr(err)
		}
		r.dc = dc
		r.cnt.r = dc
	default:
		if err != nil && !isEOF(err) {
			return nil, r.headerErr(err)
		}
		r.cnt.r = head
	}
	r.br = bufio.NewReaderSize(&r.cnt, bufferSize)

	h, err := r.br.Peek(4)
	if len(h) < 4 {
		if err != nil && !isEOF(err) {
			return nil, r.headerErr(err)
		}
		if len(h) == 0 {
			return nil, r.headerErr(newDetail(ErrNotCapture, "%s (empty%s)", ErrNotCapture, r.afterDecompression()))
		}
		return nil, r.headerErr(newDetail(ErrNotCapture, "%s (only %d bytes%s)", ErrNotCapture, len(h), r.afterDecompression()))
	}
	switch magic := binary.BigEndian.Uint32(h); magic {
	case magicPcapMicro, magicPcapMicroSwapped, magicPcapNano, magicPcapNanoSwapped:
		err = r.openPcap()
	case magicPcapNG:
		err = r.openPcapNG()
	default:
		err = r.headerErr(newDetail(ErrNotCapture, "%s (magic 0x%08x%s)", ErrNotCapture, magic, r.afterDecompression()))
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) afterDecompression() string {
	if r.Compressed() {
		return " after " + r.comp.String() + " decompression"
	}
	return ""
}

// openPcap checks the 24-byte pcap file header (pcap file format draft,
// section 4, File Header).
func (r *Reader) openPcap() error {
	r.format = FormatPcap
	h, err := r.br.Peek(24)
	if len(h) < 24 {
		if err != nil && !isEOF(err) {
			return r.headerErr(err)
		}
		return r.headerErr(newDetail(ErrTruncated, "truncated file header: %d of the pcap file header's 24 bytes present", len(h)))
	}
	r.order, r.nanoMul = binary.ByteOrder(binary.LittleEndian), 1000
	switch binary.BigEndian.Uint32(h) {
	case magicPcapMicro:
		r.order = binary.BigEndian
	case magicPcapNano:
		r.order, r.nanoMul = binary.BigEndian, 1
	case magicPcapNanoSwapped:
		r.nanoMul = 1
	}
	if major, minor := r.order.Uint16(h[4:6]), r.order.Uint16(h[6:8]); major != 2 || minor != 4 {
		return r.headerErr(newDetail(ErrUnsupported, "pcap version %d.%d is not supported (only 2.4 is)", major, minor))
	}
	r.snapLen = r.order.Uint32(h[16:20])
	// The low 16 bits are the link type; the high bits may carry the FCS
	// length (pcap draft 4, LinkType and additional information).
	r.linkType = layers.LinkType(r.order.Uint32(h[20:24]) & 0xffff)
	r.br.Discard(24)
	res := gopacket.TimestampResolution{Base: 10, Exponent: -6}
	if r.nanoMul == 1 {
		res.Exponent = -9
	}
	r.addInterface(Interface{LinkType: r.linkType, SnapLen: r.snapLen, Resolution: res})
	return nil
}

func (r *Reader) openPcapNG() error {
	r.format = FormatPcapNG
	r.ng = &ngState{r: r}
	// The first block must be a Section Header Block; its checks run here
	// so that a bad one fails Open.
	return r.ng.start()
}

// headerErr is a final error about the file header.
func (r *Reader) headerErr(err error) *Error {
	return &Error{File: r.name, Packet: 0, Offset: 0, Err: err, Final: true}
}

// offset is the position of the next unread byte in the uncompressed stream.
func (r *Reader) offset() int64 {
	return r.cnt.n - int64(r.br.Buffered())
}

// fail records a final error for record number num at offset off.
func (r *Reader) fail(num int, off int64, err error) (Record, error) {
	e := &Error{File: r.name, Packet: num, Offset: off, Err: err, Final: true}
	r.err = e
	return Record{}, e
}

// Next returns the next record. At the clean end of the capture it returns
// io.EOF. Other errors are *Error; see the package documentation for which
// are final. Record.Data is valid until the next call.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	if r.format == FormatPcap {
		return r.nextPcap()
	}
	return r.nextPcapNG()
}

func (r *Reader) nextPcap() (Record, error) {
	off := r.offset()
	num := r.n + 1
	// A record header (pcap draft 5, Packet Record): timestamp seconds,
	// microseconds or nanoseconds, captured length, original length.
	h, err := r.br.Peek(16)
	if len(h) < 16 {
		if len(h) == 0 && err == io.EOF {
			r.err = io.EOF
			return Record{}, io.EOF
		}
		if !isEOF(err) {
			return r.fail(num, off, err)
		}
		return r.fail(num, off, newDetail(ErrTruncated, "truncated record header: %d of 16 bytes present", len(h)))
	}
	caplen := r.order.Uint32(h[8:12])
	origlen := r.order.Uint32(h[12:16])
	if caplen > MaxRecordLength {
		// pcap has no way to find the next record when a length lies.
		return r.fail(num, off, newDetail(ErrBadLength, "impossible record length: captured length %d exceeds the maximum of %d (snap length %d)", caplen, MaxRecordLength, r.snapLen))
	}
	need := 16 + int(caplen)
	rec, err := r.br.Peek(need)
	if len(rec) < need {
		if !isEOF(err) {
			return r.fail(num, off, err)
		}
		return r.fail(num, off, newDetail(ErrTruncated, "truncated record: header says %d bytes, %d present", caplen, len(rec)-16))
	}
	r.n = num
	if caplen > origlen {
		// The record is framed by its captured length, so the next one
		// can still be found.
		r.br.Discard(need)
		return Record{}, &Error{File: r.name, Packet: num, Offset: off, Final: false,
			Err: newDetail(ErrBadLength, "captured length %d is larger than the original length %d; record skipped", caplen, origlen)}
	}
	r.checkSnap(num, caplen, r.snapLen)
	// rec, not h: the second Peek may have moved the buffered bytes.
	sec := int64(r.order.Uint32(rec[0:4]))
	frac := int64(r.order.Uint32(rec[4:8]))
	ci := gopacket.CaptureInfo{
		Timestamp:     time.Unix(sec, frac*r.nanoMul).UTC(),
		CaptureLength: int(caplen),
		Length:        int(origlen),
	}
	// Data points into the read buffer, which the next Peek may overwrite.
	data := rec[16:need:need]
	r.br.Discard(need)
	return Record{Number: num, Data: data, CI: ci, LinkType: r.linkType, Offset: off, Length: need}, nil
}

func (r *Reader) nextPcapNG() (Record, error) {
	rec, err := r.ng.next()
	if err != nil {
		if e, ok := err.(*Error); ok && !e.Final {
			r.n = e.Packet
			return Record{}, err
		}
		r.err = err
		return Record{}, err
	}
	r.n = rec.Number
	return rec, nil
}

// Ready reports whether the next record (pcapng: the next block) is
// wholly in the read buffer, so that Next returns it without reading its
// input. A caller that batches records hands on what it holds before a
// Next that may block on a live input (dissect's pipeline).
func (r *Reader) Ready() bool {
	if r.err != nil {
		return true
	}
	n := r.br.Buffered()
	if n < 16 {
		return false
	}
	h, _ := r.br.Peek(16) // buffered: no read
	var need uint32
	if r.format == FormatPcap {
		need = 16 + r.order.Uint32(h[8:12])
	} else {
		if binary.LittleEndian.Uint32(h) == blockSHB {
			return false // its byte order is the block's own
		}
		need = r.ng.order().Uint32(h[4:8])
	}
	return need <= uint32(n)
}

// Regular reports whether the capture is read from a regular file (opened
// by name, or standard input redirected from one): its reads never wait
// for a writer, as those of a pipe or a terminal may.
func (r *Reader) Regular() bool { return r.regular }

// Name returns the name the capture was opened with ("<stdin>" for "-").
func (r *Reader) Name() string { return r.name }

// Format returns the container format.
func (r *Reader) Format() Format { return r.format }

// Compressed reports whether the capture is compressed (Compression).
func (r *Reader) Compressed() bool { return r.comp != CompressionNone }

// Compression returns how the capture is compressed.
func (r *Reader) Compression() Compression { return r.comp }

// LinkTypes returns the distinct link types of the interfaces described so
// far, in order of appearance. A pcapng file may describe more interfaces
// later on, so call it again after reading.
func (r *Reader) LinkTypes() []layers.LinkType {
	return append([]layers.LinkType(nil), r.linkTypes...)
}

// Interfaces returns the interfaces described so far (at most 4096).
func (r *Reader) Interfaces() []Interface {
	return append([]Interface(nil), r.ifaces...)
}

func (r *Reader) addInterface(i Interface) {
	if Supported(i.LinkType) == nil {
		r.anySupported = true
	}
	if len(r.ifaces) < maxKeptInterfaces {
		r.ifaces = append(r.ifaces, i)
	}
	for _, lt := range r.linkTypes {
		if lt == i.LinkType {
			return
		}
	}
	r.linkTypes = append(r.linkTypes, i.LinkType)
}

// Close closes the file Open opened. It does not close standard input or
// the io.Reader given to NewReader.
func (r *Reader) Close() error {
	var err error
	if r.ra != nil {
		r.ra.close() // before the gzip reader it reads is closed
		r.ra = nil
	}
	if r.gz != nil {
		err = r.gz.Close()
	}
	if r.dc != nil {
		r.dc.close() // the Zstandard decoder's buffers back to its pool
		r.dc = nil
	}
	if r.closer != nil {
		if cerr := r.closer.Close(); err == nil {
			err = cerr
		}
		r.closer = nil
	}
	return err
}

// isEOF reports whether err means the stream ended: io.EOF from a file,
// io.ErrUnexpectedEOF from a gzip stream cut short.
func isEOF(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF
}

// gzipStream reads the members of a gzip file (RFC 1952 section 2.2: a
// file is a series of members) and says what is wrong with the compressed
// stream itself, in words of the gzip stream, instead of handing on
// gzip.Reader's io.ErrUnexpectedEOF, which the record reader would report
// as a truncated record header: the file cut inside the compressed data or
// the 8-byte trailer (CRC-32, ISIZE), a bad checksum, and bytes after the
// last member that are not another member.
type gzipStream struct {
	src     *bufio.Reader
	gz      *gzip.Reader
	members int // members finished
	err     error
}

func (g *gzipStream) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.gz.Read(p)
	switch {
	case err == nil:
	case err == io.EOF: // a member ended, its CRC-32 and length verified
		g.members++
		err = nil
		switch next, perr := g.src.Peek(2); {
		case len(next) == 0 && perr == io.EOF:
			g.err = io.EOF
		case len(next) == 2 && next[0] == 0x1f && next[1] == 0x8b:
			if rerr := g.gz.Reset(g.src); rerr != nil {
				g.err = g.wrap(rerr)
			}
			g.gz.Multistream(false)
		case perr != nil && perr != io.EOF:
			g.err = perr
		default:
			rest, _ := g.src.Peek(64)
			g.err = newDetail(ErrCompressed, "bad gzip stream: data after the end of the gzip stream is not another gzip member (starts % x)", rest[:min(len(rest), 8)])
		}
	default:
		g.err = g.wrap(err)
	}
	if n > 0 {
		return n, nil
	}
	if err == nil && g.err == nil {
		return g.Read(p)
	}
	return 0, g.err
}

// wrap describes an error of the gzip reader.
func (g *gzipStream) wrap(err error) error {
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return newDetail(ErrTruncated, "gzip stream cut short: the file ends inside gzip member %d (its header, compressed data or 8-byte trailer)", g.members+1)
	}
	return &detail{kind: ErrCompressed, msg: fmt.Sprintf("bad gzip stream: gzip member %d: %v", g.members+1, err), err: err}
}

// detail is an error message of one of the Err* kinds.
type detail struct {
	kind error
	msg  string
	err  error // the error it stands for, if any (errors.Is finds both)
}

func newDetail(kind error, format string, args ...any) error {
	return &detail{kind: kind, msg: fmt.Sprintf(format, args...)}
}

func (d *detail) Error() string { return d.msg }
func (d *detail) Unwrap() []error {
	if d.err != nil {
		return []error{d.kind, d.err}
	}
	return []error{d.kind}
}
