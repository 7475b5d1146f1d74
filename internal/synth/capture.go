package synth

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// PcapOptions choose the variant of the classic pcap format
// (draft-ietf-opsawg-pcap): timestamp resolution and byte order.
type PcapOptions struct {
	Nanosecond bool // magic 0xa1b23c4d instead of 0xa1b2c3d4
	BigEndian  bool
	// SnapLen is the file header's snap length (default 262144).
	SnapLen int
}

// WritePcap writes frames as a pcap file of link type lt: the 24-octet
// file header (magic, version 2.4, reserved, snap length, link type), then
// each record's 16-octet header (seconds, micro- or nanoseconds, captured
// and original length) and data.
func WritePcap(w io.Writer, lt layers.LinkType, frames []Frame, o PcapOptions) error {
	var bo binary.ByteOrder = binary.LittleEndian
	if o.BigEndian {
		bo = binary.BigEndian
	}
	snap := o.SnapLen
	if snap == 0 {
		snap = 262144
	}
	h := make([]byte, 24)
	magic := uint32(0xa1b2c3d4)
	if o.Nanosecond {
		magic = 0xa1b23c4d
	}
	bo.PutUint32(h[0:], magic)
	bo.PutUint16(h[4:], 2)
	bo.PutUint16(h[6:], 4)
	bo.PutUint32(h[16:], uint32(snap))
	bo.PutUint32(h[20:], uint32(lt))
	if _, err := w.Write(h); err != nil {
		return err
	}
	rh := make([]byte, 16)
	for i, f := range frames {
		if f.LinkType != lt {
			return fmt.Errorf("synth: frame %d has link type %d in a pcap of link type %d", i+1, f.LinkType, lt)
		}
		frac := f.Time.Nanosecond() / 1000
		if o.Nanosecond {
			frac = f.Time.Nanosecond()
		}
		bo.PutUint32(rh[0:], uint32(f.Time.Unix()))
		bo.PutUint32(rh[4:], uint32(frac))
		bo.PutUint32(rh[8:], uint32(len(f.Data)))
		bo.PutUint32(rh[12:], uint32(f.Length))
		if _, err := w.Write(rh); err != nil {
			return err
		}
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
	}
	return nil
}

// Interface is a pcapng interface.
type Interface struct {
	LinkType layers.LinkType
	SnapLen  int // 0: none given
	Name     string
}

// pcapng block types and options (draft-ietf-opsawg-pcapng).
const (
	blockSHB       = 0x0A0D0D0A
	blockIDB       = 0x00000001
	blockEPB       = 0x00000006
	byteOrderMagic = 0x1A2B3C4D
	optEnd         = 0
	optIfName      = 2
)

// WritePcapNG writes frames as a little-endian pcapng file with one
// section: a Section Header Block, an Interface Description Block per
// interface (microsecond timestamps, the default if_tsresol) and an
// Enhanced Packet Block per frame on interface Frame.Interface.
func WritePcapNG(w io.Writer, ifaces []Interface, frames []Frame) error {
	le := binary.LittleEndian
	var out []byte
	block := func(typ uint32, body []byte) {
		n := 12 + (len(body)+3)&^3
		b := make([]byte, n)
		le.PutUint32(b[0:], typ)
		le.PutUint32(b[4:], uint32(n))
		copy(b[8:], body)
		le.PutUint32(b[n-4:], uint32(n))
		out = append(out, b...)
	}
	shb := make([]byte, 16)
	le.PutUint32(shb[0:], byteOrderMagic)
	le.PutUint16(shb[4:], 1)
	le.PutUint16(shb[6:], 0)
	le.PutUint64(shb[8:], ^uint64(0)) // section length not given
	block(blockSHB, shb)
	for _, ifc := range ifaces {
		body := make([]byte, 8)
		le.PutUint16(body[0:], uint16(ifc.LinkType))
		le.PutUint32(body[4:], uint32(ifc.SnapLen))
		if ifc.Name != "" {
			body = appendOption(body, optIfName, []byte(ifc.Name))
			body = appendOption(body, optEnd, nil)
		}
		block(blockIDB, body)
	}
	for i, f := range frames {
		if f.Interface < 0 || f.Interface >= len(ifaces) {
			return fmt.Errorf("synth: frame %d names interface %d of %d", i+1, f.Interface, len(ifaces))
		}
		if f.LinkType != ifaces[f.Interface].LinkType {
			return fmt.Errorf("synth: frame %d has link type %d on an interface of link type %d", i+1, f.LinkType, ifaces[f.Interface].LinkType)
		}
		body := make([]byte, 20, 20+len(f.Data)+3)
		ts := uint64(f.Time.UnixMicro())
		le.PutUint32(body[0:], uint32(f.Interface))
		le.PutUint32(body[4:], uint32(ts>>32))
		le.PutUint32(body[8:], uint32(ts))
		le.PutUint32(body[12:], uint32(len(f.Data)))
		le.PutUint32(body[16:], uint32(f.Length))
		body = append(body, f.Data...)
		block(blockEPB, body)
	}
	_, err := w.Write(out)
	return err
}

