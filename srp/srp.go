package srp

import (
	"strconv"

	"github.com/rdmashark/rdmashark/scsi"
)

// Opcode is an IU's type code, its first octet (SRP, "Information units":
// the IU type codes table).
type Opcode uint8

// The IU type codes. Those below 0x40 an initiator sends as requests, 0x40
// to 0x7f are its responses to target requests; 0x80 to 0xbf are target
// requests, 0xc0 and above target responses.
const (
	OpLoginReq Opcode = 0x00 // SRP_LOGIN_REQ
	OpTskMgmt  Opcode = 0x01 // SRP_TSK_MGMT
	OpCmd      Opcode = 0x02 // SRP_CMD
	OpILogout  Opcode = 0x03 // SRP_I_LOGOUT
	OpCredRsp  Opcode = 0x41 // SRP_CRED_RSP
	OpAERRsp   Opcode = 0x42 // SRP_AER_RSP
	OpTLogout  Opcode = 0x80 // SRP_T_LOGOUT
	OpCredReq  Opcode = 0x81 // SRP_CRED_REQ
	OpAERReq   Opcode = 0x82 // SRP_AER_REQ
	OpLoginRsp Opcode = 0xc0 // SRP_LOGIN_RSP
	OpRsp      Opcode = 0xc1 // SRP_RSP
	OpLoginRej Opcode = 0xc2 // SRP_LOGIN_REJ
)

// String names the IU type as the standard does ("SRP_CMD").
func (o Opcode) String() string {
	switch o {
	case OpLoginReq:
		return "SRP_LOGIN_REQ"
	case OpTskMgmt:
		return "SRP_TSK_MGMT"
	case OpCmd:
		return "SRP_CMD"
	case OpILogout:
		return "SRP_I_LOGOUT"
	case OpCredRsp:
		return "SRP_CRED_RSP"
	case OpAERRsp:
		return "SRP_AER_RSP"
	case OpTLogout:
		return "SRP_T_LOGOUT"
	case OpCredReq:
		return "SRP_CRED_REQ"
	case OpAERReq:
		return "SRP_AER_REQ"
	case OpLoginRsp:
		return "SRP_LOGIN_RSP"
	case OpRsp:
		return "SRP_RSP"
	case OpLoginRej:
		return "SRP_LOGIN_REJ"
	}
	return "Unknown (0x" + hex2(uint8(o)) + ")"
}

// Known reports whether o is a type code the standard defines.
func (o Opcode) Known() bool {
	switch o {
	case OpLoginReq, OpTskMgmt, OpCmd, OpILogout, OpCredRsp, OpAERRsp, OpTLogout, OpCredReq, OpAERReq, OpLoginRsp, OpRsp, OpLoginRej:
		return true
	}
	return false
}

// FromInitiator reports whether an initiator sends IUs of type o (its
// requests, and its responses to the target's requests).
func (o Opcode) FromInitiator() bool { return o < 0x80 }

// FixedLen is the length of the fixed part of an IU of type o (what
// follows it: an SRP_CMD's additional CDB and descriptors, an SRP_RSP's
// response and sense data, an SRP_AER_REQ's sense data), 0 for an
// unknown type.
func (o Opcode) FixedLen() int {
	switch o {
	case OpLoginReq:
		return LoginRequestLen
	case OpLoginRsp:
		return LoginResponseLen
	case OpLoginRej:
		return LoginRejectLen
	case OpCmd, OpTskMgmt:
		return CommandLen
	case OpRsp, OpAERReq:
		return ResponseLen
	case OpILogout, OpTLogout, OpCredReq, OpCredRsp, OpAERRsp:
		return 16
	}
	return 0
}

const hexd = "0123456789abcdef"

func hex2(v uint8) string { return string([]byte{hexd[v>>4], hexd[v&0xf]}) }

func hex8(v uint32) string {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = hexd[v&0xf]
		v >>= 4
	}
	return string(b)
}

// BufferFormats is a set of data buffer descriptor formats, the
// SRP_LOGIN_REQ's REQUIRED BUFFER FORMATS and the SRP_LOGIN_RSP's
// SUPPORTED BUFFER FORMATS: bit 1 direct, bit 2 indirect.
type BufferFormats uint16

// The buffer format bits.
const (
	BufferDirect   BufferFormats = 1 << 1 // DDBD: direct data buffer descriptor
	BufferIndirect BufferFormats = 1 << 2 // IDBD: indirect data buffer descriptors
)

// String lists the formats ("direct, indirect").
func (f BufferFormats) String() string {
	s := ""
	add := func(n string) {
		if s != "" {
			s += ", "
		}
		s += n
	}
	if f&BufferDirect != 0 {
		add("direct")
	}
	if f&BufferIndirect != 0 {
		add("indirect")
	}
	if r := f &^ (BufferDirect | BufferIndirect); r != 0 {
		add("0x" + hex2(uint8(r>>8)) + hex2(uint8(r)))
	}
	if s == "" {
		return "none"
	}
	return s
}

