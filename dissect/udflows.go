package dissect

import (
	"github.com/rdmashark/rdmashark/layers/roce"
)

// UD flows: Unreliable Datagram traffic (IBA Vol 1 9.8) has no connection,
// so the transport health of health.go is kept per flow instead — source
// and destination node and QP — with the Q_Keys its DETHs carried. A UD
// requester still numbers its packets (9.8.1: the PSN advances by one per
// packet, the responder does not check it), so a PSN jump is a datagram
// the capture (or the network) lost; nothing is ever resent. CM MADs (QP1)
// and subnet management (QP0) are flows too, counted but without PSN
// analysis.

// MaxUDFlows bounds the UD flows kept (UDFlows.Cut counts the packets of
// flows past it).
const MaxUDFlows = 4096

// maxQKeys bounds the Q_Keys kept per flow.
const maxQKeys = 4

// UDFlow is one direction of UD traffic between two QPs.
type UDFlow struct {
	Src, Dst                Node
	SrcQPN, DstQPN          uint32
	QKeys                   []uint32
	FirstPacket, LastPacket int
	Health                  DirHealth
	psnInit                 bool
	next                    uint32
}

type udKey struct {
	src, dst       Node
	srcQPN, dstQPN uint32
}

// UDFlows is the engine's table of UD flows, in order of first packet.
type UDFlows struct {
	Flows []*UDFlow
	Cut   uint64
	by    map[udKey]*UDFlow
}

// trackUD counts a UD packet in its flow.
func (e *Engine) trackUD(p *Packet) {
	if !p.Has(roce.LayerTypeBTH) || p.CRCDiscarded {
		return
	}
	h := &p.BTH
	if h.OpCode.Transport() != roce.TransportUD || !h.Has(roce.ExtDETH) {
		return
	}
	t := &e.UD
	src, dst := ibNodes(p)
	k := udKey{src, dst, h.DETH.SrcQP, h.DestQP}
	f := t.by[k]
	if f == nil {
		if len(t.Flows) >= MaxUDFlows {
			t.Cut++
			return
		}
		if t.by == nil {
			t.by = map[udKey]*UDFlow{}
		}
		f = &UDFlow{Src: src, Dst: dst, SrcQPN: h.DETH.SrcQP, DstQPN: h.DestQP, FirstPacket: p.Number}
		t.by[k] = f
		t.Flows = append(t.Flows, f)
	}
	f.LastPacket = p.Number
	if len(f.QKeys) < maxQKeys && !containsU32(f.QKeys, h.DETH.QKey) {
		f.QKeys = append(f.QKeys, h.DETH.QKey)
	}
	a := &p.Analysis
	a.Valid = true
	dh := &f.Health
	e.countPacket(p, dh)
	psn := h.PSN & psnMask
	switch {
	case h.DestQP <= 1:
		// Management datagrams (QP0 SMPs, QP1 GMPs such as the CM's,
		// IBA 13.5): the MAD layer retries by transaction ID; their PSNs
		// say nothing of loss.
	case !f.psnInit:
		f.psnInit = true
	case psn == f.next:
	case psnDiff(psn, f.next) < psnHalf:
		a.LostSegment = psnDiff(psn, f.next)
		dh.LostSegments++
		dh.MissingPSNs += uint64(a.LostSegment)
	default:
		// Behind: a duplicate or reordered datagram (UD never resends).
		a.OutOfOrder = true
		dh.OutOfOrderPackets++
	}
	if !a.OutOfOrder {
		f.next = (psn + 1) & psnMask
	}
	dh.interval(p, false, e.opts.HealthInterval, &e.healthIntervals)
}

func containsU32(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
