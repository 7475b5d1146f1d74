package srp

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Lengths of the IUs' fixed parts.
const (
	LoginRequestLen = 64 // SRP_LOGIN_REQ
	// LoginRequestRDMALen is Linux's RDMA/CM layout of the login request
	// (struct srp_login_req_rdma): the SRP_LOGIN_REQ without its reserved
	// octets, to fit the 56 octets of private data an RDMA/CM REQ leaves
	// after its IP header.
	LoginRequestRDMALen = 56
	LoginResponseLen    = 52 // SRP_LOGIN_RSP
	LoginRejectLen      = 32 // SRP_LOGIN_REJ
	CommandLen          = 48 // SRP_CMD up to the CDB; SRP_TSK_MGMT
	ResponseLen         = 36 // SRP_RSP; SRP_AER_REQ up to its sense data
	// DescriptorLen is one direct data buffer descriptor (memory
	// descriptor): VIRTUAL ADDRESS, MEMORY HANDLE, DATA LENGTH.
	DescriptorLen = 16
	// IndirectHeaderLen is an indirect data buffer descriptor before its
	// partial memory descriptor list: the INDIRECT TABLE descriptor and
	// the TOTAL LENGTH.
	IndirectHeaderLen = DescriptorLen + 4
	// ImmediateHeaderLen is SRP-2's immediate data buffer descriptor: the
	// data's length (the data itself starts at the login's immediate
	// data offset).
	ImmediateHeaderLen = 4
)

// ErrTruncated is what every decoder's error wraps when the buffer is
// shorter than the structure.
var ErrTruncated = errors.New("srp: truncated")

// TruncatedError says which structure was cut short; it wraps
// ErrTruncated. The decoders return preallocated values, so that a failed
// decode allocates nothing either.
type TruncatedError struct {
	What string
	Need int
}

func (e *TruncatedError) Error() string {
	return "srp: " + e.What + " truncated: fewer than " + strconv.Itoa(e.Need) + " octets"
}

// Unwrap returns ErrTruncated.
func (e *TruncatedError) Unwrap() error { return ErrTruncated }

var (
	errShortLoginReq  = &TruncatedError{What: "SRP_LOGIN_REQ", Need: LoginRequestLen}
	errShortLoginRDMA = &TruncatedError{What: "SRP_LOGIN_REQ (RDMA/CM layout)", Need: LoginRequestRDMALen}
	errShortLoginRsp  = &TruncatedError{What: "SRP_LOGIN_RSP", Need: LoginResponseLen}
	errShortLoginRej  = &TruncatedError{What: "SRP_LOGIN_REJ", Need: LoginRejectLen}
	errShortCmd       = &TruncatedError{What: "SRP_CMD", Need: CommandLen}
	errShortTskMgmt   = &TruncatedError{What: "SRP_TSK_MGMT", Need: CommandLen}
	errShortRsp       = &TruncatedError{What: "SRP_RSP", Need: ResponseLen}
	errShortAER       = &TruncatedError{What: "SRP_AER_REQ", Need: ResponseLen}
	errShort16        = &TruncatedError{What: "IU", Need: 16}
	errShortEmpty     = &TruncatedError{What: "IU", Need: 1}
)

// ErrDescriptors: an SRP_CMD's additional CDB and data buffer descriptors
// reach beyond the IU.
var ErrDescriptors = errors.New("srp: SRP_CMD data buffer descriptors extend beyond the IU")

// ErrDataLengths: an SRP_RSP's or SRP_AER_REQ's response and sense data
// lengths reach beyond the IU.
var ErrDataLengths = errors.New("srp: response or sense data length extends beyond the IU")

// ErrOpcode: the IU type code is not one the standard defines.
var ErrOpcode = errors.New("srp: unknown IU type code")

var be = binary.BigEndian

