//go:build pipestats

package dissect

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// Built with -tags pipestats, the pipeline reports on standard error what
// each of its goroutines spent: CPU time of its thread (getrusage
// RUSAGE_THREAD; the goroutine is locked to it), wall time, and the time it
// waited for the other (docs/speed.md, "The pipeline").

type pipeStat struct {
	name       string
	cpu0, wall time.Time
	cpuStart   time.Duration
	wait       time.Duration
	waits      int
	batches    int
	recs       int
	log        []string
	trace      [][3]int64
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func newPipeStat(name string) *pipeStat {
	runtime.LockOSThread()
	return &pipeStat{name: name, wall: time.Now(), cpuStart: threadCPU()}
}

func (s *pipeStat) waitStart() time.Time { return time.Now() }

func (s *pipeStat) waitEnd(t time.Time) {
	if d := time.Since(t); d > 2*time.Microsecond {
		s.waits++
		s.wait += d
		if os.Getenv("PIPESTATS_LOG") != "" {
			s.log = append(s.log, fmt.Sprintf("%d:%.0f@%.1f", s.batches, float64(d)/1e3, ms(t.Sub(s.wall))))
		}
	}
}

func (s *pipeStat) batch(n, bytes int) {
	s.batches++
	s.recs += n
	if os.Getenv("PIPESTATS_TRACE") != "" {
		s.trace = append(s.trace, [3]int64{int64(time.Since(s.wall) / time.Microsecond), int64(n), int64(bytes)})
	}
}

func (s *pipeStat) end() {
	cpu := threadCPU() - s.cpuStart
	fmt.Fprintf(os.Stderr, "pipestats %-7s cpu %6.1f ms  wall %6.1f ms  waited %6.1f ms in %5d waits  batches %5d  records %7d\n",
		s.name, ms(cpu), ms(time.Since(s.wall)), ms(s.wait), s.waits, s.batches, s.recs)
	if f := os.Getenv("PIPESTATS_TRACE"); f != "" {
		w, _ := os.Create(f + "." + s.name)
		for _, t := range s.trace {
			fmt.Fprintf(w, "%d %d %d\n", t[0], t[1], t[2])
		}
		w.Close()
	}
	if len(s.log) > 0 {
		fmt.Fprintf(os.Stderr, "pipestats %s waits (batch:µs@ms): %v\n", s.name, s.log)
	}
	runtime.UnlockOSThread()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
