package smbdirect

import "encoding/binary"

// SMB2HeaderLen is the length of the SMB2 header ([MS-SMB2] 2.2.1).
const SMB2HeaderLen = 64

// Protocol IDs ([MS-SMB2] 2.2.1, 2.2.41, 2.2.42): the first four octets
// of an SMB2 message, an encrypted one (TRANSFORM_HEADER) and a compressed
// one (COMPRESSION_TRANSFORM_HEADER); SMB1's for a client starting with a
// multi-protocol negotiate.
const (
	ProtocolSMB2       uint32 = 0x424d53fe // FE 'S' 'M' 'B'
	ProtocolTransform  uint32 = 0x424d53fd // FD 'S' 'M' 'B'
	ProtocolCompressed uint32 = 0x424d53fc // FC 'S' 'M' 'B'
	ProtocolSMB1       uint32 = 0x424d53ff // FF 'S' 'M' 'B'
)

// Command is an SMB2 command code ([MS-SMB2] 2.2.1.2).
type Command uint16

const (
	Negotiate      Command = 0x0000
	SessionSetup   Command = 0x0001
	Logoff         Command = 0x0002
	TreeConnect    Command = 0x0003
	TreeDisconnect Command = 0x0004
	Create         Command = 0x0005
	Close          Command = 0x0006
	Flush          Command = 0x0007
	Read           Command = 0x0008
	Write          Command = 0x0009
	Lock           Command = 0x000a
	Ioctl          Command = 0x000b
	Cancel         Command = 0x000c
	Echo           Command = 0x000d
	QueryDirectory Command = 0x000e
	ChangeNotify   Command = 0x000f
	QueryInfo      Command = 0x0010
	SetInfo        Command = 0x0011
	OplockBreak    Command = 0x0012
)

var commandNames = [...]string{"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT", "TREE_DISCONNECT", "CREATE",
	"CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY", "CHANGE_NOTIFY",
	"QUERY_INFO", "SET_INFO", "OPLOCK_BREAK"}

func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return "UNKNOWN_0x" + hex16(uint16(c))
}

// Known reports whether c is a command [MS-SMB2] defines.
func (c Command) Known() bool { return int(c) < len(commandNames) }

// HeaderFlags are the SMB2 header's Flags ([MS-SMB2] 2.2.1.2).
type HeaderFlags uint32

const (
	FlagServerToRedir     HeaderFlags = 0x00000001 // a response
	FlagAsyncCommand      HeaderFlags = 0x00000002 // the ASYNC header: AsyncId instead of TreeId
	FlagRelatedOperations HeaderFlags = 0x00000004
	FlagSigned            HeaderFlags = 0x00000008
	FlagPriorityMask      HeaderFlags = 0x00000070
	FlagDFSOperations     HeaderFlags = 0x10000000
	FlagReplayOperation   HeaderFlags = 0x20000000
)

func (f HeaderFlags) String() string { return "0x" + hex32(uint32(f)) }

// UnsolicitedMessageID is the MessageId of a server's oplock or lease
// break notification, which answers no request ([MS-SMB2] 3.3.4.6).
const UnsolicitedMessageID = 0xffffffffffffffff

// Header is the SMB2 packet header ([MS-SMB2] 2.2.1.1 ASYNC, 2.2.1.2
// SYNC). Status is the ChannelSequence and Reserved of a request on
// dialect 3.x, the NT status of a response. TreeID is set in the SYNC
// form, AsyncID in the ASYNC form (FlagAsyncCommand).
type Header struct {
	ProtocolID    uint32
	StructureSize uint16
	CreditCharge  uint16
	Status        Status
	Command       Command
	Credits       uint16 // CreditRequest in a request, CreditResponse in a response
	Flags         HeaderFlags
	NextCommand   uint32
	MessageID     uint64
	ProcessID     uint32
	TreeID        uint32
	AsyncID       uint64
	SessionID     uint64
	Signature     [16]byte
	// Body is the message after the header up to NextCommand (the whole
	// rest when NextCommand is 0); Message is the header and Body.
	Body, Message []byte
}

// Response reports whether the message is a response (SERVER_TO_REDIR).
func (h *Header) Response() bool { return h.Flags&FlagServerToRedir != 0 }

// Async reports whether the header is the ASYNC form.
func (h *Header) Async() bool { return h.Flags&FlagAsyncCommand != 0 }