// LoginRequest is an SRP_LOGIN_REQ: the initiator asks to log an RDMA
// channel in. Over InfiniBand CM it is the CM REQ's private data; over
// RDMA/CM (RoCE, iWARP) Linux sends the same fields in another order
// (DecodeRDMACM).
type LoginRequest struct {
	Opcode Opcode
	Tag    uint64
	// RequestedMaxITIULength: REQUESTED MAXIMUM INITIATOR TO TARGET IU
	// LENGTH, the largest IU the initiator means to send.
	RequestedMaxITIULength uint32
	// RequiredBufferFormats: REQUIRED BUFFER FORMATS, the descriptor
	// formats the initiator will use.
	RequiredBufferFormats BufferFormats
	Flags                 LoginFlags
	// ImmediateDataOffset (SRP-2): where in an SRP_CMD immediate data
	// starts, counted from the IU's first octet.
	ImmediateDataOffset uint16
	InitiatorPortID     [16]byte
	TargetPortID        [16]byte
}

// DecodeFromBytes decodes an SRP_LOGIN_REQ IU at the start of data.
func (l *LoginRequest) DecodeFromBytes(data []byte) error {
	if len(data) < LoginRequestLen {
		*l = LoginRequest{}
		return errShortLoginReq
	}
	*l = LoginRequest{Opcode: Opcode(data[0]), Tag: be.Uint64(data[8:]), RequestedMaxITIULength: be.Uint32(data[16:]),
		RequiredBufferFormats: BufferFormats(be.Uint16(data[24:])), Flags: LoginFlags(data[26]),
		ImmediateDataOffset: be.Uint16(data[28:])}
	copy(l.InitiatorPortID[:], data[32:48])
	copy(l.TargetPortID[:], data[48:64])
	return nil
}

// DecodeRDMACM decodes the login request in Linux's RDMA/CM layout
// (struct srp_login_req_rdma): TAG, REQUIRED BUFFER FORMATS, flags, the
// type code, REQUESTED MAXIMUM INITIATOR TO TARGET IU LENGTH, the two
// port identifiers and IMMEDIATE DATA OFFSET, in 56 octets.
func (l *LoginRequest) DecodeRDMACM(data []byte) error {
	if len(data) < LoginRequestRDMALen {
		*l = LoginRequest{}
		return errShortLoginRDMA
	}
	*l = LoginRequest{Tag: be.Uint64(data), RequiredBufferFormats: BufferFormats(be.Uint16(data[8:])), Flags: LoginFlags(data[10]),
		Opcode: Opcode(data[11]), RequestedMaxITIULength: be.Uint32(data[12:]), ImmediateDataOffset: be.Uint16(data[48:])}
	copy(l.InitiatorPortID[:], data[16:32])
	copy(l.TargetPortID[:], data[32:48])
	return nil
}

// Plausible reports whether the decoded values can be a login request:
// the type code 0x00, a required buffer format and no other bits, and a
// maximum IU length able to hold an SRP_CMD. A probe or a claim uses it
// to tell SRP's private data from other protocols'.
func (l *LoginRequest) Plausible() bool {
	return l.Opcode == OpLoginReq && l.RequiredBufferFormats != 0 && l.RequiredBufferFormats&^(BufferDirect|BufferIndirect) == 0 &&
		l.RequestedMaxITIULength >= CommandLen && l.Flags&^loginRequestFlagsOK == 0
}

// LoginResponse is an SRP_LOGIN_RSP: the target accepted the login. Over
// InfiniBand CM it is the CM REP's private data, over RDMA/CM the
// consumer's part of it (the layout is the same).
type LoginResponse struct {
	Opcode Opcode
	// RequestLimitDelta: REQUEST LIMIT DELTA, the initial request limit
	// (credits) the target grants.
	RequestLimitDelta int32
	Tag               uint64
	// MaxITIULength and MaxTIIULength: MAXIMUM INITIATOR TO TARGET IU
	// LENGTH and MAXIMUM TARGET TO INITIATOR IU LENGTH, the largest IU
	// each side may send on the channel.
	MaxITIULength          uint32
	MaxTIIULength          uint32
	SupportedBufferFormats BufferFormats
	Flags                  LoginResponseFlags
}

