package nvme

import "strconv"

// Status is octets 14-15 of a completion queue entry: the phase tag and the
// Status Field (Base 2.0 "Common Completion Queue Entry", "Completion Queue
// Entry: Status Field"):
//
//	bit 0      P    phase tag (RDMA transports: no meaning, Linux sends 0)
//	bits 8:1   SC   status code
//	bits 11:9  SCT  status code type
//	bits 13:12 CRD  command retry delay
//	bit 14     M    more (information in the Error Information log page)
//	bit 15     DNR  do not retry
//
// This is tshark's nvme.cqe.status. (Linux's nvme_completion.status is the
// same 16 bits; its NVME_SC_* constants are the field shifted right by
// one: SCT << 8 | SC.)
type Status uint16

// P returns the phase tag.
func (s Status) P() bool { return s&0x1 != 0 }

// SC returns the status code.
func (s Status) SC() uint8 { return uint8(s >> 1) }

// SCT returns the status code type.
func (s Status) SCT() StatusCodeType { return StatusCodeType(s >> 9 & 0x7) }

// CRD returns the command retry delay (an index into the CRDT fields of
// Identify Controller; 0: retry at once).
func (s Status) CRD() uint8 { return uint8(s >> 12 & 0x3) }

// M returns the More bit.
func (s Status) M() bool { return s&0x4000 != 0 }

// DNR returns the Do Not Retry bit.
func (s Status) DNR() bool { return s&0x8000 != 0 }

// Success reports whether SCT and SC are both 0 (Successful Completion).
func (s Status) Success() bool { return s&0x0ffe == 0 }

// Code returns SCT and SC as one value, SCT<<8 | SC (Linux's NVME_SC_*
// numbering without the DNR and More bits).
func (s Status) Code() uint16 { return uint16(s>>1) & 0x7ff }

// String names the status without knowing the command: generic, media and
// path statuses by name; a command specific status (whose meaning depends
// on the command) by the NVM I/O command set's name where it has one,
// otherwise as "Command Specific Status 0xNN" — Describe names it for a
// known command.
func (s Status) String() string {
	return s.Describe(0, false, 0)
}

// Describe names the status of the completion of a command (its opcode,
// whether it was on the admin queue, and its FCTYPE for a Fabrics command)
// — the command decides what a command specific status means.
func (s Status) Describe(opcode uint8, admin bool, fctype FabricsType) string {
	sc := s.SC()
	switch s.SCT() {
	case SCTGeneric:
		if n := genericStatusNames[sc]; n != "" {
			return n
		}
	case SCTCommandSpecific:
		if n := commandSpecificName(sc, opcode, admin, fctype); n != "" {
			return n
		}
		return "Command Specific Status 0x" + hex8(sc)
	case SCTMedia:
		if n := mediaStatusNames[sc]; n != "" {
			return n
		}
	case SCTPath:
		if n := pathStatusNames[sc]; n != "" {
			return n
		}
	case SCTVendor:
		return "Vendor Specific Status 0x" + hex8(sc)
	}
	return s.SCT().String() + " 0x" + hex8(sc)
}

// StatusCodeType is SCT (Base 2.0 "Status Code Type Values").
type StatusCodeType uint8

// Status code types.
const (
	SCTGeneric         StatusCodeType = 0
	SCTCommandSpecific StatusCodeType = 1
	SCTMedia           StatusCodeType = 2 // Media and Data Integrity Errors
	SCTPath            StatusCodeType = 3 // Path Related Status
	SCTVendor          StatusCodeType = 7
)

// String names the status code type.
func (t StatusCodeType) String() string {
	switch t {
	case SCTGeneric:
		return "Generic Command Status"
	case SCTCommandSpecific:
		return "Command Specific Status"
	case SCTMedia:
		return "Media and Data Integrity Errors"
	case SCTPath:
		return "Path Related Status"
	case SCTVendor:
		return "Vendor Specific"
	}
	return "Reserved SCT " + strconv.Itoa(int(t))
}

