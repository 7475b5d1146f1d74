package iwarp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Framer errors.
var (
	// ErrNeedMore says the framer has used all input without completing
	// an FPDU; Feed it the next stream octets.
	ErrNeedMore = errors.New("iwarp: need more stream octets")
	// ErrUnconsumed says Feed was called before Next had used up the
	// previous input.
	ErrUnconsumed = errors.New("iwarp: previous input not yet framed")
	// ErrLostSync is what every *SyncError matches with errors.Is.
	ErrLostSync = errors.New("iwarp: MPA framing lost sync")
)

// SyncError says the framer no longer knows where FPDUs start. It is sticky:
// Next keeps returning it, and Feed drops its input, until Reset.
type SyncError struct {
	Offset uint64 // stream offset (since Reset) of the FPDU that could not be framed
	Seq    uint32 // its TCP sequence number
	Reason string
	// Code is the MPA error a receiver would report in a Terminate
	// (RFC 5040 section 4.8), or 0.
	Code LLPErrorCode
	// Marker is set when a marker did not point back to its FPDU.
	Marker *MarkerFault
}

// MarkerFault is an MPA marker that is not what RFC 5044 section 4 and 5
// put where the framer looked: at MarkerSeq + 512*k, the 16 reserved bits
// zero and FPDUPTR (network byte order) the distance back to the FPDU's
// first octet.
type MarkerFault struct {
	// Seq is the TCP sequence number where the marker belongs, FPDUSeq
	// that of the FPDU holding it; Want is the FPDUPTR it must hold and
	// Octets what is there.
	Seq, FPDUSeq uint32
	Want         uint16
	Octets       [4]byte
	// Swapped: the octets hold Want in little-endian order (the FPDU was
	// framed anyway).
	Swapped bool
	// Elsewhere is the distance in octets from Seq to a four-octet word of
	// the FPDU that is a marker pointing back to it (the sender put it
	// there); 0 when there is none.
	Elsewhere int
}

func (m *MarkerFault) String() string {
	s := fmt.Sprintf("the MPA marker at TCP sequence %d (FPDU at %d) must hold FPDUPTR %d (00 00 %02x %02x), has % x",
		m.Seq, m.FPDUSeq, m.Want, m.Want>>8, m.Want&0xff, m.Octets[:])
	switch {
	case m.Swapped:
		s += ": FPDUPTR in little-endian byte order"
	case m.Elsewhere != 0:
		s += fmt.Sprintf(": a marker pointing back to the FPDU is %+d octets from where RFC 5044 section 5 puts it", m.Elsewhere)
	}
	return s
}

func (e *SyncError) Error() string {
	return fmt.Sprintf("iwarp: MPA framing lost sync at stream offset %d (TCP seq %d): %s", e.Offset, e.Seq, e.Reason)
}

// Unwrap returns ErrLostSync.
func (e *SyncError) Unwrap() error { return ErrLostSync }

// FramerConfig says how one direction of an MPA connection frames its FPDUs.
type FramerConfig struct {
	Framing // markers and CRC32c as negotiated (see Negotiate)
	// Seq is the TCP sequence number of the first octet the framer is fed,
	// which must be the first octet of an FPDU (or of the marker leading it).
	Seq uint32
	// MarkerSeq is the TCP sequence number of the first octet of the first
	// FPDU of full operation in this direction (the octet after the MPA
	// Request or Reply the sender sent): markers sit at MarkerSeq + 512*k
	// (RFC 5044 section 5). Only used with Markers.
	MarkerSeq uint32
	// MaxULPDULength rejects longer ULPDUs as lost sync; 0 means 65535.
	// The peer's MULPDU (RFC 5044 section 6) is the natural value.
	MaxULPDULength int
	// AnyDDPVersion turns off the check that each ULPDU starts with a DDP
	// version 1 control octet (RFC 5041 section 4.2).
	AnyDDPVersion bool
}

// FramerStats counts what a Framer did.
type FramerStats struct {
	FPDUs     uint64 // FPDUs returned
	Octets    uint64 // stream octets framed into them
	Carried   uint64 // FPDUs that spanned Feed calls and were copied
	CRCErrors uint64 // FPDUs whose CRC did not match (CRC negotiated)
	// SwappedMarkers counts markers whose FPDUPTR was little-endian.
	SwappedMarkers uint64
	Discarded      uint64 // octets dropped after sync was lost
	// LostInside counts FPDUs lost to a gap inside them that framing got
	// past without losing sync (SkipInside).
	LostInside uint64
}