// DecodeFromBytes decodes an SRP_LOGIN_RSP at the start of data.
func (l *LoginResponse) DecodeFromBytes(data []byte) error {
	if len(data) < LoginResponseLen {
		*l = LoginResponse{}
		return errShortLoginRsp
	}
	*l = LoginResponse{Opcode: Opcode(data[0]), RequestLimitDelta: int32(be.Uint32(data[4:])), Tag: be.Uint64(data[8:]),
		MaxITIULength: be.Uint32(data[16:]), MaxTIIULength: be.Uint32(data[20:]),
		SupportedBufferFormats: BufferFormats(be.Uint16(data[24:])), Flags: LoginResponseFlags(data[26])}
	return nil
}

// LoginReject is an SRP_LOGIN_REJ: the target refused the login (in the
// CM REJ's private data, or an MPA Reply with the Rejected flag).
type LoginReject struct {
	Opcode                 Opcode
	Reason                 RejectReason
	Tag                    uint64
	SupportedBufferFormats BufferFormats
}

// DecodeFromBytes decodes an SRP_LOGIN_REJ at the start of data.
func (l *LoginReject) DecodeFromBytes(data []byte) error {
	if len(data) < LoginRejectLen {
		*l = LoginReject{}
		return errShortLoginRej
	}
	*l = LoginReject{Opcode: Opcode(data[0]), Reason: RejectReason(be.Uint32(data[4:])), Tag: be.Uint64(data[8:]),
		SupportedBufferFormats: BufferFormats(be.Uint16(data[24:]))}
	return nil
}

// Descriptor is a direct data buffer descriptor (a memory descriptor):
// VIRTUAL ADDRESS, MEMORY HANDLE (the R_Key or STag) and DATA LENGTH of
// one region of initiator memory.
type Descriptor struct {
	VirtualAddress uint64
	MemoryHandle   uint32
	DataLength     uint32
}

func decodeDescriptor(b []byte) Descriptor {
	return Descriptor{VirtualAddress: be.Uint64(b), MemoryHandle: be.Uint32(b[8:]), DataLength: be.Uint32(b[12:])}
}

// DescriptorList is a run of direct data buffer descriptors in an IU: an
// indirect descriptor's partial memory descriptor list.
type DescriptorList []byte

// Len is the number of descriptors in the list.
func (l DescriptorList) Len() int { return len(l) / DescriptorLen }

// At returns the i-th descriptor.
func (l DescriptorList) At(i int) Descriptor { return decodeDescriptor(l[i*DescriptorLen:]) }

// Buffer is one direction's data buffer descriptor of an SRP_CMD.
type Buffer struct {
	Format DescriptorFormat
	// Direct: the direct descriptor (FormatDirect).
	Direct Descriptor
	// Table and TotalLength (FormatIndirect): the INDIRECT TABLE
	// descriptor, naming the whole memory descriptor table in initiator
	// memory, and the TOTAL LENGTH of the data; List the partial memory
	// descriptor list the IU carries (its first Count entries, the
	// DATA-OUT or DATA-IN DESCRIPTOR COUNT).
	Table       Descriptor
	TotalLength uint32
	List        DescriptorList
	Count       uint8
	// ImmediateLength (FormatImmediate): the length of the data the IU
	// carries at the login's immediate data offset.
	ImmediateLength uint32
}

// Length is the data length the buffer describes.
func (b *Buffer) Length() uint32 {
	switch b.Format {
	case FormatDirect:
		return b.Direct.DataLength
	case FormatIndirect:
		return b.TotalLength
	case FormatImmediate:
		return b.ImmediateLength
	}
	return 0
}

// Command is an SRP_CMD: a SCSI command with the descriptors of its data
// buffers.
type Command struct {
	Opcode Opcode
	// SolNot: the solicited-notification bits (UCSOLNT, SCSOLNT).
	SolNot uint8
	// DataOut and DataIn are decoded from the DATA-OUT and DATA-IN BUFFER
	// DESCRIPTOR FORMAT nibbles and the DESCRIPTOR COUNTs.
	DataOut, DataIn Buffer
	Tag             uint64
	LUN             [8]byte
	// TaskAttribute: TASK ATTRIBUTE (0 simple, 1 head of queue, 2
	// ordered, 4 ACA).
	TaskAttribute uint8
	// AdditionalCDBLength: ADDITIONAL CDB LENGTH in octets (the field
	// counts 4-octet words in bits 7-2).
	AdditionalCDBLength uint8
	CDB                 [16]byte
	// AdditionalCDB points into the decoded buffer.
	AdditionalCDB []byte
	// Len: the octets the IU's fixed part, additional CDB and descriptors
	// take (immediate data starts at the login's offset, not here).
	Len int
}

