//go:build linux

package live

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Capture runs a Handle's ring with the engine and the writer each on its
// own goroutine. A reader goroutine waits for the kernel to hand over a
// block, lists its frames, and hands the block to the engine (the Capture
// is its Source: ReadPacket returns frames in place in the ring) and to
// the FrameWriter; the block goes back to the kernel when both are done
// with it. No frame is copied or allocated between the kernel and the
// engine or the writer.
//
// The ring is the bounded hand-off. With a writer, the engine may hold at
// most a quarter of the ring's blocks (CaptureConfig.EngineBlocks): past that, a
// block goes to the writer only and its frames are counted as skipped by
// the analysis (a Loss with Analysis set), so that a slow analysis never
// stalls the ring and the file keeps every frame. Only when the writer
// (or, without one, the engine) holds every block does the kernel drop
// frames and count them, as it would for tcpdump.
//
// The reader alone decides which frames there are: the stop conditions
// (CaptureConfig.Count, Duration, the context) are applied as blocks are
// handed out, so that the engine and the writer see the same frames.
type Capture struct {
	h   *Handle
	cfg CaptureConfig

	bf       []blockFrames
	refs     []atomic.Int32
	inflight []atomic.Bool
	released chan struct{}
	toEngine chan int32
	toWriter chan int32

	// reader's state
	handed    uint64
	lastDrops uint64
	engHeld   atomic.Int32
	engLimit  int32
	skipRun   int    // index in losses of the analysis skip in progress, or -1
	carry     uint64 // kernel drops before blocks the analysis skipped
	stop      StopReason
	err       error
	lossMu    sync.Mutex
	losses    []Loss
	done      chan struct{} // the reader has ended and the ring is free
	stopWake  func() bool
	stopOnce  sync.Once
	stopCh    chan struct{}
	writerErr error

	// engine side
	eCur, eOff, eLeft int
	eLast             uint64 // number of the engine's last frame
	eDeadline         atomic.Int64
	eWake             chan struct{}
	eTimer            *time.Timer
	eGone             atomic.Bool
	eDone             chan struct{}
	eDoneOnce         sync.Once
}

// CaptureConfig says when a Capture stops and where its frames go beside
// the engine.
type CaptureConfig struct {
	// Count stops the capture after that many frames (0: no limit).
	Count int
	// Duration stops the capture after that long (0: no limit).
	Duration time.Duration
	// Writer, when set, gets every frame on a goroutine of its own, and
	// Flush about every FlushEvery.
	Writer FrameWriter
	// FlushEvery defaults to DefaultTick.
	FlushEvery time.Duration
	// EngineBlocks is the most blocks the engine may hold when there is
	// a writer (default: a quarter of the ring's); past it the analysis skips
	// blocks. Without a writer the engine may hold them all.
	EngineBlocks int
}

// FrameWriter takes the frames a Capture saves (a *Saver, a *FileRing).
type FrameWriter interface {
	WritePacket(info Info, data []byte) error
	Flush() error
}

// Loss is a place in the capture where frames were lost: the kernel
// dropped them because the ring was full, or (Analysis) the analysis
// skipped them, written to the file, because it had fallen behind.
type Loss struct {
	// Analysis: the frames were captured and written but not analysed;
	// they are frames Before to Before+Dropped-1.
	Analysis bool
	// Before is the number (from 1) of the first frame captured after the
	// drops: they were lost between frames Before-1 and Before. At the end
	// of the capture it is one more than the frames captured.
	Before uint64
	// Time is when the kernel handed over that frame's block (the drops
	// were found then).
	Time time.Time
	// Dropped counts the frames dropped there.
	Dropped uint64
}

