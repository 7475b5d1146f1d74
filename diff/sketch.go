package diff

import (
	"math"
	"sort"
)

// sketchAlpha is the relative accuracy of a Sketch's quantiles: a
// quantile is reported within ±1% of a value at that rank.
const sketchAlpha = 0.01

// sketchGamma is the ratio of consecutive bucket bounds,
// (1+α)/(1-α) (DDSketch, Masson et al., VLDB 2019).
var sketchLogGamma = math.Log((1 + sketchAlpha) / (1 - sketchAlpha))

// maxSketchBuckets bounds a Sketch: at most this many distinct buckets
// are kept; past it the two lowest are merged (their quantiles lose
// accuracy, the high ones that latency tails are about keep it). 1 ns to
// an hour spans about 1,250 buckets at 1%, so real latencies never reach
// the bound.
const maxSketchBuckets = 2048

// Sketch is a bounded quantile sketch of positive durations (or sizes):
// logarithmic buckets of relative width 2α, so that every quantile is
// known to ±α of its true value whatever the number of samples, in memory
// that grows with the range of the values, not their count.
type Sketch struct {
	buckets map[int32]uint64
	zero    uint64 // samples <= 0
	n       uint64
}

// Add counts v.
func (s *Sketch) Add(v float64) {
	s.n++
	if !(v > 0) || math.IsInf(v, 0) {
		s.zero++
		return
	}
	if s.buckets == nil {
		s.buckets = map[int32]uint64{}
	}
	k := int32(math.Ceil(math.Log(v) / sketchLogGamma))
	s.buckets[k]++
	if len(s.buckets) > maxSketchBuckets {
		s.collapse()
	}
}

// collapse merges the lowest bucket into the next one.
func (s *Sketch) collapse() {
	keys := s.keys()
	s.buckets[keys[1]] += s.buckets[keys[0]]
	delete(s.buckets, keys[0])
}

func (s *Sketch) keys() []int32 {
	keys := make([]int32, 0, len(s.buckets))
	for k := range s.buckets {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// N is the number of samples.
func (s *Sketch) N() uint64 { return s.n }

// Quantile returns the q-quantile (0 ≤ q ≤ 1) by the nearest-rank
// method, within ±α; 0 without samples.
func (s *Sketch) Quantile(q float64) float64 {
	if s.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	if rank < 1 {
		rank = 1
	}
	if rank <= s.zero {
		return 0
	}
	seen := s.zero
	keys := s.keys()
	for _, k := range keys {
		seen += s.buckets[k]
		if seen >= rank {
			// The bucket (γ^(k-1), γ^k]: its value within α of all in it.
			return 2 * math.Exp(float64(k)*sketchLogGamma) / (1 + math.Exp(sketchLogGamma))
		}
	}
	return 2 * math.Exp(float64(keys[len(keys)-1])*sketchLogGamma) / (1 + math.Exp(sketchLogGamma))
}
