package iwarp

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// FPDU layout constants (RFC 5044 sections 4 and 5).
const (
	ULPDULengthLen = 2   // the FPDU header: ULPDU_Length (RFC 5044 section 4)
	CRCLen         = 4   // the CRC field, present even when CRC is off (RFC 5044 section 4)
	MarkerLen      = 4   // RESERVED (16 bits) + FPDUPTR (16 bits) (RFC 5044 section 4)
	MarkerInterval = 512 // a marker every 512 octets of the TCP stream (section 5)
	// MinFPDULen is the shortest FPDU: header, empty ULPDU, pad, CRC.
	MinFPDULen = 8
	// MaxFPDULen bounds an FPDU on the wire: header, the largest ULPDU,
	// three pad octets, CRC and the markers that can fall inside.
	MaxFPDULen = maxNonMarkerLen + MarkerLen*(maxNonMarkerLen/(MarkerInterval-MarkerLen)+2)

	maxNonMarkerLen = ULPDULengthLen + 0xffff + 3 + CRCLen
)

// PadLen returns the number of pad octets after a ULPDU of length n: the
// FPDU header, ULPDU and PAD together are a multiple of four octets (RFC 5044
// section 4). Markers are four octets and do not change the alignment.
func PadLen(ulpduLength int) int { return (4 - (ULPDULengthLen+ulpduLength)%4) % 4 }

// FPDULen returns the length of an FPDU without markers carrying a ULPDU of
// length n: header, ULPDU, pad and CRC.
func FPDULen(ulpduLength int) int {
	return ULPDULengthLen + ulpduLength + PadLen(ulpduLength) + CRCLen
}

// MPA is one MPA FPDU at the front of a buffer, without markers (RFC 5044
// section 4):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          ULPDU_Length         |                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//	~                             ULPDU                             ~
//	|                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                               |          PAD (0-3 octets)     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                              CRC                              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Contents is the ULPDU_Length field, Payload the ULPDU (a DDP segment).
// The CRC field is there whether or not CRC32c was negotiated; without CRC
// its value is meaningless and must not be checked (RFC 5044 section 4).
// Octets after the FPDU (further FPDUs in the same TCP segment) are not part
// of the layer; Len says where the next one starts.
//
// For FPDUs with markers, or FPDUs that TCP split across segments, use a
// Framer.
type MPA struct {
	layers.BaseLayer
	ULPDULength uint16
	Pad         []byte
	CRC         uint32 // the CRC field as on the wire, read big-endian (tshark iwarp_mpa.crc)
	// Markers, when not nil, makes SerializeTo insert markers as a sender
	// whose FPDU starts at Markers.Seq would. Decoding leaves it alone.
	Markers *MarkerPosition

	raw []byte
}

// MarkerPosition places an FPDU in the TCP stream for marker insertion:
// Seq is the TCP sequence number of the FPDU's first octet, MarkerSeq the
// sequence number of the first octet of the first FPDU this sender sent in
// full operation. Markers sit at MarkerSeq + 512*k (RFC 5044 section 5).
type MarkerPosition struct {
	Seq       uint32
	MarkerSeq uint32
}

// LayerType returns LayerTypeMPA.
func (m *MPA) LayerType() gopacket.LayerType { return LayerTypeMPA }

// CanDecode returns LayerTypeMPA.
func (m *MPA) CanDecode() gopacket.LayerClass { return LayerTypeMPA }

// NextLayerType returns LayerTypeDDP: MPA carries DDP segments.
func (m *MPA) NextLayerType() gopacket.LayerType { return LayerTypeDDP }

// Len returns the number of octets the FPDU occupies.
func (m *MPA) Len() int { return len(m.raw) }

// ComputeCRC returns the CRC32c of the decoded FPDU (header, ULPDU and pad)
// in the representation of the CRC field.
func (m *MPA) ComputeCRC() uint32 {
	if len(m.raw) < CRCLen {
		return 0
	}
	return CRC32c(m.raw[:len(m.raw)-CRCLen])
}