// StartCapture starts reading h. Stop it with ctx, or Stop; the engine
// reads it as its Source until io.EOF and then calls EngineDone (also when
// it stopped reading early); Wait waits for the writer and frees the ring
// for h.Close.
func StartCapture(ctx context.Context, h *Handle, cfg CaptureConfig) *Capture {
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultTick
	}
	n := h.nblk
	c := &Capture{
		h:        h,
		cfg:      cfg,
		bf:       make([]blockFrames, n),
		refs:     make([]atomic.Int32, n),
		inflight: make([]atomic.Bool, n),
		released: make(chan struct{}, 1),
		toEngine: make(chan int32, n),
		done:     make(chan struct{}),
		stopCh:   make(chan struct{}),
		eCur:     -1,
		eWake:    make(chan struct{}, 1),
		eTimer:   time.NewTimer(time.Hour),
		eDone:    make(chan struct{}),
		skipRun:  -1,
	}
	c.eTimer.Stop()
	c.engLimit = int32(n)
	if cfg.Writer != nil {
		c.engLimit = int32(max(1, n/4))
		if cfg.EngineBlocks > 0 {
			c.engLimit = int32(min(cfg.EngineBlocks, n))
		}
	}
	for i := range c.bf {
		c.bf[i].frames = make([]frameDesc, 0, 256)
	}
	var writerDone chan struct{}
	if cfg.Writer != nil {
		c.toWriter = make(chan int32, n)
		writerDone = make(chan struct{})
		go c.write(writerDone)
	}
	c.stopWake = context.AfterFunc(ctx, c.Stop)
	h.readMu.Lock() // until the ring is free again
	go c.read(writerDone)
	return c
}

// Stop makes the reader hand out no more blocks; the engine and the writer
// finish those they have.
func (c *Capture) Stop() {
	c.stopOnce.Do(func() {
		close(c.stopCh)
		_ = c.h.kick()
		select {
		case c.released <- struct{}{}:
		default:
		}
	})
}

func (c *Capture) stopped() bool {
	select {
	case <-c.stopCh:
		return true
	default:
		return false
	}
}

// engineRelease drops the engine's hold on block b.
func (c *Capture) engineRelease(b int) {
	c.engHeld.Add(-1)
	c.release(b)
}

// release drops one consumer's hold on block b.
func (c *Capture) release(b int) {
	if c.refs[b].Add(-1) == 0 {
		c.h.giveBack(b)
		c.inflight[b].Store(false)
		select {
		case c.released <- struct{}{}:
		default:
		}
	}
}

func (c *Capture) read(writerDone chan struct{}) {
	h := c.h
	defer func() {
		close(c.toEngine)
		if c.toWriter != nil {
			close(c.toWriter)
		}
		// The engine and the writer let go of every block before the
		// ring may be unmapped.
		<-c.eDone
		if writerDone != nil {
			<-writerDone
		}
		c.stopWake()
		h.readMu.Unlock()
		close(c.done)
	}()
	var stopAt time.Time
	if c.cfg.Duration > 0 {
		stopAt = time.Now().Add(c.cfg.Duration)
	}
	var timer *time.Timer
	if !stopAt.IsZero() {
		timer = time.NewTimer(time.Until(stopAt))
		defer timer.Stop()
	}
	consumers := int32(1)
	if c.toWriter != nil {
		consumers = 2
	}
	next := 0
	for {
		switch {
		case c.cfg.Count > 0 && c.handed >= uint64(c.cfg.Count):
			c.stop = StopCount
			c.finalLoss()
			return
		case c.stopped():
			c.stop = StopInterrupted
			c.finalLoss()
			return
		case !stopAt.IsZero() && !time.Now().Before(stopAt):
			c.stop = StopDuration
			c.finalLoss()
			return
		}
		if c.inflight[next].Load() {
			// Every block is in the engine's or the writer's hands:
			// the kernel drops until one comes back.
			var tc <-chan time.Time
			if timer != nil {
				tc = timer.C
			}
			select {
			case <-c.released:
			case <-c.stopCh:
			case <-tc:
			}
			continue
		}
		err := h.waitBlock(next, stopAt, true)
		switch {
		case err == nil:
		case err == errInterrupted || errors.Is(err, os.ErrDeadlineExceeded) || err == errClosedHandle:
			if err == errClosedHandle {
				c.Stop()
			}
			continue
		default:
			c.stop, c.err = StopError, err
			c.finalLoss()
			return
		}
		bf := &c.bf[next]
		h.scanFrames(next, bf)
		bf.dropped = 0
		// (Another reader of the counters — a ring-buffer rotation, the
		// --summary view — clears the kernel's, and then its flag: the
		// drops they saw are placed here too.)
		if bf.losing || h.dropsRead() > c.lastDrops {
			c.noteLoss(bf)
		}
		if c.cfg.Count > 0 {
			if left := uint64(c.cfg.Count) - c.handed; uint64(len(bf.frames)) > left {
				bf.frames = bf.frames[:left]
			}
		}
		if len(bf.frames) == 0 {
			h.giveBack(next)
			next = (next + 1) % h.nblk
			continue
		}
		bf.first = c.handed + 1
		c.handed += uint64(len(bf.frames))
		engine := !c.eGone.Load()
		if engine && c.engHeld.Load() >= c.engLimit {
			// The analysis is behind by EngineBlocks: this block goes
			// to the writer only.
			engine = false
			c.noteSkip(bf)
			c.carry += bf.dropped
		} else {
			c.skipRun = -1
			bf.lostBefore = bf.dropped + c.carry
			c.carry = 0
		}
		refs := consumers
		if !engine {
			refs--
		}
		if refs == 0 {
			h.giveBack(next)
			next = (next + 1) % h.nblk
			continue
		}
		c.inflight[next].Store(true)
		c.refs[next].Store(refs)
		if engine {
			c.engHeld.Add(1)
			c.toEngine <- int32(next)
		}
		if c.toWriter != nil {
			c.toWriter <- int32(next)
		}
		next = (next + 1) % h.nblk
	}
}

