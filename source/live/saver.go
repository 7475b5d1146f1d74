package live

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Saver writes captured frames to a pcapng file (one section, one
// interface) while the capture runs. It hands the file only whole blocks,
// so the file ends at a block boundary after every Flush: a capture killed
// at any moment leaves a file readable up to the last flush. Flush is
// called by Run at every tick (a fraction of a second) and whenever more
// than FlushBytes are waiting.
type Saver struct {
	dst     io.Writer
	ng      *pcapgo.NgWriter
	pending pendingBuffer
	start   time.Time
	packets uint64
	written int64
	err     error
}

// FlushBytes is how much a Saver holds before it writes to its file.
const FlushBytes = 1 << 20

// SaverInfo describes the capture in the file's headers.
type SaverInfo struct {
	Interface string
	Filter    string
	SnapLen   int
	LinkType  layers.LinkType
	// Start is when the capture started, for the statistics block
	// (default: now).
	Start time.Time
}

// NewSaver writes the section and interface headers to dst and returns a
// Saver for the frames.
func NewSaver(dst io.Writer, info SaverInfo) (*Saver, error) {
	s := &Saver{dst: dst, start: info.Start}
	// Room for FlushBytes and the largest frame past it: pending never
	// grows while the capture runs.
	s.pending.b = make([]byte, 0, FlushBytes+FlushBytes/2)
	if s.start.IsZero() {
		s.start = time.Now()
	}
	intf := pcapgo.NgInterface{
		Name:                info.Interface,
		OS:                  runtime.GOOS,
		LinkType:            info.LinkType,
		SnapLength:          uint32(info.SnapLen),
		TimestampResolution: 9,
	}
	if info.Filter != "" {
		// Not if_filter: that option holds libpcap filter syntax.
		intf.Comment = "rdmashark capture filter: " + info.Filter
	}
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
		Hardware:    runtime.GOARCH,
		OS:          runtime.GOOS,
		Application: "rdmashark",
	}}
	ng, err := pcapgo.NewNgWriterInterface(&s.pending, intf, opts)
	if err != nil {
		return nil, err
	}
	s.ng = ng
	if err := s.Flush(); err != nil {
		return nil, err
	}
	return s, nil
}

// WritePacket adds one frame.
func (s *Saver) WritePacket(info Info, data []byte) error {
	if s.err != nil {
		return s.err
	}
	if info.LostBefore == 0 {
		// The common case, encoded here straight into pending (one
		// copy of the frame; through the NgWriter it is three).
		s.pending.b = appendEPB(s.pending.b, info.Timestamp, data, max(info.Length, len(data)))
		s.packets++
		if len(s.pending.b) >= FlushBytes {
			return s.Flush()
		}
		return nil
	}
	ci := gopacket.CaptureInfo{Timestamp: info.Timestamp, CaptureLength: len(data), Length: max(info.Length, len(data))}
	var opts pcapgo.NgPacketOptions
	{
		// Where the kernel dropped frames (epb_dropcount): a reader of
		// the file knows where its evidence is missing.
		n := info.LostBefore
		opts.DropCount = &n
	}
	if err := s.ng.WritePacketWithOptions(ci, data, opts); err != nil {
		s.err = fmt.Errorf("pcapng: packet %d: %w", s.packets+1, err)
		return s.err
	}
	// The NgWriter buffers too: move its bytes, which now end with this
	// whole block, into pending.
	if err := s.ng.Flush(); err != nil {
		s.err = err
		return err
	}
	s.packets++
	if len(s.pending.b) >= FlushBytes {
		return s.Flush()
	}
	return nil
}

// appendEPB appends an Enhanced Packet Block without options for interface
// 0 (pcapng, draft-ietf-opsawg-pcapng section 4.3), little-endian as the
// NgWriter writes the section, the timestamp in nanoseconds as the
// interface block says (if_tsresol 9).
func appendEPB(b []byte, ts time.Time, data []byte, length int) []byte {
	return appendEPBOptions(b, ts, data, length, epbOptions{})
}

