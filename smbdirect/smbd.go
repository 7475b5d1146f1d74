package smbdirect

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Version is an SMB Direct protocol version ([MS-SMBD] 2.2.1): 0x0100 is
// the only one defined.
type Version uint16

// Version1 is SMB Direct 1.0.
const Version1 Version = 0x0100

func (v Version) String() string {
	if v == Version1 {
		return "1.0"
	}
	return "0x" + hex16(uint16(v))
}

// Flags of a Data Transfer Message ([MS-SMBD] 2.2.3).
type Flags uint16

// FlagResponseRequested (SMB_DIRECT_RESPONSE_REQUESTED): the peer is asked
// to send a message promptly (a keep-alive, [MS-SMBD] 3.1.6.2).
const FlagResponseRequested Flags = 0x0001

func (f Flags) String() string {
	switch f {
	case 0:
		return "none"
	case FlagResponseRequested:
		return "SMB_DIRECT_RESPONSE_REQUESTED"
	}
	return "0x" + hex16(uint16(f))
}

// Lengths of the fixed parts.
const (
	NegotiateRequestLen  = 20
	NegotiateResponseLen = 32
	// DataTransferHeaderLen is the Data Transfer Message up to DataLength;
	// the Padding that follows it is there only when data follows.
	DataTransferHeaderLen = 20
	// BufferDescriptorLen is one SMB_DIRECT_BUFFER_DESCRIPTOR_V1.
	BufferDescriptorLen = 16
)

// ErrTruncated is what every decoder's error wraps when the buffer is
// shorter than the structure.
var ErrTruncated = errors.New("smbdirect: truncated")

// TruncatedError says which structure was cut short; it wraps
// ErrTruncated. The decoders return preallocated values, so that a failed
// decode allocates nothing either.
type TruncatedError struct {
	What string
	Need int
}

func (e *TruncatedError) Error() string {
	return "smbdirect: " + e.What + " truncated: fewer than " + strconv.Itoa(e.Need) + " octets"
}

// Unwrap returns ErrTruncated.
func (e *TruncatedError) Unwrap() error { return ErrTruncated }

var (
	errShortNegReq  = &TruncatedError{What: "Negotiate Request", Need: NegotiateRequestLen}
	errShortNegResp = &TruncatedError{What: "Negotiate Response", Need: NegotiateResponseLen}
	errShortData    = &TruncatedError{What: "Data Transfer Message", Need: DataTransferHeaderLen}
	errShortSMB2    = &TruncatedError{What: "SMB2 header", Need: SMB2HeaderLen}
	errShortRead    = &TruncatedError{What: "SMB2 READ request", Need: 48}
	errShortWrite   = &TruncatedError{What: "SMB2 WRITE request", Need: 48}
	errShortSetup   = &TruncatedError{What: "SMB2 SESSION_SETUP request", Need: 12}
	errShortDesc    = &TruncatedError{What: "buffer descriptor", Need: BufferDescriptorLen}
)

// ErrDataOutside: a Data Transfer Message's DataOffset and DataLength name
// bytes beyond the message ([MS-SMBD] 2.2.3: DataOffset is 8-byte aligned
// and at least 24 when DataLength is not 0).
var ErrDataOutside = errors.New("smbdirect: DataOffset and DataLength point outside the message")

// ErrDataOffset: DataLength is not 0 and DataOffset is below 24 or not a
// multiple of 8 ([MS-SMBD] 2.2.3).
var ErrDataOffset = errors.New("smbdirect: DataOffset below 24 or not 8-byte aligned")

// NegotiateRequest is the client's first message ([MS-SMBD] 2.2.1).
type NegotiateRequest struct {
	MinVersion        Version
	MaxVersion        Version
	Reserved          uint16
	CreditsRequested  uint16
	PreferredSendSize uint32
	MaxReceiveSize    uint32
	MaxFragmentedSize uint32
}

// DecodeFromBytes decodes a Negotiate Request at the start of data.
func (n *NegotiateRequest) DecodeFromBytes(data []byte) error {
	if len(data) < NegotiateRequestLen {
		*n = NegotiateRequest{}
		return errShortNegReq
	}
	le := binary.LittleEndian
	*n = NegotiateRequest{Version(le.Uint16(data)), Version(le.Uint16(data[2:])), le.Uint16(data[4:]), le.Uint16(data[6:]),
		le.Uint32(data[8:]), le.Uint32(data[12:]), le.Uint32(data[16:])}
	return nil
}

// LooksLikeNegotiateRequest reports whether data is a plausible Negotiate
// Request: exactly 20 octets, MinVersion ≤ 1.0 ≤ MaxVersion, sizes not 0.
// A Data Transfer Message of 20 octets carries no data, so its last four
// octets (DataLength) are 0 where a Negotiate Request has its
// MaxFragmentedSize.
func LooksLikeNegotiateRequest(data []byte) bool {
	var n NegotiateRequest
	if len(data) != NegotiateRequestLen || n.DecodeFromBytes(data) != nil {
		return false
	}
	return n.MinVersion <= Version1 && n.MaxVersion >= Version1 && n.MinVersion != 0 &&
		n.PreferredSendSize != 0 && n.MaxReceiveSize != 0 && n.MaxFragmentedSize != 0
}

