package dissect

import "time"

// Capture timestamps carry no monotonic clock reading (source makes them
// with time.Unix), so their difference and order are those of their wall
// clocks: seconds and nanoseconds. The per-packet path asks them of every
// packet (frame.time_delta, the idle clock), where time.Time's own Sub
// costs ~130 instructions (its overflow test adds the result back and
// compares) and Before a call of ~20. These give the same for such times,
// at a fraction.

// timeSub is a.Sub(b) for times without a monotonic reading (wallClock.sub).
func timeSub(a, b time.Time) time.Duration { return wallOf(a).sub(wallOf(b)) }

// wallClock is a time's wall clock, ordered (before) as time.Time.Before
// orders times without a monotonic reading.
type wallClock struct{ s, ns int64 }

func wallOf(t time.Time) wallClock { return wallClock{t.Unix(), int64(t.Nanosecond())} }

func (a wallClock) before(b wallClock) bool { return a.s < b.s || a.s == b.s && a.ns < b.ns }

// sub is a.Sub(b) of the times a and b are the wall clocks of. Within
// ±2^33 seconds of each other (272 years) the difference cannot overflow
// a Duration; beyond, Time.Sub saturates as it does.
func (a wallClock) sub(b wallClock) time.Duration {
	if ds := a.s - b.s; ds > -1<<33 && ds < 1<<33 {
		return time.Duration(ds*1e9 + a.ns - b.ns)
	}
	return time.Unix(a.s, a.ns).Sub(time.Unix(b.s, b.ns))
}