// epbOptions are the options of an Enhanced Packet Block (section 4.3.1)
// appendEPBOptions writes: epb_packetid when hasPacketID, epb_dropcount
// when dropCount is not 0 (the frame stream's, stream.go).
type epbOptions struct {
	packetID    uint64
	hasPacketID bool
	dropCount   uint64
}

// appendEPBOptions is appendEPB with the options o, closed by
// opt_endofopt when there is one.
func appendEPBOptions(b []byte, ts time.Time, data []byte, length int, o epbOptions) []byte {
	le := binary.LittleEndian
	pad := (4 - len(data)&3) & 3
	opts := 0
	if o.hasPacketID {
		opts += 12
	}
	if o.dropCount != 0 {
		opts += 12
	}
	if opts != 0 {
		opts += 4 // opt_endofopt
	}
	total := epbHead + len(data) + pad + opts + 4
	nano := uint64(ts.UnixNano())
	b = le.AppendUint32(b, epbType)
	b = le.AppendUint32(b, uint32(total))
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, uint32(nano>>32))
	b = le.AppendUint32(b, uint32(nano))
	b = le.AppendUint32(b, uint32(len(data)))
	b = le.AppendUint32(b, uint32(length))
	b = append(b, data...)
	b = append(b, zeros[:pad]...)
	if o.hasPacketID {
		b = le.AppendUint16(b, optPacketID)
		b = le.AppendUint16(b, 8)
		b = le.AppendUint64(b, o.packetID)
	}
	if o.dropCount != 0 {
		b = le.AppendUint16(b, optDropCount)
		b = le.AppendUint16(b, 8)
		b = le.AppendUint64(b, o.dropCount)
	}
	if opts != 0 {
		b = le.AppendUint32(b, optEndOfOpt)
	}
	return le.AppendUint32(b, uint32(total))
}

// epbType is the Enhanced Packet Block's type (pcapng 4.3).
const epbType = 0x00000006

var zeros [4]byte

// Flush writes the whole blocks held so far to the file.
func (s *Saver) Flush() error {
	if s.err != nil {
		return s.err
	}
	if err := s.ng.Flush(); err != nil {
		s.err = err
		return err
	}
	if len(s.pending.b) == 0 {
		return nil
	}
	n, err := s.dst.Write(s.pending.b)
	s.written += int64(n)
	if err != nil {
		s.err = fmt.Errorf("writing pcapng: %w", err)
		return s.err
	}
	s.pending.reset()
	return nil
}

// Close writes an Interface Statistics Block with the kernel's counters
// (received, dropped) when stats is not nil, and flushes. It does not close
// the file.
func (s *Saver) Close(stats *Stats) error {
	if s.err != nil {
		return s.err
	}
	if stats != nil {
		now := time.Now()
		err := s.ng.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{
			LastUpdate:      now,
			StartTime:       s.start,
			EndTime:         now,
			PacketsReceived: stats.Packets,
			PacketsDropped:  stats.Drops,
		})
		if err != nil {
			s.err = err
			return err
		}
	}
	return s.Flush()
}

// Packets counts the frames written.
func (s *Saver) Packets() uint64 { return s.packets }

// Size is the file's size in bytes once flushed: what reached it and what
// waits.
func (s *Saver) Size() int64 { return s.written + int64(len(s.pending.b)) }

// pendingBuffer holds whole blocks until Flush; it keeps its array unless
// a burst made it large.
type pendingBuffer struct{ b []byte }

func (p *pendingBuffer) Write(b []byte) (int, error) {
	p.b = append(p.b, b...)
	return len(b), nil
}

func (p *pendingBuffer) reset() {
	if cap(p.b) > 4*FlushBytes {
		p.b = nil
		return
	}
	p.b = p.b[:0]
}
