package check

import (
	"bytes"
	"testing"
)

// TestBaselineOrderOfConnections: the baseline check --write-baseline
// writes does not depend on the order its connections' findings come in
// (check's spill records the connections that closed during the read
// after the others): each entry's example is the finding of the lowest
// connection ID, then the first of that connection, and entries that sort
// alike (same rule, endpoints and key, other transport or service port)
// are listed in the order of their first findings. It fails when the last
// example recorded is kept, or when the entries alike are left in the
// order they were recorded (both tried).
func TestBaselineOrderOfConnections(t *testing.T) {
	find := func(rule, key, msg string) Finding { return Finding{Rule: rule, Key: key, Message: msg} }
	conns := []struct {
		id        int
		transport string
		port      uint16
		findings  []Finding
	}{
		{1, "roce", 20049, []Finding{find("INV-USAGE", "", "conn 1 usage"), find("PSN-GAP", "retransmission", "conn 1 gap")}},
		{2, "iwarp", 20049, []Finding{find("INV-USAGE", "", "conn 2 usage")}},
		{3, "roce", 2050, []Finding{find("INV-USAGE", "", "conn 3 usage"), find("PSN-GAP", "retransmission", "conn 3 gap")}},
		{4, "roce", 20049, []Finding{find("PSN-GAP", "retransmission", "conn 4 gap"), find("INV-USAGE", "", "conn 4 usage")}},
	}
	write := func(order []int) string {
		var b Baseline
		for _, i := range order {
			c := conns[i]
			b.AddFindings(c.id, c.transport, "192.0.2.2", "192.0.2.1", c.port, c.findings)
		}
		b.Add(&Result{})
		var out bytes.Buffer
		if err := b.Write(&out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := write([]int{0, 1, 2, 3})
	for _, order := range [][]int{{3, 2, 1, 0}, {2, 0, 3, 1}, {1, 3, 0, 2}} {
		if got := write(order); got != want {
			t.Fatalf("connections in order %v:\n%s\nin ID order:\n%s", order, got, want)
		}
	}
	if !bytes.Contains([]byte(want), []byte(`"example": "conn 1 usage"`)) || !bytes.Contains([]byte(want), []byte(`"count": 2`)) {
		t.Fatalf("unexpected baseline:\n%s", want)
	}
}
