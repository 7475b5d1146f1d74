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

// maxMarkLookback bounds how many earlier arrows a flagged packet is
// matched against (arrows whose span ended long before it are passed over).
const maxMarkLookback = 256

// markItems gives each flagged packet to one arrow: among the arrows of its
// sender whose span (First to Last) holds it, the one that started last
// (spans overlap: pipelined RDMA Reads, a message resent after later ones
// began); it writes each arrow's counts on its row.
func markItems(items []item, marks []lossMark) {
	var rows []*Row
	for i := range items {
		for j := range items[i].rows {
			if r := &items[i].rows[j]; r.Kind != "missing" && r.First > 0 {
				rows = append(rows, r)
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].First < rows[j].First })
	for k := range marks {
		m := &marks[k]
		n := int(m.num)
		i := sort.Search(len(rows), func(i int) bool { return rows[i].First > n }) - 1
		for stop := max(-1, i-maxMarkLookback); i > stop; i-- {
			r := rows[i]
			if r.LeftToRight != m.c2s || r.Last < n {
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
			break
		}
	}
	for _, r := range rows {
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