// DecodeFromBytes decodes the FPDU at the front of data.
func (m *MPA) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MinFPDULen {
		df.SetTruncated()
		return fmt.Errorf("%w: MPA FPDU needs at least %d octets, have %d", ErrTruncated, MinFPDULen, len(data))
	}
	m.ULPDULength = binary.BigEndian.Uint16(data)
	n := FPDULen(int(m.ULPDULength))
	if len(data) < n {
		df.SetTruncated()
		return fmt.Errorf("%w: MPA ULPDU_Length %d needs a %d-octet FPDU, have %d", ErrTruncated, m.ULPDULength, n, len(data))
	}
	end := ULPDULengthLen + int(m.ULPDULength)
	m.Contents = data[:ULPDULengthLen]
	m.Payload = data[ULPDULengthLen:end]
	m.Pad = data[end : n-CRCLen]
	m.CRC = binary.BigEndian.Uint32(data[n-CRCLen : n])
	m.raw = data[:n]
	return nil
}

// SerializeTo prepends the FPDU header and appends pad and CRC to the ULPDU
// already in b. With opts.FixLengths ULPDULength becomes the ULPDU length and
// the pad is zeros; with opts.ComputeChecksums the CRC32c is computed (over
// the markers too), otherwise CRC is written as set. When Markers is set the
// FPDU is rebuilt with markers and b holds nothing else afterwards, so MPA
// must be the outermost layer serialized into b.
func (m *MPA) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	ulpdu := b.Bytes()
	if len(ulpdu) > 0xffff {
		return fmt.Errorf("iwarp: ULPDU of %d octets does not fit ULPDU_Length", len(ulpdu))
	}
	if opts.FixLengths {
		m.ULPDULength = uint16(len(ulpdu))
	}
	padLen := PadLen(len(ulpdu))
	if m.Markers != nil {
		var crc *uint32
		if !opts.ComputeChecksums {
			crc = &m.CRC
		}
		out := appendFPDU(nil, m.ULPDULength, ulpdu, m.padFor(padLen, opts), m.Markers, crc)
		if opts.ComputeChecksums {
			m.CRC = binary.BigEndian.Uint32(out[len(out)-CRCLen:])
		}
		if err := b.Clear(); err != nil {
			return err
		}
		buf, err := b.AppendBytes(len(out))
		if err != nil {
			return err
		}
		copy(buf, out)
		return nil
	}
	hdr, err := b.PrependBytes(ULPDULengthLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(hdr, m.ULPDULength)
	tail, err := b.AppendBytes(padLen + CRCLen)
	if err != nil {
		return err
	}
	copy(tail[:padLen], m.padFor(padLen, opts))
	if opts.ComputeChecksums {
		all := b.Bytes()
		m.CRC = CRC32c(all[:len(all)-CRCLen])
	}
	binary.BigEndian.PutUint32(tail[padLen:], m.CRC)
	return nil
}

var zeroPad [3]byte

func (m *MPA) padFor(n int, opts gopacket.SerializeOptions) []byte {
	if !opts.FixLengths && len(m.Pad) == n {
		return m.Pad
	}
	return zeroPad[:n]
}