// DescriptorFormat is the format of one direction's data buffer
// descriptor in an SRP_CMD: the DATA-OUT BUFFER DESCRIPTOR FORMAT (the
// high nibble of the octet) and the DATA-IN one (the low nibble).
type DescriptorFormat uint8

// The descriptor formats.
const (
	FormatNone      DescriptorFormat = 0 // no data buffer
	FormatDirect    DescriptorFormat = 1 // one direct data buffer descriptor
	FormatIndirect  DescriptorFormat = 2 // an indirect table of them
	FormatImmediate DescriptorFormat = 3 // SRP-2: the data follows in the IU
)

func (f DescriptorFormat) String() string {
	switch f {
	case FormatNone:
		return "none"
	case FormatDirect:
		return "direct"
	case FormatIndirect:
		return "indirect"
	case FormatImmediate:
		return "immediate"
	}
	return "reserved (" + strconv.Itoa(int(f)) + ")"
}

// LoginFlags are the SRP_LOGIN_REQ's flags octet: the MULTI-CHANNEL ACTION
// code in bits 0-1 and, SRP-2, IMMEDIATE DATA REQUESTED in bit 7.
type LoginFlags uint8

// The login request flags.
const (
	// MultiChannelMulti: keep the initiator's other RDMA channels to the
	// target (0: single channel, terminate them).
	MultiChannelMulti   LoginFlags = 0x01
	ImmediateRequested  LoginFlags = 0x80
	multiChannelMask               = 0x03
	loginRequestFlagsOK            = multiChannelMask | ImmediateRequested
)

// MultiChannelAction is the MULTI-CHANNEL ACTION code.
func (f LoginFlags) MultiChannelAction() uint8 { return uint8(f) & multiChannelMask }

func (f LoginFlags) String() string {
	s := "single channel"
	switch f.MultiChannelAction() {
	case 1:
		s = "multi-channel"
	case 2, 3:
		s = "multi-channel action " + strconv.Itoa(int(f.MultiChannelAction()))
	}
	if f&ImmediateRequested != 0 {
		s += ", immediate data requested"
	}
	if r := f &^ loginRequestFlagsOK; r != 0 {
		s += ", reserved 0x" + hex2(uint8(r))
	}
	return s
}

// LoginResponseFlags are the SRP_LOGIN_RSP's flags octet: the
// MULTI-CHANNEL RESULT in bits 0-1 and, SRP-2, IMMEDIATE DATA SUPPORTED in
// bit 7.
type LoginResponseFlags uint8

// ImmediateSupported: the target accepts SRP-2 immediate data.
const ImmediateSupported LoginResponseFlags = 0x80

// MultiChannelResult is the MULTI-CHANNEL RESULT code: 0 no existing
// channels, 1 existing channels terminated, 2 existing channels
// maintained.
func (f LoginResponseFlags) MultiChannelResult() uint8 { return uint8(f) & multiChannelMask }

func (f LoginResponseFlags) String() string {
	var s string
	switch f.MultiChannelResult() {
	case 0:
		s = "no existing channels"
	case 1:
		s = "existing channels terminated"
	case 2:
		s = "existing channels maintained"
	default:
		s = "multi-channel result 3"
	}
	if f&ImmediateSupported != 0 {
		s += ", immediate data supported"
	}
	return s
}

// RejectReason is an SRP_LOGIN_REJ's REASON.
type RejectReason uint32

// The login rejection reasons (SRP_LOGIN_REJ, "REASON field").
const (
	RejectUnableToEstablish       RejectReason = 0x00010000
	RejectInsufficientResources   RejectReason = 0x00010001
	RejectIUTooLarge              RejectReason = 0x00010002
	RejectUnableToAssociate       RejectReason = 0x00010003
	RejectUnsupportedFormat       RejectReason = 0x00010004
	RejectMultiChannelUnsupported RejectReason = 0x00010005
	RejectChannelLimitReached     RejectReason = 0x00010006
)

func (r RejectReason) String() string {
	switch r {
	case RejectUnableToEstablish:
		return "Unable to establish RDMA channel, no reason specified"
	case RejectInsufficientResources:
		return "Insufficient RDMA channel resources"
	case RejectIUTooLarge:
		return "Requested maximum initiator to target IU length value too large"
	case RejectUnableToAssociate:
		return "Unable to associate RDMA channel with specified I_T nexus"
	case RejectUnsupportedFormat:
		return "One or more requested data buffer descriptor formats are not supported"
	case RejectMultiChannelUnsupported:
		return "SRP target port does not support multiple RDMA channels per I_T nexus"
	case RejectChannelLimitReached:
		return "RDMA channel limit reached for this initiator"
	}
	return "Unknown (0x" + hex8(uint32(r)) + ")"
}

