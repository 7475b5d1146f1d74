package rfc8797

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Identifier is the Format Identifier of RPC-over-RDMA version 1 CM Private
// Data, in network byte order on the wire (RFC 8797 section 4; IANA
// "RDMA-CM Private Data Identifier Registry", Table 1).
const Identifier uint32 = 0xf6ab0e18

// identifierBytes is Identifier in network byte order, for searching.
var identifierBytes = [4]byte{0xf6, 0xab, 0x0e, 0x18}

// MessageLen is the length of a version 1 message: "The value "1" in this
// field indicates that exactly eight octets are present" (RFC 8797
// section 4, Version).
const MessageLen = 8

// Version is the message format version number (RFC 8797 section 4).
type Version uint8

// Version1 is the only version RFC 8797 defines.
const Version1 Version = 1

// Known reports whether the version is one this package can interpret.
func (v Version) Known() bool { return v == Version1 }

// String returns the version number in decimal.
func (v Version) String() string { return strconv.Itoa(int(v)) }

// Message is the RPC-over-RDMA version 1 CM Private Data message
// (RFC 8797 section 4), after the 4-octet Format Identifier:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       Format Identifier                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    Version    |  Reserved   |R|   Send Size   | Receive Size  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// R is bit 15 of the second word: the least significant bit of octet 5
// (Linux: RPCRDMA_CMP_F_SND_W_INV_OK = BIT(0) of cp_flags).
type Message struct {
	Version Version // octet 4
	// Reserved is the 7-bit Reserved field, octet 5 bits 7..1 (shifted
	// down): "Senders MUST set these bits to zero and receivers MUST ignore
	// their value" (RFC 8797 section 4).
	Reserved uint8
	// RemoteInvalidate is R: "the sender supports remote invalidation"
	// (RFC 8797 sections 4 and 4.1).
	RemoteInvalidate bool
	// SendSize and ReceiveSize are the encoded sizes (RFC 8797 section
	// 4.2): the number of additional kilo-octets beyond the first 1024.
	SendSize    uint8 // octet 6
	ReceiveSize uint8 // octet 7
}

// defaultMessage is how RFC 8797 section 5.1 says a peer is to be treated
// when it sent no conforming message: "as if a Private Data message was
// received in which bit 15 of the Flags field is zero, and both Size fields
// contain the value zero".
var defaultMessage = Message{Version: Version1}

// SizeUnit is the unit and the minimum of an inline threshold: 1024 octets
// (RFC 8797 section 4.2; RFC 8166 section 3.3.3).
const SizeUnit = 1024

// MaxSize is the largest inline threshold the Size fields can express,
// (255+1)*1024 = 262144 octets (RFC 8797 section 4.2).
const MaxSize = 256 * SizeUnit

// DecodeSize returns the size in octets an encoded Size value stands for:
// "it adds one to the encoded value and then multiplies that result by
// 1024" (RFC 8797 section 4.2).
func DecodeSize(encoded uint8) int { return (int(encoded) + 1) * SizeUnit }

// EncodeSize returns the Size value a sender with a buffer of n octets
// sends: "dividing its actual buffer size, in octets, by 1024 and
// subtracting one from the result" (RFC 8797 section 4.2). ok is false when
// n is below 1024 or the result does not fit in 8 bits (n >= 263168).
func EncodeSize(n int) (encoded uint8, ok bool) {
	k := n/SizeUnit - 1
	if n < SizeUnit || k > 255 {
		return 0, false
	}
	return uint8(k), true
}

// SendBytes returns the sender's maximum RDMA Send size in octets.
func (m Message) SendBytes() int { return DecodeSize(m.SendSize) }

// ReceiveBytes returns the sender's maximum RDMA Receive size in octets.
func (m Message) ReceiveBytes() int { return DecodeSize(m.ReceiveSize) }

// Checks of RFC 8797 section 5.2. Decode and Find wrap them in a
// *FormatError with the offset and version found; Result.Err holds them
// bare. Test with errors.Is.
var (
	// ErrAbsent: the Format Identifier is not in the private data. "If the
	// RPC-over-RDMA version 1 CM Private Data Format Identifier is not
	// present, an RPC-over-RDMA version 1 receiver MUST behave as if no
	// RPC-over-RDMA version 1 CM Private Data has been provided." Decode
	// reports it too when the first four octets are not the identifier.
	ErrAbsent = errors.New("no RPC-over-RDMA CM private data: format identifier 0xf6ab0e18 not found")
	// ErrTruncated: the identifier is there but the private data ends
	// before the message does ("the size of the private data does not
	// overrun the length of the buffer").
	ErrTruncated = errors.New("RPC-over-RDMA CM private data overruns the private data")
	// ErrUnknownVersion: "the format version number field contains a valid
	// and recognized version number" fails.
	ErrUnknownVersion = errors.New("RPC-over-RDMA CM private data has an unrecognized version")
)

// FormatError is the error of Decode, Find and Result.Problem: one of the
// sentinels, and what was found where.
type FormatError struct {
	Offset  int     // offset of the Format Identifier in the data searched; -1 when absent
	From    int     // offset the search started at
	Len     int     // length of the data searched, from offset 0
	Version Version // the version octet, when present
	Err     error   // ErrAbsent, ErrTruncated or ErrUnknownVersion
}

