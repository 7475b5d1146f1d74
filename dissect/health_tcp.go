package dissect

import (
	"time"

	"github.com/gopacket/gopacket/layers"
)

// iWARP transport health comes from the TCP layer (RFC 9293): iWARP leaves
// loss recovery to TCP, so its retransmissions, duplicate ACKs, zero
// windows and round-trip times are TCP's, as Wireshark's tcp.analysis.*
// defines them (tshark 4.0, packet-tcp.c's sequence analysis). A segment
// with data (or SYN/FIN) is, in this order of precedence:
//   - a spurious retransmission (a retransmission too) when the other side
//     has acknowledged all of its bytes already;
// and when it starts below the highest sequence number sent (but for the
// one byte of a zero window probe):
//   - a fast retransmission (a retransmission too) when the other side
//     has sent two or more duplicate ACKs, the last ACK names this
//     segment's first byte and came less than 20 ms before;
//   - out of order when it comes within the connection's first RTT (the
//     time from the last SYN to the first ACK without SYN; 3 ms when the
//     handshake is not in the capture) of the segment that last advanced
//     the highest sequence number, and does not end exactly there —
//     reordering, not resending;
//   - else a retransmission.
// A pure ACK (no data, SYN, FIN or RST) is a duplicate ACK when it repeats
// the last ACK number and the last window, the window is not zero, and its
// sequence number is the next one of its direction (packet-tcp.c's
// "DUPLICATE ACK": seq == nextseq). An ACK that a reordering link delivers
// after data the same side sent later carries an older sequence number
// (lossy/siw-nfs3-reorder.pcap, packet 452: Seq 2340967321 after segments
// up to 2340989041) and is no duplicate.

// tcpDir follows one direction of a TCP connection for health.
type tcpDir struct {
	init      bool
	high      uint32 // one past the highest sequence number sent
	lastAck   uint32
	lastWin   uint16
	ackInit   bool
	rttSeq    uint32 // end of the segment being timed, when timing
	rttT      time.Time
	timing    bool
	retrans   bool // a retransmission since rttSeq was sent (Karn)
	inEpisode bool
	epIdx     int
	highT     time.Time // when high last advanced
	dupAcks   int       // consecutive duplicate ACKs sent in this direction
	lastAckT  time.Time // when this direction last sent an ACK
	// nextSeq is tshark's nextseq: one past the highest sequence number
	// of any segment of the direction, empty ones included (seqInit: one
	// was seen).
	nextSeq uint32
	seqInit bool
}

type tcpHealth struct {
	dir [2]tcpDir
}

// Wireshark's thresholds (tcp.analysis): a resend within fastRetransWindow
// of the duplicate ACKs asking for it is a fast retransmission; without a
// handshake RTT, a segment within defaultOOOThreshold of the highest is
// out of order.
const (
	fastRetransWindow   = 20 * time.Millisecond
	defaultOOOThreshold = 3 * time.Millisecond
)

func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }

