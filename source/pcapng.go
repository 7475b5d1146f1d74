package source

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pcapng block types (pcapng draft, section 11.1 "Block Type Codes").
const (
	blockSHB        = 0x0a0d0d0a // Section Header Block (4.1)
	blockIDB        = 0x00000001 // Interface Description Block (4.2)
	blockPB         = 0x00000002 // Packet Block, obsolete (Appendix A)
	blockSPB        = 0x00000003 // Simple Packet Block (4.4)
	blockNRB        = 0x00000004 // Name Resolution Block (4.5)
	blockISB        = 0x00000005 // Interface Statistics Block (4.6)
	blockEPB        = 0x00000006 // Enhanced Packet Block (4.3)
	blockJournal    = 0x00000009 // systemd Journal Export Block (4.9)
	blockDSB        = 0x0000000a // Decryption Secrets Block (4.7)
	blockCustom     = 0x00000bad // Custom Block (4.8)
	blockCustomNoCp = 0x40000bad // Custom Block that must not be copied (4.8)

	byteOrderMagic = 0x1a2b3c4d // SHB Byte-Order Magic (4.1)
)

// Option codes read here (pcapng draft 3.5 and 4.2).
const (
	optEndOfOpt   = 0
	optComment    = 1 // opt_comment (3.5)
	optDropCount  = 4 // epb_dropcount (4.3.1): packets lost before this one
	optIfName     = 2
	optIfDescr    = 3
	optIfTSResol  = 9
	optIfTSOffset = 14
)

func blockName(typ uint32) string {
	switch typ {
	case blockSHB:
		return "Section Header Block"
	case blockIDB:
		return "Interface Description Block"
	case blockPB:
		return "Packet Block"
	case blockSPB:
		return "Simple Packet Block"
	case blockNRB:
		return "Name Resolution Block"
	case blockISB:
		return "Interface Statistics Block"
	case blockEPB:
		return "Enhanced Packet Block"
	case blockJournal:
		return "systemd Journal Export Block"
	case blockDSB:
		return "Decryption Secrets Block"
	case blockCustom, blockCustomNoCp:
		return "Custom Block"
	}
	return fmt.Sprintf("block of type 0x%08x", typ)
}

// minBlockLength is the length of a block of type typ with no body beyond
// its fixed fields (pcapng draft, section 4).
func minBlockLength(typ uint32) uint32 {
	switch typ {
	case blockSHB:
		return 28
	case blockIDB:
		return 20
	case blockEPB, blockPB:
		return 32
	case blockSPB:
		return 16
	case blockISB:
		return 24
	case blockCustom, blockCustomNoCp:
		return 16
	}
	return 12
}

// used reports whether blocks of type typ are read; the others are checked
// for framing and skipped (custom and journal blocks are counted, see block).
func used(typ uint32) bool {
	switch typ {
	case blockSHB, blockIDB, blockEPB, blockPB, blockSPB:
		return true
	}
	return false
}

func pad4(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }

// ngIface is what reading a packet needs of its interface.
type ngIface struct {
	linkType layers.LinkType
	snapLen  uint32
	units    uint64 // timestamp units per second (if_tsresol)
	offset   int64  // seconds added to every timestamp (if_tsoffset)
}

// ngState reads pcapng blocks. Every block is checked whole before any of it
// is used: framing (length at least the block type's minimum, a multiple of
// 4, within bounds, equal to the copy at the end, all present), then fixed
// fields and options. Framing errors are final; errors inside a well-framed
// packet block skip that block.
type ngState struct {
	r         *Reader
	bigEndian bool
	section   int       // Section Header Blocks seen
	ifaces    []ngIface // interfaces of the current section
	packets   int       // packet blocks seen, returned or skipped
	// comments are the opt_comments of the last Enhanced Packet Block
	// (Record.Comments), slices of its buffer; keepComment is made once.
	comments    [][]byte
	keepComment func(code uint16, value []byte)
	// dropCount is the last Enhanced Packet Block's epb_dropcount.
	dropCount uint64
}

func (g *ngState) keep(code uint16, value []byte) {
	switch {
	case code == optComment:
		g.comments = append(g.comments, value)
	case code == optDropCount && len(value) == 8:
		g.dropCount = g.order().Uint64(value)
	}
}

