// Package pcapwrite writes captures in the pcapng format
// (draft-ietf-opsawg-pcapng, "PCAP Next Generation Dump File Format"): one
// Section Header Block, an Interface Description Block per interface (its
// link type and snap length, if_name and if_description when known, and
// if_tsresol set to nanoseconds), and an Enhanced Packet Block per packet,
// each with any number of opt_comment options.
//
// It writes through a bufio.Writer and reuses one buffer for every block:
// writing a packet allocates nothing.
package pcapwrite

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Block types and option codes (draft-ietf-opsawg-pcapng sections 4 and 3.5).
const (
	blockSHB = 0x0A0D0D0A // Section Header Block (4.1)
	blockIDB = 0x00000001 // Interface Description Block (4.2)
	blockEPB = 0x00000006 // Enhanced Packet Block (4.3)

	byteOrderMagic = 0x1A2B3C4D

	optEndOfOpt  = 0 // opt_endofopt (3.5)
	optComment   = 1 // opt_comment (3.5)
	shbUserAppl  = 4 // shb_userappl (4.1)
	ifName       = 2 // if_name (4.2)
	ifDescr      = 3 // if_description (4.2)
	ifTsresol    = 9 // if_tsresol (4.2)
	tsresolNanos = 9 // 10^-9 s
)

// le is the byte order rdmashark writes in; readers detect it from the
// Section Header Block's byte-order magic.
var le = binary.LittleEndian

// Interface describes a capture interface.
type Interface struct {
	LinkType uint16 // a LINKTYPE_ value (1 Ethernet, 276 Linux SLL2, ...)
	SnapLen  uint32 // 0: no limit
	Name     string // if_name, when known
	// Description is the if_description, when known.
	Description string
}

// Writer writes one pcapng section. It is not safe for concurrent use.
type Writer struct {
	w      *bufio.Writer
	ifaces int
	buf    []byte
	err    error
}

// NewWriter writes a Section Header Block naming app (shb_userappl, may be
// empty) to w and returns a Writer for the section's interfaces and packets.
func NewWriter(w io.Writer, app string) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 1<<16)}
	b := pw.start(blockSHB)
	b = le.AppendUint32(b, byteOrderMagic)
	b = le.AppendUint16(b, 1) // major version
	b = le.AppendUint16(b, 0) // minor version
	b = le.AppendUint64(b, ^uint64(0))
	if app != "" {
		b = appendOption(b, shbUserAppl, app)
		b = appendEnd(b)
	}
	pw.finish(b)
	return pw, pw.err
}

// AddInterface writes an Interface Description Block and returns the
// interface's ID for WritePacket. Interfaces are numbered from 0 in the
// order they are added.
func (w *Writer) AddInterface(ifc Interface) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	b := w.start(blockIDB)
	b = le.AppendUint16(b, ifc.LinkType)
	b = le.AppendUint16(b, 0) // reserved
	b = le.AppendUint32(b, ifc.SnapLen)
	if ifc.Name != "" {
		b = appendOption(b, ifName, ifc.Name)
	}
	if ifc.Description != "" {
		b = appendOption(b, ifDescr, ifc.Description)
	}
	b = le.AppendUint16(b, ifTsresol)
	b = le.AppendUint16(b, 1)
	b = append(b, tsresolNanos, 0, 0, 0)
	b = appendEnd(b)
	w.finish(b)
	w.ifaces++
	return w.ifaces - 1, w.err
}

// ErrInterface is returned for a packet on an interface never added.
var ErrInterface = errors.New("pcapwrite: packet on an interface that was not added")

// WritePacket writes an Enhanced Packet Block: data captured on interface
// iface at ts, origLen bytes long on the wire (at least len(data)), with one
// opt_comment per comment.
func (w *Writer) WritePacket(iface int, ts time.Time, data []byte, origLen int, comments ...string) error {
	if w.err != nil {
		return w.err
	}
	if iface < 0 || iface >= w.ifaces {
		return fmt.Errorf("%w: %d", ErrInterface, iface)
	}
	if origLen < len(data) {
		origLen = len(data)
	}
	ns := uint64(ts.UnixNano())
	b := w.start(blockEPB)
	b = le.AppendUint32(b, uint32(iface))
	b = le.AppendUint32(b, uint32(ns>>32))
	b = le.AppendUint32(b, uint32(ns))
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, uint32(origLen))
	b = append(b, data...)
	b = pad(b)
	for _, c := range comments {
		b = appendOption(b, optComment, c)
	}
	if len(comments) > 0 {
		b = appendEnd(b)
	}
	w.finish(b)
	return w.err
}

// Flush writes what is buffered to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.w.Flush()
	return w.err
}

// start begins a block in the reused buffer: type and a length filled in
// by finish.
func (w *Writer) start(typ uint32) []byte {
	b := le.AppendUint32(w.buf[:0], typ)
	return le.AppendUint32(b, 0)
}

// finish sets the block's length at both ends and writes it.
func (w *Writer) finish(b []byte) {
	n := uint32(len(b) + 4)
	le.PutUint32(b[4:], n)
	b = le.AppendUint32(b, n)
	w.buf = b
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

// appendOption appends an option with a text value, padded to 32 bits.
func appendOption(b []byte, code uint16, v string) []byte {
	if len(v) > 0xffff-3 {
		v = v[:0xffff-3] // an option's length is 16 bits
	}
	b = le.AppendUint16(b, code)
	b = le.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return pad(b)
}

func appendEnd(b []byte) []byte {
	b = le.AppendUint16(b, optEndOfOpt)
	return le.AppendUint16(b, 0)
}

func pad(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