// DecodeFromBytes decodes an SRP_CMD at the start of data.
func (c *Command) DecodeFromBytes(data []byte) error {
	if len(data) < CommandLen {
		*c = Command{}
		return errShortCmd
	}
	*c = Command{Opcode: Opcode(data[0]), SolNot: data[1], Tag: be.Uint64(data[8:]), TaskAttribute: data[29] & 0x07,
		AdditionalCDBLength: data[31] &^ 0x03}
	c.DataOut.Format, c.DataIn.Format = DescriptorFormat(data[5]>>4), DescriptorFormat(data[5]&0x0f)
	c.DataOut.Count, c.DataIn.Count = data[6], data[7]
	copy(c.LUN[:], data[20:28])
	copy(c.CDB[:], data[32:48])
	off := CommandLen + int(c.AdditionalCDBLength)
	if off > len(data) {
		c.Len = CommandLen
		return ErrDescriptors
	}
	c.AdditionalCDB = data[CommandLen:off:off]
	// The data-out descriptor comes first, then the data-in one.
	for _, b := range [2]*Buffer{&c.DataOut, &c.DataIn} {
		n, err := b.decode(data, off)
		if err != nil {
			c.Len = off
			return err
		}
		off += n
	}
	c.Len = off
	return nil
}

func (b *Buffer) decode(data []byte, off int) (int, error) {
	rest := data[off:]
	switch b.Format {
	case FormatNone:
		return 0, nil
	case FormatDirect:
		if len(rest) < DescriptorLen {
			return 0, ErrDescriptors
		}
		b.Direct = decodeDescriptor(rest)
		return DescriptorLen, nil
	case FormatIndirect:
		n := IndirectHeaderLen + int(b.Count)*DescriptorLen
		if len(rest) < n {
			return 0, ErrDescriptors
		}
		b.Table, b.TotalLength = decodeDescriptor(rest), be.Uint32(rest[DescriptorLen:])
		b.List = DescriptorList(rest[IndirectHeaderLen:n:n])
		return n, nil
	case FormatImmediate:
		if len(rest) < ImmediateHeaderLen {
			return 0, ErrDescriptors
		}
		b.ImmediateLength = be.Uint32(rest)
		return ImmediateHeaderLen, nil
	}
	// A reserved format: its size is unknown, what follows cannot be
	// found.
	return 0, nil
}

// ImmediateData returns the immediate data of a command whose data-out
// descriptor is SRP-2's immediate one, found at offset (the login's
// IMMEDIATE DATA OFFSET) in iu, the bytes the command was decoded from:
// as much of ImmediateLength as iu holds, ok false when the offset lies
// before the descriptors' end or beyond the IU.
func (c *Command) ImmediateData(iu []byte, offset uint16) (data []byte, ok bool) {
	if c.DataOut.Format != FormatImmediate || int(offset) < c.Len || int(offset) > len(iu) {
		return nil, false
	}
	end := int(offset) + int(c.DataOut.ImmediateLength)
	if end > len(iu) || end < int(offset) {
		end = len(iu)
	}
	return iu[offset:end:end], true
}

// TaskManagement is an SRP_TSK_MGMT: a task management function for a
// logical unit, or for the task with TaskTag.
type TaskManagement struct {
	Opcode   Opcode
	SolNot   uint8
	Tag      uint64
	LUN      [8]byte
	Function TaskManagementFunction
	// TaskTag: TAG OF TASK TO BE MANAGED (ABORT TASK).
	TaskTag uint64
}

// DecodeFromBytes decodes an SRP_TSK_MGMT at the start of data.
func (t *TaskManagement) DecodeFromBytes(data []byte) error {
	if len(data) < CommandLen {
		*t = TaskManagement{}
		return errShortTskMgmt
	}
	*t = TaskManagement{Opcode: Opcode(data[0]), SolNot: data[1], Tag: be.Uint64(data[8:]),
		Function: TaskManagementFunction(data[30]), TaskTag: be.Uint64(data[32:])}
	copy(t.LUN[:], data[20:28])
	return nil
}