func (e *FormatError) Error() string {
	switch {
	case e.Err == ErrAbsent:
		return fmt.Sprintf("pvtdata: %v in octets %d..%d of %d", e.Err, e.From, e.Len, e.Len)
	case e.Err == ErrTruncated && e.Offset+4 >= e.Len:
		return fmt.Sprintf("pvtdata: %v: identifier at offset %d, private data ends at %d before the version octet",
			e.Err, e.Offset, e.Len)
	case e.Err == ErrTruncated:
		return fmt.Sprintf("pvtdata: %v: version %v at offset %d needs %d octets, private data ends at %d",
			e.Err, e.Version, e.Offset, MessageLen, e.Len)
	}
	return fmt.Sprintf("pvtdata: %v: version %v at offset %d", e.Err, e.Version, e.Offset)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Decode decodes a message whose Format Identifier is at offset 0 of b.
// On ErrUnknownVersion and ErrTruncated the returned Message holds the
// octets that are present (the version at least, when b has 5 octets), so
// a report can say what was found. Octets after the eighth are ignored.
func Decode(b []byte) (Message, error) {
	m, err := decodeAt(b, 0)
	if err != nil {
		return m, &FormatError{Offset: 0, Len: len(b), Version: m.Version, Err: err}
	}
	return m, nil
}

// UnmarshalBinary decodes a message at offset 0 of b (see Decode).
func (m *Message) UnmarshalBinary(b []byte) error {
	var err error
	*m, err = Decode(b)
	return err
}

// Find searches b for the Format Identifier at any offset and decodes the
// message there. RFC 8797 section 5.2: "the received private data buffer
// is searched for the Format Identifier word. The offset of the Format
// Identifier is not restricted to any alignment." The first occurrence
// counts ("Once the ... Format Identifier is found, the receiver parses
// the subsequent octets"), even when it turns out truncated or of an
// unknown version.
//
// offset is where the identifier starts, -1 when it is absent. Errors are
// *FormatError wrapping ErrAbsent, ErrTruncated or ErrUnknownVersion; with
// the last two, the Message holds what was found.
func Find(b []byte) (m Message, offset int, err error) {
	m, offset, err = find(b, 0)
	if err != nil {
		return m, offset, &FormatError{Offset: offset, Len: len(b), Version: m.Version, Err: err}
	}
	return m, offset, nil
}

// find searches b[from:] and returns offsets relative to b and bare
// sentinel errors; it never allocates.
func find(b []byte, from int) (Message, int, error) {
	if from < 0 || from > len(b) {
		return Message{}, -1, ErrAbsent
	}
	i := bytes.Index(b[from:], identifierBytes[:])
	if i < 0 {
		return Message{}, -1, ErrAbsent
	}
	off := from + i
	m, err := decodeAt(b, off)
	return m, off, err
}

// decodeAt decodes the message whose identifier is at b[off:]; bare
// sentinel errors, no allocation.
func decodeAt(b []byte, off int) (Message, error) {
	var m Message
	if off < 0 || off > len(b) || len(b)-off < 4 {
		return m, ErrAbsent
	}
	p := b[off:]
	if [4]byte(p[:4]) != identifierBytes {
		return m, ErrAbsent
	}
	if len(p) < 5 {
		return m, ErrTruncated
	}
	m.Version = Version(p[4])
	if len(p) > 5 {
		m.Reserved = p[5] >> 1
		m.RemoteInvalidate = p[5]&0x01 != 0
	}
	if len(p) > 6 {
		m.SendSize = p[6]
	}
	if len(p) > 7 {
		m.ReceiveSize = p[7]
	}
	if !m.Version.Known() {
		// The length of an unknown version is unknown too: report the
		// version first.
		return m, ErrUnknownVersion
	}
	if len(p) < MessageLen {
		return m, ErrTruncated
	}
	return m, nil
}

// AppendBinary appends the 8-octet message, Format Identifier first, to b
// (encoding.BinaryAppender). Any Version is written as given; Reserved
// must fit in 7 bits.
func (m Message) AppendBinary(b []byte) ([]byte, error) {
	if m.Reserved > 0x7F {
		return b, fmt.Errorf("pvtdata: Reserved 0x%x does not fit in 7 bits", m.Reserved)
	}
	flags := m.Reserved << 1
	if m.RemoteInvalidate {
		flags |= 0x01
	}
	return append(b, identifierBytes[0], identifierBytes[1], identifierBytes[2], identifierBytes[3],
		byte(m.Version), flags, m.SendSize, m.ReceiveSize), nil
}

// MarshalBinary returns the 8-octet message (encoding.BinaryMarshaler).
func (m Message) MarshalBinary() ([]byte, error) {
	return m.AppendBinary(make([]byte, 0, MessageLen))
}

// String summarises the message, e.g. "v1 R=1 send=4096 recv=4096".
func (m Message) String() string {
	r := 0
	if m.RemoteInvalidate {
		r = 1
	}
	s := fmt.Sprintf("v%v R=%d send=%d recv=%d", m.Version, r, m.SendBytes(), m.ReceiveBytes())
	if m.Reserved != 0 {
		s += fmt.Sprintf(" reserved=0x%02x", m.Reserved)
	}
	return s
}
