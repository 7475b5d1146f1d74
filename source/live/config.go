package live

import "time"

// Defaults of Config.
const (
	// DefaultSnapLen is the most a packet socket hands over of one frame
	// (libpcap's MAXIMUM_SNAPLEN): whole frames, GRO super-frames included.
	DefaultSnapLen = 262144
	// DefaultBufferSize is the ring's size in bytes: 32 blocks of 1 MiB,
	// 16 times libpcap's (and so tcpdump's and dumpcap's) default of
	// 2 MiB, so that a burst of analysis work (a report refresh, a
	// connection's checks) does not cost frames.
	DefaultBufferSize = 32 << 20
)

// Config says what to capture.
type Config struct {
	// Interface is the network interface's name, e.g. "eth0".
	Interface string
	// Filter selects the frames to keep; the zero Filter means
	// DefaultFilter(PortRoCEv2).
	Filter Filter
	// SnapLen is the most bytes kept of a frame (default DefaultSnapLen).
	SnapLen int
	// Promiscuous also captures frames addressed to other stations, as on
	// a mirror port (the mode ends when the capture does).
	Promiscuous bool
	// BufferSize is the memory-mapped ring's size in bytes (default
	// DefaultBufferSize): blocks of 1 MiB, or smaller ones down to 128 KiB
	// for rings under 8 MiB, at least 2 of them. When every block is
	// waiting for the engine or the writer, the kernel drops frames and
	// counts them in Stats.Drops.
	BufferSize int
}

func (c Config) withDefaults() Config {
	if c.Filter.IsZero() {
		c.Filter = DefaultFilter(PortRoCEv2)
	}
	if c.SnapLen <= 0 || c.SnapLen > DefaultSnapLen {
		c.SnapLen = DefaultSnapLen
	}
	if c.BufferSize <= 0 {
		c.BufferSize = DefaultBufferSize
	}
	return c
}

// Info describes one captured frame.
type Info struct {
	Timestamp     time.Time
	CaptureLength int // bytes kept
	Length        int // bytes on the wire
	// Number is the frame's number in the capture (from 1), when the
	// source numbers its frames (a Capture: the frames the analysis
	// skipped keep their numbers); 0 otherwise.
	Number uint64
	// LostBefore counts the frames lost just before this one (a Capture:
	// dropped by the kernel, or skipped by the analysis); see
	// source.Record.LostBefore.
	LostBefore uint64
}

// Stats are the kernel's counters of a capture (packet(7)
// PACKET_STATISTICS).
type Stats struct {
	// Packets counts the frames the filter kept, dropped ones included.
	Packets uint64
	// Drops counts the frames the kernel dropped because the ring was
	// full.
	Drops uint64
}
