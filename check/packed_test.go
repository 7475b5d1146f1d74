package check

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// A released connection's packed check results unpack to the same rows:
// every reason form, counts of every size (negative ones too, which no rule
// gives but varints carry), every status and severity.
func TestPackedChecksRoundTrip(t *testing.T) {
	rules := Rules()
	cr := &ConnResult{ID: 7, Checks: make([]CheckResult, len(rules))}
	for i, ru := range rules {
		ch := &cr.Checks[i]
		ch.Rule = ru.ID
		ch.Status = Status(1 + i%3)
		ch.Worst = Severity(i % 4)
		switch i % 5 {
		case 1:
			ch.Reason = ru.waitsText()
		case 2:
			ch.Reason = ru.noEvidenceText()
		case 3:
			ch.Reason = "3 not evaluated: something; 1 not evaluated: ñ other"
		case 4:
			ch.Reason = string(make([]byte, 300)) // a length of two varint bytes
		}
		ch.Checked = i * 1000003
		ch.Findings = i
		ch.Omitted = i % 2 * 100
		ch.NotEvaluated = math.MaxInt >> (i % 63)
		ch.Suppressed = -i
	}
	want := append([]CheckResult(nil), cr.Checks...)
	cr.pack(rules)
	if cr.Checks != nil || cr.packed == nil {
		t.Fatalf("not packed: %d rows, %d bytes", len(cr.Checks), len(cr.packed))
	}
	cr.unpack()
	if !reflect.DeepEqual(cr.Checks, want) {
		for i := range want {
			if !reflect.DeepEqual(cr.Checks[i], want[i]) {
				t.Errorf("row %d: unpacked %+v, want %+v", i, cr.Checks[i], want[i])
			}
		}
		t.FailNow()
	}
	if cr.packed != nil || cr.packedRules != nil {
		t.Error("packed form kept after unpack")
	}
	cr.unpack() // again: nothing to do
	if !reflect.DeepEqual(cr.Checks, want) {
		t.Error("second unpack changed the rows")
	}
}

// Rows that are not the runner's rules in order stay as they are.
func TestPackedChecksOnlyInRuleOrder(t *testing.T) {
	rules := Rules()[:3]
	rows := []CheckResult{{Rule: rules[1].ID}, {Rule: rules[0].ID}, {Rule: rules[2].ID}}
	cr := &ConnResult{Checks: rows}
	cr.pack(rules)
	if cr.packed != nil || len(cr.Checks) != 3 {
		t.Errorf("rows out of rule order were packed")
	}
	cr = &ConnResult{Checks: rows[:2]}
	cr.pack(rules)
	if cr.packed != nil {
		t.Errorf("fewer rows than rules were packed")
	}
}

// What a connection usually has — shared reasons, counts below 64 — packs
// into 8 bytes a rule (2 of status and severity, 1 of reason, 5 of counts),
// not 88.
func TestPackedChecksSize(t *testing.T) {
	rules := Rules()
	cr := &ConnResult{Checks: make([]CheckResult, len(rules))}
	for i, ru := range rules {
		cr.Checks[i] = CheckResult{Rule: ru.ID, Status: StatusNotEvaluated, Reason: ru.noEvidenceText(), Checked: i % 60}
	}
	cr.pack(rules)
	if n := len(cr.packed); n != 8*len(rules) {
		t.Errorf("packed into %d bytes for %d rules, want %d", n, len(rules), 8*len(rules))
	}
}

// The connections' findings share Result.Findings' array (Runner.Finish);
// after a baseline removed some in place, each connection's findings are
// still its own, in the order of Result.Findings.
func TestFindingsSharedAfterBaseline(t *testing.T) {
	for _, f := range realCaptures(t) {
		rules := map[string]bool{}
		for _, fd := range runFile(t, f, Config{}).Findings {
			rules[fd.Rule] = true
		}
		for rule := range rules {
			res := runFile(t, f, Config{})
			before := slices.Clone(res.Findings)
			b := &Baseline{Entries: []BaselineEntry{{Rule: rule}}}
			n := b.Apply(res)
			var want []Finding
			for _, fd := range before {
				if fd.Rule != rule {
					want = append(want, fd)
				}
			}
			if n == 0 || !reflect.DeepEqual(res.Findings, want) && len(want)+len(res.Findings) > 0 {
				t.Fatalf("%s, baseline %s: %d suppressed, %d of %d findings left, want %d", f, rule, n, len(res.Findings), len(before), len(want))
			}
			for _, cr := range res.Connections {
				var own []Finding
				for _, fd := range res.Findings {
					if fd.Connection == cr.ID {
						own = append(own, fd)
					}
				}
				if got := cr.Findings(); len(got)+len(own) > 0 && !reflect.DeepEqual(got, own) {
					t.Errorf("%s, baseline %s: connection %d's findings are not its own: %d, want %d", f, rule, cr.ID, len(got), len(own))
				}
			}
		}
	}
}
