package html

import "testing"

// TestMarkItems: a flagged packet goes to one arrow of its sender — of
// those whose span holds it, the one that began last — and to none when no
// arrow of its sender spans it.
func TestMarkItems(t *testing.T) {
	items := []item{
		{rows: []Row{{Kind: "rdma-read", First: 10, Last: 50, LeftToRight: true}}},
		{rows: []Row{{Kind: "rdma-read", First: 20, Last: 40, LeftToRight: true},
			{Kind: "reply", First: 30, Last: 30, LeftToRight: false},
			{Kind: "missing"}}},
	}
	marks := []lossMark{
		{num: 15, c2s: true, retx: true},            // only the first spans it
		{num: 25, c2s: true, retx: true, dup: true}, // both: the second began later
		{num: 30, c2s: false, gapOf: 3},             // the reply, the other direction
		{num: 45, c2s: true, retx: true},            // the second has ended
		{num: 60, c2s: true, retx: true},            // no arrow spans it
		{num: 35, c2s: false, retx: true},           // no arrow of its sender spans it
	}
	markItems(items, marks)
	a, b, r := items[0].rows[0], items[1].rows[0], items[1].rows[1]
	if a.Retx != 2 || a.Dup != 0 || b.Retx != 1 || b.Dup != 1 || r.Gaps != 1 || r.GapPSNs != 3 || r.Retx != 0 {
		t.Errorf("first %d/%d, second %d/%d, reply gaps %d (%d PSNs) retx %d", a.Retx, a.Dup, b.Retx, b.Dup, r.Gaps, r.GapPSNs, r.Retx)
	}
	if a.Loss != "↻ 2 retransmitted" || r.Loss != "1 gap(s), 3 missing" || items[1].rows[2].Loss != "" {
		t.Errorf("labels %q %q %q", a.Loss, r.Loss, items[1].rows[2].Loss)
	}
}
