package diff

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSketchQuantiles: the sketch's quantiles are within its stated ±1%
// of the exact nearest-rank quantiles of the samples, over six decades of
// log-normal latencies, and its buckets stay few.
func TestSketchQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Sketch
	var all []float64
	for range 100000 {
		v := math.Exp(rng.NormFloat64()*2 + 12) // ~160 µs median, in ns
		s.Add(v)
		all = append(all, v)
	}
	slices.Sort(all)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		exact := all[int(math.Ceil(q*float64(len(all))))-1]
		got := s.Quantile(q)
		if math.Abs(got-exact)/exact > sketchAlpha {
			t.Errorf("q%.3f: %g, exact %g", q, got, exact)
		}
	}
	if n := len(s.buckets); n > 1500 {
		t.Errorf("%d buckets for 100000 samples", n)
	}
	var empty Sketch
	if empty.Quantile(0.5) != 0 || empty.N() != 0 {
		t.Error("an empty sketch")
	}
}

func profile(findings map[string]int, conns ...Conn) *Profile {
	return &Profile{Connections: conns, Findings: findings}
}

// TestCompare: the rules of the comparison on hand-made profiles.
func TestCompare(t *testing.T) {
	conn := func(ackTimeout string, retrans float64) Conn {
		return Conn{Role: "roce rpcordma :20049 #1", Negotiation: []Field{{"cm.req.primary.local_ack_timeout", ackTimeout}},
			Behaviour: []Metric{{Name: "c2s retransmitted packets", Kind: KindCount, Value: retrans},
				{Name: "largest credits granted", Kind: KindExact, Value: 128}}}
	}
	tol := DefaultTolerances
	// Identical: no change.
	if c := Changes(Compare(profile(nil, conn("19", 100)), profile(nil, conn("19", 100)), tol)); len(c) != 0 {
		t.Errorf("identical: %+v", c)
	}
	// Within the count tolerance (10% of 109), and a 2 → 4 under the
	// absolute slack of 2.
	if c := Changes(Compare(profile(map[string]int{"NAK": 2}, conn("19", 100)), profile(map[string]int{"NAK": 4}, conn("19", 109)), tol)); len(c) != 0 {
		t.Errorf("within tolerance: %+v", c)
	}
	// Any negotiated difference; counts past the tolerance; a rule that
	// appears and one that disappears.
	rows := Changes(Compare(profile(map[string]int{"A": 1}, conn("19", 100)), profile(map[string]int{"B": 3}, conn("17", 120)), tol))
	want := []Row{
		{Class: Negotiation, Scope: "connection roce rpcordma :20049 #1", Name: "cm.req.primary.local_ack_timeout", Base: "19", New: "17", Changed: true},
		{Class: Behaviour, Scope: "connection roce rpcordma :20049 #1", Name: "c2s retransmitted packets", Base: "100", New: "120", Changed: true, Note: "+20% (tolerance ±12)"},
		{Class: Findings, Scope: "capture", Name: "A", Base: "1", New: "0", Changed: true, Note: "disappears"},
		{Class: Findings, Scope: "capture", Name: "B", Base: "0", New: "3", Changed: true, Note: "appears"},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("got  %+v\nwant %+v", rows, want)
	}
	// A connection on one side only.
	other := conn("19", 100)
	other.Role = "roce - :7174 #1"
	rows = Changes(Compare(profile(nil, conn("19", 100)), profile(nil, conn("19", 100), other), tol))
	if len(rows) != 1 || rows[0].Scope != "connection roce - :7174 #1" || rows[0].Class != Negotiation {
		t.Errorf("new connection: %+v", rows)
	}
}

// TestCompareLatency: a quantile changes past its tolerance, only with
// enough samples on both sides.
func TestCompareLatency(t *testing.T) {
	ex := func(p50, p99 float64, n uint64) *Profile {
		return &Profile{Exchanges: []Exchanges{{ULP: "rpcordma", Name: "READ", Metrics: []Metric{
			{Name: "latency p50", Kind: KindLatencyP50, Value: p50, Samples: n},
			{Name: "latency p99", Kind: KindLatencyP99, Value: p99, Samples: n}}}}}
	}
	tol := DefaultTolerances
	for _, tc := range []struct {
		base, nw *Profile
		changed  []string
	}{
		{ex(1e6, 5e6, 100), ex(1.19e6, 7.4e6, 100), nil},                   // +19%, +48%
		{ex(1e6, 5e6, 100), ex(1.25e6, 5e6, 100), []string{"latency p50"}}, // +25%
		{ex(1e6, 5e6, 100), ex(1e6, 8e6, 100), []string{"latency p99"}},    // +60%
		{ex(1e6, 5e6, 100), ex(0.7e6, 5e6, 100), []string{"latency p50"}},  // -30%
		{ex(1e6, 5e6, 19), ex(3e6, 9e6, 100), nil},                         // too few samples
	} {
		var got []string
		for _, r := range Changes(Compare(tc.base, tc.nw, tol)) {
			got = append(got, r.Name)
		}
		if !slices.Equal(got, tc.changed) {
			t.Errorf("%v → %v: changed %v, want %v", tc.base.Exchanges[0].Metrics, tc.nw.Exchanges[0].Metrics, got, tc.changed)
		}
	}
}
