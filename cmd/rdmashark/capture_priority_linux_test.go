//go:build linux

package main

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// niceOfThread is the calling thread's niceness (getpriority(2)'s raw
// value is 20 - nice).
func niceOfThread(t *testing.T) int {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// TestRunBehindWriter: with a writer, the live analysis runs at
// analysisNice on a thread of its own, and the niceness does not outlive
// it on the threads other goroutines use; without one, it runs as it is.
func TestRunBehindWriter(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := niceOfThread(t)
	var inside int
	runBehindWriter(true, func() { inside = niceOfThread(t) })
	if inside != analysisNice {
		t.Errorf("analysis behind a writer at niceness %d, want %d", inside, analysisNice)
	}
	runBehindWriter(false, func() { inside = niceOfThread(t) })
	if inside != base {
		t.Errorf("analysis without a writer at niceness %d, want %d", inside, base)
	}
	// Many goroutines afterwards: none lands on a thread left niced.
	done := make(chan int, 64)
	for range 64 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			done <- niceOfThread(t)
		}()
	}
	for range 64 {
		if n := <-done; n != base {
			t.Fatalf("a goroutine ran at niceness %d after the analysis ended, want %d", n, base)
		}
	}
}
