package nvme

// OpcodeFabrics is the opcode of every Fabrics command, on the admin queue
// and on I/O queues alike (Base 2.0 "Opcodes for Fabrics Commands": 7Fh;
// the command type is FCTYPE).
const OpcodeFabrics = 0x7f

// AdminOpcode is the opcode of a command on the admin queue (QID 0) (Base
// 2.0 "Opcodes for Admin Commands").
type AdminOpcode uint8

// Admin command opcodes.
const (
	AdminDeleteIOSQ            AdminOpcode = 0x00
	AdminCreateIOSQ            AdminOpcode = 0x01
	AdminGetLogPage            AdminOpcode = 0x02
	AdminDeleteIOCQ            AdminOpcode = 0x04
	AdminCreateIOCQ            AdminOpcode = 0x05
	AdminIdentify              AdminOpcode = 0x06
	AdminAbort                 AdminOpcode = 0x08
	AdminSetFeatures           AdminOpcode = 0x09
	AdminGetFeatures           AdminOpcode = 0x0a
	AdminAsyncEventRequest     AdminOpcode = 0x0c
	AdminNamespaceManagement   AdminOpcode = 0x0d
	AdminFirmwareCommit        AdminOpcode = 0x10
	AdminFirmwareImageDownload AdminOpcode = 0x11
	AdminDeviceSelfTest        AdminOpcode = 0x14
	AdminNamespaceAttachment   AdminOpcode = 0x15
	AdminKeepAlive             AdminOpcode = 0x18
	AdminDirectiveSend         AdminOpcode = 0x19
	AdminDirectiveReceive      AdminOpcode = 0x1a
	AdminVirtualizationMgmt    AdminOpcode = 0x1c
	AdminNVMeMISend            AdminOpcode = 0x1d
	AdminNVMeMIReceive         AdminOpcode = 0x1e
	AdminCapacityManagement    AdminOpcode = 0x20
	AdminLockdown              AdminOpcode = 0x24
	AdminDoorbellBufferConfig  AdminOpcode = 0x7c
	AdminFabrics               AdminOpcode = OpcodeFabrics
	AdminFormatNVM             AdminOpcode = 0x80
	AdminSecuritySend          AdminOpcode = 0x81
	AdminSecurityReceive       AdminOpcode = 0x82
	AdminSanitize              AdminOpcode = 0x84
	AdminGetLBAStatus          AdminOpcode = 0x86
)

var adminOpcodeNames = map[AdminOpcode]string{
	AdminDeleteIOSQ:            "Delete I/O Submission Queue",
	AdminCreateIOSQ:            "Create I/O Submission Queue",
	AdminGetLogPage:            "Get Log Page",
	AdminDeleteIOCQ:            "Delete I/O Completion Queue",
	AdminCreateIOCQ:            "Create I/O Completion Queue",
	AdminIdentify:              "Identify",
	AdminAbort:                 "Abort",
	AdminSetFeatures:           "Set Features",
	AdminGetFeatures:           "Get Features",
	AdminAsyncEventRequest:     "Asynchronous Event Request",
	AdminNamespaceManagement:   "Namespace Management",
	AdminFirmwareCommit:        "Firmware Commit",
	AdminFirmwareImageDownload: "Firmware Image Download",
	AdminDeviceSelfTest:        "Device Self-test",
	AdminNamespaceAttachment:   "Namespace Attachment",
	AdminKeepAlive:             "Keep Alive",
	AdminDirectiveSend:         "Directive Send",
	AdminDirectiveReceive:      "Directive Receive",
	AdminVirtualizationMgmt:    "Virtualization Management",
	AdminNVMeMISend:            "NVMe-MI Send",
	AdminNVMeMIReceive:         "NVMe-MI Receive",
	AdminCapacityManagement:    "Capacity Management",
	AdminLockdown:              "Lockdown",
	AdminDoorbellBufferConfig:  "Doorbell Buffer Config",
	AdminFabrics:               "Fabrics Command",
	AdminFormatNVM:             "Format NVM",
	AdminSecuritySend:          "Security Send",
	AdminSecurityReceive:       "Security Receive",
	AdminSanitize:              "Sanitize",
	AdminGetLBAStatus:          "Get LBA Status",
}

// String names the opcode as the specification does.
func (o AdminOpcode) String() string {
	if s, ok := adminOpcodeNames[o]; ok {
		return s
	}
	if o >= 0xc0 {
		return "Vendor Specific (0x" + hex8(uint8(o)) + ")"
	}
	return "Unknown admin opcode (0x" + hex8(uint8(o)) + ")"
}

// IOOpcode is the opcode of a command on an I/O queue with the NVM Command
// Set (NVM Command Set 1.0 "Opcodes for NVM Commands"; Base 2.0 "Opcodes
// for I/O Commands").
type IOOpcode uint8

