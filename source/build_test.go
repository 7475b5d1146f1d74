package source

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// Writers for test captures, built field by field from the pcap draft
// (draft-ietf-opsawg-pcap) and the pcapng draft (draft-ietf-opsawg-pcapng),
// so that tests can make what no tool writes: big-endian sections, odd
// timestamp resolutions, obsolete blocks, and damaged files.

// pcapFile builds a pcap file.
type pcapFile struct {
	buf  bytes.Buffer
	o    binary.ByteOrder
	nano bool
}

// newPcap writes the 24-byte file header (pcap draft 4): magic, version 2.4,
// thiszone, sigfigs, snaplen, link type.
func newPcap(o binary.ByteOrder, nano bool, snaplen uint32, linkType uint32) *pcapFile {
	p := &pcapFile{o: o, nano: nano}
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	var h [24]byte
	o.PutUint32(h[0:], magic)
	o.PutUint16(h[4:], 2)
	o.PutUint16(h[6:], 4)
	o.PutUint32(h[16:], snaplen)
	o.PutUint32(h[20:], linkType)
	p.buf.Write(h[:])
	return p
}

// record writes a 16-byte record header (pcap draft 5) and data.
func (p *pcapFile) record(sec, frac, caplen, origlen uint32, data []byte) {
	var h [16]byte
	p.o.PutUint32(h[0:], sec)
	p.o.PutUint32(h[4:], frac)
	p.o.PutUint32(h[8:], caplen)
	p.o.PutUint32(h[12:], origlen)
	p.buf.Write(h[:])
	p.buf.Write(data)
}

// ngFile builds a pcapng file.
type ngFile struct {
	buf bytes.Buffer
	o   binary.ByteOrder
}

func ngPad(n int) int { return (n + 3) &^ 3 }

// block writes a block (pcapng draft 3.1): type, total length, body padded
// to 4 bytes, total length again.
func (w *ngFile) block(typ uint32, body []byte) {
	n := 12 + ngPad(len(body))
	var h [8]byte
	w.o.PutUint32(h[0:], typ)
	w.o.PutUint32(h[4:], uint32(n))
	w.buf.Write(h[:])
	w.buf.Write(body)
	w.buf.Write(make([]byte, ngPad(len(body))-len(body)))
	w.buf.Write(h[4:8])
}

// opt encodes an option (pcapng draft 3.5): code, length, value, padding,
// in the byte order of the section being written (little-endian before the
// first).
func (w *ngFile) opt(code uint16, v []byte) []byte {
	b := make([]byte, 4+ngPad(len(v)))
	w.ord().PutUint16(b, code)
	w.ord().PutUint16(b[2:], uint16(len(v)))
	copy(b[4:], v)
	return b
}

func (w *ngFile) ord() binary.ByteOrder {
	if w.o == nil {
		return binary.LittleEndian
	}
	return w.o
}

func (w *ngFile) endOpts(opts [][]byte) []byte {
	if len(opts) == 0 {
		return nil
	}
	var b []byte
	for _, o := range opts {
		b = append(b, o...)
	}
	return append(b, 0, 0, 0, 0) // opt_endofopt
}

// shb starts a section in byte order o (pcapng draft 4.1).
func (w *ngFile) shb(o binary.ByteOrder, minor uint16, opts ...[]byte) {
	w.o = o
	body := make([]byte, 16)
	o.PutUint32(body[0:], 0x1a2b3c4d)
	o.PutUint16(body[4:], 1)
	o.PutUint16(body[6:], minor)
	o.PutUint64(body[8:], 0xffffffffffffffff) // section length unknown
	w.block(0x0a0d0d0a, append(body, w.endOpts(opts)...))
}

// idb describes an interface (pcapng draft 4.2).
func (w *ngFile) idb(linkType uint16, snaplen uint32, opts ...[]byte) {
	body := make([]byte, 8)
	w.o.PutUint16(body[0:], linkType)
	w.o.PutUint32(body[4:], snaplen)
	w.block(1, append(body, w.endOpts(opts)...))
}

// epb writes an Enhanced Packet Block (pcapng draft 4.3).
func (w *ngFile) epb(iface uint32, ts uint64, data []byte, origlen uint32, opts ...[]byte) {
	body := make([]byte, 20, 20+len(data)+4)
	w.o.PutUint32(body[0:], iface)
	w.o.PutUint32(body[4:], uint32(ts>>32))
	w.o.PutUint32(body[8:], uint32(ts))
	w.o.PutUint32(body[12:], uint32(len(data)))
	w.o.PutUint32(body[16:], origlen)
	body = append(body, data...)
	body = append(body, make([]byte, ngPad(len(data))-len(data))...)
	w.block(6, append(body, w.endOpts(opts)...))
}

// pb writes an obsolete Packet Block (pcapng draft Appendix A).
func (w *ngFile) pb(iface uint16, ts uint64, data []byte, origlen uint32) {
	body := make([]byte, 20)
	w.o.PutUint16(body[0:], iface)
	w.o.PutUint32(body[4:], uint32(ts>>32))
	w.o.PutUint32(body[8:], uint32(ts))
	w.o.PutUint32(body[12:], uint32(len(data)))
	w.o.PutUint32(body[16:], origlen)
	w.block(2, append(body, data...))
}

// spb writes a Simple Packet Block (pcapng draft 4.4).
func (w *ngFile) spb(origlen uint32, data []byte) {
	body := make([]byte, 4)
	w.o.PutUint32(body, origlen)
	w.block(3, append(body, data...))
}

func u8(v uint8) []byte { return []byte{v} }

func (w *ngFile) u64(v uint64) []byte {
	b := make([]byte, 8)
	w.ord().PutUint64(b, v)
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
