package check

import "encoding/binary"

// A released connection's check results are kept to the end of the input
// for the final report. As CheckResults they take 88 bytes per rule (4 KB
// a connection with every rule enabled), most of it counts that are 0 and
// reasons every connection shares; packed they take a few bytes per rule,
// and Runner.Finish unpacks them (docs/streaming.md, issue 14).
//
// Row i is rule i of the runner's rules: its status and worst severity, a
// reason code (packEmpty, packWaits, packNoEvidence, or packText
// followed by the text), then Checked, Findings, Omitted, NotEvaluated and
// Suppressed as varints.

const (
	packEmpty = iota
	packWaits
	packNoEvidence
	packText
)

// pack replaces cr.Checks by their packed form when every row is the rule
// of the same place in rules (it is so for every connection but 0).
func (cr *ConnResult) pack(rules []*Rule) {
	b := PackChecks(cr.Checks, rules)
	if b == nil {
		return
	}
	if cap(b) > len(b) {
		b = append([]byte(nil), b...) // kept to the end: sized exactly
	}
	cr.packed, cr.packedRules, cr.Checks = b, rules, nil
}

// unpack restores cr.Checks from their packed form.
func (cr *ConnResult) unpack() {
	if cr.packed == nil {
		return
	}
	cr.Checks, cr.packed, cr.packedRules = UnpackChecks(cr.packed, cr.packedRules), nil, nil
}

// PackChecks returns checks in the packed form above, a few bytes a rule;
// nil when they are not one per rule of rules, in order. report's spill
// keeps a released connection's checks so (issue 14).
func PackChecks(checks []CheckResult, rules []*Rule) []byte {
	if len(checks) == 0 || len(checks) != len(rules) {
		return nil
	}
	b := make([]byte, 0, 8*len(checks))
	for i := range checks {
		ch, ru := &checks[i], rules[i]
		if ch.Rule != ru.ID {
			return nil
		}
		b = append(b, byte(ch.Status), byte(ch.Worst))
		switch ch.Reason {
		case "":
			b = append(b, packEmpty)
		case ru.waitsText():
			b = append(b, packWaits)
		case ru.noEvidenceText():
			b = append(b, packNoEvidence)
		default:
			b = append(b, packText)
			b = binary.AppendUvarint(b, uint64(len(ch.Reason)))
			b = append(b, ch.Reason...)
		}
		for _, n := range [...]int{ch.Checked, ch.Findings, ch.Omitted, ch.NotEvaluated, ch.Suppressed} {
			b = binary.AppendVarint(b, int64(n))
		}
	}
	return b
}

// UnpackChecks restores the checks PackChecks packed with the same rules.
func UnpackChecks(b []byte, rules []*Rule) []CheckResult {
	checks := make([]CheckResult, len(rules))
	for i, ru := range rules {
		ch := &checks[i]
		ch.Rule = ru.ID
		ch.Status, ch.Worst = Status(b[0]), Severity(b[1])
		code := b[2]
		b = b[3:]
		switch code {
		case packWaits:
			ch.Reason = ru.waitsText()
		case packNoEvidence:
			ch.Reason = ru.noEvidenceText()
		case packText:
			n, k := binary.Uvarint(b)
			ch.Reason = string(b[k : k+int(n)])
			b = b[k+int(n):]
		}
		for _, p := range [...]*int{&ch.Checked, &ch.Findings, &ch.Omitted, &ch.NotEvaluated, &ch.Suppressed} {
			v, k := binary.Varint(b)
			*p = int(v)
			b = b[k:]
		}
	}
	return checks
}