// Marker is an MPA marker found inside an FPDU (RFC 5044 section 4): 16
// reserved bits and FPDUPTR, the distance back to the FPDU's first octet.
type Marker struct {
	Offset   int // octets from the FPDU's first octet to the marker
	Reserved uint16
	FPDUPTR  uint16
	// Swapped: FPDUPTR is in little-endian byte order (it points back to
	// the FPDU read that way): a sender's fault the framer gets past.
	Swapped bool
}

// FPDU is one framed PDU as the Framer found it in the stream. Its slices
// point into the framer's input or buffers: they are valid until the next
// call to Next, Feed or Reset.
type FPDU struct {
	Offset      uint64 // stream offset of the first octet (a leading marker included)
	Seq         uint32 // TCP sequence number of the first octet
	Raw         []byte // the FPDU as on the wire, markers included
	ULPDULength uint16
	ULPDU       []byte // the DDP segment, markers removed
	Pad         []byte
	CRC         uint32 // the CRC field, read big-endian (tshark iwarp_mpa.crc)
	// CRCChecked is set when CRC32c was negotiated; CRCComputed is then
	// the CRC of the FPDU in the representation of CRC.
	CRCChecked  bool
	CRCComputed uint32
	Markers     []Marker
}

// CRCValid reports whether the CRC matches, or was not negotiated (RFC
// 5044 section 4: without CRC the field "MUST NOT be checked").
func (f *FPDU) CRCValid() bool { return !f.CRCChecked || f.CRC == f.CRCComputed }

// Framer cuts the FPDUs of one direction of an MPA connection out of the
// TCP byte stream (RFC 5044 sections 4-6). Feed it the stream in order, in
// pieces of any size; after each Feed call Next until it returns
// ErrNeedMore. An FPDU wholly inside one piece is returned without copying
// when markers are off; one that spans pieces is copied into a buffer that
// grows with what is held, never past the FPDU's length (at most
// MaxFPDULen octets), and is kept for the next one; with markers, a second
// buffer of the same bound holds the FPDU without them. A new Framer holds
// no buffer: Held says what it holds, FreeSpare lets go of what no partial
// FPDU needs, DropPartial gives up a partial FPDU (a memory budget). A ULPDU
// length that cannot be right, a marker that does not point back to its
// FPDU, or a ULPDU that does not start with a DDP version 1 header lose sync
// (*SyncError) instead of consuming garbage.
type Framer struct {
	cfg      FramerConfig
	maxULPDU int
	seq      uint32
	off      uint64
	in       []byte
	buf      []byte
	bufOut   bool // buf holds the FPDU returned last
	scratch  []byte
	markers  []Marker
	fp       FPDU
	err      error
	// drop is how many octets of an FPDU lost inside (SkipInside) are
	// still to come: they are discarded before the next FPDU.
	drop  int
	Stats FramerStats
}

// NewFramer returns a Framer for cfg.
func NewFramer(cfg FramerConfig) *Framer {
	f := &Framer{}
	f.Reset(cfg)
	return f
}

// Reset restarts framing at cfg.Seq, dropping any partial FPDU and a lost
// sync. Stats are kept.
func (f *Framer) Reset(cfg FramerConfig) {
	f.cfg = cfg
	f.maxULPDU = cfg.MaxULPDULength
	if f.maxULPDU <= 0 || f.maxULPDU > 0xffff {
		f.maxULPDU = 0xffff
	}
	f.seq = cfg.Seq
	f.off = 0
	f.in = nil
	f.buf = f.buf[:0]
	f.bufOut = false
	f.err = nil
	f.drop = 0
}

// Config returns the configuration of the last Reset.
func (f *Framer) Config() FramerConfig { return f.cfg }

// NextSeq returns the TCP sequence number the next Feed is expected to
// start at.
func (f *Framer) NextSeq() uint32 { return f.seq + uint32(f.Buffered()+len(f.in)) }

// Buffered returns the octets of a partial FPDU held between Feed calls.
func (f *Framer) Buffered() int {
	if f.bufOut {
		return 0
	}
	return len(f.buf)
}

