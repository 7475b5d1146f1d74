//go:build linux

package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
)

// Capture runs a Handle's ring with the writer and the engine. A reader
// goroutine waits for the kernel to hand over a block, lists its frames,
// copies them into a buffer of the engine's (one copy of the bytes the
// frames use, no allocation: the buffers are allocated once), and gives the
// block back to the kernel. That is all it does per block: a writer
// goroutine writes the frames to the FrameWriter from the copy (as tcpdump
// -w does: into a buffer that goes to the file a MiB at a time) and then
// hands the copy to the engine, which reads it on a goroutine of its own
// (the Capture is its Source: ReadPacket returns frames in place in the
// copy). So the ring waits for nothing but one copy: neither the analysis,
// nor the file's write(2) (which the kernel may hold up while it writes
// back dirty pages), nor the Go scheduler's choice between goroutines
// keeps a block from the kernel while a buffer is free.
//
// The engine's buffers (CaptureConfig.EngineBlocks of them, each a ring
// block's size; by default a quarter of the ring, at least 8 MiB) are the
// bounded hand-off from the reader to the writer and the analysis. With a
// writer, a block that finds none free waits for the writer to write what
// it holds (the file is behind: the ring fills meanwhile, as tcpdump's
// does when its disk is slow); if the engine holds them all, the block
// goes to the file only (written from the ring, then given back) and its
// frames are counted as skipped by the analysis (a Loss with Analysis
// set): a slow analysis never stalls the ring and the file keeps every
// frame. Without a writer the reader waits for a free buffer, holding the
// block, and the kernel drops frames once the ring is full too. The kernel
// drops frames only when the reader (the writer's file, or without one the
// engine) falls behind by the whole ring and the buffers.
//
// The reader alone decides which frames there are: the stop conditions
// (CaptureConfig.Count, Duration, the context) are applied as blocks are
// handed out, so that the engine and the writer see the same frames.
type Capture struct {
	h   *Handle
	cfg CaptureConfig

	cur      blockFrames // the frames of the ring block the reader is at
	bufs     []engineBuf
	free     chan int32 // engine buffers the reader may fill
	toEngine chan int32 // engine buffers filled, in order
	// toWriter: engine buffers filled, in order, for the writer (which
	// then hands them to the engine); a negative item -1-i is ring block
	// i with the frames in cur, which the reader holds until the writer
	// answers on ringDone.
	toWriter chan int32
	ringDone chan struct{}
	wQueued  atomic.Int32  // items sent to the writer and not yet written
	wPoke    chan struct{} // the writer wrote an item
	wDone    chan struct{} // the writer has ended

	// reader's state
	handed    uint64
	lastDrops uint64
	engLimit  int32    // engine buffers
	skipRun   int      // index in losses of the analysis skip in progress, or -1
	carry     uint64   // kernel drops before blocks the analysis skipped
	unplaced  uint64   // kernel drops before blocks without frames
	dropsAt   []uint64 // kernel drops before each block's next frames
	stop      StopReason
	err       error
	lossMu    sync.Mutex
	losses    []Loss
	done      chan struct{} // the reader has ended and the ring is free
	stopWake  func() bool
	stopOnce  sync.Once
	stopCh    chan struct{}
	writerErr error     // the writer's goroutine's; read after wDone
	lastFlush time.Time // the writer's goroutine's

	// engine side
	eCur, eOff, eLeft int
	eLast             uint64 // number of the engine's last frame
	eDeadline         atomic.Int64
	eWake             chan struct{}
	eTimer            *time.Timer
	eGone             atomic.Bool
	eDone             chan struct{}
	eDoneOnce         sync.Once

	prioDone chan struct{} // the reader has set its priority (prioErr)
	prioErr  error
}

// engineBuf is a copy of a ring block's frames for the engine: data holds
// the block's bytes up to the end of its last frame, at the ring's offsets.
type engineBuf struct {
	data     []byte
	bf       blockFrames
	fileLost uint64 // the kernel's drops before the first frame, for the file
}

// engineBufferMin is the least the engine's buffers hold together: a
// small ring must not make the analysis skip what a larger hand-off would
// have let it catch up with.
const engineBufferMin = 8 << 20

// engineBuffers is how many buffers of a block's size the engine gets: as
// configured, else a quarter of the ring's blocks and at least
// engineBufferMin bytes.
func engineBuffers(blocks, blockSize, configured int) int {
	if configured > 0 {
		return configured
	}
	return max(blocks/4, (engineBufferMin+blockSize-1)/blockSize)
}

