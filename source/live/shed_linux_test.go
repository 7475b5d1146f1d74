//go:build linux

package live

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmashark/rdmashark/internal/netnstest"
)

// fakeRing is a Handle over plain memory with nblk blocks, each handed
// over or not as the test sets it (no socket: readyAhead and the
// shedding decision read only the blocks' status words).
func fakeRing(nblk int) *Handle {
	const bsz = 4096
	return &Handle{ring: make([]byte, nblk*bsz), bsz: bsz, nblk: nblk}
}

func (h *Handle) setReady(i int, ready bool) {
	st := uint32(unix.TP_STATUS_KERNEL)
	if ready {
		st = unix.TP_STATUS_USER
	}
	*h.blockStatus(i) = st
}

// TestReadyAhead: the blocks the kernel handed over after the reader's,
// in ring order (wrapping), up to the first it still fills.
func TestReadyAhead(t *testing.T) {
	h := fakeRing(8)
	for _, i := range []int{6, 7, 0, 1, 3} {
		h.setReady(i, true)
	}
	for _, c := range []struct{ at, limit, want int }{
		{5, 8, 4},  // 6 7 0 1, then 2 is the kernel's
		{5, 2, 2},  // no further than asked
		{6, 8, 3},  // 7 0 1
		{1, 8, 0},  // 2 is the kernel's
		{2, 8, 1},  // 3
		{3, 8, 0},  // 4
		{7, 20, 2}, // 0 1
	} {
		if got := h.readyAhead(c.at, c.limit); got != c.want {
			t.Errorf("readyAhead(%d, %d) = %d, want %d", c.at, c.limit, got, c.want)
		}
	}
	for i := range 8 {
		h.setReady(i, true)
	}
	if got := h.readyAhead(3, 100); got != 7 {
		t.Errorf("every block handed over: readyAhead = %d, want the other 7", got)
	}
}

// TestShedThresholds: by default the analysis pauses once more than half
// of the ring waits for the reader (its own block included) and goes on
// once no more than a quarter does; the engine sees the pause, and
// nothing without a writer or with ShedAbove < 0.
func TestShedThresholds(t *testing.T) {
	for _, c := range []struct {
		name          string
		cfg           CaptureConfig
		above, resume int
	}{
		{"default", CaptureConfig{Writer: &countWriter{}}, 4, 2},
		{"set", CaptureConfig{Writer: &countWriter{}, ShedAbove: 6}, 6, 2},
		{"beyond the ring", CaptureConfig{Writer: &countWriter{}, ShedAbove: 100}, 7, 2},
		{"low", CaptureConfig{Writer: &countWriter{}, ShedAbove: 1}, 1, 1},
		{"never", CaptureConfig{Writer: &countWriter{}, ShedAbove: -1}, 0, 0},
		{"no writer", CaptureConfig{}, 0, 0},
	} {
		h := fakeRing(8)
		c.cfg.EngineBlocks = 1
		c0 := newCapture(h, c.cfg)
		if c0.shedAbove != c.above || c0.resumeAt != c.resume {
			t.Errorf("%s: sheds above %d, resumes at %d; want %d, %d", c.name, c0.shedAbove, c0.resumeAt, c.above, c.resume)
		}
	}

	h := fakeRing(8)
	c := newCapture(h, CaptureConfig{Writer: &countWriter{}, EngineBlocks: 1})
	// The reader at block 0, the kernel ahead of it by n-1 blocks.
	fill := func(n int) {
		for i := range 8 {
			h.setReady(i, i < n)
		}
	}
	for _, step := range []struct {
		filled   int
		shedding bool
	}{
		{1, false}, {4, false}, // half the ring: not yet
		{5, true},  // more than half
		{3, true},  // catching up
		{2, false}, // a quarter: the analysis goes on
		{4, false},
		{8, true}, // the whole ring
		{1, false},
	} {
		fill(step.filled)
		c.shed(0)
		if c.shedding != step.shedding || c.paused.Load() != step.shedding {
			t.Fatalf("%d of 8 blocks filled: shedding %v, engine paused %v; want %v", step.filled, c.shedding, c.paused.Load(), step.shedding)
		}
	}
}

