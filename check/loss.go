package check

import (
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Loss and recovery rules (issue 10). What each packet is — new,
// retransmitted, filling a gap — the engine's RC requester model decided
// (dissect/rcmodel.go, Packet.Analysis); these rules read its verdict.

// lossState is a connection's state for the rules of this file.
type lossState struct {
	// naks are the NAK PSN sequence errors and RNR NAKs awaiting the
	// requester's resend, to tell recovered loss from loss never recovered.
	naks []pendingNAK
	// Outstanding RDMA Read / Atomic requests per requester direction.
	reads [2][]outRead
	over  [2]bool // above the limit now (one finding per excursion)
	// The limits the CM REQ/REP set (RoCE), by requester direction.
	limit    [2]int
	hasLimit bool
	req      struct{ rr, id uint8 }
	hasReq   bool
	// iWARP: RDMA Read Requests sent and Read Responses completed.
	iwReads [2]int
}

type pendingNAK struct {
	pkt int
	psn uint32
	// d is the requester's direction index; -1 when the NAK came with
	// no direction (a connection whose roles were not settled yet,
	// dissect/orient.go): either side's resend or acknowledgement answers
	// it.
	d     int
	rnr   bool
	first string // the message the NAK rule reports
	key   string
}

type outRead struct {
	psn, end uint32
	pkt      int
}

const maxPendingNAKs = 32

// nakLater holds a NAK PSN sequence error or RNR NAK until the requester
// resends (recovered: info) or the capture ends (not recovered: warning).
// It reports at once what it cannot hold.
func nakLater(c *Conn, p *dissect.Packet, key, msg string, rnr bool) {
	ls := &c.loss
	if len(ls.naks) == maxPendingNAKs {
		c.Reportf([]int{p.Number}, key, "%s", msg)
		return
	}
	d := 1 - p.Dir.Index()
	if p.Dir == dissect.DirUnknown {
		d = -1
	}
	ls.naks = append(ls.naks, pendingNAK{pkt: p.Number, psn: p.BTH.PSN & psnMask, d: d, rnr: rnr, first: msg, key: key})
}

// nakResend: a request packet resent after a NAK: the NAKs it answers are
// recovered.
func nakResend(c *Conn, p *dissect.Packet) {
	ls := &c.loss
	if len(ls.naks) == 0 {
		return
	}
	a := &p.Analysis
	psn := p.BTH.PSN & psnMask
	d := p.Dir.Index()
	if p.Dir == dissect.DirUnknown {
		d = -2 // answers only the NAKs of no direction
	}
	for i := 0; i < len(ls.naks); i++ {
		n := ls.naks[i]
		if n.d != d && n.d >= 0 || n.pkt >= p.Number {
			continue
		}
		// Go-back-N resends from the NAKed PSN (9.7.5.2.1); after an RNR
		// NAK the requester retries the request (9.7.5.2.8).
		if psn != n.psn || !(a.Retransmission || a.OutOfOrder || n.rnr) {
			continue
		}
		c.Report(Finding{Packets: []int{n.pkt, p.Number}, Key: n.key, Severity: Info,
			Message: fmt.Sprintf("%s; recovered: the requester resent PSN %d in packet %d", n.first, psn, p.Number)})
		ls.naks = append(ls.naks[:i], ls.naks[i+1:]...)
		i--
	}
}

// nakAcked: the responder acknowledged every request up to psn (an ACK, or
// a NAK PSN sequence error for psn+1; IBA 9.7.5.1.1: an acknowledgment
// covers every request up to its PSN): a NAK PSN sequence error for a PSN
// at or before it was recovered, whichever transmission delivered it. On a
// reordering link the resend can come before the NAK it answers
// (lossy/rxe-ib_write_bw-reorder.pcap: PSN 16480952 resent in packet 3243,
// the NAK for it delayed to packet 3394, acknowledged by a NAK for
// 16480953 and later ACKs), so no resend follows the NAK in the capture.
func nakAcked(c *Conn, p *dissect.Packet, psn uint32) {
	ls := &c.loss
	d := 1 - p.Dir.Index() // the requester's direction
	if p.Dir == dissect.DirUnknown {
		d = -2 // as nakResend
	}
	for i := 0; i < len(ls.naks); i++ {
		n := ls.naks[i]
		if n.d != d && n.d >= 0 || n.rnr || n.pkt >= p.Number || psnDiff(psn, n.psn) < 0 {
			continue
		}
		c.Report(Finding{Packets: []int{n.pkt, p.Number}, Key: n.key, Severity: Info,
			Message: fmt.Sprintf("%s; recovered: the responder acknowledged PSN %d in packet %d", n.first, n.psn, p.Number)})
		ls.naks = append(ls.naks[:i], ls.naks[i+1:]...)
		i--
	}
}

// endNAK reports the NAKs no resend answered.
func endNAK(c *Conn) {
	for _, n := range c.loss.naks {
		c.Reportf([]int{n.pkt}, n.key, "%s; not recovered: the capture holds no resend of PSN %d", n.first, n.psn)
	}
	c.loss.naks = nil
}

// RETRANS-DIFFERS (IBA Vol 1 9.7.5.1.1, 9.9.2.1: a requester retransmits
// the request packets it sent, from the PSN it resumes at; a resend that
// differs from its original is not a retransmission of it).
func checkRetransDiffers(c *Conn, p *dissect.Packet) {
	a := &p.Analysis
	if c.ID == 0 || !a.Valid || !a.Retransmission || !p.BTH.OpCode.IsRequest() {
		return
	}
	if !a.Compared {
		// A re-issued Read has no identical original, and an original
		// beyond the engine's comparison window cannot be compared.
		return
	}
	c.Checked()
	if a.PayloadDiffers {
		c.Reportf([]int{a.OriginalPacket, p.Number}, p.BTH.OpCode.Name(),
			"%s from %s resends PSN %d of packet %d with a different opcode, extension header or payload",
			p.BTH.OpCode.Name(), p.Dir, p.BTH.PSN&psnMask, a.OriginalPacket)
	}
}

func retransDiffersApplies(c *Conn) string { return roceOnly(c) }

// READ-DEPTH (IBA Vol 1 12.7.29-12.7.30 and 9.5: the CM REQ's and REP's
// Responder Resources and Initiator Depth bound the RDMA Read and Atomic
// requests a side may have outstanding; RFC 6581 section 5 for iWARP's
// MPA IRD/ORD).
func checkReadDepth(c *Conn, p *dissect.Packet) {
	if c.ID == 0 || p.Dir == dissect.DirUnknown {
		return
	}
	ls := &c.loss
	switch p.CM.Attr {
	case roce.LayerTypeCMREQ:
		ls.req.rr, ls.req.id, ls.hasReq = p.CM.REQ.ResponderResources, p.CM.REQ.InitiatorDepth, true
		return
	case roce.LayerTypeCMREP:
		if ls.hasReq {
			rep := &p.CM.REP
			// The client's requests: its initiator depth and the server's
			// responder resources; the server's: the other two.
			ls.limit[0] = int(min(ls.req.id, rep.ResponderResources))
			ls.limit[1] = int(min(rep.InitiatorDepth, ls.req.rr))
			ls.hasLimit = true
		}
		return
	}
	if c.Transport == dissect.TransportIWARP {
		readDepthIWARP(c, p)
		return
	}
	if !ls.hasLimit || !p.Has(roce.LayerTypeBTH) {
		return
	}
	op := p.BTH.OpCode
	a := &p.Analysis
	d := p.Dir.Index()
	psn := p.BTH.PSN & psnMask
	switch {
	case (op.IsReadRequest() || op.IsAtomic()) && !a.Retransmission:
		n := uint32(1)
		if op.IsReadRequest() && c.pmtu > 0 {
			n = max(1, (p.BTH.RETH.DMALen+uint32(c.pmtu)-1)/uint32(c.pmtu))
		}
		if len(ls.reads[d]) < 1024 {
			ls.reads[d] = append(ls.reads[d], outRead{psn: psn, end: (psn + n - 1) & psnMask, pkt: p.Number})
		}
		c.Checked()
		if k := len(ls.reads[d]); k > ls.limit[d] && !ls.over[d] {
			ls.over[d] = true
			pk := []int{}
			for _, r := range ls.reads[d] {
				pk = append(pk, r.pkt)
			}
			c.Reportf(pk, sideOf(p.Dir), "the %s has %d RDMA Read/Atomic requests outstanding at packet %d, more than the %d the CM REQ/REP agreed (initiator depth and the peer's responder resources)",
				sideOf(p.Dir), k, p.Number, ls.limit[d])
		}
	case op.IsReadResponse() && (op.IsLast() || op.IsOnly()), op.IsAtomicAck(),
		op.IsAck() && p.BTH.Has(roce.ExtAETH) && p.BTH.AETH.Syndrome.IsACK():
		// Answered: every request up to psn (responses come in order).
		rq := 1 - d
		rs := ls.reads[rq]
		k := 0
		for k < len(rs) && psnDiff(psn, rs[k].end) >= 0 {
			k++
		}
		ls.reads[rq] = append(rs[:0], rs[k:]...)
		if len(ls.reads[rq]) <= ls.limit[rq] {
			ls.over[rq] = false
		}
	}
}

func readDepthIWARP(c *Conn, p *dissect.Packet) {
	w := c.IWARP
	if w == nil || !w.MPA[0].HasIRDORD || !w.MPA[1].HasIRDORD {
		return
	}
	ls := &c.loss
	d := p.Dir.Index()
	for i := range p.IWARP.FPDUs {
		f := &p.IWARP.FPDUs[i]
		if f.Err != nil {
			continue
		}
		switch {
		case f.RDMAP.Opcode == iwarp.OpRDMAReadRequest:
			ls.iwReads[d]++
			// RFC 6581 section 5: a side's ORD bounds the Reads it has
			// outstanding, the peer's IRD the ones it accepts.
			limit := int(min(w.MPA[d].ORD, w.MPA[1-d].IRD))
			c.Checked()
			if ls.iwReads[d] > limit && !ls.over[d] {
				ls.over[d] = true
				c.Reportf([]int{p.Number}, sideOf(p.Dir), "the %s has %d RDMA Read Requests outstanding at packet %d, more than the %d the MPA IRD/ORD agreed",
					sideOf(p.Dir), ls.iwReads[d], p.Number, limit)
			}
		case f.RDMAP.Opcode == iwarp.OpRDMAReadResponse && f.DDP.L:
			if ls.iwReads[1-d] > 0 {
				ls.iwReads[1-d]--
			}
			if ls.iwReads[1-d] <= int(min(w.MPA[1-d].ORD, w.MPA[d].IRD)) {
				ls.over[1-d] = false
			}
		}
	}
}

func readDepthApplies(c *Conn) string {
	if c.ID == 0 {
		return ""
	}
	if c.Transport == dissect.TransportIWARP {
		if w := c.IWARP; w == nil || !w.MPA[0].HasIRDORD || !w.MPA[1].HasIRDORD {
			return "the MPA Request/Reply with RFC 6581 IRD/ORD is not in the capture"
		}
		return ""
	}
	if !c.loss.hasLimit {
		return "the CM REQ/REP is not in the capture"
	}
	return ""
}