// appendOption appends a pcapng option: code, length, value padded to 32
// bits.
func appendOption(b []byte, code uint16, v []byte) []byte {
	var h [4]byte
	binary.LittleEndian.PutUint16(h[0:], code)
	binary.LittleEndian.PutUint16(h[2:], uint16(len(v)))
	b = append(b, h[:]...)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Sequence builds a capture's frames in order, with timestamps Step apart
// from Start. Its methods record the first error in Err and do nothing
// after it, so that a script of frames reads straight; check Err at the
// end.
type Sequence struct {
	// Options are the defaults of every frame; the mods of each call
	// change a copy.
	Options Options
	Start   time.Time
	Step    time.Duration
	// Interface is the pcapng interface of the frames added next.
	Interface int
	Frames    []Frame
	// BadICRC, BadVCRC and Cut list the numbers (from 1) of the frames
	// built with a corrupted ICRC or VCRC, or cut by a snap length.
	BadICRC, BadVCRC, Cut []int
	Err                   error
}

// Mod changes the options of one frame.
type Mod func(*Options)

// WithCorruptICRC corrupts the frame's ICRC.
func WithCorruptICRC(o *Options) { o.CorruptICRC = true }

// WithCorruptVCRC corrupts the frame's VCRC.
func WithCorruptVCRC(o *Options) { o.CorruptVCRC = true }

// WithSnap cuts the frame after n bytes.
func WithSnap(n int) Mod { return func(o *Options) { o.Snap = n } }

// WithOptions replaces the frame's options altogether.
func WithOptions(x Options) Mod { return func(o *Options) { *o = x } }

// Packet adds a frame carrying h and payload from src to dst.
func (s *Sequence) Packet(src, dst Node, h roce.BTH, payload []byte, mods ...Mod) {
	if s.Err != nil {
		return
	}
	o := s.Options
	for _, m := range mods {
		m(&o)
	}
	f, err := Build(o, src, dst, h, payload)
	if err != nil {
		s.Err = fmt.Errorf("frame %d: %w", len(s.Frames)+1, err)
		return
	}
	n := len(s.Frames) + 1
	if o.CorruptICRC {
		s.BadICRC = append(s.BadICRC, n)
	}
	if o.CorruptVCRC {
		s.BadVCRC = append(s.BadVCRC, n)
	}
	if len(f.Data) < f.Length {
		s.Cut = append(s.Cut, n)
	}
	s.add(f)
}

// CM adds a frame carrying the CM message msg from src to dst (see CM).
func (s *Sequence) CM(src, dst Node, tid uint64, msg CMMessage, mods ...Mod) {
	if s.Err != nil {
		return
	}
	h, payload, err := CM(tid, 0, msg)
	if err != nil {
		s.Err = fmt.Errorf("frame %d: %w", len(s.Frames)+1, err)
		return
	}
	s.Packet(src, dst, h, payload, mods...)
}

// Frame adds a frame built elsewhere (ERFRecord, for instance).
func (s *Sequence) Frame(f Frame) {
	if s.Err != nil {
		return
	}
	s.add(f)
}

func (s *Sequence) add(f Frame) {
	f.Time = s.Start.Add(time.Duration(len(s.Frames)) * s.Step)
	f.Interface = s.Interface
	s.Frames = append(s.Frames, f)
}
