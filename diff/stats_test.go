package diff

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func binsOf(vals ...int32) []Bin {
	m := map[int32]uint64{}
	for _, v := range vals {
		m[v]++
	}
	var out []Bin
	for k, n := range m {
		out = append(out, Bin{k, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// TestMannWhitneyByHand: base {1,2,2,3}, new {2,3,3,4,5}, computed by
// hand. Pairs (x, y) with y > x, ties one half: x=1: 5; x=2 (twice):
// 4 + ½ each, 9; x=3: 2 + ½·2, 3 — U = 17 (scipy's U1 of the base is
// 4·5 − 17 = 3). μ = 10; ties of 3 values at 2 and at 3: Σ(t³−t) = 48,
// σ² = 20/12 · (10 − 48/72) = 15.5556; z = (7 − ½)/3.94405 = 1.64805;
// p = erfc(1.64805/√2) = 0.09934 (computed with Python 3.11's
// math.erfc, not with this code; scipy is not installed here).
func TestMannWhitneyByHand(t *testing.T) {
	r := mannWhitney(binsOf(1, 2, 2, 3), binsOf(2, 3, 3, 4, 5))
	if r.U != 17 || r.N1 != 4 || r.N2 != 5 {
		t.Fatalf("U %v, n %v %v", r.U, r.N1, r.N2)
	}
	if math.Abs(r.Z-1.64805) > 1e-5 || math.Abs(r.P-0.09934) > 1e-5 {
		t.Errorf("z %.6f p %.6f, by hand 1.64805 and 0.09934", r.Z, r.P)
	}
	if math.Abs(r.Effect-0.7) > 1e-12 { // 2·17/20 − 1
		t.Errorf("effect %v", r.Effect)
	}
	// Every value tied: nothing to test.
	if r := mannWhitney(binsOf(3, 3), binsOf(3, 3, 3)); r.P != 1 {
		t.Errorf("all tied: p %v", r.P)
	}
}

// TestMannWhitneyAgainstRanks: on random binned samples, U and σ² from
// the bins equal what the textbook computes from the raw values — U by
// counting every pair, σ² as the permutation variance of the new
// sample's midrank sum, n1·n2/(N(N−1)) · Σ (R_i − (N+1)/2)² — another
// computation than the tie-corrected formula mannWhitney uses.
func TestMannWhitneyAgainstRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 50 {
		n1, n2 := 5+rng.IntN(60), 5+rng.IntN(60)
		spread := 1 + rng.IntN(12)
		var a, b []int32
		for range n1 {
			a = append(a, int32(rng.IntN(spread)))
		}
		for range n2 {
			b = append(b, int32(rng.IntN(spread)+rng.IntN(3)))
		}
		var u float64
		for _, x := range a {
			for _, y := range b {
				switch {
				case y > x:
					u++
				case y == x:
					u += 0.5
				}
			}
		}
		all := append(slices.Clone(a), b...)
		slices.Sort(all)
		mid := map[int32]float64{}
		for i := 0; i < len(all); {
			j := i
			for j < len(all) && all[j] == all[i] {
				j++
			}
			mid[all[i]] = float64(i+1+j) / 2
			i = j
		}
		N := float64(n1 + n2)
		var ss float64
		for _, v := range all {
			d := mid[v] - (N+1)/2
			ss += d * d
		}
		v := float64(n1*n2) / (N * (N - 1)) * ss
		r := mannWhitney(binsOf(a...), binsOf(b...))
		if r.U != u {
			t.Fatalf("trial %d: U %v, by pairs %v", trial, r.U, u)
		}
		if v == 0 {
			if r.P != 1 {
				t.Errorf("trial %d: all tied, p %v", trial, r.P)
			}
			continue
		}
		z := math.Max(0, math.Abs(u-float64(n1*n2)/2)-0.5) / math.Sqrt(v)
		if math.Abs(math.Abs(r.Z)-z) > 1e-9 {
			t.Errorf("trial %d: z %v, from midranks %v", trial, r.Z, z)
		}
	}
}

// TestHodgesLehmann: the median of pairwise differences, by hand and
// against every pair listed.
func TestHodgesLehmann(t *testing.T) {
	// Differences of {1,2} and {4,6}: 3,5,2,4 → median of 4 values
	// (2,3,4,5) = 3.5.
	if s, ok := hodgesLehmann(binsOf(1, 2), binsOf(4, 6)); !ok || s != 3.5 {
		t.Errorf("shift %v", s)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 30 {
		var a, b []int32
		for range 1 + rng.IntN(30) {
			a = append(a, int32(rng.IntN(40)))
		}
		for range 1 + rng.IntN(30) {
			b = append(b, int32(rng.IntN(40)+10))
		}
		var d []float64
		for _, x := range a {
			for _, y := range b {
				d = append(d, float64(y-x))
			}
		}
		slices.Sort(d)
		want := d[len(d)/2]
		if len(d)%2 == 0 {
			want = (d[len(d)/2-1] + d[len(d)/2]) / 2
		}
		if s, _ := hodgesLehmann(binsOf(a...), binsOf(b...)); s != want {
			t.Errorf("shift %v, median of the %d differences %v", s, len(d), want)
		}
	}
}

// TestFisherExact: Fisher's tea-tasting table [[3,1],[1,3]]: two-sided
// p = 34/70 = 0.4857 (the lady tasting tea, Fisher 1935); and a
// lopsided one by hand: [[0,10],[5,5]]: P(x1=0) = C(5,0)C(15,10)/C(20,10)
// = 3003/184756, and the table x1=5 is as likely, p = 6006/184756.
func TestFisherExact(t *testing.T) {
	if p := fisherExact(3, 4, 1, 4); math.Abs(p-34.0/70) > 1e-9 {
		t.Errorf("tea: p %v, want %v", p, 34.0/70)
	}
	if p := fisherExact(0, 10, 5, 10); math.Abs(p-6006.0/184756) > 1e-9 {
		t.Errorf("[[0,10],[5,5]]: p %v, want %v", p, 6006.0/184756)
	}
	if p := fisherExact(0, 10, 0, 10); p != 1 {
		t.Errorf("nothing above: p %v", p)
	}
}

// TestLatencyDistribution: log-normal latencies, each a sketch; the same
// law again is no change, ×1.03 is significant with 20,000 samples but
// below the minimum effect, ×1.30 is a change; with 25 samples a ×1.30
// shift of a wide law is noise.
func TestLatencyDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sk := func(n int, f, sigma float64) Metric {
		var s Sketch
		for range n {
			s.Add(f * math.Exp(rng.NormFloat64()*sigma+12))
		}
		return Metric{Name: "latency distribution", Kind: KindLatencyDist, Value: float64(n), Samples: s.N(), Bins: s.Bins()}
	}
	tol := DefaultTolerances
	base := sk(20000, 1, 0.5)
	for _, tc := range []struct {
		nw      Metric
		changed bool
		sig     bool
	}{
		{sk(20000, 1, 0.5), false, false},
		{sk(20000, 1.03, 0.5), false, true},
		{sk(20000, 1.30, 0.5), true, true},
		{sk(20000, 0.70, 0.5), true, true},
	} {
		ch, note := distributionChanged(base, tc.nw, tol)
		mw := mannWhitney(base.Bins, tc.nw.Bins)
		if ch != tc.changed || (mw.P < tol.Alpha) != tc.sig {
			t.Errorf("changed %v (%s), p %v; want changed %v, significant %v", ch, note, mw.P, tc.changed, tc.sig)
		}
	}
	small := sk(25, 1, 2)
	if ch, note := distributionChanged(small, sk(25, 1.3, 2), tol); ch {
		t.Errorf("25 samples of a wide law, ×1.3: %s", note)
	}
}

// TestSizeDistribution: a size histogram changes when its shift is both
// significant and at least SizeEffect: half and half against a quarter
// and three quarters (effect 0.25: P(new > base) = ½·¾ = 0.375,
// P(new < base) = ½·¼ = 0.125); not the same shares again, nor a 1%
// shift of a huge histogram (significant, effect 0.01).
func TestSizeDistribution(t *testing.T) {
	h := func(counts ...uint64) Metric {
		var bins []Bin
		var n uint64
		for i, c := range counts {
			bins = append(bins, Bin{int32(i), c})
			n += c
		}
		return Metric{Kind: KindSizeDist, Value: float64(n), Samples: n, Bins: bins}
	}
	tol := DefaultTolerances
	for _, tc := range []struct {
		b, n    Metric
		changed bool
	}{
		{h(100, 100), h(100, 100), false},
		{h(100, 100), h(50, 150), true},
		{h(50000, 50000), h(49000, 51000), false},
	} {
		ch, note := sizeDistChanged(tc.b, tc.n, tol)
		if ch != tc.changed {
			t.Errorf("%v → %v: changed %v (%s)", tc.b.Bins, tc.n.Bins, ch, note)
		}
	}
	if mw := mannWhitney(h(100, 100).Bins, h(50, 150).Bins); math.Abs(mw.Effect-0.25) > 1e-12 {
		t.Errorf("effect %v, by hand 0.25", mw.Effect)
	}
	if mw := mannWhitney(h(50000, 50000).Bins, h(49000, 51000).Bins); mw.P > 0.01 {
		t.Errorf("a 1%% shift of 100,000: p %v, want significant", mw.P)
	}
}
