package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// The frame stream between a capture process and the process that
// analyses its frames (docs/live-capture.md, "The reader in a process of
// its own"): pcapng (draft-ietf-opsawg-pcapng), little-endian, one section
// and one interface with nanosecond timestamps, then an Enhanced Packet
// Block per frame carrying two options — epb_packetid (code 5, section
// 4.3.1), the frame's number in the capture (the -w file's numbering: the
// frames the analysis was not given keep theirs), and, when frames were
// lost just before it, epb_dropcount (code 4), how many: the kernel's
// drops and the frames skipped for the analysis, as Info.LostBefore counts
// them. Any pcapng reader reads the stream; StreamSource reads it without
// allocating.

// pcapng block types and options used by the stream.
const (
	shbType       = 0x0A0D0D0A
	idbType       = 0x00000001
	byteOrder     = 0x1A2B3C4D
	optEndOfOpt   = 0
	optDropCount  = 4  // epb_dropcount
	optPacketID   = 5  // epb_packetid
	optTSResol    = 9  // if_tsresol
	epbHead       = 28 // type, length, interface, timestamp (2), captured and original lengths
	streamMaxOpts = 2*12 + 4
)

// AppendStreamHeader appends the stream's Section Header Block and its
// Interface Description Block (link type lt, snapshot length snaplen,
// if_tsresol 9: nanoseconds).
func AppendStreamHeader(b []byte, lt layers.LinkType, snaplen int) []byte {
	le := binary.LittleEndian
	// Section Header Block (pcapng 4.1): no options.
	b = le.AppendUint32(b, shbType)
	b = le.AppendUint32(b, 28)
	b = le.AppendUint32(b, byteOrder)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, ^uint64(0)) // section length: not given
	b = le.AppendUint32(b, 28)
	// Interface Description Block (4.2) with if_tsresol = 9.
	b = le.AppendUint32(b, idbType)
	b = le.AppendUint32(b, 32)
	b = le.AppendUint16(b, uint16(lt))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, uint32(snaplen))
	b = le.AppendUint16(b, optTSResol)
	b = le.AppendUint16(b, 1)
	b = append(b, 9, 0, 0, 0)
	b = le.AppendUint32(b, optEndOfOpt)
	return le.AppendUint32(b, 32)
}

// AppendStreamPacket appends frame data as an Enhanced Packet Block with
// epb_packetid info.Number and, when info.LostBefore is not 0,
// epb_dropcount.
func AppendStreamPacket(b []byte, info Info, data []byte) []byte {
	return appendEPBOptions(b, info.Timestamp, data, max(info.Length, len(data)),
		epbOptions{packetID: info.Number, hasPacketID: true, dropCount: info.LostBefore})
}

// StreamSource reads the frame stream from a pipe: a Source (Run, or
// NewRecords for the engine) whose frames keep the numbers and the losses
// the capture process gave them. Frames are returned in place in its
// buffer, valid until the next call; nothing is allocated per frame.
type StreamSource struct {
	f        *os.File
	buf      []byte
	r, w     int
	linkType layers.LinkType
	header   bool
	last     uint64
	// end, called once the stream ended, waits for the capture process's
	// last word: why it stopped, and its error (the interface went down).
	end  func() (StopReason, error)
	stop StopReason
	err  error
}

// streamBuffer is how much a StreamSource reads at once, at most.
const streamBuffer = 4 << 20

// NewStreamSource reads the stream from f (a pipe's reading end, whose
// deadlines work: os.Pipe). end is called when the stream ends.
func NewStreamSource(f *os.File, lt layers.LinkType, end func() (StopReason, error)) *StreamSource {
	return &StreamSource{f: f, buf: make([]byte, streamBuffer+DefaultSnapLen+epbHead+streamMaxOpts+8), linkType: lt, end: end}
}

