package iscsi

import (
	"strconv"

	"github.com/rdmashark/rdmashark/scsi"
)

// Opcode is the iSCSI opcode, the low six bits of the BHS's first octet
// (RFC 7143 section 11.2.1.2). Initiator opcodes are 0x00-0x1f, target
// opcodes 0x20-0x3f.
type Opcode uint8

// The iSCSI opcodes (RFC 7143 section 11.2.1.2).
const (
	OpNOPOut       Opcode = 0x00
	OpSCSICommand  Opcode = 0x01
	OpTaskMgmt     Opcode = 0x02
	OpLogin        Opcode = 0x03
	OpText         Opcode = 0x04
	OpDataOut      Opcode = 0x05
	OpLogout       Opcode = 0x06
	OpSNACK        Opcode = 0x10
	OpNOPIn        Opcode = 0x20
	OpSCSIResponse Opcode = 0x21
	OpTaskMgmtResp Opcode = 0x22
	OpLoginResp    Opcode = 0x23
	OpTextResp     Opcode = 0x24
	OpDataIn       Opcode = 0x25
	OpLogoutResp   Opcode = 0x26
	OpR2T          Opcode = 0x31
	OpAsyncMessage Opcode = 0x32
	OpReject       Opcode = 0x3f
)

// FromInitiator reports whether the opcode is one an initiator sends.
func (o Opcode) FromInitiator() bool { return o < 0x20 }

// String names the opcode as tshark's iscsi.opcode does.
func (o Opcode) String() string {
	switch o {
	case OpNOPOut:
		return "NOP Out"
	case OpSCSICommand:
		return "SCSI Command"
	case OpTaskMgmt:
		return "Task Management Function"
	case OpLogin:
		return "Login Command"
	case OpText:
		return "Text Command"
	case OpDataOut:
		return "SCSI Data Out"
	case OpLogout:
		return "Logout Command"
	case OpSNACK:
		return "SNACK Request"
	case OpNOPIn:
		return "NOP In"
	case OpSCSIResponse:
		return "SCSI Response"
	case OpTaskMgmtResp:
		return "Task Management Function Response"
	case OpLoginResp:
		return "Login Response"
	case OpTextResp:
		return "Text Response"
	case OpDataIn:
		return "SCSI Data In"
	case OpLogoutResp:
		return "Logout Response"
	case OpR2T:
		return "Ready To Transfer"
	case OpAsyncMessage:
		return "Asynchronous Message"
	case OpReject:
		return "Reject"
	}
	return "Unknown (0x" + hex2(uint8(o)) + ")"
}

const hexd = "0123456789abcdef"

func hex2(v uint8) string { return string([]byte{hexd[v>>4], hexd[v&0xf]}) }

// CDBOpcode is a SCSI command's operation code, the CDB's first octet
// (SPC-5, SBC-4).
type CDBOpcode uint8

// Common CDB operation codes of block devices (SPC-5 and SBC-4).
const (
	CDBTestUnitReady      CDBOpcode = 0x00
	CDBRequestSense       CDBOpcode = 0x03
	CDBRead6              CDBOpcode = 0x08
	CDBWrite6             CDBOpcode = 0x0a
	CDBInquiry            CDBOpcode = 0x12
	CDBModeSelect6        CDBOpcode = 0x15
	CDBModeSense6         CDBOpcode = 0x1a
	CDBStartStopUnit      CDBOpcode = 0x1b
	CDBPreventAllow       CDBOpcode = 0x1e
	CDBReadCapacity10     CDBOpcode = 0x25
	CDBRead10             CDBOpcode = 0x28
	CDBWrite10            CDBOpcode = 0x2a
	CDBVerify10           CDBOpcode = 0x2f
	CDBSynchronizeCache10 CDBOpcode = 0x35
	CDBWriteSame10        CDBOpcode = 0x41
	CDBUnmap              CDBOpcode = 0x42
	CDBLogSense           CDBOpcode = 0x4d
	CDBModeSelect10       CDBOpcode = 0x55
	CDBModeSense10        CDBOpcode = 0x5a
	CDBPersistentResIn    CDBOpcode = 0x5e
	CDBPersistentResOut   CDBOpcode = 0x5f
	CDBRead16             CDBOpcode = 0x88
	CDBCompareAndWrite    CDBOpcode = 0x89
	CDBWrite16            CDBOpcode = 0x8a
	CDBSynchronizeCache16 CDBOpcode = 0x91
	CDBWriteSame16        CDBOpcode = 0x93
	CDBServiceActionIn16  CDBOpcode = 0x9e
	CDBReportLUNs         CDBOpcode = 0xa0
	CDBMaintenanceIn      CDBOpcode = 0xa3
	CDBRead12             CDBOpcode = 0xa8
	CDBWrite12            CDBOpcode = 0xaa
)

