//go:build !linux

package live

import (
	"context"
	"io"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Capture runs a Handle's ring; on this system there is none (Open fails).
type Capture struct{}

// CaptureConfig says when a Capture stops and where its frames go.
type CaptureConfig struct {
	Count          int
	Duration       time.Duration
	Writer         FrameWriter
	FlushEvery     time.Duration
	EngineBlocks   int
	ReaderPriority int
}

// FrameWriter takes the frames a Capture saves.
type FrameWriter interface {
	WritePacket(info Info, data []byte) error
	Flush() error
}

// Loss is a place in the capture where the kernel dropped frames.
type Loss struct {
	Analysis bool
	Before   uint64
	Time     time.Time
	Dropped  uint64
}

// CaptureResult tells how the reader and the writer ended.
type CaptureResult struct {
	Stop          StopReason
	Frames        uint64
	Err, WriteErr error
}

func StartCapture(ctx context.Context, h *Handle, cfg CaptureConfig) *Capture { return &Capture{} }
func (c *Capture) Stop()                                                      {}
func (c *Capture) ReadPacket() ([]byte, Info, error)                          { return nil, Info{}, ErrUnsupported }
func (c *Capture) SetDeadline(t time.Time) error                              { return ErrUnsupported }
func (c *Capture) LinkType() layers.LinkType                                  { return layers.LinkTypeEthernet }
func (c *Capture) StopReason() StopReason                                     { return StopError }
func (c *Capture) EngineDone()                                                {}
func (c *Capture) Wait() CaptureResult                                        { return CaptureResult{Stop: StopError, Err: ErrUnsupported} }
func (c *Capture) PriorityErr() error                                         { return nil }
func (c *Capture) Losses() []Loss                                             { return nil }

func (c *Capture) Stream(w io.Writer, snaplen int) error { return ErrUnsupported }

// StreamWrite is how many bytes of the frame stream Stream writes at once.
const StreamWrite = 256 << 10
