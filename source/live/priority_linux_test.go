//go:build linux

package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/netnstest"
)

// TestCaptureReaderPriority: with ReaderPriority the reader's thread runs
// under SCHED_FIFO at that priority (as /proc says of the process's
// threads), and without it no thread does.
func TestCaptureReaderPriority(t *testing.T) {
	p := netnstest.New(t)
	fifoThreads := func() (n int) {
		tasks, _ := filepath.Glob("/proc/self/task/*/stat")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			// Fields after the command's closing parenthesis: state is
			// field 3, rt_priority 40, policy 41 (proc(5)).
			fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if len(fields) > 38 && fields[38] == "1" && fields[37] == "7" {
				n++
			}
		}
		return n
	}
	for _, prio := range []int{0, 7} {
		h := openIn(t, p, Config{Interface: netnstest.Capture, Filter: filterAll})
		c := StartCapture(context.Background(), h, CaptureConfig{ReaderPriority: prio})
		if err := c.PriorityErr(); err != nil {
			t.Fatalf("priority %d: %v", prio, err)
		}
		got := fifoThreads()
		c.EngineDone()
		c.Wait()
		h.Close()
		if want := min(prio, 1); got != want {
			t.Errorf("ReaderPriority %d: %d threads at SCHED_FIFO priority 7, want %d", prio, got, want)
		}
	}
}