// CaptureConfig says when a Capture stops and where its frames go beside
// the engine.
type CaptureConfig struct {
	// Count stops the capture after that many frames (0: no limit).
	Count int
	// Duration stops the capture after that long (0: no limit).
	Duration time.Duration
	// Writer, when set, gets every frame on a goroutine of its own
	// (from the engine's copy, or from the ring when the analysis holds
	// every copy), and Flush about every FlushEvery. A writer that
	// blocks holds the engine's buffers, then the reader: the kernel drops
	// frames once the ring is full too.
	Writer FrameWriter
	// FlushEvery defaults to DefaultTick.
	FlushEvery time.Duration
	// EngineBlocks is how many blocks' copies the engine may hold
	// (default: a quarter of the ring's blocks, and at least 8 MiB);
	// past it, with a writer, the analysis skips blocks.
	EngineBlocks int
	// ReaderPriority, from 1 to 99, runs the reader's thread under the
	// real-time policy SCHED_FIFO at that priority (sched(7); it needs
	// CAP_SYS_NICE): on a busy machine the kernel then gives it a CPU as
	// soon as a block is handed over, ahead of every other thread but
	// real-time ones. 0: the reader is a thread like any other.
	ReaderPriority int
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
// it stopped reading early); Wait waits for the reader and frees the ring
// for h.Close.
func StartCapture(ctx context.Context, h *Handle, cfg CaptureConfig) *Capture {
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultTick
	}
	n := engineBuffers(h.nblk, h.bsz, cfg.EngineBlocks)
	c := &Capture{
		h:        h,
		cfg:      cfg,
		bufs:     make([]engineBuf, n),
		dropsAt:  make([]uint64, h.nblk),
		free:     make(chan int32, n),
		toEngine: make(chan int32, n),
		engLimit: int32(n),
		done:     make(chan struct{}),
		stopCh:   make(chan struct{}),
		eCur:     -1,
		eWake:    make(chan struct{}, 1),
		eTimer:   time.NewTimer(time.Hour),
		eDone:    make(chan struct{}),
		skipRun:  -1,
		prioDone: make(chan struct{}),
	}
	c.eTimer.Stop()
	c.cur.frames = make([]frameDesc, 0, 256)
	if cfg.Writer != nil {
		c.toWriter = make(chan int32, n+1)
		c.ringDone = make(chan struct{}, 1)
		c.wPoke = make(chan struct{}, 1)
		c.wDone = make(chan struct{})
	}
	mem := make([]byte, n*h.bsz)
	for i := range c.bufs {
		c.bufs[i].data = mem[i*h.bsz : (i+1)*h.bsz : (i+1)*h.bsz]
		c.bufs[i].bf.frames = make([]frameDesc, 0, 256)
		c.free <- int32(i)
	}
	c.stopWake = context.AfterFunc(ctx, c.Stop)
	h.readMu.Lock() // until the ring is free again
	if cfg.Writer != nil {
		go c.write()
	}
	go c.read()
	return c
}

// PriorityErr says why CaptureConfig.ReaderPriority could not be set (nil
// when it was, or was not asked for); the capture runs either way.
func (c *Capture) PriorityErr() error {
	<-c.prioDone
	return c.prioErr
}