// markerSize is the memory one Marker takes in Held.
const markerSize = 16

// Held returns the octets of memory the framer's buffers take: the buffer
// of a partial FPDU (kept for reuse once the FPDU is out), and with markers
// the buffer of an FPDU without them and the marker list. A new framer
// holds none.
func (f *Framer) Held() int {
	return cap(f.buf) + cap(f.scratch) + cap(f.markers)*markerSize
}

// FreeSpare lets go of the buffers that hold no partial FPDU. The FPDU
// Next returned last stays valid (its slices keep their memory).
func (f *Framer) FreeSpare() {
	if len(f.buf) == 0 || f.bufOut {
		f.buf, f.bufOut = nil, false
	}
	f.scratch, f.markers = nil, nil
}

// DropPartial gives up the partial FPDU the framer holds, if any, to free
// its buffer: without its octets the framer cannot know where the next
// FPDU starts, so sync is lost (the *SyncError is returned; nil when no
// partial FPDU was held).
func (f *Framer) DropPartial(reason string) error {
	n := f.Buffered()
	if n == 0 || f.err != nil {
		return nil
	}
	err := f.lose(fmt.Sprintf("%s: partial FPDU of %d octets dropped", reason, n), LLPStreamLost)
	f.buf = nil
	return err
}

// grow makes room in buf for k more octets of an FPDU of n octets (0: its
// length is not known yet): the capacity doubles, from 256, but never past
// n.
func (f *Framer) grow(k, n int) {
	need := len(f.buf) + k
	if need <= cap(f.buf) {
		return
	}
	c := max(2*cap(f.buf), 256)
	if n > 0 {
		c = min(c, n)
	}
	c = max(c, need)
	nb := make([]byte, len(f.buf), c)
	copy(nb, f.buf)
	f.buf = nb
}

// Err returns the sync error, if sync is lost.
func (f *Framer) Err() error { return f.err }

// Feed hands the framer the next octets of the stream. p must stay
// unchanged until Next returns ErrNeedMore. After sync is lost Feed drops p
// and returns the *SyncError.
func (f *Framer) Feed(p []byte) error {
	if f.err != nil {
		f.Stats.Discarded += uint64(len(p))
		return f.err
	}
	if len(f.in) > 0 {
		return ErrUnconsumed
	}
	f.in = p
	return nil
}

// Skip tells the framer that n stream octets are missing (a gap the TCP
// reassembler could not fill). Without them the framer cannot know where the
// next FPDU starts, so sync is lost unless n is 0.
func (f *Framer) Skip(n int) error {
	if n <= 0 || f.err != nil {
		return f.err
	}
	f.Stats.Discarded += uint64(n)
	return f.lose(fmt.Sprintf("%d stream octets missing", n), LLPStreamLost)
}

// SkipInside tells the framer that n stream octets are missing, like Skip,
// but keeps sync when they all fall inside the partial FPDU it holds and
// that FPDU's header already said how long it is (RFC 5044 section 4: the
// ULPDU_Length, with markers section 5 and padding): the FPDU is lost
// (its octets held and the rest still to come after the n missing are
// discarded) and framing goes on at the FPDU after it, whose sequence
// number is then known. It reports whether sync was kept; when not, the
// framer has lost sync as with Skip.
func (f *Framer) SkipInside(n int) bool {
	if n <= 0 || f.err != nil {
		return f.err == nil
	}
	held := f.Buffered()
	if held == 0 || len(f.in) > 0 {
		f.Skip(n)
		return false
	}
	total, err := f.frameLen(f.buf)
	if err != nil || total == 0 || held+n > total {
		if err == nil {
			f.Skip(n)
		}
		return false
	}
	f.Stats.Discarded += uint64(held) // the n missing octets never came
	f.Stats.LostInside++
	f.drop = total - held - n
	f.seq += uint32(held + n)
	f.off += uint64(held + n)
	f.buf = f.buf[:0]
	return true
}

func (f *Framer) lose(reason string, code LLPErrorCode) error {
	f.err = &SyncError{Offset: f.off, Seq: f.seq, Reason: reason, Code: code}
	f.Stats.Discarded += uint64(len(f.in))
	if !f.bufOut {
		f.Stats.Discarded += uint64(len(f.buf))
	}
	f.in = nil
	f.buf = f.buf[:0]
	f.bufOut = false
	return f.err
}