// Generic command status values (SCT 0; Base 2.0 "Generic Command Status
// Values", NVM Command Set 1.0 for 80h-84h).
const (
	SCSuccess                   = 0x00
	SCInvalidOpcode             = 0x01
	SCInvalidField              = 0x02
	SCCommandIDConflict         = 0x03
	SCDataTransferError         = 0x04
	SCAbortedPowerLoss          = 0x05
	SCInternalError             = 0x06
	SCAbortRequested            = 0x07
	SCAbortedSQDeletion         = 0x08
	SCAbortedFailedFused        = 0x09
	SCAbortedMissingFused       = 0x0a
	SCInvalidNamespaceOrFormat  = 0x0b
	SCCommandSequenceError      = 0x0c
	SCInvalidSGLSegment         = 0x0d
	SCInvalidSGLCount           = 0x0e
	SCDataSGLLengthInvalid      = 0x0f
	SCMetadataSGLLengthInvalid  = 0x10
	SCSGLTypeInvalid            = 0x11
	SCInvalidCMBUse             = 0x12
	SCPRPOffsetInvalid          = 0x13
	SCAtomicWriteUnitExceeded   = 0x14
	SCOperationDenied           = 0x15
	SCSGLOffsetInvalid          = 0x16
	SCHostIDInconsistentFormat  = 0x18
	SCKeepAliveExpired          = 0x19
	SCKeepAliveInvalid          = 0x1a
	SCAbortedPreempt            = 0x1b
	SCSanitizeFailed            = 0x1c
	SCSanitizeInProgress        = 0x1d
	SCSGLGranularityInvalid     = 0x1e
	SCCommandNotSupportedCMB    = 0x1f
	SCNamespaceWriteProtected   = 0x20
	SCCommandInterrupted        = 0x21
	SCTransientTransportError   = 0x22
	SCProhibitedByLockdown      = 0x23
	SCAdminCommandMediaNotReady = 0x24
	SCLBAOutOfRange             = 0x80
	SCCapacityExceeded          = 0x81
	SCNamespaceNotReady         = 0x82
	SCReservationConflict       = 0x83
	SCFormatInProgress          = 0x84
)

var genericStatusNames = [256]string{
	SCSuccess:                   "Successful Completion",
	SCInvalidOpcode:             "Invalid Command Opcode",
	SCInvalidField:              "Invalid Field in Command",
	SCCommandIDConflict:         "Command ID Conflict",
	SCDataTransferError:         "Data Transfer Error",
	SCAbortedPowerLoss:          "Commands Aborted due to Power Loss Notification",
	SCInternalError:             "Internal Error",
	SCAbortRequested:            "Command Abort Requested",
	SCAbortedSQDeletion:         "Command Aborted due to SQ Deletion",
	SCAbortedFailedFused:        "Command Aborted due to Failed Fused Command",
	SCAbortedMissingFused:       "Command Aborted due to Missing Fused Command",
	SCInvalidNamespaceOrFormat:  "Invalid Namespace or Format",
	SCCommandSequenceError:      "Command Sequence Error",
	SCInvalidSGLSegment:         "Invalid SGL Segment Descriptor",
	SCInvalidSGLCount:           "Invalid Number of SGL Descriptors",
	SCDataSGLLengthInvalid:      "Data SGL Length Invalid",
	SCMetadataSGLLengthInvalid:  "Metadata SGL Length Invalid",
	SCSGLTypeInvalid:            "SGL Descriptor Type Invalid",
	SCInvalidCMBUse:             "Invalid Use of Controller Memory Buffer",
	SCPRPOffsetInvalid:          "PRP Offset Invalid",
	SCAtomicWriteUnitExceeded:   "Atomic Write Unit Exceeded",
	SCOperationDenied:           "Operation Denied",
	SCSGLOffsetInvalid:          "SGL Offset Invalid",
	SCHostIDInconsistentFormat:  "Host Identifier Inconsistent Format",
	SCKeepAliveExpired:          "Keep Alive Timer Expired",
	SCKeepAliveInvalid:          "Keep Alive Timeout Invalid",
	SCAbortedPreempt:            "Command Aborted due to Preempt and Abort",
	SCSanitizeFailed:            "Sanitize Failed",
	SCSanitizeInProgress:        "Sanitize In Progress",
	SCSGLGranularityInvalid:     "SGL Data Block Granularity Invalid",
	SCCommandNotSupportedCMB:    "Command Not Supported for Queue in CMB",
	SCNamespaceWriteProtected:   "Namespace is Write Protected",
	SCCommandInterrupted:        "Command Interrupted",
	SCTransientTransportError:   "Transient Transport Error",
	SCProhibitedByLockdown:      "Command Prohibited by Command and Feature Lockdown",
	SCAdminCommandMediaNotReady: "Admin Command Media Not Ready",
	SCLBAOutOfRange:             "LBA Out of Range",
	SCCapacityExceeded:          "Capacity Exceeded",
	SCNamespaceNotReady:         "Namespace Not Ready",
	SCReservationConflict:       "Reservation Conflict",
	SCFormatInProgress:          "Format In Progress",
}