// Stop makes the reader hand out no more blocks; the engine finishes those
// it has.
func (c *Capture) Stop() {
	c.stopOnce.Do(func() {
		close(c.stopCh)
		_ = c.h.kick()
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

// engineRelease gives engine buffer b back to the reader.
func (c *Capture) engineRelease(b int) {
	c.free <- int32(b)
}

// flush flushes the writer when FlushEvery has passed since it last did
// (or at once with force). The writer's goroutine's.
func (c *Capture) flush(force bool) {
	w := c.cfg.Writer
	if w == nil || c.writerErr != nil {
		return
	}
	now := time.Now()
	if !force && now.Sub(c.lastFlush) < c.cfg.FlushEvery {
		return
	}
	c.lastFlush = now
	if err := w.Flush(); err != nil {
		c.writerErr = err
		c.Stop()
	}
}

func (c *Capture) read() {
	h := c.h
	if c.cfg.ReaderPriority > 0 {
		// The thread stays the reader's (and ends with it).
		runtime.LockOSThread()
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(c.cfg.ReaderPriority)}
		if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
			need := ""
			if errors.Is(err, unix.EPERM) {
				need = "; it needs root or CAP_SYS_NICE"
			}
			c.prioErr = fmt.Errorf("real-time priority %d (SCHED_FIFO) for the ring's reader%s: %w", c.cfg.ReaderPriority, need, err)
		}
	}
	close(c.prioDone)
	defer func() {
		if c.toWriter != nil {
			close(c.toWriter)
			<-c.wDone // (which flushed)
		}
		close(c.toEngine)
		// The engine lets go of its buffers before Wait returns.
		<-c.eDone
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
	w := c.cfg.Writer
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
		bf := &c.cur
		h.scanFrames(next, bf)
		bf.dropped, c.unplaced = c.unplaced, 0
		if d := c.dropsAt[next]; d > 0 {
			c.dropsAt[next] = 0
			c.noteLoss(bf, d)
		}
		if c.cfg.Count > 0 {
			if left := uint64(c.cfg.Count) - c.handed; uint64(len(bf.frames)) > left {
				bf.frames = bf.frames[:left]
			}
		}
		if len(bf.frames) == 0 {
			// (Its drops go with the next frame.)
			c.unplaced = bf.dropped
			c.giveBack(next)
			next = (next + 1) % h.nblk
			continue
		}
		bf.first = c.handed + 1
		c.handed += uint64(len(bf.frames))
		// A copy for the writer and the engine, when a buffer is free;
		// then the block goes back to the kernel.
		eb := int32(-1)
		switch {
		case w != nil:
			eb = c.takeBuffer()
		case !c.eGone.Load():
			select {
			case eb = <-c.free:
			default:
				eb = c.waitFree(timer)
			}
		}
		if eb < 0 {
			if w != nil {
				// The analysis is behind by all its buffers: this
				// block goes to the file only, from the ring, after
				// what the writer holds.
				c.noteSkip(bf)
				c.wQueued.Add(1)
				c.toWriter <- -1 - int32(next)
				<-c.ringDone
			}
			c.carry += bf.dropped
			c.giveBack(next)
			next = (next + 1) % h.nblk
			continue
		}
		c.skipRun = -1
		e := &c.bufs[eb]
		end := 0
		for i := range bf.frames {
			end = max(end, int(bf.frames[i].off+bf.frames[i].caplen))
		}
		copy(e.data[:end], h.block(next)[:end])
		e.bf.frames = append(e.bf.frames[:0], bf.frames...)
		e.bf.first = bf.first
		e.bf.lostBefore = bf.dropped + c.carry
		e.fileLost = bf.dropped
		c.carry = 0
		c.giveBack(next)
		if w != nil {
			c.wQueued.Add(1)
			c.toWriter <- eb
		} else {
			c.toEngine <- eb
		}
		next = (next + 1) % h.nblk
	}
}

// takeBuffer is a free engine buffer for the reader when there is a
// writer: at once if one is free; else, while the writer still holds
// some (the file is behind), the first it hands on and the engine gives
// back; -1 when the engine holds them all (the analysis is behind). (Not
// -1 when the capture stops: the block in hand is the capture's, and
// the analysis did not fall behind.)
func (c *Capture) takeBuffer() int32 {
	for {
		select {
		case b := <-c.free:
			return b
		default:
		}
		if c.wQueued.Load() == 0 {
			return -1
		}
		select {
		case b := <-c.free:
			return b
		case <-c.wPoke:
		}
	}
}

// write is the writer's goroutine: it writes the frames of each item the
// reader sends, the kernel's drops on the first (epb_dropcount), hands the
// engine's buffers on to the engine (or back to the reader once the engine
// is gone), and flushes about every FlushEvery; at the end it flushes.
func (c *Capture) write() {
	defer close(c.wDone)
	w := c.cfg.Writer
	c.lastFlush = time.Now()
	tick := time.NewTicker(c.cfg.FlushEvery)
	defer tick.Stop()
	for {
		var item int32
		select {
		case it, ok := <-c.toWriter:
			if !ok {
				c.flush(true)
				return
			}
			item = it
		case <-tick.C:
			c.flush(false)
			continue
		}
		var src []byte
		var bf *blockFrames
		var lost uint64
		if item >= 0 {
			e := &c.bufs[item]
			src, bf, lost = e.data, &e.bf, e.fileLost
		} else {
			// (The reader waits for ringDone: cur is the writer's.)
			src, bf, lost = c.h.block(int(-1-item)), &c.cur, c.cur.dropped
		}
		if c.writerErr == nil {
			for i := range bf.frames {
				data, info := frameIn(src, &bf.frames[i])
				if i == 0 {
					info.LostBefore = lost
				}
				if err := w.WritePacket(info, data); err != nil {
					c.writerErr = err
					c.Stop()
					break
				}
			}
		}
		c.wQueued.Add(-1)
		switch {
		case item < 0:
			c.ringDone <- struct{}{}
		case c.eGone.Load():
			c.free <- item
		default:
			c.toEngine <- item
		}
		select {
		case c.wPoke <- struct{}{}:
		default:
		}
		c.flush(false)
	}
}

// giveBack gives block i back to the kernel. The kernel drops frames only
// while the ring is full: while every block is the reader's, the last it
// filled followed by this one, which the reader holds (it holds one block
// at a time). So the drops it counted up to now lie between the frames of
// the block before this one and those it puts into this one when it fills
// it again: the reader places them there when it gets to it. (The
// TP_STATUS_LOSING flag would say so too, but any reader of the counters —
// a ring-buffer rotation, the --summary view — clears it.)
func (c *Capture) giveBack(i int) {
	if st, err := c.h.Stats(); err == nil && st.Drops > c.lastDrops {
		c.dropsAt[i] += st.Drops - c.lastDrops
		c.lastDrops = st.Drops
	}
	c.h.giveBack(i)
}

// waitFree waits for an engine buffer (no writer: the engine is the only
// consumer, and the ring holds frames meanwhile); -1 when the capture
// stops first or the engine is gone.
func (c *Capture) waitFree(timer *time.Timer) int32 {
	var tc <-chan time.Time
	if timer != nil {
		tc = timer.C
	}
	for {
		select {
		case b := <-c.free:
			return b
		case <-c.stopCh:
			return -1
		case <-tc:
			return -1
		}
	}
}

// noteLoss places n frames the kernel dropped before block bf's first
// frame (giveBack found them).
func (c *Capture) noteLoss(bf *blockFrames, n uint64) {
	l := Loss{Before: c.handed + 1, Dropped: n, Time: time.Now()}
	if len(bf.frames) > 0 {
		f := &bf.frames[0]
		l.Time = time.Unix(int64(f.sec), int64(f.nsec))
	}
	bf.dropped += l.Dropped
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
	var n uint64
	for i, d := range c.dropsAt {
		n += d
		c.dropsAt[i] = 0
	}
	if st, err := c.h.Stats(); err == nil && st.Drops > c.lastDrops {
		n += st.Drops - c.lastDrops
		c.lastDrops = st.Drops
	}
	if n == 0 {
		return
	}
	c.lossMu.Lock()
	c.losses = append(c.losses, Loss{Before: c.handed + 1, Dropped: n, Time: time.Now()})
	c.lossMu.Unlock()
}

// Losses returns the places where the kernel dropped frames so far.
func (c *Capture) Losses() []Loss {
	c.lossMu.Lock()
	defer c.lossMu.Unlock()
	return append([]Loss(nil), c.losses...)
}

// ReadPacket is the engine's side: the next frame, in place in the
// engine's copy of its block and valid until the next call; io.EOF once the reader stopped and every
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
		c.eCur, c.eOff, c.eLeft = int(b), 0, len(c.bufs[b].bf.frames)
	}
	e := &c.bufs[c.eCur]
	bf := &e.bf
	data, info := frameIn(e.data, &bf.frames[c.eOff])
	c.eOff++
	c.eLeft--
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