// NegotiateResponse is the server's first message ([MS-SMBD] 2.2.2).
type NegotiateResponse struct {
	MinVersion        Version
	MaxVersion        Version
	NegotiatedVersion Version
	Reserved          uint16
	CreditsRequested  uint16
	CreditsGranted    uint16
	Status            Status
	MaxReadWriteSize  uint32
	PreferredSendSize uint32
	MaxReceiveSize    uint32
	MaxFragmentedSize uint32
}

// DecodeFromBytes decodes a Negotiate Response at the start of data.
func (n *NegotiateResponse) DecodeFromBytes(data []byte) error {
	if len(data) < NegotiateResponseLen {
		*n = NegotiateResponse{}
		return errShortNegResp
	}
	le := binary.LittleEndian
	*n = NegotiateResponse{Version(le.Uint16(data)), Version(le.Uint16(data[2:])), Version(le.Uint16(data[4:])),
		le.Uint16(data[6:]), le.Uint16(data[8:]), le.Uint16(data[10:]), Status(le.Uint32(data[12:])),
		le.Uint32(data[16:]), le.Uint32(data[20:]), le.Uint32(data[24:]), le.Uint32(data[28:])}
	return nil
}

// DataTransfer is a Data Transfer Message ([MS-SMBD] 2.2.3): every message
// after the negotiation. Data is the Buffer, DataLength octets at
// DataOffset; a message with RemainingDataLength not 0 is a fragment of an
// upper-layer message whose remaining octets follow in later messages.
type DataTransfer struct {
	CreditsRequested    uint16
	CreditsGranted      uint16
	Flags               Flags
	Reserved            uint16
	RemainingDataLength uint32
	DataOffset          uint32
	DataLength          uint32
	// Data points into the decoded buffer.
	Data []byte
}

// DecodeFromBytes decodes a Data Transfer Message. On ErrDataOffset or
// ErrDataOutside the header fields are decoded and Data is nil.
func (d *DataTransfer) DecodeFromBytes(data []byte) error {
	if len(data) < DataTransferHeaderLen {
		*d = DataTransfer{}
		return errShortData
	}
	le := binary.LittleEndian
	*d = DataTransfer{CreditsRequested: le.Uint16(data), CreditsGranted: le.Uint16(data[2:]), Flags: Flags(le.Uint16(data[4:])),
		Reserved: le.Uint16(data[6:]), RemainingDataLength: le.Uint32(data[8:]), DataOffset: le.Uint32(data[12:]),
		DataLength: le.Uint32(data[16:])}
	if d.DataLength == 0 {
		return nil
	}
	if d.DataOffset < 24 || d.DataOffset%8 != 0 {
		return ErrDataOffset
	}
	if uint64(d.DataOffset)+uint64(d.DataLength) > uint64(len(data)) {
		return ErrDataOutside
	}
	d.Data = data[d.DataOffset : d.DataOffset+d.DataLength]
	return nil
}

// BufferDescriptor is one SMB_DIRECT_BUFFER_DESCRIPTOR_V1 ([MS-SMBD]
// 2.2.3.1): a registered memory region of the sender that the peer may
// reach by RDMA.
type BufferDescriptor struct {
	Offset uint64
	Token  uint32
	Length uint32
}

// DecodeFromBytes decodes one descriptor.
func (b *BufferDescriptor) DecodeFromBytes(data []byte) error {
	if len(data) < BufferDescriptorLen {
		*b = BufferDescriptor{}
		return errShortDesc
	}
	le := binary.LittleEndian
	*b = BufferDescriptor{le.Uint64(data), le.Uint32(data[8:]), le.Uint32(data[12:])}
	return nil
}

// Descriptors is a channel info blob read as buffer descriptors: At(i) for
// i < Len(), a trailing partial descriptor ignored.
type Descriptors []byte

// Len returns the number of whole descriptors.
func (d Descriptors) Len() int { return len(d) / BufferDescriptorLen }

// At returns descriptor i (0 ≤ i < Len()).
func (d Descriptors) At(i int) BufferDescriptor {
	var b BufferDescriptor
	_ = b.DecodeFromBytes(d[i*BufferDescriptorLen:])
	return b
}

// Total returns the sum of the descriptors' lengths.
func (d Descriptors) Total() uint64 {
	var n uint64
	for i := 0; i < d.Len(); i++ {
		n += uint64(binary.LittleEndian.Uint32(d[i*BufferDescriptorLen+12:]))
	}
	return n
}

const hexd = "0123456789abcdef"

func hex16(v uint16) string {
	return string([]byte{hexd[v>>12], hexd[v>>8&0xf], hexd[v>>4&0xf], hexd[v&0xf]})
}

func hex32(v uint32) string { return hex16(uint16(v>>16)) + hex16(uint16(v)) }