// NVM command set opcodes.
const (
	IOFlush               IOOpcode = 0x00
	IOWrite               IOOpcode = 0x01
	IORead                IOOpcode = 0x02
	IOWriteUncorrectable  IOOpcode = 0x04
	IOCompare             IOOpcode = 0x05
	IOWriteZeroes         IOOpcode = 0x08
	IODatasetManagement   IOOpcode = 0x09
	IOVerify              IOOpcode = 0x0c
	IOReservationRegister IOOpcode = 0x0d
	IOReservationReport   IOOpcode = 0x0e
	IOReservationAcquire  IOOpcode = 0x11
	IOReservationRelease  IOOpcode = 0x15
	IOCopy                IOOpcode = 0x19
	IOFabrics             IOOpcode = OpcodeFabrics
)

var ioOpcodeNames = map[IOOpcode]string{
	IOFlush:               "Flush",
	IOWrite:               "Write",
	IORead:                "Read",
	IOWriteUncorrectable:  "Write Uncorrectable",
	IOCompare:             "Compare",
	IOWriteZeroes:         "Write Zeroes",
	IODatasetManagement:   "Dataset Management",
	IOVerify:              "Verify",
	IOReservationRegister: "Reservation Register",
	IOReservationReport:   "Reservation Report",
	IOReservationAcquire:  "Reservation Acquire",
	IOReservationRelease:  "Reservation Release",
	IOCopy:                "Copy",
	IOFabrics:             "Fabrics Command",
}

// String names the opcode as the specification does.
func (o IOOpcode) String() string {
	if s, ok := ioOpcodeNames[o]; ok {
		return s
	}
	if o >= 0x80 {
		return "Vendor Specific (0x" + hex8(uint8(o)) + ")"
	}
	return "Unknown I/O opcode (0x" + hex8(uint8(o)) + ")"
}

// DataTransfer is the data transfer direction bits 1:0 of an opcode
// encode for admin, I/O and Fabrics commands alike (Base 2.0 "Opcodes for
// Admin Commands", column "Data Transfer"; for Fabrics commands the bits
// are those of FCTYPE).
type DataTransfer uint8

// Data transfer directions.
const (
	TransferNone          DataTransfer = 0 // no data
	TransferHostToCtrl    DataTransfer = 1 // host to controller
	TransferCtrlToHost    DataTransfer = 2 // controller to host
	TransferBidirectional DataTransfer = 3 // both
)

// String names the direction.
func (d DataTransfer) String() string {
	switch d {
	case TransferNone:
		return "none"
	case TransferHostToCtrl:
		return "host to controller"
	case TransferCtrlToHost:
		return "controller to host"
	}
	return "bidirectional"
}

// TransferOf returns the data transfer direction of an opcode (or, for a
// Fabrics command, of its FCTYPE): its low 2 bits.
func TransferOf(opcodeOrFCTYPE uint8) DataTransfer { return DataTransfer(opcodeOrFCTYPE & 0x3) }

// FabricsType is FCTYPE, octet 4 of a Fabrics command (Base 2.0 "Fabrics
// Command Type"; NVMe over Fabrics 1.1 Figure "Fabrics Command Type").
type FabricsType uint8

// Fabrics command types.
const (
	FabricsPropertySet FabricsType = 0x00
	FabricsConnect     FabricsType = 0x01
	FabricsPropertyGet FabricsType = 0x04
	FabricsAuthSend    FabricsType = 0x05
	FabricsAuthReceive FabricsType = 0x06
	FabricsDisconnect  FabricsType = 0x08
)

// String names the command type as the specification does.
func (t FabricsType) String() string {
	switch t {
	case FabricsPropertySet:
		return "Property Set"
	case FabricsConnect:
		return "Connect"
	case FabricsPropertyGet:
		return "Property Get"
	case FabricsAuthSend:
		return "Authentication Send"
	case FabricsAuthReceive:
		return "Authentication Receive"
	case FabricsDisconnect:
		return "Disconnect"
	}
	if t >= 0xc0 {
		return "Vendor Specific (0x" + hex8(uint8(t)) + ")"
	}
	return "Reserved (0x" + hex8(uint8(t)) + ")"
}

// CommandName names a command from its opcode, the queue it was submitted
// to (admin for QID 0) and, for a Fabrics command, its FCTYPE — the name an
// analysis prints.
func CommandName(opcode uint8, admin bool, fctype FabricsType) string {
	if opcode == OpcodeFabrics {
		return fctype.String()
	}
	if admin {
		return AdminOpcode(opcode).String()
	}
	return IOOpcode(opcode).String()
}

const hexDigits = "0123456789abcdef"

// hex8 formats a byte as two lowercase hex digits (strconv would drop the
// leading zero).
func hex8(b uint8) string { return string([]byte{hexDigits[b>>4], hexDigits[b&0xf]}) }
