package report

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// TestLatencyHistAccuracy: the histogram's percentiles are within 1/32 of
// the exact nearest-rank percentile of the samples (sorted here), its
// count, min, max and sum exact, on spreads from nanoseconds to minutes.
func TestLatencyHistAccuracy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, spread := range []float64{1e3, 1e6, 1e9, 1e11} {
		var h LatencyHist
		var xs []time.Duration
		var sum time.Duration
		for i := 0; i < 5000; i++ {
			d := time.Duration(math.Exp(rng.Float64() * math.Log(spread)))
			xs = append(xs, d)
			sum += d
			h.Add(d)
		}
		sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
		if h.Count != 5000 || h.Min != xs[0] || h.Max != xs[len(xs)-1] || h.Sum != sum {
			t.Errorf("spread %g: count %d min %v max %v sum %v; want 5000 %v %v %v", spread, h.Count, h.Min, h.Max, h.Sum, xs[0], xs[len(xs)-1], sum)
		}
		for _, p := range []float64{1, 50, 90, 99, 99.9, 100} {
			exact := xs[int(math.Ceil(p/100*5000))-1]
			got := h.Percentile(p)
			if math.Abs(float64(got-exact)) > float64(exact)/32+1 {
				t.Errorf("spread %g p%g: %v, exact %v", spread, p, got, exact)
			}
		}
	}
}

// TestHistBuckets: every value falls in a bucket whose bounds hold it,
// and the buckets tile the values in order.
func TestHistBuckets(t *testing.T) {
	prevHi := uint64(0)
	for i := 0; i < histBuckets; i++ {
		lo, hi := histBounds(i)
		if i > 0 && lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, the previous ends at %d", i, lo, prevHi)
		}
		if histIndex(lo) != i || histIndex(hi) != i {
			t.Fatalf("bucket %d [%d, %d]: indexes %d %d", i, lo, hi, histIndex(lo), histIndex(hi))
		}
		if lo >= histLinear && float64(hi-lo+1) > float64(lo)/16 {
			t.Fatalf("bucket %d [%d, %d] wider than 1/16 of its start", i, lo, hi)
		}
		prevHi = hi
	}
	if prevHi != math.MaxUint64 {
		t.Errorf("the last bucket ends at %d", prevHi)
	}
}
