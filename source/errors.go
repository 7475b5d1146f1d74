package source

import (
	"errors"
	"strconv"
)

// Kinds of capture errors; an *Error's Err wraps one of them (errors.Is).
var (
	// ErrNotCapture: the stream starts with neither a pcap nor a pcapng magic
	// number (after decompression, if it is compressed).
	ErrNotCapture = errors.New("not a pcap or pcapng file")
	// ErrUnsupported: a pcap or pcapng version this reader does not know.
	ErrUnsupported = errors.New("unsupported capture format")
	// ErrTruncated: the stream ends inside a record, record header or block.
	ErrTruncated = errors.New("truncated record")
	// ErrBadLength: a length field that cannot be true (captured length
	// beyond MaxRecordLength, beyond its block, or above the original length).
	ErrBadLength = errors.New("bad record length")
	// ErrIsDirectory: Open was given a directory.
	ErrIsDirectory = errors.New("is a directory, not a capture file")
	// ErrCompressed: the gzip, Zstandard or LZ4 stream around the capture
	// is bad: a wrong checksum, a damaged member, frame or block, data
	// after the last member or frame. (A stream cut short is
	// ErrTruncated.) The message names the format: "bad gzip stream: …".
	ErrCompressed = errors.New("bad compressed stream")
	// ErrBadBlock: a pcapng block whose framing or fixed fields are invalid.
	ErrBadBlock = errors.New("bad pcapng block")
)

// Error is an error about a capture, with the context to find the bad bytes.
type Error struct {
	File string // the name given to Open or NewReader ("<stdin>" for "-")
	// Packet is the number (from 1) of the record concerned; for a pcapng
	// block that is not a packet, the number the next record would have;
	// 0 for the file header.
	Packet int
	Offset int64 // byte offset of the record or block in the uncompressed stream; -1 if unknown
	Err    error // what is wrong; wraps one of the Err* kinds, or an I/O error
	// Final reports that reading cannot go on: Next returns this error again.
	// When false the record was skipped and Next returns the next one.
	Final bool
}

// Error reads "file: packet N: what", or "file: what" when Packet is 0.
func (e *Error) Error() string {
	s := e.File + ": "
	if e.Packet > 0 {
		s += "packet " + strconv.Itoa(e.Packet) + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
