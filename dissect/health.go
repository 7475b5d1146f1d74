package dissect

import (
	"math"
	"slices"
	"time"

	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Transport health: what the RC requester model (rcmodel.go) saw of loss,
// recovery and congestion on each connection and direction, in bounded
// memory. docs/loss.md defines every figure.

// EpisodeTrigger is what started a retransmission episode.
type EpisodeTrigger uint8

const (
	TriggerNone         EpisodeTrigger = iota
	TriggerNAKSequence                 // NAK PSN sequence error (IBA 9.7.5.2.1)
	TriggerRNRNAK                      // RNR NAK (9.7.5.2.8)
	TriggerTimeout                     // no ACK or NAK in the capture before the resend (9.7.6.1.1)
	TriggerReissuedRead                // a Read Request re-issued for the part still missing
	TriggerTCP                         // iWARP: a TCP retransmission (cause not classified)
	numTriggers
)

var triggerNames = [numTriggers]string{"none", "nak_sequence_error", "rnr_nak", "timeout", "reissued_read", "tcp"}

func (t EpisodeTrigger) String() string {
	if t < numTriggers {
		return triggerNames[t]
	}
	return "unknown"
}

// MarshalText makes a trigger appear by name in JSON.
func (t EpisodeTrigger) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// MaxEpisodes bounds the episodes kept per direction (EpisodesCut counts the
// rest; EpisodesByTrigger and EpisodeDuration count them all).
const MaxEpisodes = 64

// MaxIntervals bounds the throughput intervals kept per direction, and
// MaxIntervalsTotal those of all connections and flows together (32 bytes
// each: 32 MiB); IntervalsCut counts the packets past them.
const (
	MaxIntervals      = 4096
	MaxIntervalsTotal = 1 << 20
)

// DefaultHealthInterval is the throughput interval when Options leave it 0.
const DefaultHealthInterval = time.Second

// Episode is one retransmission episode.
type Episode struct {
	Number      int            `json:"number"`
	Trigger     EpisodeTrigger `json:"trigger"`
	FirstPacket int            `json:"first_packet"`
	LastPacket  int            `json:"last_packet"`
	FirstPSN    uint32         `json:"first_psn"`
	Packets     int            `json:"packets"`
	Start       time.Time      `json:"-"`
	// Duration runs from the original transmission of the first lost PSN
	// (or the gap, or the trigger) to the last resent packet.
	Duration time.Duration `json:"-"`
}

// Interval is one throughput interval of a direction.
type Interval struct {
	Start              time.Duration // since the first packet of the capture
	Packets            uint64
	Bytes              uint64
	RetransmittedBytes uint64
}

// Histogram is a fixed-size latency histogram: 8 buckets per power of two
// from 1 µs to about 70 minutes; quantiles are within 1/8 of an octave.
type Histogram struct {
	N   uint64
	Max time.Duration
	// bucket is allocated with the first sample (1 KiB): most
	// connections never fill most of their histograms. When the
	// connection is released, compact trims it to the buckets from the
	// first to the last non-empty one, lo the index of the first.
	bucket []uint32
	lo     uint16
}

const (
	histSub     = 8
	histOctaves = 32
	histBuckets = histSub * histOctaves
)

func histIndex(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	i := int(math.Log2(us) * histSub)
	if i >= histBuckets {
		i = histBuckets - 1
	}
	return i
}

// Add takes one sample: for the plug-ins' latency figures (NVMe/RDMA's
// per-opcode command latency).
func (h *Histogram) Add(d time.Duration) { h.add(d) }

func (h *Histogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if h.bucket == nil {
		h.bucket = make([]uint32, histBuckets)
	}
	h.N++
	if d > h.Max {
		h.Max = d
	}
	h.bucket[histIndex(d)]++
}

// Quantile returns the q-quantile (0..1), the upper edge of its bucket,
// never above Max; 0 without samples.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.N == 0 || h.bucket == nil {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.N)))
	if rank == 0 {
		rank = 1
	}
	var cum uint64
	for j, n := range h.bucket {
		i := j + int(h.lo)
		cum += uint64(n)
		if cum >= rank {
			v := time.Duration(math.Exp2(float64(i+1)/histSub) * float64(time.Microsecond))
			if i == 0 {
				v = time.Microsecond
			}
			if v > h.Max {
				v = h.Max
			}
			return v
		}
	}
	return h.Max
}