// headerRoom is how many octets tell an FPDU's length: a leading marker and
// the ULPDU_Length field.
const headerRoom = MarkerLen + ULPDULengthLen

// frameLen returns the octets of the FPDU starting at seq whose first octets
// are p, 0 when p is too short to tell.
func (f *Framer) frameLen(p []byte) (int, error) {
	hdr, dist := 0, -1
	if f.cfg.Markers {
		if (f.seq-f.cfg.MarkerSeq)%4 != 0 {
			return 0, f.lose("FPDU does not start on the four-octet grid of the markers", LLPMarkerMismatch)
		}
		dist = markerDist(f.seq, f.cfg.MarkerSeq)
		if dist == 0 {
			hdr = MarkerLen
			// A leading marker points back to itself: FPDUPTR 0.
			if len(p) >= MarkerLen && (p[0] != 0 || p[1] != 0 || p[2] != 0 || p[3]&^3 != 0) {
				err := f.lose("leading marker has FPDUPTR "+fmt.Sprint(binary.BigEndian.Uint16(p[2:])), LLPMarkerMismatch)
				f.err.(*SyncError).Marker = markerFault(p, 0, f.seq)
				return 0, err
			}
		}
	}
	if len(p) < hdr+ULPDULengthLen {
		return 0, nil
	}
	l := int(binary.BigEndian.Uint16(p[hdr:]))
	if l < DDPTaggedHeaderLen {
		return 0, f.lose(fmt.Sprintf("ULPDU_Length %d is shorter than a DDP header", l), 0)
	}
	if l > f.maxULPDU {
		return 0, f.lose(fmt.Sprintf("ULPDU_Length %d exceeds the limit %d", l, f.maxULPDU), 0)
	}
	// Check the DDP control octet as soon as it is there, so that garbage
	// with a plausible length is not buffered first.
	c := hdr + ULPDULengthLen
	if dist == c {
		c += MarkerLen
	}
	if !f.cfg.AnyDDPVersion && len(p) > c && p[c]&ddpDVMask != DDPVersion1 {
		return 0, f.lose(fmt.Sprintf("ULPDU starts with DDP control 0x%02x, not DDP version 1", p[c]), 0)
	}
	n := FPDULen(l)
	if dist >= 0 {
		n = rawLen(n, dist)
	}
	return n, nil
}

// Next returns the next complete FPDU, ErrNeedMore when the input is used
// up, or the *SyncError once sync is lost.
func (f *Framer) Next() (*FPDU, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.bufOut {
		f.buf = f.buf[:0]
		f.bufOut = false
	}
	if f.drop > 0 {
		k := min(f.drop, len(f.in))
		f.drop -= k
		f.in = f.in[k:]
		f.seq += uint32(k)
		f.off += uint64(k)
		f.Stats.Discarded += uint64(k)
		if f.drop > 0 {
			return nil, ErrNeedMore
		}
	}
	var raw []byte
	if len(f.buf) == 0 {
		n, err := f.frameLen(f.in)
		if err != nil {
			return nil, err
		}
		if n == 0 || len(f.in) < n {
			f.grow(len(f.in), n)
			f.buf = append(f.buf, f.in...)
			f.in = nil
			return nil, ErrNeedMore
		}
		raw, f.in = f.in[:n], f.in[n:]
	} else {
		n, err := f.frameLen(f.buf)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			k := min(len(f.in), headerRoom-len(f.buf))
			f.grow(k, 0)
			f.buf = append(f.buf, f.in[:k]...)
			f.in = f.in[k:]
			if n, err = f.frameLen(f.buf); err != nil {
				return nil, err
			}
			if n == 0 {
				return nil, ErrNeedMore
			}
		}
		k := min(len(f.in), n-len(f.buf))
		f.grow(k, n)
		f.buf = append(f.buf, f.in[:k]...)
		f.in = f.in[k:]
		// Check again now that the first ULPDU octet may be there.
		if _, err := f.frameLen(f.buf); err != nil {
			return nil, err
		}
		if len(f.buf) < n {
			return nil, ErrNeedMore
		}
		raw = f.buf
		f.bufOut = true
		f.Stats.Carried++
	}
	return f.decode(raw)
}

