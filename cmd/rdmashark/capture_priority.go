package main

import "runtime"

// analysisNice is how much lower than the ring reader and the -w writer
// the analysis of a live capture runs (setpriority(2) niceness of its
// thread) when a file is written: on a machine short of CPU the kernel
// then gives the writer — which must keep every frame, as tcpdump -w does
// — the time first, and the analysis falls behind, skipping blocks it
// counts (the file still has them), instead of the ring filling and the
// kernel dropping frames for file and analysis alike (issue 30).
const analysisNice = 10

// runBehindWriter runs fn on a thread of its own at analysisNice when
// behind is set, else as it is. The goroutine keeps its thread locked to
// the end, so the thread ends with it and its niceness never reaches
// another goroutine.
func runBehindWriter(behind bool, fn func()) {
	if !behind {
		fn()
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		lowerThreadPriority(analysisNice)
		fn()
	}()
	<-done
}
