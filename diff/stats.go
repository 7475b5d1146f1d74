package diff

import (
	"math"
	"sort"
)

// Bin is one bin of a binned distribution: a Sketch bucket (its key k
// holds the values in (γ^(k-1), γ^k]; ZeroKey the values ≤ 0), or the
// index of a size bucket.
type Bin struct {
	Key   int32  `json:"key"`
	Count uint64 `json:"count"`
}

// ZeroKey is the key of a Sketch's bin of values ≤ 0, below every other.
const ZeroKey = math.MinInt32

// Bins returns the sketch's bins, in increasing order of value.
func (s *Sketch) Bins() []Bin {
	var out []Bin
	if s.zero > 0 {
		out = append(out, Bin{ZeroKey, s.zero})
	}
	for _, k := range s.keys() {
		out = append(out, Bin{k, s.buckets[k]})
	}
	return out
}

// align puts two binned samples on the union of their bins, in
// increasing order: the counts of each side, bin by bin, and the keys.
func align(a, b []Bin) (keys []int32, ca, cb []float64) {
	m := map[int32][2]float64{}
	for _, x := range a {
		v := m[x.Key]
		v[0] += float64(x.Count)
		m[x.Key] = v
	}
	for _, x := range b {
		v := m[x.Key]
		v[1] += float64(x.Count)
		m[x.Key] = v
	}
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	ca, cb = make([]float64, len(keys)), make([]float64, len(keys))
	for i, k := range keys {
		ca[i], cb[i] = m[k][0], m[k][1]
	}
	return keys, ca, cb
}

// MannWhitney is the result of a Mann-Whitney U test of two binned
// samples, every value of a bin tied with the others of it.
type MannWhitney struct {
	// N1, N2: the sizes of the base and the new sample.
	N1, N2 float64
	// U counts the pairs (base x, new y) with y > x, ties as one half.
	U float64
	// Z is the normal approximation's statistic, with the continuity
	// correction; P the two-sided p-value (1 when every value is tied).
	Z, P float64
	// Effect is the rank-biserial correlation 2U/(N1·N2) − 1, in
	// [-1, 1]: P(new > base) − P(new < base).
	Effect float64
}

// mannWhitney tests whether the new sample (b) tends to be larger or
// smaller than the base (a), on the bins both are counted in:
//
//	U = Σ_k b_k · (Σ_{j<k} a_j + a_k/2)
//	μ = n1·n2/2
//	σ² = n1·n2/12 · ((N+1) − Σ_k (t_k³ − t_k) / (N(N−1))),  t_k = a_k + b_k, N = n1+n2
//	z = (|U − μ| − ½) / σ,  p = erfc(|z|/√2)
//
// (the normal approximation with the tie correction and the continuity
// correction; scipy.stats.mannwhitneyu(method="asymptotic") computes the
// same). It assumes, as every rank test on binned data does, that values
// in one bin are equal: a bin of the Sketch is 2% wide.
func mannWhitney(a, b []Bin) MannWhitney {
	_, ca, cb := align(a, b)
	var r MannWhitney
	for i := range ca {
		r.N1 += ca[i]
		r.N2 += cb[i]
	}
	r.P = 1
	if r.N1 == 0 || r.N2 == 0 {
		return r
	}
	below, ties := 0.0, 0.0
	for i := range ca {
		r.U += cb[i] * (below + ca[i]/2)
		below += ca[i]
		t := ca[i] + cb[i]
		ties += t*t*t - t
	}
	n := r.N1 + r.N2
	mu := r.N1 * r.N2 / 2
	r.Effect = 2*r.U/(r.N1*r.N2) - 1
	v := r.N1 * r.N2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if !(v > 0) {
		return r
	}
	d := math.Abs(r.U-mu) - 0.5
	if d < 0 {
		d = 0
	}
	r.Z = d / math.Sqrt(v)
	if r.U < mu {
		r.Z = -r.Z
	}
	r.P = math.Min(1, math.Erfc(math.Abs(r.Z)/math.Sqrt2))
	return r
}

