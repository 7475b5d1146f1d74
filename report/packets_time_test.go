package report

import (
	"math/rand"
	"strconv"
	"testing"
	"time"
)

// TestAppendSeconds6: the summary line's time column, from integer
// nanoseconds, is strconv.AppendFloat's %.6f of Duration.Seconds on a
// million random times over the whole fast range, next to the rounding
// ties (…499, …500, …501 ns), at the edges, and negative.
func TestAppendSeconds6(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	check := func(d time.Duration) {
		want := string(strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64))
		if got := string(appendSeconds6(nil, d)); got != want {
			t.Fatalf("%d ns: %q, AppendFloat %q", int64(d), got, want)
		}
	}
	for _, d := range []time.Duration{0, 1, 499, 500, 501, 999, 1000, 999999499, 999999500, 999999501, time.Second,
		1<<20*time.Second - 1, 1 << 20 * time.Second, -1, -500, -time.Second, 1 << 62} {
		check(d)
	}
	for range 1000000 {
		d := time.Duration(rng.Int63n(int64(1 << 20 * time.Second)))
		check(d)
		check(d - d%1000 + 499)
		check(d - d%1000 + 500)
		check(d - d%1000 + 501)
	}
	for range 10000 {
		check(time.Duration(rng.Int63n(int64(10 * time.Second))))
	}
}