// noteLoss reads the kernel's counters when it says it dropped frames
// before block bf and places the drops before its first frame.
func (c *Capture) noteLoss(bf *blockFrames) {
	st, err := c.h.Stats()
	if err != nil || st.Drops <= c.lastDrops {
		return
	}
	l := Loss{Before: c.handed + 1, Dropped: st.Drops - c.lastDrops, Time: time.Now()}
	if len(bf.frames) > 0 {
		f := &bf.frames[0]
		l.Time = time.Unix(int64(f.sec), int64(f.nsec))
	}
	c.lastDrops = st.Drops
	bf.dropped = l.Dropped
	c.lossMu.Lock()
	c.losses = append(c.losses, l)
	c.skipRun = -1
	c.lossMu.Unlock()
}

// noteSkip counts the frames of block bf, which the analysis skips.
func (c *Capture) noteSkip(bf *blockFrames) {
	if c.eGone.Load() {
		return
	}
	c.lossMu.Lock()
	defer c.lossMu.Unlock()
	if c.skipRun >= 0 {
		c.losses[c.skipRun].Dropped += uint64(len(bf.frames))
		return
	}
	f := &bf.frames[0]
	c.losses = append(c.losses, Loss{Analysis: true, Before: bf.first, Dropped: uint64(len(bf.frames)), Time: time.Unix(int64(f.sec), int64(f.nsec))})
	c.skipRun = len(c.losses) - 1
}

// finalLoss places the drops not yet placed at the end.
func (c *Capture) finalLoss() {
	st, err := c.h.Stats()
	if err != nil || st.Drops <= c.lastDrops {
		return
	}
	c.lossMu.Lock()
	c.losses = append(c.losses, Loss{Before: c.handed + 1, Dropped: st.Drops - c.lastDrops, Time: time.Now()})
	c.lossMu.Unlock()
	c.lastDrops = st.Drops
}

// Losses returns the places where the kernel dropped frames so far.
func (c *Capture) Losses() []Loss {
	c.lossMu.Lock()
	defer c.lossMu.Unlock()
	return append([]Loss(nil), c.losses...)
}

func (c *Capture) write(done chan struct{}) {
	defer close(done)
	w := c.cfg.Writer
	tick := time.NewTicker(c.cfg.FlushEvery)
	defer tick.Stop()
	var err error
	for {
		select {
		case b, ok := <-c.toWriter:
			if !ok {
				if err == nil {
					err = w.Flush()
				}
				c.writerErr = err
				return
			}
			if err == nil {
				bf := &c.bf[b]
				for i := range bf.frames {
					data, info := c.h.frameAt(int(b), &bf.frames[i])
					if err = w.WritePacket(info, data); err != nil {
						c.writerErr = err
						c.Stop()
						break
					}
				}
			}
			c.release(int(b))
		case <-tick.C:
			if err == nil {
				if err = w.Flush(); err != nil {
					c.writerErr = err
					c.Stop()
				}
			}
		}
	}
}

