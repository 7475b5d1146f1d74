package roce

import (
	"fmt"
	"time"
)

// Syndrome is the AETH syndrome byte (IBA Vol 1 §9.3.5, Table "AETH
// Syndrome field"): bit 7 reserved, bits 6-5 the kind (ACK, RNR NAK,
// reserved, NAK), bits 4-0 a value whose meaning depends on the kind —
// credit count for ACK (end-to-end flow control, §9.7), RNR timer for RNR
// NAK (Table 45), NAK code for NAK.
type Syndrome uint8

// AckKind is bits 6-5 of the AETH syndrome.
type AckKind uint8

// AETH syndrome kinds (§9.3.5).
const (
	AckKindACK      AckKind = 0 // 00: ACK
	AckKindRNRNAK   AckKind = 1 // 01: receiver not ready NAK
	AckKindReserved AckKind = 2 // 10: reserved
	AckKindNAK      AckKind = 3 // 11: NAK
)

func (k AckKind) String() string {
	switch k {
	case AckKindACK:
		return "ACK"
	case AckKindRNRNAK:
		return "RNR NAK"
	case AckKindNAK:
		return "NAK"
	case AckKindReserved:
		return "reserved"
	}
	return fmt.Sprintf("AckKind(%d)", uint8(k))
}

// NAKCode is the value of a NAK syndrome (bits 4-0 with kind NAK;
// §9.3.5, Table "AETH Syndrome field").
type NAKCode uint8

// NAK codes.
const (
	NAKPSNSequenceError       NAKCode = 0
	NAKInvalidRequest         NAKCode = 1
	NAKRemoteAccessError      NAKCode = 2
	NAKRemoteOperationalError NAKCode = 3
	NAKInvalidRDRequest       NAKCode = 4
)

var nakNames = [...]string{
	NAKPSNSequenceError:       "PSN sequence error",
	NAKInvalidRequest:         "invalid request",
	NAKRemoteAccessError:      "remote access error",
	NAKRemoteOperationalError: "remote operational error",
	NAKInvalidRDRequest:       "invalid RD request",
}

func (c NAKCode) String() string {
	if int(c) < len(nakNames) {
		return nakNames[c]
	}
	return fmt.Sprintf("reserved NAK code %d", uint8(c))
}

// RNRTimer is the 5-bit RNR NAK timer code (IBA Vol 1 Table 45, "RNR NAK
// timer field encodings"): how long the requester waits before retrying.
type RNRTimer uint8

// rnrMicros is Table 45 in microseconds; code 0 is the longest, 655.36 ms.
var rnrMicros = [32]int64{
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// Duration is the time value the code stands for.
func (t RNRTimer) Duration() time.Duration {
	return time.Duration(rnrMicros[t&0x1F]) * time.Microsecond
}

// String gives the value in milliseconds as the table does, e.g. "1.28 ms".
func (t RNRTimer) String() string {
	us := rnrMicros[t&0x1F]
	return fmt.Sprintf("%d.%02d ms", us/1000, (us%1000)/10)
}

// creditCounts is the end-to-end flow control credit count encoding (§9.7,
// table of AETH credit count encodings); code 31 means the
// responder gives no credit information ("invalid").
var creditCounts = [31]int{
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
}

// CreditCodeInvalid is the ACK credit count code that carries no credit
// information.
const CreditCodeInvalid = 0x1F

// Kind returns bits 6-5.
func (s Syndrome) Kind() AckKind { return AckKind(s>>5) & 0x3 }

// Value returns bits 4-0: the credit code, RNR timer or NAK code.
func (s Syndrome) Value() uint8 { return uint8(s) & 0x1F }

// Reserved returns bit 7, which must be zero.
func (s Syndrome) Reserved() bool { return s&0x80 != 0 }

// IsACK, IsRNRNAK and IsNAK test the kind.
func (s Syndrome) IsACK() bool    { return s.Kind() == AckKindACK }
func (s Syndrome) IsRNRNAK() bool { return s.Kind() == AckKindRNRNAK }
func (s Syndrome) IsNAK() bool    { return s.Kind() == AckKindNAK }

// CreditCode is the 5-bit credit count code of an ACK.
func (s Syndrome) CreditCode() uint8 { return s.Value() }

// Credits decodes the credit count of an ACK; ok is false for code 0x1F
// (invalid) and for syndromes that are not ACKs.
func (s Syndrome) Credits() (n int, ok bool) {
	if !s.IsACK() || s.Value() == CreditCodeInvalid {
		return 0, false
	}
	return creditCounts[s.Value()], true
}

// RNRTimer is the timer code of an RNR NAK.
func (s Syndrome) RNRTimer() RNRTimer { return RNRTimer(s.Value()) }

// NAKCode is the code of a NAK.
func (s Syndrome) NAKCode() NAKCode { return NAKCode(s.Value()) }

// String, e.g. "ACK credits 6 (code 5)", "ACK credits invalid (code 31)",
// "RNR NAK timer 1.28 ms (code 14)", "NAK PSN sequence error". Every ACK
// has one (dissect's summary line prints it), so the 256 are made once.
func (s Syndrome) String() string { return syndromeNames[s] }

var syndromeNames = func() (n [256]string) {
	for i := range n {
		n[i] = Syndrome(i).format()
	}
	return n
}()

func (s Syndrome) format() string {
	switch s.Kind() {
	case AckKindACK:
		if n, ok := s.Credits(); ok {
			return fmt.Sprintf("ACK credits %d (code %d)", n, s.Value())
		}
		return fmt.Sprintf("ACK credits invalid (code %d)", s.Value())
	case AckKindRNRNAK:
		return fmt.Sprintf("RNR NAK timer %s (code %d)", s.RNRTimer(), s.Value())
	case AckKindNAK:
		return "NAK " + s.NAKCode().String()
	}
	return fmt.Sprintf("reserved syndrome 0x%02x", uint8(s))
}
