package check

import (
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Transport-level rules: CRCs, packet sequence, NAKs, CM rejects
// (IBA Vol 1 chapters 7, 9 and 12).

func roceOnly(c *Conn) string {
	if c.ID != 0 && c.Transport != dissect.TransportRoCE {
		return "not an InfiniBand/RoCE connection"
	}
	return ""
}

// checkVCRC: VCRC-BAD (IBA Vol 1 7.8.2), native InfiniBand only.
func checkVCRC(c *Conn, p *dissect.Packet) {
	switch p.VCRC.Status {
	case dissect.CRCGood:
		c.Checked()
	case dissect.CRCTruncated:
		c.Skip(ReasonSnapLen)
	case dissect.CRCBad:
		c.Checked()
		c.Reportf([]int{p.Number}, "", "variant CRC 0x%04x carried, 0x%04x computed over the LRH and everything after it",
			p.VCRC.Carried, p.VCRC.Computed)
	}
}

// checkNAK: NAK — a responder refused a request (AETH NAK, IBA Vol 1 9.7.5.2)
// or had no receive buffer posted (RNR NAK, 9.7.5.2.8).
func checkNAK(c *Conn, p *dissect.Packet) {
	if c.ID != 0 && c.Transport == dissect.TransportIWARP {
		checkTerminate(c, p)
		return
	}
	if c.ID != 0 && p.Has(roce.LayerTypeBTH) && p.BTH.OpCode.IsRequest() {
		// A resend answers the NAKs waiting for it (loss.go).
		nakResend(c, p)
		return
	}
	if c.ID == 0 || !p.BTH.OpCode.IsAck() && !p.BTH.OpCode.IsReadResponse() && !p.BTH.OpCode.IsAtomicAck() {
		return
	}
	if p.BTH.Ext&roce.ExtAETH == 0 {
		return
	}
	c.Checked()
	s := p.BTH.AETH.Syndrome
	switch {
	case s.IsACK():
		nakAcked(c, p, p.BTH.PSN&psnMask)
	case s.IsNAK() && s.NAKCode() == roce.NAKPSNSequenceError:
		nakAcked(c, p, (p.BTH.PSN-1)&psnMask)
		// Loss: recovered when the requester resends, a warning only when
		// it never does in the capture (loss.go).
		nakLater(c, p, "NAK "+s.NAKCode().String(),
			fmt.Sprintf("%s from %s for PSN %d: %s", p.BTH.OpCode.Name(), p.Dir, p.BTH.PSN, s), false)
	case s.IsNAK():
		c.Reportf([]int{p.Number}, "NAK "+s.NAKCode().String(),
			"%s from %s for PSN %d: %s", p.BTH.OpCode.Name(), p.Dir, p.BTH.PSN, s)
	case s.IsRNRNAK():
		nakLater(c, p, "RNR NAK",
			fmt.Sprintf("%s from %s for PSN %d: %s (the receiver had no Receive posted)", p.BTH.OpCode.Name(), p.Dir, p.BTH.PSN, s), true)
	}
}

// checkCMREJ: CM-REJ — a CM REJ ended a connection attempt
// (IBA Vol 1 12.6.7, 12.6.7.2).
func checkCMREJ(c *Conn, p *dissect.Packet) {
	if c.ID == 0 || p.CM.Attr == 0 {
		return
	}
	c.Checked()
	if p.CM.Attr != roce.LayerTypeCMREJ {
		return
	}
	rej := &p.CM.REJ
	msg := fmt.Sprintf("CM REJ from %s rejecting the %s: reason %d (%s)", p.Dir, rejMessage(rej.MessageRejected), uint16(rej.Reason), rej.Reason)
	if len(rej.ARI) > 0 {
		msg += ", ARI " + hex.EncodeToString(rej.ARI)
	}
	if pd := trimZeros(rej.PrivateData); len(pd) > 0 {
		if text, ok := refusalText(rej.PrivateData); ok {
			msg += ", private data carries " + text
		} else {
			if len(pd) > 32 {
				pd = pd[:32]
			}
			msg += ", private data " + hex.EncodeToString(pd)
		}
	}
	c.rej.hold(p.Number, fmt.Sprintf("reason %d", uint16(rej.Reason)), msg)
}

// refusal is a connection's refusal (CM REJ, MPA reject), held until the
// connection ends: when the same client then got through to the same
// server (Connection.RetriedBy: a client probing ports, as SMB Direct
// clients try 5445, then 445), the refusal is information, not a warning.
type refusal struct {
	packet   int
	key, msg string
}

func (r *refusal) hold(packet int, key, msg string) { *r = refusal{packet, key, msg} }

// endRefusal reports the refusal held by CM-REJ or MPA-REJ.
func endRefusal(c *Conn) {
	r := c.rej
	if r.packet == 0 {
		return
	}
	c.rej = refusal{}
	reportRefusal(c, []int{r.packet}, r.key, r.msg)
}

// reportRefusal reports a refusal, as information when a later connection
// between the same addresses was established.
func reportRefusal(c *Conn, packets []int, key, msg string) {
	f := Finding{Packets: packets, Key: key, Message: msg}
	if c.RetriedBy != 0 {
		f.Severity = Info
		f.Message += fmt.Sprintf("; connection %d between the same addresses was established afterwards", c.RetriedBy)
	}
	if !c.dropped() {
		c.Report(f)
	}
}

func rejMessage(m roce.RejMessage) string {
	switch m {
	case roce.RejMessageREQ:
		return "REQ"
	case roce.RejMessageREP:
		return "REP"
	}
	return "message (MsgRejected " + fmt.Sprint(uint8(m)) + ")"
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// PSN tracking (PSN-GAP). IBA Vol 1 9.7.1: a requester's packets carry
// consecutive PSNs (modulo 2^24); an RDMA Read Request consumes one PSN per
// response packet it asks for (9.7.1.1); a responder answers with the PSN of
// the request. A request with a PSN ahead of the expected one means packets
// are missing from the capture; one behind it is a retransmission
// (9.7.5.1.1 duplicate requests). Who lost the missing packets is told by
// the responder: a NAK PSN sequence error (9.7.5.2.1) says it never got
// them either (lost on the network, the requester resends), an ACK past them
// says it did (lost by the capture only).

const psnMask = 1<<24 - 1

type psnGap struct {
	from, to uint32 // missing PSNs, inclusive
	pkt      int    // the packet after the gap
	nakPkt   int    // the NAK PSN sequence error that asked for them, 0 none
	nakPSN   uint32
}

type psnState struct {
	started bool
	next    uint32 // expected PSN of the next request packet
	// nextMax: after a Read Request of unknown packet count (no MTU), the
	// largest PSN the next request may have without a gap.
	nextMax uint32
	// high is one past the highest request PSN seen; a PSN below it is a
	// retransmission.
	high    uint32
	retrans bool // inside a burst of retransmitted packets
	gaps    []psnGap
	// rtx are bursts of retransmitted requests awaiting a response that
	// acknowledges them: reported as recovered (info) when one comes,
	// at the rule's severity when the capture ends first.
	rtx []rtxBurst
	// Read responses: the PSN expected of the next middle/last response.
	// rgaps are response gaps awaiting the responses sent again.
	rgaps []rspGap
	// lastReq is the packet of the direction's latest request.
	lastReq int
	// bad are the last request packets of the direction whose CRC is bad
	// (dissect.Packet.CRCDiscarded): their receiver discarded them, so the
	// engine's model shows their PSNs as a gap, which these explain.
	bad []badReq
}

// badReq is a request packet with a bad ICRC or VCRC.
type badReq struct {
	psn  uint32
	pkt  int
	rule string // ICRC-BAD or VCRC-BAD
}

// corrupted returns the packets with a bad CRC that carried PSNs of g, the
// rule that reports them, and whether they carried every one of those PSNs.
func (st *psnState) corrupted(g psnGap) ([]int, string, bool) {
	var pk []int
	var psns []uint32
	rule := ""
	for _, b := range st.bad {
		if psnDiff(b.psn, g.from) >= 0 && psnDiff(b.psn, g.to) <= 0 {
			pk = append(pk, b.pkt)
			if !slices.Contains(psns, b.psn) {
				psns = append(psns, b.psn)
			}
			if rule == "" || rule == b.rule {
				rule = b.rule
			} else {
				rule = "ICRC-BAD, VCRC-BAD"
			}
		}
	}
	return pk, rule, int32(len(psns)) == psnDiff(g.to, g.from)+1
}

// corruptNote is what a gap's finding adds about the packets with a bad CRC
// that carried its PSNs.
func corruptNote(pk []int, rule string) string {
	if len(pk) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the capture holds %s with a bad CRC, which its receiver discarded: %s)", packetList(pk), rule)
}

func packetList(pk []int) string {
	if len(pk) == 1 {
		return fmt.Sprintf("packet %d", pk[0])
	}
	s := "packets"
	for i, n := range pk {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", n)
	}
	return s
}

// rtxBurst is the first packet of a burst of retransmitted requests.
type rtxBurst struct {
	psn uint32
	pkt int
	msg string
}

// rspGap is a gap in an RDMA Read's responses: reported as recovered (info)
// when every missing response came later (a re-issued Read), as missing
// (warning) otherwise.
type rspGap struct {
	from, to uint32
	left     uint32
	pkt      int
	psn      uint32 // of the response after the gap
	op       roce.OpCode
	dir      dissect.Direction
}

func (g *rspGap) msg() string {
	return fmt.Sprintf("%s from %s has PSN %d, %d expected: %d response packets of an RDMA Read are missing from the capture",
		g.op.Name(), g.dir, g.psn, g.from, psnDiff(g.to, g.from)+1)
}

// maxPendingRspGaps bounds the Read response gaps a direction follows at
// once. They stay open until the requester re-issues the Read for what is
// missing, which rxe does only once the responses of every Read it has
// outstanding came in: lossy/rxe-nfs3-loss5.pcap (netem "loss 5%") had 10
// open, the first two (packets 119, 138) answered by the responses of the
// Read re-issued in packet 212 (packets 250, 269). A gap pushed out is
// reported missing, a warning the capture may not bear out: the bound is
// the largest number of lost responses a requester could have outstanding
// in practice (16 Reads of 256 KiB at a 1024-byte PMTU, 4096 PSNs, at 5%
// loss about 200), and it costs 40 bytes a gap only while they are open.
const maxPendingRspGaps = 256

func (c *Conn) psnResponseGap(st *psnState, g rspGap) {
	if len(st.rgaps) == maxPendingRspGaps {
		c.Reportf([]int{st.rgaps[0].pkt}, "gap", "%s; no longer followed: more than %d Read response gaps open at once",
			st.rgaps[0].msg(), maxPendingRspGaps)
		st.rgaps = st.rgaps[1:]
	}
	st.rgaps = append(st.rgaps, g)
}

func (c *Conn) psnResponseFill(st *psnState, p *dissect.Packet, psn uint32) {
	for i := 0; i < len(st.rgaps); i++ {
		g := &st.rgaps[i]
		if psnDiff(psn, g.from) < 0 || psnDiff(psn, g.to) > 0 {
			continue
		}
		if g.left--; g.left > 0 {
			continue
		}
		c.Report(Finding{Packets: []int{g.pkt, p.Number}, Key: "gap", Severity: Info,
			Message: fmt.Sprintf("%s; recovered: the responder sent them again (the last in packet %d)", g.msg(), p.Number)})
		st.rgaps = append(st.rgaps[:i], st.rgaps[i+1:]...)
		i--
	}
}

const maxPendingGaps = 8

func psnDiff(a, b uint32) int32 { // a - b in 24-bit serial arithmetic
	d := (a - b) & psnMask
	if d >= 1<<23 {
		return int32(d) - 1<<24
	}
	return int32(d)
}

// checkPSN: PSN-GAP.
func checkPSN(c *Conn, p *dissect.Packet) {
	if c.ID == 0 || p.Dir == dissect.DirUnknown || p.CM.Attr != 0 || !p.Has(roce.LayerTypeBTH) {
		return
	}
	op := p.BTH.OpCode
	if t := op.Transport(); t != roce.TransportRC && t != roce.TransportUC {
		return
	}
	d := p.Dir.Index()
	psn := p.BTH.PSN & psnMask
	if p.CRCDiscarded {
		// Discarded by its receiver: not part of the sequence; a gap at
		// its PSN is this packet (the rule sees it for that alone).
		if st := &c.psn[d]; op.IsRequest() {
			if len(st.bad) == maxPendingGaps {
				st.bad = st.bad[1:]
			}
			rule := "ICRC-BAD"
			if p.ICRC.Status != dissect.CRCBad {
				rule = "VCRC-BAD"
			}
			st.bad = append(st.bad, badReq{psn: psn, pkt: p.Number, rule: rule})
		}
		return
	}
	switch {
	case op.IsRequest():
		c.psnRequest(&c.psn[d], p, psn, d)
	case op.IsReadResponse():
		// Responses of a multi-packet Read carry consecutive PSNs.
		st := &c.psn[d]
		a := &p.Analysis
		if !a.Retransmission {
			// A response sent again for a gap (a re-issued Read) recovers
			// it; repeated responses (the verdict's retransmissions) say
			// nothing of the sequence.
			c.psnResponseFill(st, p, psn)
		}
		// Responses of a multi-packet Read carry consecutive PSNs: the
		// model's verdict says when some before this one are missing.
		if op.IsMiddle() || op.IsLast() {
			c.Checked()
		}
		if n := a.LostSegment; n > 0 {
			from := (psn - n) & psnMask
			c.psnResponseGap(st, rspGap{from: from, to: (psn - 1) & psnMask, left: n, pkt: p.Number,
				psn: psn, op: op, dir: p.Dir})
		}
		c.psnResolve(1-d, p, psn, false)
	case op.IsAck() || op.IsAtomicAck():
		s := p.BTH.AETH.Syndrome
		hasAETH := p.BTH.Ext&roce.ExtAETH != 0
		switch {
		case hasAETH && s.IsNAK() && s.NAKCode() == roce.NAKPSNSequenceError:
			c.psnResolve(1-d, p, psn, true)
		case hasAETH && (s.IsNAK() || s.IsRNRNAK()):
			// The responder refused the request at psn (an RNR NAK: no
			// Receive posted, IBA Vol 1 9.7.5.2.8; or an error NAK): it
			// took the ones before it, not that one, which an RNR NAK
			// asks the requester to send again. (lab capture
			// rxe-ib_send_bw-rnr: 5,479 RNR NAKs for PSN 14227412, never
			// accepted, each read as acknowledging it.)
			c.psnResolve(1-d, p, (psn-1)&psnMask, false)
		default:
			c.psnResolve(1-d, p, psn, false)
		}
	}
}

func (c *Conn) psnRequest(st *psnState, p *dissect.Packet, psn uint32, d int) {
	st.lastReq = p.Number
	if !st.started {
		st.started = true
		if c.hasStartPSN[d] {
			s := c.startPSN[d]
			st.next, st.nextMax, st.high = s, s, s
		} else {
			st.next, st.nextMax, st.high = psn, psn, psn
		}
	}
	c.Checked()
	// What the packet is, the engine's RC requester model decided
	// (dissect/rcmodel.go, Packet.Analysis): a PSN gap before it, a
	// retransmission or a packet filling a gap, or the next in order.
	a := &p.Analysis
	switch {
	case a.LostSegment == 0 && !a.Retransmission && !a.OutOfOrder:
		st.retrans = false
	case a.LostSegment > 0:
		from := (psn - a.LostSegment) & psnMask
		st.retrans = false
		if len(st.gaps) >= maxPendingGaps {
			c.psnReportGapSev(st.gaps[0], "cause not told by the capture (too many gaps open at once to follow)", 0, Info)
			st.gaps = st.gaps[1:]
		}
		st.gaps = append(st.gaps, psnGap{from: from, to: (psn - 1) & psnMask, pkt: p.Number})
	default: // behind: a retransmission, or a resend filling a gap
		{
			// A resend of PSNs missing from the capture resolves their
			// gap: the loss was recovered.
			for i := 0; i < len(st.gaps); i++ {
				g := st.gaps[i]
				if psnDiff(psn, g.from) >= 0 && psnDiff(psn, g.to) <= 0 {
					why := fmt.Sprintf("the requester sent them again from packet %d: lost on the network, or by the capture before a retransmission; recovered", p.Number)
					if g.nakPkt != 0 {
						why = fmt.Sprintf("the responder answered NAK PSN sequence error for PSN %d in packet %d and the requester sent them again from packet %d: lost on the network; recovered", g.nakPSN, g.nakPkt, p.Number)
					}
					if pk, rule, _ := st.corrupted(g); len(pk) > 0 {
						why += corruptNote(pk, rule)
					}
					c.psnReportGapSev(g, why, p.Number, Info)
					st.gaps = append(st.gaps[:i], st.gaps[i+1:]...)
					i--
				}
			}
			if a.NetworkDuplicate {
				// The same IPv4 datagram twice: the network repeated it, the
				// requester did not resend (dissect's requester model).
				if !c.dropped() {
					c.Report(Finding{Packets: []int{a.OriginalPacket, p.Number}, Key: "network-duplicate", Severity: Info,
						Message: fmt.Sprintf("%s from %s, PSN %d, is a copy of packet %d, the IPv4 Identification included: the network duplicated it, the requester did not resend it",
							p.BTH.OpCode.Name(), p.Dir, psn, a.OriginalPacket)})
				}
				break
			}
			if !st.retrans && a.Retransmission {
				st.retrans = true
				if len(st.rtx) >= maxPendingGaps {
					c.psnReportRetrans(st.rtx[0], "", 0, 0)
					st.rtx = st.rtx[1:]
				}
				st.rtx = append(st.rtx, rtxBurst{psn: psn, pkt: p.Number, msg: fmt.Sprintf(
					"%s from %s has PSN %d, below the next expected PSN %d: the requester is retransmitting (the original packets are in the capture)",
					p.BTH.OpCode.Name(), p.Dir, psn, st.next)})
			}
		}
	}
	n := uint32(1)
	nmax := uint32(1)
	if p.BTH.OpCode.IsReadRequest() && p.BTH.Ext&roce.ExtRETH != 0 {
		l := p.BTH.RETH.DMALen
		if c.pmtu > 0 {
			n = max(1, (l+uint32(c.pmtu)-1)/uint32(c.pmtu))
			nmax = n
		} else { // MTU unknown: between 4096- and 256-byte packets
			n = max(1, (l+4095)/4096)
			nmax = max(1, (l+255)/256)
		}
	}
	st.next = (psn + n) & psnMask
	st.nextMax = (psn + nmax) & psnMask
	if psnDiff(st.next, st.high) > 0 {
		st.high = st.next
	}
}

// psnResolve looks at a response for the requests of direction d: a NAK
// PSN sequence error at a gap's first PSN says the responder missed those
// packets too; an ACK at or past a gap's end says it received them.
func (c *Conn) psnResolve(d int, p *dissect.Packet, psn uint32, nakSeq bool) {
	st := &c.psn[d]
	// A response at or past a retransmission's PSN other than a NAK
	// (IBA Vol 1 9.7.5.1: an ACK is cumulative; a Read's responses carry
	// its request's PSNs) says the responder took the resent packets.
	for len(st.rtx) > 0 && !nakSeq && psnDiff(psn, st.rtx[0].psn) >= 0 {
		what := "acknowledged"
		if p.BTH.OpCode.IsReadResponse() {
			what = "answered"
		}
		c.psnReportRetrans(st.rtx[0], what, psn, p.Number)
		st.rtx = st.rtx[1:]
	}
	for i := 0; i < len(st.gaps); i++ {
		g := st.gaps[i]
		var why string
		switch {
		case nakSeq && psnDiff(psn, g.from) >= 0 && psnDiff(psn, (g.to+1)&psnMask) <= 0:
			// Lost on the network: recovered when the requester resends
			// them (psnRequest), not recovered if the capture ends first.
			if st.gaps[i].nakPkt == 0 {
				st.gaps[i].nakPkt, st.gaps[i].nakPSN = p.Number, psn
			}
			continue
		case !nakSeq && g.nakPkt != 0 && psnDiff(psn, g.to) >= 0:
			// NAKed, then acknowledged: the requester resent them and the
			// capture lost the resend (capture loss, docs/loss.md).
			c.psnReportGapSev(g, fmt.Sprintf("the responder answered NAK PSN sequence error for PSN %d in packet %d, then acknowledged PSN %d in packet %d: recovered, the capture lost the resend (capture loss)",
				g.nakPSN, g.nakPkt, psn, p.Number), p.Number, Info)
			st.gaps = append(st.gaps[:i], st.gaps[i+1:]...)
			i--
			continue
		case !nakSeq && g.nakPkt == 0 && psnDiff(psn, g.to) >= 0:
			// Capture loss: evidence missing, not a protocol error
			// (docs/loss.md): information, and the rules that needed
			// those packets are not evaluated where they would have.
			why = fmt.Sprintf("the responder acknowledged PSN %d in packet %d without a NAK: it received them, the capture lost them (capture loss)", psn, p.Number)
			if pk, rule, all := st.corrupted(g); all {
				// The capture's copy was corrupted, the responder's was
				// not (a bit error on the capture path): ICRC-BAD reports
				// the packet; the gap is its consequence.
				c.psnReportGapSev(g, fmt.Sprintf("the responder acknowledged PSN %d in packet %d without a NAK: it received them intact, and the capture holds them only in %s, whose CRC is bad (%s): corrupted on the way to the capture",
					psn, p.Number, packetList(pk), rule), p.Number, Info)
				st.gaps = append(st.gaps[:i], st.gaps[i+1:]...)
				i--
				continue
			} else if len(pk) > 0 {
				why += corruptNote(pk, rule)
			}
		default:
			continue
		}
		c.psnReportGapSev(g, why, p.Number, Info)
		st.gaps = append(st.gaps[:i], st.gaps[i+1:]...)
		i--
	}
}

// psnReportRetrans reports a burst of retransmissions: recovered (info)
// when the responder acknowledged or answered PSN psn in packet by, at the
// rule's severity when no response told (by == 0).
func (c *Conn) psnReportRetrans(b rtxBurst, what string, psn uint32, by int) {
	saved := c.cur
	c.cur = byID["PSN-GAP"].index + 1
	if by == 0 {
		c.Report(Finding{Packets: []int{b.pkt}, Key: "retransmission",
			Message: b.msg + "; no response in the capture acknowledges the resent packets"})
	} else {
		c.Report(Finding{Packets: []int{b.pkt, by}, Key: "retransmission", Severity: Info,
			Message: fmt.Sprintf("%s; recovered: the responder %s PSN %d in packet %d", b.msg, what, psn, by)})
	}
	c.cur = saved
}

func (c *Conn) psnReportGap(g psnGap, why string, resolvedBy int) {
	c.psnReportGapSev(g, why, resolvedBy, 0)
}

// psnReportGapSev reports a gap with severity sev (0: the rule's).
func (c *Conn) psnReportGapSev(g psnGap, why string, resolvedBy int, sev Severity) {
	saved := c.cur
	c.cur = byID["PSN-GAP"].index + 1
	n := psnDiff(g.to, g.from) + 1
	pk := []int{g.pkt}
	if resolvedBy != 0 && resolvedBy != g.pkt {
		pk = append(pk, resolvedBy)
	}
	what := "packets"
	if n == 1 {
		what = "packet"
	}
	if g.nakPkt != 0 && resolvedBy != g.nakPkt && resolvedBy != 0 && sev == Info {
		pk = append(pk, g.nakPkt)
	}
	c.Report(Finding{Packets: pk, Key: "gap", Severity: sev, Message: fmt.Sprintf("PSN gap before packet %d: %d request %s missing (PSN %d..%d); %s",
		g.pkt, n, what, g.from, g.to, why)})
	c.cur = saved
}

// endPSN reports the gaps no response explained.
func endPSN(c *Conn) {
	for d := range c.psn {
		for _, g := range c.psn[d].gaps {
			pk, rule, _ := c.psn[d].corrupted(g)
			if g.nakPkt != 0 {
				c.psnReportGap(g, fmt.Sprintf("the responder answered NAK PSN sequence error for PSN %d in packet %d: lost on the network, and not sent again in the capture: not recovered%s", g.nakPSN, g.nakPkt, corruptNote(pk, rule)), g.nakPkt)
				continue
			}
			// The capture ends first: what became of them is evidence
			// the capture lacks (docs/loss.md).
			c.psnReportGapSev(g, "no later response in the capture tells whether the responder received them: the capture ends first"+corruptNote(pk, rule), 0, Info)
		}
		c.psn[d].gaps = nil
		for _, b := range c.psn[d].rtx {
			c.psnReportRetrans(b, "", 0, 0)
		}
		c.psn[d].rtx = nil
		for _, g := range c.psn[d].rgaps {
			// The requester did not ask for them again. When it went on
			// sending requests it had them (a requester re-issues a Read
			// whose responses it lacks, IBA Vol 1 9.7.5.1.3, 9.9.2.1):
			// the capture lost them. Either way the capture, not the
			// protocol, is what lacks them (docs/loss.md).
			why := "the capture ends before the requester's next request: evidence missing"
			if r := c.psn[1-d].lastReq; r > g.pkt {
				why = fmt.Sprintf("the requester went on (packet %d) without asking for them again: it received them, the capture lost them (capture loss)", r)
			}
			c.Report(Finding{Packets: []int{g.pkt}, Key: "gap", Severity: Info, Message: g.msg() + "; " + why})
		}
		c.psn[d].rgaps = nil
	}
}

func iwarpOnly(c *Conn) string {
	if c.ID != 0 && c.Transport != dissect.TransportIWARP {
		return "not an iWARP connection"
	}
	return ""
}

// checkMPACRC: MPA-CRC-BAD (RFC 5044 section 6: with CRC negotiated every
// FPDU ends with a CRC32c over it).
func checkMPACRC(c *Conn, p *dissect.Packet) {
	for i := range p.IWARP.FPDUs {
		f := &p.IWARP.FPDUs[i]
		if !f.CRCChecked {
			continue
		}
		c.Checked()
		if f.CRCBad() {
			c.Reportf([]int{p.Number}, "", "FPDU at TCP sequence %d (ULPDU length %d) from the %s: CRC32c 0x%08x carried, 0x%08x computed",
				f.Seq, f.ULPDULength, sideOf(p.Dir), f.CRC, f.CRCComputed)
		}
	}
}

func mpaCRCApplies(c *Conn) string {
	if why := iwarpOnly(c); why != "" {
		return why
	}
	if w := c.IWARP; w != nil && w.Negotiated && !w.Framing[0].CRC && !w.Framing[1].CRC {
		return "CRC32c not negotiated (neither MPA frame set C)"
	}
	return ""
}

// endMPAMarkers: MPA-MARKERS (RFC 5044 sections 5, 7.1).
func endMPAMarkers(c *Conn) {
	w := c.IWARP
	if w == nil || !w.Negotiated {
		return
	}
	c.Checked()
	for d, f := range w.Framing {
		if f.Markers {
			c.Reportf([]int{w.MPA[1-d].Packet}, sideName[d],
				"the %s puts MPA markers in its FPDUs (the %s's MPA %s set M)", sideName[d], sideName[1-d], [2]string{"Request", "Reply"}[1-d])
		}
	}
}

func mpaMarkerBadApplies(c *Conn) string {
	if why := mpaMarkersApplies(c); why != "" {
		return why
	}
	if w := c.IWARP; !w.Framing[0].Markers && !w.Framing[1].Markers {
		return "MPA markers not negotiated (neither MPA frame set M)"
	}
	return ""
}

// endMPAMarkerBad: MPA-MARKER-BAD (RFC 5044 sections 4, 5: a marker every
// 512 octets, FPDUPTR in network byte order back to its FPDU).
func endMPAMarkerBad(c *Conn) {
	w := c.IWARP
	for d, f := range w.Framing {
		if !f.Markers {
			continue
		}
		c.Checked()
		if b := w.BadMarker[d]; b != nil {
			c.Reportf([]int{b.Packet}, sideName[d], "the %s's markers: %s", sideName[d], b.MarkerFault.String())
		}
	}
}

// endReadUnpaired: RDMA-READ-UNPAIRED (RFC 5040 sections 4.4, 5.5). After
// any capture loss on the connection the engine pairs requests and
// responses by guesswork (a Read that lost octets takes the next response
// that continues it), so nothing is judged then: not evaluated.
func endReadUnpaired(c *Conn) {
	w := c.IWARP
	if c.ID == 0 || w == nil {
		return
	}
	lost := c.Lost[0].Gaps > 0 || c.Lost[1].Gaps > 0 || w.MidStream || !w.Negotiated
	// FPDUs the framing lost (bad markers, a malformed FPDU) were on the
	// wire but could not be read: a Read's answer may be among them.
	why := ReasonCaptureGap
	if !lost && (w.Dir[0].LostSync > 0 || w.Dir[1].LostSync > 0) {
		lost, why = true, ReasonUndecodable
	}
	for d := range w.Dir {
		ctr := &w.Dir[d]
		dir, other := dissect.DirClientToServer, dissect.DirServerToClient
		if d == 1 {
			dir, other = other, dir
		}
		c.Checked() // every Read Request and Response of the direction
		for _, n := range ctr.UnansweredPackets {
			if lost {
				c.Skip(why)
				continue
			}
			c.Reportf([]int{n}, "request", "RDMA Read Request from the %s (packet %d): no Read Response answered it (a later request's came first, or the %s sent on without one)",
				sideOf(dir), n, sideOf(other))
		}
		for _, n := range ctr.UnmatchedPackets {
			if lost {
				c.Skip(why)
				continue
			}
			c.Reportf([]int{n}, "response", "RDMA Read Response from the %s (packet %d, last segment): its Data Sink STag and TO match no outstanding Read Request of the %s",
				sideOf(dir), n, sideOf(other))
		}
	}
}

// checkMPAREJ: MPA-REJ (RFC 5044 section 7.1: a responder refuses a
// connection with an MPA Reply whose R flag is set).
func checkMPAREJ(c *Conn, p *dissect.Packet) {
	if c.ID == 0 || !p.IWARP.HasReqRep || !p.IWARP.ReqRep.IsReply() {
		return
	}
	c.Checked()
	m := &p.IWARP.ReqRep
	if !m.R {
		return
	}
	msg := fmt.Sprintf("MPA Reply from the %s rejects the connection (R set): Rev %d", sideOf(p.Dir), m.Rev)
	if m.HasEnhancedData {
		msg += fmt.Sprintf(", IRD %d ORD %d", m.EnhancedData.IRD, m.EnhancedData.ORD)
	}
	msg += ", " + rejectPrivateData(m.ULPPrivateData())
	c.rej.hold(p.Number, "MPA reject", msg)
}

// endIWARPRefused: IWARP-REFUSED (RFC 9293 section 3.10.7.1: a SYN to a
// port nothing listens on is answered by a RST).
func endIWARPRefused(c *Conn) {
	w := c.IWARP
	if c.ID == 0 || w == nil {
		return
	}
	if !w.Refused {
		if w.MPA[0].Seen {
			c.Checked() // its SYN got through: the MPA Request followed
		}
		return
	}
	c.Checked()
	reportRefusal(c, []int{w.SYNPacket, w.RSTPacket}, "TCP RST",
		fmt.Sprintf("the server answered the client's SYN (packet %d) to port %d with a RST (packet %d): nothing listened there", w.SYNPacket, c.ServicePort, w.RSTPacket))
}

// rejectPrivateData describes the private data of a reject: an RFC 8797
// message, printable text (some stacks put a reason there), hex, or none.
func rejectPrivateData(b []byte) string {
	pd := trimZeros(b)
	if len(pd) == 0 {
		return "no private data"
	}
	if text, ok := refusalText(b); ok {
		return "private data carries " + text
	}
	printable := true
	for _, ch := range pd {
		if ch < 0x20 || ch > 0x7e {
			printable = false
			break
		}
	}
	if printable {
		return fmt.Sprintf("private data %q", pd)
	}
	if len(pd) > 32 {
		return "private data " + hex.EncodeToString(pd[:32]) + "…"
	}
	return "private data " + hex.EncodeToString(pd)
}

// endMPANoReply: MPA-NO-REPLY (RFC 5044 section 7.1: the initiator waits
// for the responder's MPA Reply).
func endMPANoReply(c *Conn) {
	w := c.IWARP
	if c.ID == 0 || w == nil {
		return
	}
	req, rep := &w.MPA[0], &w.MPA[1] // the client's Request, the server's Reply
	if !req.Seen {
		return
	}
	if rep.Seen {
		c.Checked()
		return
	}
	if d := &w.Dir[1]; d.FPDUs > 0 || d.GapOctets > 0 || c.Lost[1].Gaps > 0 {
		// The server sent more than the Reply, which it sends first
		// (RFC 5044 section 7.1): the capture lost the Reply.
		c.Skip(ReasonCaptureGap)
		return
	}
	c.Checked()
	c.Reportf([]int{req.Packet}, "no reply",
		"the client's MPA Request (packet %d) got no MPA Reply in the capture", req.Packet)
}

func mpaMarkersApplies(c *Conn) string {
	if why := iwarpOnly(c); why != "" {
		return why
	}
	if c.IWARP == nil || !c.IWARP.Negotiated {
		return "the MPA Request/Reply exchange is not in the capture"
	}
	return ""
}

// checkTerminate: NAK's iWARP half (RFC 5040 section 4.8: a Terminate
// message ends the stream with the layer, error type and code).
func checkTerminate(c *Conn, p *dissect.Packet) {
	for i := range p.IWARP.FPDUs {
		f := &p.IWARP.FPDUs[i]
		if f.Err != nil {
			continue
		}
		c.Checked()
		if f.RDMAP.Opcode != iwarp.OpTerminate {
			continue
		}
		t := &f.RDMAP.Terminate
		m := t.Meaning()
		if t.AltOrder == iwarp.TermOrderRFC {
			c.Reportf([]int{p.Number}, "Terminate "+m.ErrorCodeString(),
				"Terminate from the %s: %s", sideOf(p.Dir), m)
			continue
		}
		// RFC 5040's layout gives an impossible combination; another
		// implementation's layout of the same octets a meaningful one.
		c.Reportf([]int{p.Number}, "Terminate "+m.ErrorCodeString(),
			"Terminate from the %s: %s. Its Terminate Control (% x) is not in RFC 5040 section 4.8 order, where it would read %s, "+
				"a combination RFC 5040 section 7 does not define; it is laid out as %s writes it",
			sideOf(p.Dir), m, t.Control(), t.RFC(), t.AltOrder)
	}
}

func vcrcApplies(c *Conn) string {
	if why := roceOnly(c); why != "" {
		return why
	}
	if c.state(byID["VCRC-BAD"]).checked == 0 {
		return "no native InfiniBand packets (the VCRC is on the IB link only)"
	}
	return ""
}
