// Package scsi holds what the SCSI transports rdmashark decodes (iSER's
// iSCSI, SRP) share of SCSI itself: the status a command completes with
// (SAM-5). Standard library only.
package scsi

// Status is a SCSI command's status (SAM-5 section 5.3, "Status codes"):
// an iSCSI SCSI Response's Status, an SRP_RSP's STATUS.
type Status uint8

// The SCSI status codes (SAM-5 section 5.3).
const (
	StatusGood                Status = 0x00
	StatusCheckCondition      Status = 0x02
	StatusConditionMet        Status = 0x04
	StatusBusy                Status = 0x08
	StatusReservationConflict Status = 0x18
	StatusTaskSetFull         Status = 0x28
	StatusACAActive           Status = 0x30
	StatusTaskAborted         Status = 0x40
)

// Success reports a status that completes the command: GOOD or CONDITION
// MET.
func (s Status) Success() bool { return s == StatusGood || s == StatusConditionMet }

// String names the status as tshark's Info column does ("Good", "Check
// Condition").
func (s Status) String() string {
	switch s {
	case StatusGood:
		return "Good"
	case StatusCheckCondition:
		return "Check Condition"
	case StatusConditionMet:
		return "Condition Met"
	case StatusBusy:
		return "Busy"
	case StatusReservationConflict:
		return "Reservation Conflict"
	case StatusTaskSetFull:
		return "Task Set Full"
	case StatusACAActive:
		return "ACA Active"
	case StatusTaskAborted:
		return "Task Aborted"
	}
	const hexd = "0123456789abcdef"
	return "Unknown (0x" + string([]byte{hexd[s>>4], hexd[s&0xf]}) + ")"
}