// TestEnginePauses: the engine's side waits while paused, returns at its
// deadline meanwhile, and goes on when the reader lets it.
func TestEnginePauses(t *testing.T) {
	h := fakeRing(8)
	c := newCapture(h, CaptureConfig{Writer: &countWriter{}, EngineBlocks: 1})
	c.setPaused(true)
	c.SetDeadline(time.Now().Add(20 * time.Millisecond))
	if _, _, err := c.ReadPacket(); !errors.Is(err, errDeadline) {
		t.Fatalf("paused engine at its deadline: %v, want the deadline", err)
	}
	c.SetDeadline(time.Time{})
	got := make(chan error, 1)
	go func() {
		_, _, err := c.ReadPacket()
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("paused engine read: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.setPaused(false)
	close(c.toEngine) // the reader ended: nothing more comes
	select {
	case err := <-got:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("engine let go: %v, want io.EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not go on when the pause ended")
	}
}

// TestCaptureShedsWhenRingFills: a writer that holds the reader while
// frames keep coming lets the kernel fill the ring; once it lets go, the
// reader finds the ring more than half full and sheds the analysis —
// those blocks go to the file only, counted as skipped because the ring
// was filling (Loss.RingFull) — until it has caught up; then the engine
// gets the frames again. The writer gets every frame handed out, the
// engine every other one, by number.
func TestCaptureShedsWhenRingFills(t *testing.T) {
	p := netnstest.New(t)
	h := openIn(t, p, Config{Interface: netnstest.Capture, BufferSize: 2 << 20, Filter: filterAll})
	in, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var sent [][]byte
	for _, f := range readCapture(t, filepath.Join(pcaps, "rxe-nfs3.pcap")) {
		sent = append(sent, f.data)
	}
	w := &heldWriter{hold: make(chan struct{}), holding: make(chan struct{})}
	c := StartCapture(context.Background(), h, CaptureConfig{Writer: w})
	if c.shedAbove != h.nblk/2 {
		t.Fatalf("sheds above %d of %d blocks", c.shedAbove, h.nblk)
	}
	var numbers []uint64
	var engine [][]byte
	var engineN atomic.Uint64
	engineDone := make(chan error, 1)
	go func() {
		defer c.EngineDone()
		for {
			data, info, err := c.ReadPacket()
			if err != nil {
				engineDone <- err
				return
			}
			engine = append(engine, append([]byte(nil), data...))
			numbers = append(numbers, info.Number)
			engineN.Add(1)
		}
	}()
	if err := in.Replay(sent[:100], 20); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.holding:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer got no frame")
	}
	// Enough to fill more than half the ring behind the held block.
	var st Stats
	for _, f := range sent[100:] {
		if err := in.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ = h.Stats(); st.Packets >= uint64(len(sent)) {
			break
		}
	}
	if n := 1 + h.readyAhead(0, h.nblk); n <= h.nblk/2 {
		t.Fatalf("only %d of %d blocks filled behind the held writer", n, h.nblk)
	}
	close(w.hold)
	// Then more, paced: the reader has caught up, the engine gets them.
	tail := sent[:200]
	if err := in.Replay(tail, 20); err != nil {
		t.Fatal(err)
	}
	sent = append(sent, tail...)
	skipped := func() (all, ringFull uint64) {
		for _, l := range c.Losses() {
			if l.Analysis {
				all += l.Dropped
				if l.RingFull {
					ringFull += l.Dropped
				}
			}
		}
		return all, ringFull
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, _ = h.Stats()
		all, _ := skipped()
		if st.Packets >= uint64(len(sent)) && engineN.Load()+all+st.Drops >= st.Packets {
			break
		}
	}
	c.Stop()
	if err := <-engineDone; !errors.Is(err, io.EOF) {
		t.Fatalf("engine side ended with %v", err)
	}
	res := c.Wait()
	all, ringFull := skipped()
	if ringFull == 0 {
		t.Fatalf("the reader never shed the analysis (losses %+v)", c.Losses())
	}
	if uint64(len(w.frames)) != res.Frames || uint64(len(engine))+all != res.Frames {
		t.Fatalf("writer %d frames, engine %d and skipped %d, handed out %d", len(w.frames), len(engine), all, res.Frames)
	}
	skippedAt := map[uint64]bool{}
	var lastShed uint64
	for _, l := range c.Losses() {
		if !l.Analysis {
			continue
		}
		for n := l.Before; n < l.Before+l.Dropped; n++ {
			skippedAt[n] = true
		}
		if l.RingFull {
			lastShed = l.Before + l.Dropped - 1
		}
	}
	e := 0
	for n := uint64(1); n <= res.Frames; n++ {
		if skippedAt[n] {
			continue
		}
		if e >= len(engine) || numbers[e] != n || !bytes.Equal(engine[e], w.frames[n-1]) {
			t.Fatalf("engine frame %d is not the writer's frame %d", e+1, n)
		}
		e++
	}
	// The analysis went on after the pause: the paced tail is analysed.
	if len(numbers) == 0 || numbers[len(numbers)-1] <= lastShed {
		t.Fatalf("the engine read nothing after the shed frames (up to %d)", lastShed)
	}
}

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