// Command specific status values of the Fabrics commands (SCT 1; Base 2.0
// "Connect Command Specific Status Values", "Discovery..." ; NVMe over
// Fabrics 1.1 "Connect Command"; Linux NVME_SC_CONNECT_*, NVME_SC_AUTH_REQUIRED).
const (
	SCConnectIncompatibleFormat = 0x80 // Connect: Incompatible Format
	SCConnectControllerBusy     = 0x81 // Connect: Controller Busy
	SCConnectInvalidParameters  = 0x82 // Connect: Connect Invalid Parameters
	SCConnectRestartDiscovery   = 0x83 // Connect: Connect Restart Discovery
	SCConnectInvalidHost        = 0x84 // Connect: Connect Invalid Host
	SCDiscoveryRestart          = 0x90 // Get Log Page (Discovery): Discovery Restart
	SCAuthenticationRequired    = 0x91 // Authentication Required
)

var connectStatusNames = [...]string{
	"Incompatible Format", "Controller Busy", "Connect Invalid Parameters",
	"Connect Restart Discovery", "Connect Invalid Host",
}

// Command specific status values of admin commands (SCT 1; Base 2.0
// "Admin Command Specific Status Values" and the tables of each command).
var adminSpecificNames = [256]string{
	0x00: "Completion Queue Invalid",
	0x01: "Invalid Queue Identifier",
	0x02: "Invalid Queue Size",
	0x03: "Abort Command Limit Exceeded",
	0x05: "Asynchronous Event Request Limit Exceeded",
	0x06: "Invalid Firmware Slot",
	0x07: "Invalid Firmware Image",
	0x08: "Invalid Interrupt Vector",
	0x09: "Invalid Log Page",
	0x0a: "Invalid Format",
	0x0b: "Firmware Activation Requires Conventional Reset",
	0x0c: "Invalid Queue Deletion",
	0x0d: "Feature Identifier Not Saveable",
	0x0e: "Feature Not Changeable",
	0x0f: "Feature Not Namespace Specific",
	0x10: "Firmware Activation Requires NVM Subsystem Reset",
	0x11: "Firmware Activation Requires Controller Level Reset",
	0x12: "Firmware Activation Requires Maximum Time Violation",
	0x13: "Firmware Activation Prohibited",
	0x14: "Overlapping Range",
	0x15: "Namespace Insufficient Capacity",
	0x16: "Namespace Identifier Unavailable",
	0x18: "Namespace Already Attached",
	0x19: "Namespace Is Private",
	0x1a: "Namespace Not Attached",
	0x1b: "Thin Provisioning Not Supported",
	0x1c: "Controller List Invalid",
	0x1d: "Device Self-test In Progress",
	0x1e: "Boot Partition Write Prohibited",
	0x1f: "Invalid Controller Identifier",
	0x20: "Invalid Secondary Controller State",
	0x21: "Invalid Number of Controller Resources",
	0x22: "Invalid Resource Identifier",
	0x23: "Sanitize Prohibited While Persistent Memory Region is Enabled",
	0x24: "ANA Group Identifier Invalid",
	0x25: "ANA Attach Failed",
}

// Command specific status values of NVM I/O commands (SCT 1; NVM Command
// Set 1.0 "NVM Command Set Specific Status Values").
var ioSpecificNames = [256]string{
	0x80: "Conflicting Attributes",
	0x81: "Invalid Protection Information",
	0x82: "Attempted Write to Read Only Range",
	0x83: "Command Size Limit Exceeded",
}

func commandSpecificName(sc, opcode uint8, admin bool, fctype FabricsType) string {
	if opcode == OpcodeFabrics {
		switch {
		case fctype == FabricsConnect && sc >= SCConnectIncompatibleFormat && sc <= SCConnectInvalidHost:
			return connectStatusNames[sc-SCConnectIncompatibleFormat]
		case sc == SCAuthenticationRequired:
			return "Authentication Required"
		}
		return ""
	}
	if admin {
		if opcode == uint8(AdminGetLogPage) && sc == SCDiscoveryRestart {
			return "Discovery Restart"
		}
		return adminSpecificNames[sc]
	}
	return ioSpecificNames[sc]
}

// Media and data integrity error values (SCT 2; Base 2.0 "Media and Data
// Integrity Error Values").
var mediaStatusNames = [256]string{
	0x80: "Write Fault",
	0x81: "Unrecovered Read Error",
	0x82: "End-to-end Guard Check Error",
	0x83: "End-to-end Application Tag Check Error",
	0x84: "End-to-end Reference Tag Check Error",
	0x85: "Compare Failure",
	0x86: "Access Denied",
	0x87: "Deallocated or Unwritten Logical Block",
	0x88: "End-to-End Storage Tag Check Error",
}

// Path related status values (SCT 3; Base 2.0 "Path Related Status
// Values").
var pathStatusNames = [256]string{
	0x00: "Internal Path Error",
	0x01: "Asymmetric Access Persistent Loss",
	0x02: "Asymmetric Access Inaccessible",
	0x03: "Asymmetric Access Transition",
	0x60: "Controller Pathing Error",
	0x70: "Host Pathing Error",
	0x71: "Command Aborted By Host",
}
