package report

import (
	"math"
	"math/bits"
	"time"
)

// LatencyHist is a bounded log-linear histogram of durations, for the
// percentiles of `stats -z srt`: memory is fixed (histBuckets counters,
// about 8 KiB) whatever the number of samples. Values below 32 ns have a bucket
// each; above, each power of two is cut into 16 buckets, so a bucket spans
// at most 1/16 of its lower bound. A percentile is reported as the middle
// of the bucket holding the sample of that rank (clamped to the exact
// minimum and maximum): it is within 1/32 (3.2%) of the exact value of the
// sample of that rank. Count, Min, Max and Sum are exact.
type LatencyHist struct {
	Count    uint64
	Min, Max time.Duration
	Sum      time.Duration
	buckets  [histBuckets]uint64
}

const (
	histSub     = 16 // buckets per power of two
	histLinear  = 2 * histSub
	histBuckets = histLinear + (64-5)*histSub
)

// histIndex is the bucket of v (v >= 0).
func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(v) - 5 // v >> e is in [16, 32)
	return histLinear + (e-1)*histSub + int(v>>uint(e)) - histSub
}

// histBounds is the range [lo, hi] of values of bucket i.
func histBounds(i int) (lo, hi uint64) {
	if i < histLinear {
		return uint64(i), uint64(i)
	}
	j := i - histLinear
	e := j/histSub + 1
	m := uint64(j%histSub + histSub)
	lo = m << uint(e)
	return lo, lo + (1 << uint(e)) - 1
}

// Add counts one duration (a negative one as 0).
func (h *LatencyHist) Add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if h.Count == 0 || d < h.Min {
		h.Min = d
	}
	if d > h.Max {
		h.Max = d
	}
	h.Count++
	h.Sum += d
	h.buckets[histIndex(uint64(d))]++
}

// Mean is Sum / Count.
func (h *LatencyHist) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / time.Duration(h.Count)
}

// Percentile is the duration of the sample of rank ceil(p/100 * Count)
// (nearest rank), within the accuracy the type states.
func (h *LatencyHist) Percentile(p float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.Count)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, n := range h.buckets {
		seen += n
		if seen >= rank {
			lo, hi := histBounds(i)
			mid := time.Duration(lo + (hi-lo)/2)
			return min(max(mid, h.Min), h.Max)
		}
	}
	return h.Max
}
