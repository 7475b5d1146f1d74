package live

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/source"
)

// Source is what Run reads frames from; *Handle is one.
type Source interface {
	// ReadPacket returns the next frame, valid until the next call; after
	// the deadline it fails with os.ErrDeadlineExceeded.
	ReadPacket() ([]byte, Info, error)
	SetDeadline(t time.Time) error
	LinkType() layers.LinkType
}

// RunConfig says when Run stops and what it does with each frame.
type RunConfig struct {
	// Count stops the capture after that many frames (0: no limit).
	Count int
	// Duration stops the capture after that long (0: no limit).
	Duration time.Duration
	// Save, when set, gets every frame before the engine does.
	Save *Saver
	// Tick, when set, is called about every TickEvery while the capture
	// runs, busy or idle, on Run's goroutine: the place to flush output
	// and to look at the engine. An error stops the capture.
	Tick func(now time.Time) error
	// TickEvery defaults to DefaultTick.
	TickEvery time.Duration
}

// DefaultTick is how often Run flushes the Saver and calls Tick.
const DefaultTick = 200 * time.Millisecond

// Why a capture stopped.
type StopReason uint8

const (
	StopInterrupted StopReason = iota // the context ended (Ctrl-C)
	StopCount                         // Count frames
	StopDuration                      // Duration passed
	StopError                         // the source, the engine's callback, Tick or Save failed
)

func (r StopReason) String() string {
	switch r {
	case StopInterrupted:
		return "interrupted"
	case StopCount:
		return "count reached"
	case StopDuration:
		return "duration reached"
	}
	return "error"
}

// Result tells how a capture went.
type Result struct {
	Packets uint64
	Start   time.Time
	End     time.Time
	Stop    StopReason
}

// Records is a live capture as a source.Source: it reads frames from a
// Source (a Handle), numbers them from 1, saves them (RunConfig.Save), calls
// RunConfig.Tick between them, and ends — io.EOF — when the context ends,
// RunConfig.Count frames were read or RunConfig.Duration passed. The engine
// reads it with Engine.Run like a file, so a live capture ends with the
// engine's Finish as a file does. Close it when done.
type Records struct {
	ctx      context.Context
	src      Source
	cfg      RunConfig
	res      Result
	every    time.Duration
	stopAt   time.Time
	nextTick time.Time
	deadline time.Time
	linkType layers.LinkType
	stopWake func() bool
	done     bool
	err      error
}

// NewRecords starts reading src as cfg says. The engine reads the Records
// with its own loop (dissect.Engine.Run), which ends every input with
// Finish: live capture has no loop of its own, and this package knows
// nothing of the engine (a source is a leaf).
func NewRecords(ctx context.Context, src Source, cfg RunConfig) *Records {
	r := &Records{ctx: ctx, src: src, cfg: cfg, res: Result{Start: time.Now()}, every: cfg.TickEvery, linkType: src.LinkType()}
	if r.every <= 0 {
		r.every = DefaultTick
	}
	if cfg.Duration > 0 {
		r.stopAt = r.res.Start.Add(cfg.Duration)
	}
	r.nextTick = r.res.Start.Add(r.every)
	// Ending ctx wakes a blocked read at once.
	r.stopWake = context.AfterFunc(ctx, func() { _ = src.SetDeadline(time.Unix(1, 0)) })
	return r
}

// Close stops waking the source and clears its deadline.
func (r *Records) Close() {
	r.stopWake()
	_ = r.src.SetDeadline(time.Time{})
}

// Result tells how the capture went so far: why it stopped, once it did.
func (r *Records) Result() Result {
	res := r.res
	if res.End.IsZero() {
		res.End = time.Now()
	}
	return res
}

func (r *Records) stop(why StopReason, err error) (source.Record, error) {
	r.done, r.err = true, err
	r.res.End = time.Now()
	r.res.Stop = why
	if err == nil {
		err = io.EOF
	}
	return source.Record{}, err
}

func (r *Records) tick(now time.Time) error {
	if r.cfg.Save != nil {
		if err := r.cfg.Save.Flush(); err != nil {
			return err
		}
	}
	if r.cfg.Tick != nil {
		return r.cfg.Tick(now)
	}
	return nil
}

// Next implements source.Source.
func (r *Records) Next() (source.Record, error) {
	if r.done {
		if r.err != nil {
			return source.Record{}, r.err
		}
		return source.Record{}, io.EOF
	}
	for {
		if r.ctx.Err() != nil {
			return r.stop(StopInterrupted, nil)
		}
		if r.cfg.Count > 0 && r.res.Packets >= uint64(r.cfg.Count) {
			return r.stop(StopCount, nil)
		}
		now := time.Now()
		if !r.stopAt.IsZero() && !now.Before(r.stopAt) {
			return r.stop(StopDuration, nil)
		}
		if !now.Before(r.nextTick) {
			if err := r.tick(now); err != nil {
				return r.stop(StopError, err)
			}
			for !now.Before(r.nextTick) {
				r.nextTick = r.nextTick.Add(r.every)
			}
		}
		want := r.nextTick
		if !r.stopAt.IsZero() && r.stopAt.Before(want) {
			want = r.stopAt
		}
		if !want.Equal(r.deadline) && r.ctx.Err() == nil {
			if err := r.src.SetDeadline(want); err != nil {
				return r.stop(StopError, err)
			}
			r.deadline = want
		}
		data, info, err := r.src.ReadPacket()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			r.deadline = time.Time{} // a past deadline stays: set it again
			continue
		}
		if errors.Is(err, io.EOF) {
			// The source ended (a Capture's reader stopped, and it says
			// why).
			why := StopInterrupted
			if s, ok := r.src.(interface{ StopReason() StopReason }); ok {
				why = s.StopReason()
			}
			return r.stop(why, nil)
		}
		if err != nil {
			return r.stop(StopError, err)
		}
		if r.cfg.Save != nil {
			if err := r.cfg.Save.WritePacket(info, data); err != nil {
				return r.stop(StopError, err)
			}
		}
		r.res.Packets++
		num := int(r.res.Packets)
		if info.Number != 0 {
			num = int(info.Number)
		}
		return source.Record{Number: num, LostBefore: info.LostBefore, Data: data, LinkType: r.linkType,
			CI: gopacket.CaptureInfo{Timestamp: info.Timestamp, CaptureLength: info.CaptureLength, Length: info.Length}}, nil
	}
}