// Service actions of SERVICE ACTION IN(16) and MAINTENANCE IN that name
// common commands.
const (
	SAReadCapacity16         = 0x10 // SERVICE ACTION IN(16)
	SAReportSupportedOpcodes = 0x0c // MAINTENANCE IN
)

// String names the operation code as tshark's SBC table does (its Info
// column: "Read(10)", "Service Action In(16)", "Mgmt Protocol In").
func (o CDBOpcode) String() string {
	switch o {
	case CDBTestUnitReady:
		return "Test Unit Ready"
	case CDBRequestSense:
		return "Request Sense"
	case CDBRead6:
		return "Read(6)"
	case CDBWrite6:
		return "Write(6)"
	case CDBInquiry:
		return "Inquiry"
	case CDBModeSelect6:
		return "Mode Select(6)"
	case CDBModeSense6:
		return "Mode Sense(6)"
	case CDBStartStopUnit:
		return "Start Stop Unit"
	case CDBPreventAllow:
		return "Prevent/Allow Medium Removal"
	case CDBReadCapacity10:
		return "Read Capacity(10)"
	case CDBRead10:
		return "Read(10)"
	case CDBWrite10:
		return "Write(10)"
	case CDBVerify10:
		return "Verify(10)"
	case CDBSynchronizeCache10:
		return "Synchronize Cache(10)"
	case CDBWriteSame10:
		return "Write Same(10)"
	case CDBUnmap:
		return "Unmap"
	case CDBLogSense:
		return "Log Sense"
	case CDBModeSelect10:
		return "Mode Select(10)"
	case CDBModeSense10:
		return "Mode Sense(10)"
	case CDBPersistentResIn:
		return "Persistent Reserve In"
	case CDBPersistentResOut:
		return "Persistent Reserve Out"
	case CDBRead16:
		return "Read(16)"
	case CDBCompareAndWrite:
		return "Compare And Write"
	case CDBWrite16:
		return "Write(16)"
	case CDBSynchronizeCache16:
		return "Synchronize Cache(16)"
	case CDBWriteSame16:
		return "Write Same(16)"
	case CDBServiceActionIn16:
		return "Service Action In(16)"
	case CDBReportLUNs:
		return "Report LUNs"
	case CDBMaintenanceIn:
		return "Mgmt Protocol In"
	case CDBRead12:
		return "Read(12)"
	case CDBWrite12:
		return "Write(12)"
	}
	return "Unknown (0x" + hex2(uint8(o)) + ")"
}

// CDB is a SCSI command descriptor block (the 16 octets of the SCSI
// Command BHS; longer CDBs continue in an Extended CDB AHS).
type CDB [16]byte

// Opcode is the CDB's operation code.
func (c *CDB) Opcode() CDBOpcode { return CDBOpcode(c[0]) }

// ServiceAction is the service action of the variable-length-style CDBs
// (SERVICE ACTION IN(16), MAINTENANCE IN): the low 5 bits of octet 1.
func (c *CDB) ServiceAction() uint8 { return c[1] & 0x1f }

// Name names the command, the service action's name for SERVICE ACTION
// IN(16) READ CAPACITY(16) and MAINTENANCE IN REPORT SUPPORTED OPERATION
// CODES, else the operation code's.
func (c *CDB) Name() string {
	switch {
	case c.Opcode() == CDBServiceActionIn16 && c.ServiceAction() == SAReadCapacity16:
		return "Read Capacity(16)"
	case c.Opcode() == CDBMaintenanceIn && c.ServiceAction() == SAReportSupportedOpcodes:
		return "Report Supported Operation Codes"
	}
	return c.Opcode().String()
}

// LBA returns the logical block address and transfer length of the
// READ/WRITE(6/10/12/16) CDBs (SBC-4), ok false for others.
func (c *CDB) LBA() (lba uint64, blocks uint32, ok bool) {
	be32 := func(b []byte) uint32 { return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) }
	switch c.Opcode() {
	case CDBRead6, CDBWrite6:
		n := uint32(c[4])
		if n == 0 {
			n = 256
		}
		return uint64(c[1]&0x1f)<<16 | uint64(c[2])<<8 | uint64(c[3]), n, true
	case CDBRead10, CDBWrite10, CDBVerify10:
		return uint64(be32(c[2:])), uint32(c[7])<<8 | uint32(c[8]), true
	case CDBRead12, CDBWrite12:
		return uint64(be32(c[2:])), be32(c[6:]), true
	case CDBRead16, CDBWrite16:
		return uint64(be32(c[2:]))<<32 | uint64(be32(c[6:])), be32(c[10:]), true
	}
	return 0, 0, false
}

// SCSIStatus is a SCSI Response's status (SAM-5), valid when the iSCSI
// Response is "Command Completed at Target": package scsi's, shared with
// SRP.
type SCSIStatus = scsi.Status

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