// Interim reports whether the message is an interim response: an ASYNC
// response with STATUS_PENDING that a final response follows ([MS-SMB2]
// 3.3.4.2).
func (h *Header) Interim() bool {
	return h.Response() && h.Status == StatusPending
}

// ErrNotSMB2 says the message does not start with the SMB2 protocol ID or
// its StructureSize is not 64.
var ErrNotSMB2 = &notSMB2{}

type notSMB2 struct{}

func (*notSMB2) Error() string {
	return "smbdirect: not an SMB2 header (ProtocolId FE 'S' 'M' 'B', StructureSize 64)"
}

// ErrNextCommand: NextCommand is not 8-byte aligned or points at or
// beyond the end of the message ([MS-SMB2] 2.2.1.2).
var ErrNextCommand = &nextCommand{}

type nextCommand struct{}

func (*nextCommand) Error() string {
	return "smbdirect: SMB2 NextCommand not 8-byte aligned, shorter than the header or beyond the message"
}

// DecodeFromBytes decodes the SMB2 header at the start of data. On
// ErrNextCommand the header is decoded and Body runs to the end of data.
func (h *Header) DecodeFromBytes(data []byte) error {
	if len(data) < SMB2HeaderLen {
		*h = Header{}
		if len(data) >= 4 {
			h.ProtocolID = binary.LittleEndian.Uint32(data)
		}
		return errShortSMB2
	}
	le := binary.LittleEndian
	*h = Header{ProtocolID: le.Uint32(data), StructureSize: le.Uint16(data[4:]), CreditCharge: le.Uint16(data[6:]),
		Status: Status(le.Uint32(data[8:])), Command: Command(le.Uint16(data[12:])), Credits: le.Uint16(data[14:]),
		Flags: HeaderFlags(le.Uint32(data[16:])), NextCommand: le.Uint32(data[20:]), MessageID: le.Uint64(data[24:]),
		SessionID: le.Uint64(data[40:])}
	if h.ProtocolID != ProtocolSMB2 || h.StructureSize != SMB2HeaderLen {
		return ErrNotSMB2
	}
	if h.Async() {
		h.AsyncID = le.Uint64(data[32:])
	} else {
		h.ProcessID, h.TreeID = le.Uint32(data[32:]), le.Uint32(data[36:])
	}
	copy(h.Signature[:], data[48:64])
	end := len(data)
	var err error
	if n := h.NextCommand; n != 0 {
		if n%8 != 0 || n < SMB2HeaderLen || uint64(n) >= uint64(len(data)) {
			err = ErrNextCommand
		} else {
			end = int(n)
		}
	}
	h.Message, h.Body = data[:end], data[SMB2HeaderLen:end]
	return err
}

// Chain walks the messages of a compound chain ([MS-SMB2] 3.2.4.1.4): Next
// decodes the next header into h, false at the end or on an error (Err).
type Chain struct {
	data []byte
	off  int
	err  error
	done bool
}

// NewChain starts a walk of the SMB2 messages in data.
func NewChain(data []byte) Chain { return Chain{data: data} }

// Next decodes the next message of the chain into h.
func (c *Chain) Next(h *Header) bool {
	if c.done || c.off >= len(c.data) {
		return false
	}
	err := h.DecodeFromBytes(c.data[c.off:])
	switch {
	case err == ErrNextCommand:
		c.err, c.done = err, true
		return true // the header decoded: the chain stops after it
	case err != nil:
		c.err, c.done = err, true
		return false
	}
	if h.NextCommand == 0 {
		c.done = true
	} else {
		c.off += int(h.NextCommand)
	}
	return true
}

// Err returns why the chain stopped early (nil at its regular end).
func (c *Chain) Err() error { return c.err }

// Channel is the RDMA channel of a READ or WRITE request ([MS-SMB2]
// 2.2.19, 2.2.21) and of a SESSION_SETUP request's binding (2.2.5).
type Channel uint32

const (
	ChannelNone             Channel = 0x00000000 // SMB2_CHANNEL_NONE
	ChannelRDMAV1           Channel = 0x00000001 // SMB2_CHANNEL_RDMA_V1
	ChannelRDMAV1Invalidate Channel = 0x00000002 // SMB2_CHANNEL_RDMA_V1_INVALIDATE
	ChannelRDMATransform    Channel = 0x00000003 // SMB2_CHANNEL_RDMA_TRANSFORM
)