// compact trims the buckets of a histogram that takes no more samples
// (its connection was released) to those from the first non-empty one to
// the last: Quantile answers the same.
func (h *Histogram) compact() {
	if h.lo != 0 || len(h.bucket) != histBuckets {
		return // empty, or compacted already
	}
	first, last := -1, -1
	for i, n := range h.bucket {
		if n != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		h.bucket = nil
		return
	}
	h.bucket = slices.Clone(h.bucket[first : last+1])
	h.lo = uint16(first)
}

// compact lets go of what a released connection's health no longer
// needs: its histograms' empty buckets and its slices' spare capacity.
func (hl *Health) compact() {
	for d := range hl.Dir {
		dh := &hl.Dir[d]
		for _, h := range []*Histogram{&dh.EpisodeDuration, &dh.AckLatency, &dh.ReadLatency, &dh.CEToCNP} {
			h.compact()
		}
		if cap(dh.Intervals) > len(dh.Intervals) {
			dh.Intervals = slices.Clone(dh.Intervals)
		}
		if cap(dh.Episodes) > len(dh.Episodes) {
			dh.Episodes = slices.Clone(dh.Episodes)
		}
	}
}

// DirHealth is one direction's transport health: the packets that travel
// in it, and (NAKs, latencies, lost PSNs) what happened to the requests
// sent in it.
type DirHealth struct {
	Packets, Bytes uint64
	// RetransmittedPackets: request packets whose PSN was already seen in
	// this direction, and Read Responses whose PSN was; frame bytes.
	RetransmittedPackets, RetransmittedBytes uint64
	DuplicatePackets                         uint64 // repeated Read Responses; resent requests already acknowledged
	OutOfOrderPackets                        uint64 // requests filling a gap
	NetworkDuplicates                        uint64 // of the duplicates, requests the network repeated (same IPv4 ID and bytes)
	LostSegments                             uint64 // PSN gaps
	MissingPSNs                              uint64 // PSNs skipped by those gaps
	FilledPSNs                               uint64 // of those, sent later (out of order)
	WireLostPSNs                             uint64 // gap PSNs NAKed or resent: lost on the network
	CaptureLostPSNs                          uint64 // gap PSNs acknowledged, never NAKed or resent: lost by the capture
	// NAKs of this direction's requests by code (IBA Table 44); NAKsOther
	// the reserved codes; RNR NAKs with the smallest and largest timer.
	NAKs                     [5]uint64
	NAKsOther                uint64
	RNRNAKs                  uint64
	RNRTimerMin, RNRTimerMax roce.RNRTimer
	rnrSeen                  bool
	// Episodes of retransmission.
	EpisodesByTrigger [numTriggers]uint64
	Episodes          []Episode
	EpisodesCut       uint64
	EpisodeDuration   Histogram
	episodeCount      int
	// AckTimeout is the CM REQ's Local ACK Timeout (0 unknown);
	// EarlyTimeouts counts the timeout episodes whose resend came sooner
	// after the original than that timeout.
	AckTimeout    time.Duration
	EarlyTimeouts uint64
	// Latency of this direction's requests: to the ACK, and of Reads to
	// the first response.
	AckLatency, ReadLatency Histogram
	LatencyCut              uint64 // requests forgotten unanswered past maxPendingAcks
	// Congestion: CE-marked packets of this direction, CNPs sent in it, and
	// the delay from a CE mark to the CNP the other way answering it.
	ECNCE, CNPs uint64
	CEToCNP     Histogram
	// PayloadMismatches: retransmissions that differ from their original.
	PayloadMismatches uint64
	// WindowCut: PSNs older than WindowPSNs (taken as seen); CompareCut:
	// retransmissions whose original had left the comparison window.
	WindowCut, CompareCut uint64
	// iWARP, from the TCP layer: retransmitted segments are counted in
	// RetransmittedPackets too.
	TCPRetransmissions, TCPDupAcks, TCPZeroWindows, TCPMissingOctets uint64
	// Throughput intervals.
	Intervals    []Interval
	IntervalsCut uint64
}