// classifyTCP counts an iWARP connection's TCP segment in its health.
func (e *Engine) classifyTCP(p *Packet) {
	c := p.Conn
	if c == nil || c.Transport != TransportIWARP || p.Dir == DirUnknown || !p.Has(layers.LayerTypeTCP) {
		return
	}
	if c.tcpH == nil {
		c.tcpH = &tcpHealth{}
	}
	a := &p.Analysis
	a.Valid = true
	hl := e.health(c)
	d := p.Dir.Index()
	dh := &hl.Dir[d]
	e.countPacket(p, dh)
	t := &p.TCP
	td := &c.tcpH.dir[d]
	n := uint32(len(t.Payload))
	if t.SYN || t.FIN {
		n++
	}
	end := t.Seq + n
	th := c.tcpH
	atNext := td.seqInit && t.Seq == td.nextSeq
	if !td.seqInit || seqAfter(end, td.nextSeq) {
		td.nextSeq, td.seqInit = end, true
	}
	if n == 0 && td.init && !t.RST && seqAfter(t.Seq, td.high) {
		// An empty segment ahead of everything sent: the capture lacks
		// what lies between (tshark: "previous segment not captured").
		a.LostSegment = t.Seq - td.high
		dh.LostSegments++
		dh.TCPMissingOctets += uint64(t.Seq - td.high)
		td.high = t.Seq
	}
	if n > 0 {
		seglen := uint32(len(t.Payload))
		od := &th.dir[1-d]
		behind := td.init && seqAfter(td.high, t.Seq)
		if seglen > 1 && td.high-1 == t.Seq {
			behind = false // a zero window probe's byte, then new data
		}
		ooo := p.TCPInitialRTT // the TCP conversation's (frame_state.go)
		if ooo == 0 {
			ooo = defaultOOOThreshold
		}
		switch {
		case !td.init:
			td.init, td.high, td.highT = true, end, p.Timestamp
		case seglen > 0 && od.ackInit && !seqAfter(t.Seq+seglen, od.lastAck),
			// Spurious: every byte of it acknowledged already.
			behind && od.dupAcks >= 2 && od.lastAck == t.Seq && timeSub(p.Timestamp, od.lastAckT) < fastRetransWindow,
			// Fast: what the duplicate ACKs asked for.
			behind && !(timeSub(p.Timestamp, td.highT) < ooo && td.high != end):
			a.Retransmission = true
			td.retrans = true
			dh.TCPRetransmissions++
			if seqAfter(end, td.high) {
				td.high, td.highT = end, p.Timestamp
			}
		case behind:
			a.OutOfOrder = true
			dh.OutOfOrderPackets++
			if seqAfter(end, td.high) {
				td.high, td.highT = end, p.Timestamp
			}
		default:
			if seqAfter(t.Seq, td.high) {
				a.LostSegment = t.Seq - td.high
				dh.LostSegments++
				dh.TCPMissingOctets += uint64(t.Seq - td.high)
			}
			td.high, td.highT = end, p.Timestamp
			if !td.timing {
				td.timing, td.rttSeq, td.rttT, td.retrans = true, end, p.Timestamp, false
			}
		}
	}
	if a.Retransmission {
		dh.RetransmittedPackets++
		dh.RetransmittedBytes += uint64(p.Length)
		if !td.inEpisode {
			td.inEpisode = true
			dh.episodeCount++
			dh.EpisodesByTrigger[TriggerTCP]++
			td.epIdx = -1
			if len(dh.Episodes) < MaxEpisodes {
				td.epIdx = len(dh.Episodes)
				dh.Episodes = append(dh.Episodes, Episode{Number: dh.episodeCount, Trigger: TriggerTCP,
					FirstPacket: p.Number, Start: p.Timestamp})
			} else {
				dh.EpisodesCut++
			}
		}
		a.Episode = dh.episodeCount
		if td.epIdx >= 0 {
			ep := &dh.Episodes[td.epIdx]
			ep.Packets++
			ep.LastPacket = p.Number
			ep.Duration = timeSub(p.Timestamp, ep.Start)
		}
	} else if n > 0 && td.inEpisode {
		td.inEpisode = false
		if td.epIdx >= 0 {
			dh.EpisodeDuration.add(dh.Episodes[td.epIdx].Duration)
		}
	}
	if t.ACK {
		if t.Window == 0 && !t.RST && !t.SYN && !t.FIN {
			dh.TCPZeroWindows++
		}
		if td.ackInit && len(t.Payload) == 0 && !t.SYN && !t.FIN && !t.RST && t.Ack == td.lastAck && t.Window == td.lastWin &&
			t.Window != 0 && atNext {
			a.Duplicate = true
			dh.TCPDupAcks++
			td.dupAcks++
		} else if !td.ackInit || t.Ack != td.lastAck {
			td.dupAcks = 0
		}
		td.ackInit, td.lastAck, td.lastWin, td.lastAckT = true, t.Ack, t.Window, p.Timestamp
		// RTT of the other direction's timed segment (Karn: not when it
		// was retransmitted).
		od := &c.tcpH.dir[1-d]
		if od.timing && !seqAfter(od.rttSeq, t.Ack) {
			od.timing = false
			if !od.retrans {
				a.AckRTT, a.HasAckRTT = timeSub(p.Timestamp, od.rttT), true
				hl.Dir[1-d].AckLatency.add(a.AckRTT)
			}
		}
	}
	dh.interval(p, a.Retransmission, e.opts.HealthInterval, &e.healthIntervals)
}