func (c Channel) String() string {
	switch c {
	case ChannelNone:
		return "SMB2_CHANNEL_NONE"
	case ChannelRDMAV1:
		return "SMB2_CHANNEL_RDMA_V1"
	case ChannelRDMAV1Invalidate:
		return "SMB2_CHANNEL_RDMA_V1_INVALIDATE"
	case ChannelRDMATransform:
		return "SMB2_CHANNEL_RDMA_TRANSFORM"
	}
	return "0x" + hex32(uint32(c))
}

// RDMA reports whether the channel carries buffer descriptors V1.
func (c Channel) RDMA() bool { return c == ChannelRDMAV1 || c == ChannelRDMAV1Invalidate }

// ReadWrite is what a READ or WRITE request says of its data and channel
// ([MS-SMB2] 2.2.19 READ Request, 2.2.21 WRITE Request): Length and Offset
// of the file range, the Channel, RemainingBytes, and the channel info
// (the buffer descriptors), whose offset counts from the SMB2 header.
type ReadWrite struct {
	Length             uint32
	Offset             uint64
	FileID             [16]byte
	MinimumCount       uint32 // READ only
	Channel            Channel
	RemainingBytes     uint32
	ChannelInfoOffset  uint16
	ChannelInfoLength  uint16
	DataOffset         uint16 // WRITE only
	Flags              uint32
	ChannelInfo        Descriptors
	ChannelInfoOutside bool // the offset and length name bytes beyond the message
}

// DecodeRead decodes the READ request whose header h decoded.
func (rw *ReadWrite) DecodeRead(h *Header) error {
	b := h.Body
	if len(b) < 48 {
		*rw = ReadWrite{}
		return errShortRead
	}
	le := binary.LittleEndian
	*rw = ReadWrite{Length: le.Uint32(b[4:]), Offset: le.Uint64(b[8:]), MinimumCount: le.Uint32(b[32:]),
		Channel: Channel(le.Uint32(b[36:])), RemainingBytes: le.Uint32(b[40:]), ChannelInfoOffset: le.Uint16(b[44:]),
		ChannelInfoLength: le.Uint16(b[46:]), Flags: uint32(b[3])}
	copy(rw.FileID[:], b[16:32])
	rw.channelInfo(h.Message)
	return nil
}

// DecodeWrite decodes the WRITE request whose header h decoded.
func (rw *ReadWrite) DecodeWrite(h *Header) error {
	b := h.Body
	if len(b) < 48 {
		*rw = ReadWrite{}
		return errShortWrite
	}
	le := binary.LittleEndian
	*rw = ReadWrite{DataOffset: le.Uint16(b[2:]), Length: le.Uint32(b[4:]), Offset: le.Uint64(b[8:]),
		Channel: Channel(le.Uint32(b[32:])), RemainingBytes: le.Uint32(b[36:]), ChannelInfoOffset: le.Uint16(b[40:]),
		ChannelInfoLength: le.Uint16(b[42:]), Flags: le.Uint32(b[44:])}
	copy(rw.FileID[:], b[16:32])
	rw.channelInfo(h.Message)
	return nil
}

func (rw *ReadWrite) channelInfo(msg []byte) {
	if rw.ChannelInfoLength == 0 {
		return
	}
	o, n := int(rw.ChannelInfoOffset), int(rw.ChannelInfoLength)
	if o < SMB2HeaderLen || o+n > len(msg) {
		rw.ChannelInfoOutside = true
		return
	}
	rw.ChannelInfo = Descriptors(msg[o : o+n])
}

// SessionSetupChannel returns the Channel field of the SESSION_SETUP
// request whose header h decoded ([MS-SMB2] 2.2.5: reserved, 0).
func SessionSetupChannel(h *Header) (Channel, error) {
	if len(h.Body) < 12 {
		return 0, errShortSetup
	}
	return Channel(binary.LittleEndian.Uint32(h.Body[8:])), nil
}

// ReadResponseDataLength returns the DataLength of a READ response
// ([MS-SMB2] 2.2.20), and false when the body is too short.
func ReadResponseDataLength(h *Header) (uint32, bool) {
	if len(h.Body) < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(h.Body[4:]), true
}