// Response is an SRP_RSP: the target's answer to an SRP_CMD or
// SRP_TSK_MGMT, with the SCSI status and the credits it returns.
type Response struct {
	Opcode            Opcode
	SolNot            uint8
	RequestLimitDelta int32
	Tag               uint64
	Flags             ResponseFlags
	Status            Status
	// DataOutResidualCount, DataInResidualCount: DATA-OUT and DATA-IN
	// RESIDUAL COUNT (valid when the DOOVER/DOUNDER, DIOVER/DIUNDER flags
	// say so).
	DataOutResidualCount uint32
	DataInResidualCount  uint32
	// SenseDataListLength, ResponseDataListLength: SENSE DATA LIST LENGTH
	// and RESPONSE DATA LIST LENGTH; ResponseData and SenseData point into
	// the decoded buffer (the response data comes first).
	SenseDataListLength    uint32
	ResponseDataListLength uint32
	ResponseData           []byte
	SenseData              []byte
}

// DecodeFromBytes decodes an SRP_RSP at the start of data.
func (r *Response) DecodeFromBytes(data []byte) error {
	if len(data) < ResponseLen {
		*r = Response{}
		return errShortRsp
	}
	// TAG is octets 8-15, two reserved octets follow it.
	*r = Response{Opcode: Opcode(data[0]), SolNot: data[1], RequestLimitDelta: int32(be.Uint32(data[4:])), Tag: be.Uint64(data[8:]),
		Flags: ResponseFlags(data[18]), Status: Status(data[19]), DataOutResidualCount: be.Uint32(data[20:]),
		DataInResidualCount: be.Uint32(data[24:]), SenseDataListLength: be.Uint32(data[28:]), ResponseDataListLength: be.Uint32(data[32:])}
	rest := data[ResponseLen:]
	// The lengths count only when their VALID flag is set.
	var rl, sl uint64
	if r.Flags&RspValid != 0 {
		rl = uint64(r.ResponseDataListLength)
	}
	if r.Flags&SnsValid != 0 {
		sl = uint64(r.SenseDataListLength)
	}
	if rl > uint64(len(rest)) {
		r.ResponseData = rest
		return ErrDataLengths
	}
	r.ResponseData = rest[:rl:rl]
	rest = rest[rl:]
	if sl > uint64(len(rest)) {
		r.SenseData = rest
		return ErrDataLengths
	}
	r.SenseData = rest[:sl:sl]
	return nil
}

// TaskManagementResponseCode returns the RESPONSE CODE of a response to an
// SRP_TSK_MGMT: the fourth octet of its response data.
func (r *Response) TaskManagementResponseCode() (uint8, bool) {
	if len(r.ResponseData) < 4 {
		return 0, false
	}
	return r.ResponseData[3], true
}

// CreditRequest is an SRP_CRED_REQ: the target grants credits without a
// response to a command. The initiator answers with an SRP_CRED_RSP.
type CreditRequest struct {
	Opcode            Opcode
	SolNot            uint8
	RequestLimitDelta int32
	Tag               uint64
}

// DecodeFromBytes decodes an SRP_CRED_REQ at the start of data.
func (c *CreditRequest) DecodeFromBytes(data []byte) error {
	if len(data) < 16 {
		*c = CreditRequest{}
		return errShort16
	}
	*c = CreditRequest{Opcode: Opcode(data[0]), SolNot: data[1], RequestLimitDelta: int32(be.Uint32(data[4:])), Tag: be.Uint64(data[8:])}
	return nil
}

// AERRequest is an SRP_AER_REQ: the target's asynchronous event report
// for a logical unit, with its sense data and credits.
type AERRequest struct {
	Opcode              Opcode
	SolNot              uint8
	RequestLimitDelta   int32
	Tag                 uint64
	LUN                 [8]byte
	SenseDataListLength uint32
	SenseData           []byte
}