// ReadPacket is the engine's side: the next frame, in place in the ring and
// valid until the next call; io.EOF once the reader stopped and every
// frame it handed out was read.
func (c *Capture) ReadPacket() ([]byte, Info, error) {
	for c.eLeft == 0 {
		if c.eCur >= 0 {
			c.engineRelease(c.eCur)
			c.eCur = -1
		}
		b, err := c.nextEngineBlock()
		if err != nil {
			return nil, Info{}, err
		}
		c.eCur, c.eOff, c.eLeft = int(b), 0, len(c.bf[b].frames)
	}
	f := &c.bf[c.eCur].frames[c.eOff]
	c.eOff++
	c.eLeft--
	data, info := c.h.frameAt(c.eCur, f)
	bf := &c.bf[c.eCur]
	info.Number = bf.first + uint64(c.eOff-1)
	if c.eOff == 1 {
		// Frames the analysis skipped keep their numbers: the gap
		// since the engine's last frame, and the kernel's drops.
		info.LostBefore = bf.lostBefore + (info.Number - c.eLast - 1)
	}
	c.eLast = info.Number
	return data, info, nil
}

func (c *Capture) nextEngineBlock() (int32, error) {
	for {
		select {
		case b, ok := <-c.toEngine:
			if !ok {
				return 0, c.endErr()
			}
			return b, nil
		default:
		}
		var tc <-chan time.Time
		if d := c.eDeadline.Load(); d != 0 {
			wait := time.Until(time.Unix(0, d))
			if wait <= 0 {
				return 0, os.ErrDeadlineExceeded
			}
			c.eTimer.Reset(wait)
			tc = c.eTimer.C
		}
		select {
		case b, ok := <-c.toEngine:
			c.eTimer.Stop()
			if !ok {
				return 0, c.endErr()
			}
			return b, nil
		case <-c.eWake:
			c.eTimer.Stop()
		case <-tc:
			return 0, os.ErrDeadlineExceeded
		}
	}
}

// endErr: the reader set c.err before it closed toEngine.
func (c *Capture) endErr() error {
	if c.err != nil {
		return c.err
	}
	return io.EOF
}

// SetDeadline is the engine side's deadline (Source).
func (c *Capture) SetDeadline(t time.Time) error {
	if t.IsZero() {
		c.eDeadline.Store(0)
	} else {
		c.eDeadline.Store(t.UnixNano())
	}
	select {
	case c.eWake <- struct{}{}:
	default:
	}
	return nil
}

// LinkType is the frames' link type (Source).
func (c *Capture) LinkType() layers.LinkType { return c.h.LinkType() }

// StopReason says why the reader stopped (once ReadPacket returned io.EOF).
func (c *Capture) StopReason() StopReason { return c.stop }

// EngineDone says the engine reads no more: the blocks it holds and those
// still coming go back. Call it once the engine's loop ended, however.
func (c *Capture) EngineDone() {
	c.eDoneOnce.Do(func() {
		c.eGone.Store(true)
		if c.eCur >= 0 {
			c.engineRelease(c.eCur)
			c.eCur = -1
		}
		c.eLeft = 0
		go func() {
			for b := range c.toEngine {
				c.engineRelease(int(b))
			}
			close(c.eDone)
		}()
	})
}

// CaptureResult tells how the reader and the writer ended.
type CaptureResult struct {
	Stop StopReason
	// Frames counts the frames handed out.
	Frames uint64
	// Err is the reader's error (the interface went down), WriteErr the
	// writer's.
	Err, WriteErr error
}

// Wait stops the capture if it still runs, waits for the reader and the
// writer (EngineDone must have been called or be called by another
// goroutine), and tells how they ended.
func (c *Capture) Wait() CaptureResult {
	c.Stop()
	<-c.done
	return CaptureResult{Stop: c.stop, Frames: c.handed, Err: c.err, WriteErr: c.writerErr}
}
