package check

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

func TestSeverity(t *testing.T) {
	if !(Info < Warning && Warning < Error) {
		t.Fatal("severities are not ordered")
	}
	for _, s := range []Severity{Info, Warning, Error} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Severity
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%s: round trip gave %v, %v", b, back, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("ParseSeverity accepted fatal")
	}
	if _, err := Severity(0).MarshalText(); err == nil {
		t.Error("the zero Severity marshalled")
	}
}

// TestTable checks the rule list every report reads: IDs are unique and
// upper case, every rule has a severity, a reference, a summary, an
// explanation and a way to be evaluated, and the IDs of the project's list
// (shared/specs/conformance-rules.md) are all there.
func TestTable(t *testing.T) {
	listed := []string{"PD-FORMAT", "PD-RESERVED", "PD-SIZE-RANGE", "PD-ABSENT", "THRESH-C2S", "THRESH-S2C", "CM-REJ",
		"INV-NOT-NEGOTIATED", "INV-WRONG-DIRECTION", "INV-FOREIGN-STAG", "INV-USAGE",
		"HDR-VERSION", "HDR-PROC", "HDR-TRUNCATED", "HDR-XID-MISMATCH", "CREDIT-ZERO", "CREDIT-OVERRUN",
		"CHUNK-READ-IN-REPLY", "CHUNK-READ-POSITION", "CHUNK-LONG-CALL", "CHUNK-LONG-REPLY", "CHUNK-REPLY-ECHO",
		"CHUNK-DDP-ELIGIBLE", "CHUNK-NFS4-PAIRING", "CHUNK-UNNEEDED", "CHUNK-MISSING-REPLY", "CHUNK-ROUNDUP",
		"RDMA-READ-UNADVERTISED", "RDMA-WRITE-UNADVERTISED", "RDMA-AFTER-REPLY", "RDMA-BY-REQUESTER",
		"ICRC-BAD", "MPA-CRC-BAD", "MPA-MARKERS", "PSN-GAP", "NAK"}
	for _, id := range listed {
		r, ok := Lookup(id)
		if !ok {
			t.Errorf("%s is missing", id)
			continue
		}
		if r.Added {
			t.Errorf("%s is in the project's list but marked Added", id)
		}
	}
	for _, r := range Rules() {
		if r.ID != strings.ToUpper(r.ID) || strings.ContainsAny(r.ID, " *?[") {
			t.Errorf("%q: IDs are upper case without glob characters", r.ID)
		}
		if r.Severity < Info || r.Severity > Error || r.Reference == "" || r.Summary == "" || r.Evidence == "" || len(r.Explanation) < 100 {
			t.Errorf("%s: incomplete row", r.ID)
		}
		if r.Packet == nil && r.ULPMessage == nil && r.RDMAOp == nil && r.End == nil && r.Waits == "" {
			t.Errorf("%s: nothing evaluates it", r.ID)
		}
		if !r.Added && !slices.Contains(listed, r.ID) {
			t.Errorf("%s: not in the project's list, so it must be marked Added", r.ID)
		}
	}
}

func TestSelect(t *testing.T) {
	ids := func(rs []*Rule) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	all, err := Select(nil, nil)
	if err != nil || len(all) != len(Rules()) {
		t.Fatalf("Select(nil, nil) = %d rules, %v", len(all), err)
	}
	got, err := Select([]string{"inv-*"}, []string{"INV-USAGE"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"INV-NOT-NEGOTIATED", "INV-WRONG-DIRECTION", "INV-FOREIGN-STAG", "INV-V2-HANDLE"}; !slices.Equal(ids(got), want) {
		t.Errorf("inv-* minus INV-USAGE = %v, want %v", ids(got), want)
	}
	got, err = Select(nil, []string{"CHUNK-*,RDMA-*"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(got) {
		if strings.HasPrefix(id, "CHUNK-") || strings.HasPrefix(id, "RDMA-") {
			t.Errorf("%s survived --disable CHUNK-*,RDMA-*", id)
		}
	}
	for _, bad := range []string{"NOPE-*", "THRESH", "[x"} {
		if _, err := Select([]string{bad}, nil); err == nil {
			t.Errorf("Select(%q) did not fail", bad)
		}
	}
}

func TestReportBounds(t *testing.T) {
	r := NewRunner(Config{MaxFindings: 2, MaxPackets: 3})
	c := r.conn(&dissect.Connection{ID: 7})
	c.cur = byID["NAK"].index + 1
	for i := 0; i < 5; i++ {
		c.Report(Finding{Packets: []int{1, 2, 3, 4, 5}, Message: "x", Severity: Error})
	}
	s := c.curState()
	if len(s.findings) != 2 || s.total != 5 || r.omitted != 3 {
		t.Fatalf("kept %d, total %d, omitted %d; want 2, 5, 3", len(s.findings), s.total, r.omitted)
	}
	f := s.findings[0]
	if len(f.Packets) != 3 || f.PacketsOmitted != 2 {
		t.Errorf("packets %v, %d omitted; want 3 kept, 2 omitted", f.Packets, f.PacketsOmitted)
	}
	if f.Severity != Warning || f.Rule != "NAK" || f.Connection != 7 || f.Reference == "" {
		t.Errorf("finding not filled from its rule: %+v (a rule may lower its severity, not raise it)", f)
	}
}

func TestPSNDiff(t *testing.T) {
	for _, tc := range []struct {
		a, b uint32
		want int32
	}{
		{5, 3, 2}, {3, 5, -2}, {0, psnMask, 1}, {psnMask, 0, -1}, {1 << 23, 0, -(1 << 23)},
	} {
		if got := psnDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("psnDiff(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