func (g *ngState) order() binary.ByteOrder {
	if g.bigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// fail is a final error.
func (g *ngState) fail(num int, off int64, err error) error {
	return &Error{File: g.r.name, Packet: num, Offset: off, Err: err, Final: true}
}

// skip drops the packet block of length n at the read position and returns
// a recoverable error about it.
func (g *ngState) skip(n uint32, num int, off int64, err error) error {
	g.r.br.Discard(int(n))
	return &Error{File: g.r.name, Packet: num, Offset: off, Err: err, Final: false}
}

// start reads the Section Header Block the file begins with.
func (g *ngState) start() error {
	_, _, err := g.block()
	return err
}

// next returns the next packet record.
func (g *ngState) next() (Record, error) {
	for {
		rec, ok, err := g.block()
		if err != nil || ok {
			return rec, err
		}
	}
}

// block reads the block at the read position: a packet block gives a Record
// and true; other blocks are used (section, interface) or skipped.
func (g *ngState) block() (Record, bool, error) {
	br := g.r.br
	off := g.r.offset()
	num := g.packets + 1
	if off == 0 {
		num = 0 // the file header
	}
	h, err := br.Peek(12)
	if len(h) < 12 {
		if len(h) == 0 && err == io.EOF {
			return Record{}, false, io.EOF
		}
		if !isEOF(err) {
			return Record{}, false, g.fail(num, off, err)
		}
		return Record{}, false, g.fail(num, off, newDetail(ErrTruncated, "truncated block: %d of a block header's 12 bytes present", len(h)))
	}
	if binary.LittleEndian.Uint32(h) == blockSHB { // the same in both byte orders
		switch {
		case binary.LittleEndian.Uint32(h[8:]) == byteOrderMagic:
			g.bigEndian = false
		case binary.BigEndian.Uint32(h[8:]) == byteOrderMagic:
			g.bigEndian = true
		default:
			return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: Section Header Block: byte-order magic 0x%08x is not 0x1a2b3c4d in either byte order", binary.BigEndian.Uint32(h[8:])))
		}
	}
	o := g.order()
	typ := o.Uint32(h)
	length := o.Uint32(h[4:])
	name := blockName(typ)
	if min := minBlockLength(typ); length < min {
		return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d is less than the minimum of %d", name, length, min))
	}
	if length%4 != 0 {
		return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d is not a multiple of 4", name, length))
	}
	if length > maxBlockLength {
		return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d exceeds the maximum of %d", name, length, maxBlockLength))
	}
	if length > bufferSize {
		if used(typ) {
			return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d exceeds the maximum of %d for this block type", name, length, bufferSize))
		}
		return Record{}, false, g.discardLarge(length, name, num, off)
	}
	b, err := br.Peek(int(length))
	if len(b) < int(length) {
		if !isEOF(err) {
			return Record{}, false, g.fail(num, off, err)
		}
		return Record{}, false, g.fail(num, off, newDetail(ErrTruncated, "truncated block: %s header says %d bytes, %d present", name, length, len(b)))
	}
	if end := o.Uint32(b[length-4:]); end != length {
		return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d at its start and %d at its end differ", name, length, end))
	}
	if off == 0 && typ != blockSHB {
		return Record{}, false, g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: the file starts with a %s, not a Section Header Block", name))
	}
	var rec Record
	isPacket := false
	switch typ {
	case blockSHB:
		err = g.sectionHeader(b, num, off)
	case blockIDB:
		err = g.interfaceDescription(b, num, off)
	case blockEPB, blockPB:
		g.packets++
		rec, err = g.packet(typ, b, g.packets, off)
		isPacket = true
	case blockSPB:
		g.packets++
		rec, err = g.simplePacket(b, g.packets, off)
		isPacket = true
	case blockCustom, blockCustomNoCp, blockJournal:
		// Wireshark shows these as frames: count them so that record
		// numbers stay Wireshark's frame numbers.
		g.packets++
	}
	if err != nil {
		return Record{}, false, err
	}
	if isPacket && !g.r.anySupported {
		// A packet, and no interface so far has a link type rdmashark
		// reads: the whole capture is of an unsupported link type, as a
		// pcap file's header would have said at Open (issue 12). A file
		// that also describes a supported interface before its first
		// packet is read, the other interfaces' packets undecoded.
		if lerr := Supported(rec.LinkType); lerr != nil {
			return Record{}, false, g.fail(num, off, lerr)
		}
	}
	if isPacket {
		rec.Offset, rec.Length = off, int(length)
	}
	// Data, if any, points into the read buffer: discarding only moves the
	// read position, and the next Peek may overwrite it.
	br.Discard(int(length))
	return rec, isPacket, nil
}

// discardLarge skips a block too long to buffer, checking its trailing length.
func (g *ngState) discardLarge(length uint32, name string, num int, off int64) error {
	br := g.r.br
	n, err := br.Discard(int(length) - 4)
	if n < int(length)-4 {
		if !isEOF(err) {
			return g.fail(num, off, err)
		}
		return g.fail(num, off, newDetail(ErrTruncated, "truncated block: %s header says %d bytes, %d present", name, length, n))
	}
	t, err := br.Peek(4)
	if len(t) < 4 {
		if !isEOF(err) {
			return g.fail(num, off, err)
		}
		return g.fail(num, off, newDetail(ErrTruncated, "truncated block: %s header says %d bytes, %d present", name, length, n+len(t)))
	}
	if end := g.order().Uint32(t); end != length {
		return g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: block length %d at its start and %d at its end differ", name, length, end))
	}
	br.Discard(4)
	return nil
}

// options checks that the options of block b, from offset start to the
// trailing length, fit the block (pcapng draft 3.5), and calls fn (if not
// nil) for each.
func (g *ngState) options(b []byte, start uint64, fn func(code uint16, value []byte)) error {
	o := g.order()
	end := uint64(len(b) - 4)
	for i := start; i < end; {
		if end-i < 4 {
			return fmt.Errorf("option header at byte %d overruns the block", i)
		}
		code := o.Uint16(b[i:])
		n := o.Uint16(b[i+2:])
		if code == optEndOfOpt {
			return nil
		}
		if i+4+pad4(uint32(n)) > end {
			return fmt.Errorf("option %d of %d bytes at byte %d overruns the block", code, n, i)
		}
		if fn != nil {
			fn(code, b[i+4:i+4+uint64(n)])
		}
		i += 4 + pad4(uint32(n))
	}
	return nil
}

// sectionHeader checks a Section Header Block (pcapng draft 4.1) and starts
// a new section: byte order, interfaces numbered from 0 again.
func (g *ngState) sectionHeader(b []byte, num int, off int64) error {
	o := g.order()
	// Version 1.2 was written by old tools for files identical to 1.0
	// (pcapng draft 4.1, Minor Version).
	if major, minor := o.Uint16(b[12:]), o.Uint16(b[14:]); major != 1 || (minor != 0 && minor != 2) {
		return g.fail(num, off, newDetail(ErrUnsupported, "pcapng version %d.%d is not supported (only 1.0)", major, minor))
	}
	if err := g.options(b, 24, nil); err != nil {
		return g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: Section Header Block: %v", err))
	}
	g.section++
	g.ifaces = g.ifaces[:0]
	return nil
}

// interfaceDescription checks an Interface Description Block (pcapng draft
// 4.2) and adds the interface to the section.
func (g *ngState) interfaceDescription(b []byte, num int, off int64) error {
	if len(g.ifaces) >= maxInterfaces {
		return g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: more than %d interfaces in one section", maxInterfaces))
	}
	o := g.order()
	ifc := Interface{
		Section:    g.section - 1,
		ID:         len(g.ifaces),
		LinkType:   layers.LinkType(o.Uint16(b[8:])),
		SnapLen:    o.Uint32(b[12:]),
		Resolution: gopacket.TimestampResolution{Base: 10, Exponent: -6}, // if_tsresol default
	}
	ni := ngIface{linkType: ifc.LinkType, snapLen: ifc.SnapLen, units: 1e6}
	var optErr error
	err := g.options(b, 16, func(code uint16, v []byte) {
		switch code {
		case optIfName:
			ifc.Name = string(v)
		case optIfDescr:
			ifc.Description = string(v)
		case optIfTSResol:
			if len(v) < 1 {
				return
			}
			// Bit 7 chooses a negative power of 2, else of 10; units per
			// second must fit in 64 bits.
			e := int(v[0] & 0x7f)
			if v[0]&0x80 != 0 {
				if e > 63 {
					optErr = fmt.Errorf("timestamp resolution 2^-%d is out of range", e)
					return
				}
				ni.units = 1 << e
				ifc.Resolution = gopacket.TimestampResolution{Base: 2, Exponent: -e}
			} else {
				if e > 19 {
					optErr = fmt.Errorf("timestamp resolution 10^-%d is out of range", e)
					return
				}
				ni.units = 1
				for range e {
					ni.units *= 10
				}
				ifc.Resolution = gopacket.TimestampResolution{Base: 10, Exponent: -e}
			}
		case optIfTSOffset:
			if len(v) >= 8 {
				ni.offset = int64(o.Uint64(v))
			}
		}
	})
	if err == nil {
		err = optErr
	}
	if err != nil {
		return g.fail(num, off, newDetail(ErrBadBlock, "bad pcapng block: Interface Description Block: %v", err))
	}
	g.ifaces = append(g.ifaces, ni)
	g.r.addInterface(ifc)
	return nil
}

// timestamp converts a 64-bit timestamp in units of ifc (pcapng draft 4.3,
// Timestamp) to a time.
func timestamp(ifc *ngIface, ts uint64) time.Time {
	sec := ts / ifc.units
	rem := ts % ifc.units
	// rem < units, so rem*1e9/units < 1e9 and the 128-bit division is safe.
	hi, lo := bits.Mul64(rem, 1e9)
	ns, _ := bits.Div64(hi, lo, ifc.units)
	return time.Unix(int64(sec)+ifc.offset, int64(ns)).UTC()
}

// packet reads an Enhanced Packet Block (pcapng draft 4.3) or an obsolete
// Packet Block (Appendix A). Errors here leave the framing intact: the block
// is skipped and reading can go on.
func (g *ngState) packet(typ uint32, b []byte, num int, off int64) (Record, error) {
	o := g.order()
	length := uint32(len(b))
	name := blockName(typ)
	var iface uint32
	if typ == blockEPB {
		iface = o.Uint32(b[8:])
	} else {
		iface = uint32(o.Uint16(b[8:]))
	}
	caplen, origlen := o.Uint32(b[20:]), o.Uint32(b[24:])
	switch {
	case iface >= uint32(len(g.ifaces)):
		return Record{}, g.skip(length, num, off, newDetail(ErrBadBlock, "bad pcapng block: %s names interface %d, but its section describes %d; record skipped", name, iface, len(g.ifaces)))
	case caplen > MaxRecordLength:
		return Record{}, g.skip(length, num, off, newDetail(ErrBadLength, "impossible record length: captured length %d exceeds the maximum of %d; record skipped", caplen, MaxRecordLength))
	case 28+pad4(caplen)+4 > uint64(length):
		return Record{}, g.skip(length, num, off, newDetail(ErrBadLength, "impossible record length: captured length %d does not fit in a %d-byte %s; record skipped", caplen, length, name))
	case caplen > origlen:
		return Record{}, g.skip(length, num, off, newDetail(ErrBadLength, "captured length %d is larger than the original length %d; record skipped", caplen, origlen))
	}
	g.comments = g.comments[:0]
	g.dropCount = 0
	if typ == blockEPB {
		if g.keepComment == nil {
			g.keepComment = g.keep
		}
		if err := g.options(b, 28+pad4(caplen), g.keepComment); err != nil {
			return Record{}, g.skip(length, num, off, newDetail(ErrBadBlock, "bad pcapng block: %s: %v; record skipped", name, err))
		}
	}
	ifc := &g.ifaces[iface]
	g.r.checkSnap(num, caplen, ifc.snapLen)
	ts := uint64(o.Uint32(b[12:]))<<32 | uint64(o.Uint32(b[16:]))
	end := 28 + int(caplen)
	return Record{
		Number: num,
		Data:   b[28:end:end],
		CI: gopacket.CaptureInfo{
			Timestamp:      timestamp(ifc, ts),
			CaptureLength:  int(caplen),
			Length:         int(origlen),
			InterfaceIndex: int(iface),
		},
		LinkType:   ifc.linkType,
		Comments:   g.comments,
		LostBefore: g.dropCount,
	}, nil
}

// simplePacket reads a Simple Packet Block (pcapng draft 4.4): interface 0,
// no timestamp, captured length the original length cut to the snap length.
func (g *ngState) simplePacket(b []byte, num int, off int64) (Record, error) {
	length := uint32(len(b))
	if len(g.ifaces) == 0 {
		return Record{}, g.skip(length, num, off, newDetail(ErrBadBlock, "bad pcapng block: Simple Packet Block before any Interface Description Block; record skipped"))
	}
	ifc := &g.ifaces[0]
	origlen := g.order().Uint32(b[8:])
	caplen := origlen
	if ifc.snapLen != 0 && caplen > ifc.snapLen {
		caplen = ifc.snapLen
	}
	switch {
	case caplen > MaxRecordLength:
		return Record{}, g.skip(length, num, off, newDetail(ErrBadLength, "impossible record length: captured length %d exceeds the maximum of %d; record skipped", caplen, MaxRecordLength))
	case 12+pad4(caplen)+4 > uint64(length):
		return Record{}, g.skip(length, num, off, newDetail(ErrBadLength, "impossible record length: original length %d does not fit in a %d-byte Simple Packet Block; record skipped", origlen, length))
	}
	end := 12 + int(caplen)
	return Record{
		Number:   num,
		Data:     b[12:end:end],
		CI:       gopacket.CaptureInfo{CaptureLength: int(caplen), Length: int(origlen)},
		LinkType: ifc.linkType,
	}, nil
}