// Stream is the engine's side of a Capture run in a capture process of its
// own: it reads the frames handed to the engine and writes them to w (the
// pipe to the analysing process) as the frame stream (stream.go), a write
// when StreamWrite bytes are waiting or when the frames handed over so far
// are all encoded, so that a frame waits for the analysis no longer than
// for the reader. A w that blocks (the analysis is behind) holds the
// engine's buffers as a slow engine would: with a writer, the reader then
// skips blocks for the analysis (they are written, counted, and the frame
// after them carries their count). Stream returns when the reader stopped
// and every frame was sent (nil), when the reader failed (its error), or
// when w failed: the reader then goes on without the analysis. Either
// way it has called EngineDone.
func (c *Capture) Stream(w io.Writer, snaplen int) error {
	defer c.EngineDone()
	buf := make([]byte, 0, StreamWrite+DefaultSnapLen+epbHead+streamMaxOpts+8)
	buf = AppendStreamHeader(buf, c.LinkType(), snaplen)
	send := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	for {
		if c.eLeft == 0 && len(c.toEngine) == 0 {
			// About to wait for the reader: what is encoded goes now.
			if err := send(); err != nil {
				return err
			}
		}
		data, info, err := c.ReadPacket()
		if err != nil {
			if serr := send(); serr != nil {
				return serr
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		buf = AppendStreamPacket(buf, info, data)
		if len(buf) >= StreamWrite {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// StreamWrite is how many bytes of the frame stream Stream writes at once
// (at most, but for the frame past it).
const StreamWrite = 256 << 10