// Health is a connection's (or UD flow's) transport health, indexed by
// Direction.Index().
type Health struct {
	Dir [2]DirHealth
	// Interval is the throughput interval used.
	Interval time.Duration
}

func (e *Engine) health(c *Connection) *Health {
	if c.Health == nil {
		c.Health = &Health{Interval: e.opts.HealthInterval}
		if c.Health.Interval <= 0 {
			c.Health.Interval = DefaultHealthInterval
		}
	}
	return c.Health
}

// interval counts p in its throughput interval.
func (dh *DirHealth) interval(p *Packet, retrans bool, every time.Duration, total *int) {
	if every <= 0 {
		every = DefaultHealthInterval
	}
	// Most packets fall in the last interval: no division for them (the
	// three per packet were most of this function's time).
	if n := len(dh.Intervals); n > 0 {
		if s := dh.Intervals[n-1].Start; p.RelTime >= s && p.RelTime-s < every {
			dh.Intervals[n-1].count(p, retrans)
			return
		}
	}
	k := int(p.RelTime / every)
	if k < 0 {
		k = 0
	}
	n := len(dh.Intervals)
	if n > 0 && k < int(dh.Intervals[n-1].Start/every) {
		k = int(dh.Intervals[n-1].Start / every) // out of time order: the latest
	}
	if n == 0 || int(dh.Intervals[n-1].Start/every) != k {
		if n == MaxIntervals || *total >= MaxIntervalsTotal {
			dh.IntervalsCut++
			return
		}
		*total++
		dh.Intervals = append(dh.Intervals, Interval{Start: time.Duration(k) * every})
		n++
	}
	dh.Intervals[n-1].count(p, retrans)
}

func (iv *Interval) count(p *Packet, retrans bool) {
	iv.Packets++
	iv.Bytes += uint64(p.Length)
	if retrans {
		iv.RetransmittedBytes += uint64(p.Length)
	}
}

// PFCStats counts the IEEE 802.3 MAC Control frames of a capture: PAUSE
// (802.3 Annex 31B) and Priority-based Flow Control (802.1Qbb). They belong
// to a link, not a connection.
type PFCStats struct {
	PFCFrames, PauseFrames uint64
	// Pauses counts, per priority, the frames that paused it (time > 0)
	// and Resumes the ones that resumed it (enabled, time 0); MaxQuanta is
	// the longest pause asked (in quanta of 512 bit times).
	Pauses, Resumes [pfc.Priorities]uint64
	MaxQuanta       [pfc.Priorities]uint16
	FirstPacket     int
}

func (e *Engine) countPFC(p *Packet) {
	if len(p.Decoded) == 0 || p.Decoded[len(p.Decoded)-1] != pfc.LayerTypeMACControl {
		return
	}
	s := &e.PFC
	m := &p.PFC
	switch m.Opcode {
	case pfc.OpPFC:
		s.PFCFrames++
		for i := 0; i < pfc.Priorities; i++ {
			if m.ClassEnable&(1<<i) == 0 {
				continue
			}
			if m.Quanta[i] == 0 {
				s.Resumes[i]++
				continue
			}
			s.Pauses[i]++
			s.MaxQuanta[i] = max(s.MaxQuanta[i], m.Quanta[i])
		}
	case pfc.OpPause:
		s.PauseFrames++
	default:
		return
	}
	if s.FirstPacket == 0 {
		s.FirstPacket = p.Number
	}
}