// DecodeFromBytes decodes an SRP_AER_REQ at the start of data.
func (a *AERRequest) DecodeFromBytes(data []byte) error {
	if len(data) < ResponseLen {
		*a = AERRequest{}
		return errShortAER
	}
	*a = AERRequest{Opcode: Opcode(data[0]), SolNot: data[1], RequestLimitDelta: int32(be.Uint32(data[4:])), Tag: be.Uint64(data[8:]),
		SenseDataListLength: be.Uint32(data[28:])}
	copy(a.LUN[:], data[20:28])
	rest := data[ResponseLen:]
	if uint64(a.SenseDataListLength) > uint64(len(rest)) {
		a.SenseData = rest
		return ErrDataLengths
	}
	a.SenseData = rest[:a.SenseDataListLength:a.SenseDataListLength]
	return nil
}

// Message is whichever IU one Send holds, decoded by its type code: the
// field of that type is valid (Login for SRP_LOGIN_REQ, and so on);
// Tag and, for the IUs that carry one, RequestLimitDelta are copied out.
// SRP_I_LOGOUT, SRP_CRED_RSP and SRP_AER_RSP are a type code and a tag
// only; SRP_T_LOGOUT adds Reason.
type Message struct {
	Opcode Opcode
	Tag    uint64
	// RequestLimitDelta of an SRP_LOGIN_RSP, SRP_RSP, SRP_CRED_REQ or
	// SRP_AER_REQ (HasDelta).
	RequestLimitDelta int32
	HasDelta          bool

	Login          LoginRequest
	LoginResponse  LoginResponse
	LoginReject    LoginReject
	Command        Command
	TaskManagement TaskManagement
	Response       Response
	CreditRequest  CreditRequest
	AERRequest     AERRequest
	// Reason of an SRP_T_LOGOUT.
	Reason LogoutReason
}

// DecodeFromBytes decodes the IU at the start of data. An IU whose fixed
// part decoded but whose variable part does not fit (ErrDescriptors,
// ErrDataLengths) keeps what decoded.
func (m *Message) DecodeFromBytes(data []byte) error {
	m.Opcode, m.Tag, m.RequestLimitDelta, m.HasDelta, m.Reason = 0, 0, 0, false, 0
	if len(data) == 0 {
		return errShortEmpty
	}
	m.Opcode = Opcode(data[0])
	if len(data) >= 16 {
		m.Tag = be.Uint64(data[8:])
	}
	var err error
	switch m.Opcode {
	case OpLoginReq:
		err = m.Login.DecodeFromBytes(data)
	case OpLoginRsp:
		err = m.LoginResponse.DecodeFromBytes(data)
		m.RequestLimitDelta, m.HasDelta = m.LoginResponse.RequestLimitDelta, err == nil
	case OpLoginRej:
		err = m.LoginReject.DecodeFromBytes(data)
	case OpCmd:
		err = m.Command.DecodeFromBytes(data)
	case OpTskMgmt:
		err = m.TaskManagement.DecodeFromBytes(data)
	case OpRsp:
		err = m.Response.DecodeFromBytes(data)
		m.RequestLimitDelta, m.HasDelta = m.Response.RequestLimitDelta, len(data) >= ResponseLen
	case OpCredReq:
		err = m.CreditRequest.DecodeFromBytes(data)
		m.RequestLimitDelta, m.HasDelta = m.CreditRequest.RequestLimitDelta, err == nil
	case OpAERReq:
		err = m.AERRequest.DecodeFromBytes(data)
		m.RequestLimitDelta, m.HasDelta = m.AERRequest.RequestLimitDelta, len(data) >= ResponseLen
	case OpTLogout:
		if len(data) < 16 {
			return errShort16
		}
		m.Reason = LogoutReason(be.Uint32(data[4:]))
	case OpILogout, OpCredRsp, OpAERRsp:
		if len(data) < 16 {
			return errShort16
		}
	default:
		return ErrOpcode
	}
	return err
}

// FixedOK reports whether err, from DecodeFromBytes, still leaves the
// IU's fixed part decoded (its descriptors or data lengths are what did
// not fit).
func FixedOK(err error) bool { return err == nil || err == ErrDescriptors || err == ErrDataLengths }
