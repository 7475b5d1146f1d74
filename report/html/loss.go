package html

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// maxLossMarks bounds the flagged packets a connection keeps for its
// ladder (12 bytes each).
const maxLossMarks = 1 << 16

// lossMark is a packet the transport analysis (dissect/rcmodel.go,
// health_tcp.go) flagged: retransmitted, duplicate, or after a PSN gap.
type lossMark struct {
	num   int32
	c2s   bool
	retx  bool
	dup   bool
	gapOf uint32 // PSNs (iWARP: octets) missing just before it
}

func (cd *connData) lossMark(p *dissect.Packet) {
	if len(cd.marks) >= maxLossMarks {
		cd.marksCut++
		return
	}
	a := &p.Analysis
	cd.marks = append(cd.marks, lossMark{num: int32(p.Number), c2s: p.Dir == dissect.DirClientToServer,
		retx: a.Retransmission, dup: a.Duplicate, gapOf: a.LostSegment})
}

// markRows counts, for each arrow, the flagged packets its sender sent
// within its packet span (First to Last), and writes them on the row.
func markRows(rows []Row, marks []lossMark) {
	for i := range rows {
		r := &rows[i]
		if r.Kind == "missing" || r.First == 0 {
			continue
		}
		j := sort.Search(len(marks), func(k int) bool { return int(marks[k].num) >= r.First })
		for ; j < len(marks) && int(marks[j].num) <= r.Last; j++ {
			m := &marks[j]
			if m.c2s != r.LeftToRight {
				continue
			}
			if m.retx {
				r.Retx++
			}
			if m.dup {
				r.Dup++
			}
			if m.gapOf > 0 {
				r.Gaps++
				r.GapPSNs += uint64(m.gapOf)
			}
		}
		var parts []string
		if r.Retx > 0 {
			parts = append(parts, fmt.Sprintf("↻ %d retransmitted", r.Retx))
		}
		if r.Dup > 0 {
			parts = append(parts, fmt.Sprintf("%d duplicate", r.Dup))
		}
		if r.Gaps > 0 {
			parts = append(parts, fmt.Sprintf("%d gap(s), %d missing", r.Gaps, r.GapPSNs))
		}
		r.Loss = strings.Join(parts, " · ")
		if r.Loss != "" {
			r.Title += "\n" + r.Loss
		}
	}
}

// healthText is a connection's transport-health headline: retransmitted
// packets each way, NAKs, episodes, recovery time.
func healthText(h *report.TransportHealth) string {
	if h == nil {
		return "-"
	}
	c, s := &h.ClientToServer, &h.ServerToClient
	out := fmt.Sprintf("retransmitted %d C→S / %d S→C · %d NAKs · %d episodes", c.RetransmittedPackets, s.RetransmittedPackets,
		naks(h), c.Episodes+s.Episodes)
	var maxUs float64
	var p50 []string
	for _, d := range []*report.DirectionHealth{c, s} {
		if d.EpisodeDuration != nil {
			maxUs = max(maxUs, d.EpisodeDuration.MaxUs)
			p50 = append(p50, latencyText(d.EpisodeDuration.P50us))
		}
	}
	if len(p50) > 0 {
		out += fmt.Sprintf(" · recovery p50 %s, max %s", strings.Join(p50, " / "), latencyText(maxUs))
	}
	return out
}

// naks counts the NAKs of both directions, RNR NAKs included.
func naks(h *report.TransportHealth) uint64 {
	var n uint64
	for _, d := range []*report.DirectionHealth{&h.ClientToServer, &h.ServerToClient} {
		for _, k := range d.NAKs {
			n += k
		}
		n += d.RNRNAKs
	}
	return n
}