// decode fills f.fp from the complete FPDU raw.
func (f *Framer) decode(raw []byte) (*FPDU, error) {
	fp := &f.fp
	if f.cfg.Markers {
		if n := len(raw)/MarkerInterval + 2; cap(f.markers) < n {
			f.markers = make([]Marker, 0, n)
		}
	}
	*fp = FPDU{Offset: f.off, Seq: f.seq, Raw: raw, Markers: f.markers[:0]}
	body := raw // header, ULPDU, pad, CRC
	if f.cfg.Markers {
		if cap(f.scratch) < len(raw) {
			f.scratch = make([]byte, 0, len(raw))
		}
		body = f.scratch[:0]
		next := markerDist(f.seq, f.cfg.MarkerSeq)
		for pos := 0; pos < len(raw); {
			if pos == next {
				m := Marker{Offset: pos, Reserved: binary.BigEndian.Uint16(raw[pos:]), FPDUPTR: binary.BigEndian.Uint16(raw[pos+2:])}
				// The two low bits of FPDUPTR are zero; receivers treat
				// them as such (RFC 5044 section 4).
				if int(m.FPDUPTR&^3) != pos {
					sw := m.FPDUPTR>>8 | m.FPDUPTR<<8
					if m.Reserved != 0 || int(sw&^3) != pos {
						f.Stats.Discarded += uint64(len(raw))
						err := f.lose(fmt.Sprintf("marker at FPDU offset %d has FPDUPTR %d", pos, m.FPDUPTR), LLPMarkerMismatch)
						f.err.(*SyncError).Marker = markerFault(raw, pos, f.seq)
						return nil, err
					}
					m.Swapped = true
					f.Stats.SwappedMarkers++
				}
				fp.Markers = append(fp.Markers, m)
				pos += MarkerLen
				next += MarkerInterval
				continue
			}
			end := len(raw)
			if next > pos && next < end {
				end = next
			}
			body = append(body, raw[pos:end]...)
			pos = end
		}
	}
	l := int(binary.BigEndian.Uint16(body))
	fp.ULPDULength = uint16(l)
	fp.ULPDU = body[ULPDULengthLen : ULPDULengthLen+l]
	fp.Pad = body[ULPDULengthLen+l : len(body)-CRCLen]
	fp.CRC = binary.BigEndian.Uint32(body[len(body)-CRCLen:])
	if !f.cfg.AnyDDPVersion && fp.ULPDU[0]&ddpDVMask != DDPVersion1 {
		f.Stats.Discarded += uint64(len(raw))
		return nil, f.lose(fmt.Sprintf("ULPDU starts with DDP control 0x%02x, not DDP version 1", fp.ULPDU[0]), 0)
	}
	if f.cfg.CRC {
		// The CRC covers everything before it, markers included; with
		// four-aligned FPDUs no marker splits the CRC field.
		fp.CRCChecked = true
		fp.CRCComputed = CRC32c(raw[:len(raw)-CRCLen])
		if fp.CRCComputed != fp.CRC {
			f.Stats.CRCErrors++
		}
	}
	f.seq += uint32(len(raw))
	f.off += uint64(len(raw))
	f.Stats.FPDUs++
	f.Stats.Octets += uint64(len(raw))
	return fp, nil
}

// markerFault describes the marker that should be at offset pos of the FPDU
// raw (starting at TCP sequence seq), and looks for the sender's marker
// elsewhere in it: a four-octet word on the grid of four, reserved bits
// zero, whose FPDUPTR (either byte order) is its own offset.
func markerFault(raw []byte, pos int, seq uint32) *MarkerFault {
	m := &MarkerFault{Seq: seq + uint32(pos), FPDUSeq: seq, Want: uint16(pos)}
	copy(m.Octets[:], raw[pos:])
	best := 0
	for o := 4; o+MarkerLen <= len(raw)-CRCLen; o += 4 {
		if o == pos || raw[o] != 0 || raw[o+1] != 0 {
			continue
		}
		p := binary.BigEndian.Uint16(raw[o+2:])
		if int(p&^3) != o && int((p>>8|p<<8)&^3) != o {
			continue
		}
		if d := o - pos; best == 0 || abs(d) < abs(best) {
			best = d
		}
	}
	m.Elsewhere = best
	return m
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
