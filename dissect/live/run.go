package live

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
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
	// Each, when set, is called with every frame after the engine
	// processed it; the Packet is reused for the next frame. An error
	// stops the capture.
	Each func(p *dissect.Packet) error
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
	StopError                         // the source, Each, Tick or Save failed
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

// Run reads frames from src and processes each in eng, numbering them from
// 1 and timing them from the first, as the engine does for a file, until
// ctx ends, cfg.Count frames were read or cfg.Duration passed: those stops
// return a nil error. A failing source (the interface went down), Each,
// Tick or Save stop it with their error. Everything read before the stop
// stays in eng, and Run ends the engine's input (Finish) before it
// returns. One Packet is reused for every frame.
func Run(ctx context.Context, src Source, eng *dissect.Engine, cfg RunConfig) (Result, error) {
	res := Result{Start: time.Now()}
	every := cfg.TickEvery
	if every <= 0 {
		every = DefaultTick
	}
	var stopAt time.Time
	if cfg.Duration > 0 {
		stopAt = res.Start.Add(cfg.Duration)
	}
	// Ending ctx wakes a blocked read at once.
	stopWake := context.AfterFunc(ctx, func() { _ = src.SetDeadline(time.Unix(1, 0)) })
	defer stopWake()
	defer func() { _ = src.SetDeadline(time.Time{}) }()

	var (
		p        dissect.Packet
		first    time.Time
		nextTick = res.Start.Add(every)
		deadline time.Time
		linkType = src.LinkType()
		finish   = func(r StopReason, err error) (Result, error) {
			res.End = time.Now()
			res.Stop = r
			return res, err
		}
	)
	tick := func(now time.Time) error {
		if cfg.Save != nil {
			if err := cfg.Save.Flush(); err != nil {
				return err
			}
		}
		if cfg.Tick != nil {
			return cfg.Tick(now)
		}
		return nil
	}
	for {
		if ctx.Err() != nil {
			return finish(StopInterrupted, nil)
		}
		if cfg.Count > 0 && res.Packets >= uint64(cfg.Count) {
			return finish(StopCount, nil)
		}
		now := time.Now()
		if !stopAt.IsZero() && !now.Before(stopAt) {
			return finish(StopDuration, nil)
		}
		if !now.Before(nextTick) {
			if err := tick(now); err != nil {
				return finish(StopError, err)
			}
			for !now.Before(nextTick) {
				nextTick = nextTick.Add(every)
			}
		}
		want := nextTick
		if !stopAt.IsZero() && stopAt.Before(want) {
			want = stopAt
		}
		if !want.Equal(deadline) && ctx.Err() == nil {
			if err := src.SetDeadline(want); err != nil {
				return finish(StopError, err)
			}
			deadline = want
		}
		data, info, err := src.ReadPacket()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			deadline = time.Time{} // a past deadline stays: set it again
			continue
		}
		if err != nil {
			return finish(StopError, err)
		}
		if cfg.Save != nil {
			if err := cfg.Save.WritePacket(info, data); err != nil {
				return finish(StopError, err)
			}
		}
		res.Packets++
		if res.Packets == 1 {
			first = info.Timestamp
		}
		p.Number = int(res.Packets)
		p.Timestamp = info.Timestamp
		p.RelTime = info.Timestamp.Sub(first)
		p.CaptureLength = info.CaptureLength
		p.Length = info.Length
		p.LinkType = linkType
		eng.Process(&p, data)
		if cfg.Each != nil {
			if err := cfg.Each(&p); err != nil {
				return finish(StopError, err)
			}
		}
	}
}

// finishEngine tells the engine the input ended, so that it hands on what
// it still holds (TCP data before a gap, open messages), when the engine
// has that step (dissect.Engine.Finish).
func finishEngine(eng *dissect.Engine) {
	if f, ok := any(eng).(interface{ Finish() }); ok {
		f.Finish()
	}
}
