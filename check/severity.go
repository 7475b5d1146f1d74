package check

import "fmt"

// Severity is how much a finding matters. Severities are ordered: a gate
// fails on findings at or above a chosen severity (--fail-on).
type Severity uint8

const (
	// Info: a fact worth knowing (what was negotiated, how it was used, an
	// efficiency hint); never a violation.
	Info Severity = iota + 1
	// Warning: something the specs discourage or that hides evidence
	// (reserved bits set, a zero credit grant, a gap in the capture).
	Warning
	// Error: a MUST of a spec broken on the wire.
	Error
)

var severityNames = [...]string{Info: "info", Warning: "warning", Error: "error"}

func (s Severity) String() string {
	if s >= Info && s <= Error {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// MarshalText makes a Severity appear by name in JSON.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Info || s > Error {
		return nil, fmt.Errorf("check: invalid severity %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity by name (baselines, flags).
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads "info", "warning" or "error".
func ParseSeverity(name string) (Severity, error) {
	for s := Info; s <= Error; s++ {
		if severityNames[s] == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q: want info, warning or error", name)
}