// LoginStage is a login stage, the CSG and NSG fields (RFC 7143 section
// 11.12.3).
type LoginStage uint8

// The login stages.
const (
	StageSecurity    LoginStage = 0
	StageOperational LoginStage = 1
	StageFullFeature LoginStage = 3
)

// String names the stage as tshark does.
func (s LoginStage) String() string {
	switch s {
	case StageSecurity:
		return "Security negotiation"
	case StageOperational:
		return "Operational negotiation"
	case StageFullFeature:
		return "Full feature phase"
	}
	return strconv.Itoa(int(s))
}

// LoginStatus is a Login Response's Status-Class and Status-Detail
// (RFC 7143 section 11.13.5), Class<<8 | Detail.
type LoginStatus uint16

// Class is the status class: 0 success, 1 redirection, 2 initiator
// error, 3 target error.
func (s LoginStatus) Class() uint8 { return uint8(s >> 8) }

// String names the status as tshark's Info column does ("Success").
func (s LoginStatus) String() string {
	switch s {
	case 0x0000:
		return "Success"
	case 0x0101:
		return "Target moved temporarily"
	case 0x0102:
		return "Target moved permanently"
	case 0x0200:
		return "Initiator error"
	case 0x0201:
		return "Authentication failed"
	case 0x0202:
		return "Authorisation failure"
	case 0x0203:
		return "Target not found"
	case 0x0204:
		return "Target removed"
	case 0x0205:
		return "Unsupported version"
	case 0x0206:
		return "Too many connections"
	case 0x0207:
		return "Missing parameter"
	case 0x0208:
		return "Can't include in session"
	case 0x0209:
		return "Session type not supported"
	case 0x020a:
		return "Session does not exist"
	case 0x020b:
		return "Invalid request during login"
	case 0x0300:
		return "Target error"
	case 0x0301:
		return "Service unavailable"
	case 0x0302:
		return "Out of resources"
	}
	return "Unknown (0x" + hex2(uint8(s>>8)) + hex2(uint8(s)) + ")"
}

// TaskMgmtFunction is a Task Management Function Request's function
// (RFC 7143 section 11.5.1).
type TaskMgmtFunction uint8

// String names the function.
func (f TaskMgmtFunction) String() string {
	switch f {
	case 1:
		return "Abort Task"
	case 2:
		return "Abort Task Set"
	case 3:
		return "Clear ACA"
	case 4:
		return "Clear Task Set"
	case 5:
		return "Logical Unit Reset"
	case 6:
		return "Target Warm Reset"
	case 7:
		return "Target Cold Reset"
	case 8:
		return "Task Reassign"
	}
	return "Unknown (" + strconv.Itoa(int(f)) + ")"
}

// TaskMgmtResponse names a Task Management Function Response's response
// (RFC 7143 section 11.6.1).
func TaskMgmtResponse(r uint8) string {
	switch r {
	case 0:
		return "Function complete"
	case 1:
		return "Task does not exist"
	case 2:
		return "LUN does not exist"
	case 3:
		return "Task still allegiant"
	case 4:
		return "Task allegiance reassignment not supported"
	case 5:
		return "Task management function not supported"
	case 6:
		return "Function authorization failed"
	case 255:
		return "Function rejected"
	}
	return "Unknown (" + strconv.Itoa(int(r)) + ")"
}

// LogoutReason names a Logout Request's reason code (RFC 7143 section
// 11.14.1) as tshark does.
func LogoutReason(r uint8) string {
	switch r {
	case 0:
		return "Close session"
	case 1:
		return "Close connection"
	case 2:
		return "Remove connection for recovery"
	}
	return "Unknown (" + strconv.Itoa(int(r)) + ")"
}

// LogoutResponse names a Logout Response's response (RFC 7143 section
// 11.15.1).
func LogoutResponse(r uint8) string {
	switch r {
	case 0:
		return "Connection or session closed successfully"
	case 1:
		return "CID not found"
	case 2:
		return "Connection recovery not supported"
	case 3:
		return "Cleanup failed"
	}
	return "Unknown (" + strconv.Itoa(int(r)) + ")"
}

// RejectReason names a Reject's reason (RFC 7143 section 11.17.1).
func RejectReason(r uint8) string {
	switch r {
	case 0x02:
		return "Data (payload) digest error"
	case 0x03:
		return "SNACK Reject"
	case 0x04:
		return "Protocol Error"
	case 0x05:
		return "Command not supported"
	case 0x06:
		return "Immediate command reject - too many immediate commands"
	case 0x07:
		return "Task in progress"
	case 0x08:
		return "Invalid data ack"
	case 0x09:
		return "Invalid PDU field"
	case 0x0a:
		return "Long op reject"
	case 0x0b:
		return "Negotiation reset"
	case 0x0c:
		return "Waiting for logout"
	}
	return "Unknown (0x" + hex2(r) + ")"
}