// hodgesLehmann is the Hodges-Lehmann estimate of the shift from a to b
// in bins: the median of the differences key(y) − key(x) over every pair
// (base x, new y). On a Sketch's bins, whose keys are logarithms to the
// base γ, γ^shift is the typical ratio new/base. The bin of values ≤ 0 is
// left out. ok is false without a pair.
func hodgesLehmann(a, b []Bin) (shift float64, ok bool) {
	strip := func(x []Bin) []Bin {
		if len(x) > 0 && x[0].Key == ZeroKey {
			return x[1:]
		}
		return x
	}
	a, b = strip(a), strip(b)
	if len(a) == 0 || len(b) == 0 {
		return 0, false
	}
	lo := int64(b[0].Key) - int64(a[len(a)-1].Key)
	hi := int64(b[len(b)-1].Key) - int64(a[0].Key)
	w := make([]float64, hi-lo+1)
	total := 0.0
	for _, x := range a {
		for _, y := range b {
			c := float64(x.Count) * float64(y.Count)
			w[int64(y.Key)-int64(x.Key)-lo] += c
			total += c
		}
	}
	// The median of the weighted differences: the mean of the two
	// middle ones when the count is even and they differ.
	half := total / 2
	seen := 0.0
	for i, c := range w {
		if c == 0 {
			continue
		}
		seen += c
		if seen > half {
			return float64(int64(i) + lo), true
		}
		if seen == half {
			for j := i + 1; j < len(w); j++ {
				if w[j] > 0 {
					return (float64(int64(i)+lo) + float64(int64(j)+lo)) / 2, true
				}
			}
			return float64(int64(i) + lo), true
		}
	}
	return float64(hi), true
}

// fisherExact is the two-sided p-value of Fisher's exact test of the
// 2×2 table [[x1, n1−x1], [x2, n2−x2]]: the probability, under the
// hypergeometric law of the table's margins, of a table at most as
// likely as this one.
func fisherExact(x1, n1, x2, n2 uint64) float64 {
	k := x1 + x2
	n := n1 + n2
	if n == 0 || k == 0 || k == n {
		return 1
	}
	lchoose := func(n, k uint64) float64 {
		a, _ := math.Lgamma(float64(n) + 1)
		b, _ := math.Lgamma(float64(k) + 1)
		c, _ := math.Lgamma(float64(n-k) + 1)
		return a - b - c
	}
	lp := func(i uint64) float64 { return lchoose(k, i) + lchoose(n-k, n1-i) - lchoose(n, n1) }
	obs := lp(x1)
	lo := uint64(0)
	if k > n2 {
		lo = k - n2
	}
	hi := min(k, n1)
	p := 0.0
	for i := lo; i <= hi; i++ {
		if l := lp(i); l <= obs+1e-7 {
			p += math.Exp(l)
		}
	}
	return math.Min(1, p)
}

// above counts the values of bins above the bin key.
func above(bins []Bin, key int32) uint64 {
	var n uint64
	for _, b := range bins {
		if b.Key > key {
			n += b.Count
		}
	}
	return n
}

// quantileKey is the key of the bin holding the q-quantile (nearest
// rank), as Sketch.Quantile finds it.
func quantileKey(bins []Bin, q float64) int32 {
	var n uint64
	for _, b := range bins {
		n += b.Count
	}
	rank := uint64(math.Ceil(q * float64(n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for _, b := range bins {
		seen += b.Count
		if seen >= rank {
			return b.Key
		}
	}
	if len(bins) == 0 {
		return ZeroKey
	}
	return bins[len(bins)-1].Key
}

// tailTest tests whether the two samples' upper tails differ: T is the
// bin of the lower of the two q-quantiles, and Fisher's exact test
// compares the shares of each sample above T (about 1−q of the sample
// whose quantile it is; more of the other when its tail is longer).
func tailTest(a, b []Bin, q float64) (p float64, x1, x2 uint64) {
	t := min(quantileKey(a, q), quantileKey(b, q))
	var n1, n2 uint64
	for _, x := range a {
		n1 += x.Count
	}
	for _, x := range b {
		n2 += x.Count
	}
	x1, x2 = above(a, t), above(b, t)
	return fisherExact(x1, n1, x2, n2), x1, x2
}