func decodeMPA(data []byte, p gopacket.PacketBuilder) error {
	m := &MPA{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return p.NextDecoder(m.NextLayerType())
}

// markerDist returns how many octets after seq the next marker position
// (MarkerSeq + 512*k) lies: 0 when seq is one. Sequence arithmetic is modulo
// 2^32, a multiple of 512, so wrap-around needs no care.
func markerDist(seq, markerSeq uint32) int {
	return int((MarkerInterval - (seq-markerSeq)%MarkerInterval) % MarkerInterval)
}

// rawLen returns the octets an FPDU of nonMarker octets (header, ULPDU, pad,
// CRC) occupies when it starts markerDist octets before a marker position:
// every marker position from the FPDU's first octet up to its CRC belongs to
// the FPDU; a marker right after the CRC belongs to the next FPDU, whose first
// octets it then is (RFC 5044 section 5).
func rawLen(nonMarker, dist int) int {
	k := 0
	for dist < nonMarker+MarkerLen*k {
		k++
		dist += MarkerInterval
	}
	return nonMarker + MarkerLen*k
}

// appendFPDU appends an FPDU carrying ulpdu to dst. pad must be PadLen octets.
// With mp set, markers are inserted (RFC 5044 section 5): FPDUPTR is the
// offset of the marker from the FPDU's first octet (0 for a marker that
// leads the FPDU), RESERVED is zero. With crc nil the CRC32c is computed over
// everything before the CRC field, markers included; otherwise *crc is
// written (as the wire representation read big-endian).
func appendFPDU(dst []byte, ulpduLength uint16, ulpdu, pad []byte, mp *MarkerPosition, crc *uint32) []byte {
	start := len(dst)
	next := -1 // offset of the next marker from the FPDU start; -1 without markers
	if mp != nil {
		next = markerDist(mp.Seq, mp.MarkerSeq)
	}
	pos := 0
	emit := func(p []byte) {
		for len(p) > 0 {
			if pos == next {
				dst = binary.BigEndian.AppendUint16(dst, 0)
				dst = binary.BigEndian.AppendUint16(dst, uint16(pos))
				pos += MarkerLen
				next += MarkerInterval
			}
			n := len(p)
			if next >= 0 && next-pos < n {
				n = next - pos
			}
			dst = append(dst, p[:n]...)
			pos += n
			p = p[n:]
		}
	}
	var hdr [ULPDULengthLen]byte
	binary.BigEndian.PutUint16(hdr[:], ulpduLength)
	emit(hdr[:])
	emit(ulpdu)
	emit(pad)
	if pos == next {
		// A marker that falls where the CRC starts is part of this FPDU
		// and covered by its CRC; one right after the CRC leads the next.
		dst = binary.BigEndian.AppendUint16(dst, 0)
		dst = binary.BigEndian.AppendUint16(dst, uint16(pos))
		pos += MarkerLen
		next += MarkerInterval
	}
	var c [CRCLen]byte
	if crc == nil {
		putCRC(c[:], crcUpdate(0, dst[start:]))
	} else {
		binary.BigEndian.PutUint32(c[:], *crc)
	}
	emit(c[:]) // split by a marker only when the FPDU is not four-aligned to the marker grid
	return dst
}

// Encoder writes the FPDUs of one direction of an MPA connection in full
// operation: CRC32c and markers as negotiated (RFC 5044 sections 4 and 5).
type Encoder struct {
	Framing
	// Seq is the TCP sequence number of the next FPDU; AppendFPDU advances it.
	Seq uint32
	// MarkerSeq is the sequence number of the first FPDU octet of full
	// operation; markers sit at MarkerSeq + 512*k.
	MarkerSeq uint32
}

// AppendFPDU appends the FPDU carrying ulpdu to dst and advances e.Seq. The
// pad is zero; without CRC the CRC field is zero too.
func (e *Encoder) AppendFPDU(dst, ulpdu []byte) ([]byte, error) {
	if len(ulpdu) > 0xffff {
		return dst, fmt.Errorf("iwarp: ULPDU of %d octets does not fit ULPDU_Length", len(ulpdu))
	}
	var mp *MarkerPosition
	if e.Markers {
		mp = &MarkerPosition{Seq: e.Seq, MarkerSeq: e.MarkerSeq}
	}
	var crc *uint32
	if !e.CRC {
		var zero uint32
		crc = &zero
	}
	start := len(dst)
	dst = appendFPDU(dst, uint16(len(ulpdu)), ulpdu, zeroPad[:PadLen(len(ulpdu))], mp, crc)
	e.Seq += uint32(len(dst) - start)
	return dst, nil
}