// fill reads until the buffer holds n bytes from r on; io.EOF when the
// stream ends first (mid-block: io.ErrUnexpectedEOF).
func (s *StreamSource) fill(n int) error {
	if s.w-s.r >= n {
		return nil
	}
	if n > len(s.buf) {
		return fmt.Errorf("frame stream: a block of %d bytes", n)
	}
	if s.r+n > len(s.buf) {
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.r = 0
	}
	for s.w-s.r < n {
		k, err := s.f.Read(s.buf[s.w:])
		s.w += k
		if err != nil {
			if s.w-s.r >= n {
				return nil
			}
			if errors.Is(err, io.EOF) && s.w != s.r {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// ReadPacket returns the next frame; io.EOF once the stream ended (or the
// capture process's error); os.ErrDeadlineExceeded after SetDeadline's
// time.
func (s *StreamSource) ReadPacket() ([]byte, Info, error) {
	if s.end == nil {
		if s.err != nil {
			return nil, Info{}, s.err
		}
		return nil, Info{}, io.EOF
	}
	le := binary.LittleEndian
	for {
		if err := s.fill(8); err != nil {
			return s.fail(err)
		}
		typ := le.Uint32(s.buf[s.r:])
		n := int(le.Uint32(s.buf[s.r+4:]))
		if n < 12 || n&3 != 0 {
			return s.fail(fmt.Errorf("frame stream: block of type %#x with length %d", typ, n))
		}
		if err := s.fill(n); err != nil {
			return s.fail(err)
		}
		blk := s.buf[s.r : s.r+n]
		s.r += n
		switch typ {
		case shbType:
			if le.Uint32(blk[8:]) != byteOrder {
				return s.fail(errors.New("frame stream: not little-endian pcapng"))
			}
			s.header = true
			continue
		case epbType:
		default:
			continue // the interface block, and any other
		}
		if !s.header || n < epbHead+4 {
			return s.fail(errors.New("frame stream: a packet block before the section header"))
		}
		caplen := int(le.Uint32(blk[20:]))
		if epbHead+caplen+4 > n {
			return s.fail(fmt.Errorf("frame stream: a packet of %d bytes in a block of %d", caplen, n))
		}
		nano := uint64(le.Uint32(blk[12:]))<<32 | uint64(le.Uint32(blk[16:]))
		info := Info{
			Timestamp:     time.Unix(0, int64(nano)),
			CaptureLength: caplen,
			Length:        int(le.Uint32(blk[24:])),
		}
		data := blk[epbHead : epbHead+caplen]
		opts := blk[epbHead+(caplen+3)&^3 : n-4]
		for len(opts) >= 4 {
			code, l := le.Uint16(opts), int(le.Uint16(opts[2:]))
			if code == optEndOfOpt || 4+l > len(opts) {
				break
			}
			v := opts[4 : 4+l]
			switch {
			case code == optPacketID && l == 8:
				info.Number = le.Uint64(v)
			case code == optDropCount && l == 8:
				info.LostBefore = le.Uint64(v)
			}
			opts = opts[4+(l+3)&^3:]
		}
		if info.Number == 0 {
			info.Number = s.last + 1
		}
		s.last = info.Number
		return data, info, nil
	}
}

// fail ends the stream: at its end (io.EOF) the capture process says why
// it stopped; a read past the deadline is not an end.
func (s *StreamSource) fail(err error) ([]byte, Info, error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, Info{}, os.ErrDeadlineExceeded
	}
	end := s.end
	s.end = nil
	stop, eerr := end()
	s.stop = stop
	switch {
	case eerr != nil:
		s.err = eerr
	case !errors.Is(err, io.EOF):
		s.err = err
	}
	if s.err != nil {
		return nil, Info{}, s.err
	}
	return nil, Info{}, io.EOF
}

// SetDeadline makes a waiting or later ReadPacket return at t (zero: no
// deadline).
func (s *StreamSource) SetDeadline(t time.Time) error { return s.f.SetReadDeadline(t) }

// LinkType is the frames' link type.
func (s *StreamSource) LinkType() layers.LinkType { return s.linkType }

// StopReason says why the capture process stopped (once ReadPacket
// returned io.EOF).
func (s *StreamSource) StopReason() StopReason { return s.stop }