// LogoutReason is an SRP_T_LOGOUT's REASON.
type LogoutReason uint32

// The target logout reasons (SRP_T_LOGOUT, "REASON field").
const (
	LogoutNoReason          LogoutReason = 0
	LogoutInactive          LogoutReason = 1
	LogoutInvalidIUType     LogoutReason = 2
	LogoutUnexpectedRsp     LogoutReason = 3
	LogoutMultiChannel      LogoutReason = 4
	LogoutUnsupportedFormat LogoutReason = 6
)

func (r LogoutReason) String() string {
	switch r {
	case LogoutNoReason:
		return "No reason specified"
	case LogoutInactive:
		return "Inactive RDMA channel (reclaiming resources)"
	case LogoutInvalidIUType:
		return "Invalid information unit type code received by SRP target port"
	case LogoutUnexpectedRsp:
		return "SRP initiator port sent response with no corresponding request"
	case LogoutMultiChannel:
		return "RDMA channel disconnected due to multi-channel action code in new login"
	case LogoutUnsupportedFormat:
		return "Unsupported format code value specified in a data buffer descriptor format field"
	}
	return "Unknown (0x" + hex8(uint32(r)) + ")"
}

// TaskManagementFunction is an SRP_TSK_MGMT's TASK MANAGEMENT FUNCTION
// (the SAM task management functions).
type TaskManagementFunction uint8

// The task management functions.
const (
	TMFAbortTask    TaskManagementFunction = 0x01
	TMFAbortTaskSet TaskManagementFunction = 0x02
	TMFClearTaskSet TaskManagementFunction = 0x04
	TMFLUNReset     TaskManagementFunction = 0x08
	TMFClearACA     TaskManagementFunction = 0x40
)

func (f TaskManagementFunction) String() string {
	switch f {
	case TMFAbortTask:
		return "ABORT TASK"
	case TMFAbortTaskSet:
		return "ABORT TASK SET"
	case TMFClearTaskSet:
		return "CLEAR TASK SET"
	case TMFLUNReset:
		return "LOGICAL UNIT RESET"
	case TMFClearACA:
		return "CLEAR ACA"
	}
	return "Unknown (0x" + hex2(uint8(f)) + ")"
}

// ResponseFlags are an SRP_RSP's flags octet.
type ResponseFlags uint8

// The SRP_RSP flags.
const (
	RspValid  ResponseFlags = 1 << 0 // RSPVALID: response data present
	SnsValid  ResponseFlags = 1 << 1 // SNSVALID: sense data present
	DOOver    ResponseFlags = 1 << 2 // DOOVER: data-out overflow
	DOUnder   ResponseFlags = 1 << 3 // DOUNDER: data-out underflow
	DIOver    ResponseFlags = 1 << 4 // DIOVER: data-in overflow
	DIUnder   ResponseFlags = 1 << 5 // DIUNDER: data-in underflow
	rspFlagOK               = RspValid | SnsValid | DOOver | DOUnder | DIOver | DIUnder
)

func (f ResponseFlags) String() string {
	if f == 0 {
		return "none"
	}
	names := [...]string{"RSPVALID", "SNSVALID", "DOOVER", "DOUNDER", "DIOVER", "DIUNDER", "bit 6", "bit 7"}
	s := ""
	for i, n := range names {
		if f&(1<<i) != 0 {
			if s != "" {
				s += ", "
			}
			s += n
		}
	}
	return s
}

// Status is a SCSI status (SAM-5, "Status codes"), an SRP_RSP's STATUS:
// package scsi's, shared with iSCSI.
type Status = scsi.Status

// The SCSI status codes (SAM-5 section 5.3).
const (
	StatusGood                = scsi.StatusGood
	StatusCheckCondition      = scsi.StatusCheckCondition
	StatusConditionMet        = scsi.StatusConditionMet
	StatusBusy                = scsi.StatusBusy
	StatusReservationConflict = scsi.StatusReservationConflict
	StatusTaskSetFull         = scsi.StatusTaskSetFull
	StatusACAActive           = scsi.StatusACAActive
	StatusTaskAborted         = scsi.StatusTaskAborted
)

// TaskManagementResponse names the RESPONSE CODE an SRP_RSP to an
// SRP_TSK_MGMT carries in its response data's fourth octet (SRP,
// SRP_RSP "RESPONSE DATA field": the SAM service response codes).
func TaskManagementResponse(code uint8) string {
	switch code {
	case 0x00:
		return "Task management function complete"
	case 0x02:
		return "Invalid information unit"
	case 0x04:
		return "Task management function not supported"
	case 0x05:
		return "Task management function failed"
	case 0x08:
		return "Task management function succeeded"
	case 0x09:
		return "Incorrect logical unit number"
	}
	return "Unknown (0x" + hex2(code) + ")"
}
