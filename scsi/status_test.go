package scsi

import "testing"

// TestStatus: the names are tshark's (its scsi.status value strings, as
// its Info column prints them), and only GOOD and CONDITION MET complete
// a command (SAM-5 section 5.3).
func TestStatus(t *testing.T) {
	for s, want := range map[Status]string{0x00: "Good", 0x02: "Check Condition", 0x04: "Condition Met", 0x08: "Busy",
		0x18: "Reservation Conflict", 0x28: "Task Set Full", 0x30: "ACA Active", 0x40: "Task Aborted", 0x7e: "Unknown (0x7e)"} {
		if got := s.String(); got != want {
			t.Errorf("%#x: %q, want %q", uint8(s), got, want)
		}
		if ok := s.Success(); ok != (s == StatusGood || s == StatusConditionMet) {
			t.Errorf("%#x: Success %v", uint8(s), ok)
		}
	}
}
