package check

import (
	"fmt"

	"github.com/gopacket/gopacket/layers"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Damaged frames: the capture's or the wire's (issue 28, docs/loss.md).
//
// A frame whose CRC or checksum fails was damaged somewhere between its
// sender and the capture. Its receiver may have had a good copy — the
// damage is the capture's (a mirror port, a capture host's bit error):
// information, evidence the capture lacks — or the same damaged bytes —
// the wire's: the receiver discards it and the sender resends it (a NAK
// PSN sequence error, a go-back-N or TCP retransmission), which is the
// rule's finding. The peer says which: an acknowledgement of the frame's
// bytes with no resend in between is the capture's damage; a resend or a
// NAK of it, the wire's. Until one comes the finding waits (at most
// maxDamaged per direction); the capture ending first leaves it at the
// rule's severity, saying the capture does not tell.

const maxDamaged = 16

// damagedFrame is a discarded frame awaiting its peer's verdict.
type damagedFrame struct {
	pkt int
	// RoCE: the request's PSN; iWARP: the segment's sequence numbers.
	psn      uint32
	seq, end uint32
	msg      string
}

// damageState is the per-connection state of ICRC-BAD and
// TCP-CHECKSUM-BAD, indexed by the damaged frame's direction.
type damageState struct {
	roce [2][]damagedFrame
	tcp  [2][]damagedFrame
}

// holdDamaged keeps f until its peer tells, reporting the oldest at the rule's
// severity when too many wait.
func (c *Conn) holdDamaged(list *[]damagedFrame, f damagedFrame) {
	if len(*list) == maxDamaged {
		old := (*list)[0]
		c.Reportf([]int{old.pkt}, "", "%s; no longer followed (more than %d damaged frames at once)", old.msg, maxDamaged)
		*list = (*list)[1:]
	}
	*list = append(*list, f)
}

// wireDamage reports f as damaged on the wire: its receiver discarded it.
func (c *Conn) wireDamage(f damagedFrame, why string, by int) {
	c.Report(Finding{Packets: []int{f.pkt, by}, Key: "wire", Message: f.msg + "; " + why + ": damaged on the wire, its receiver discarded it"})
}

// captureDamage reports f as damaged on the way to the capture.
func (c *Conn) captureDamage(f damagedFrame, why string, by int) {
	c.Report(Finding{Packets: []int{f.pkt, by}, Key: "capture damage", Severity: Info,
		Message: f.msg + "; " + why + ": its receiver's copy was intact, the capture's was damaged (capture damage, not a protocol error)"})
}

// checkICRC: ICRC-BAD (IBA Vol 1 7.8.1).
func checkICRC(c *Conn, p *dissect.Packet) {
	switch p.ICRC.Status {
	case dissect.CRCGood:
		c.Checked()
		c.roceVerdicts(p)
	case dissect.CRCTruncated:
		c.Skip(ReasonSnapLen)
		c.roceVerdicts(p)
	case dissect.CRCBad:
		c.Checked()
		msg := fmt.Sprintf("%s PSN %d: invariant CRC 0x%08x carried, 0x%08x computed over the packet",
			p.BTH.OpCode.Name(), p.BTH.PSN, p.ICRC.Carried, p.ICRC.Computed)
		if p.CRCDiscarded && p.BTH.OpCode.IsRequest() && p.Dir != dissect.DirUnknown && c.ID != 0 {
			// A request: its responder's answer tells whose damage it is.
			c.holdDamaged(&c.damage.roce[p.Dir.Index()], damagedFrame{pkt: p.Number, psn: p.BTH.PSN & psnMask, msg: msg})
			return
		}
		if op := p.BTH.OpCode; op.IsAck() || op.IsAtomicAck() {
			// An acknowledgement: nothing resends it, the next one
			// supersedes it; whose damage it was the capture cannot tell.
			c.Report(Finding{Packets: []int{p.Number}, Key: "ack", Severity: Info,
				Message: msg + "; an acknowledgement, superseded by the next: whether the wire or the capture damaged it, the capture cannot tell"})
			return
		}
		c.Reportf([]int{p.Number}, "", "%s", msg)
	}
}

// roceVerdicts settles the damaged requests a good packet tells of: a
// request resending one's PSN, or the responder's NAK of it, says the
// wire; its acknowledgement (cumulative, IBA Vol 1 9.7.5.1.2) the
// capture.
func (c *Conn) roceVerdicts(p *dissect.Packet) {
	if len(c.damage.roce[0]) != 0 || len(c.damage.roce[1]) != 0 {
		c.roceVerdictsAwaited(p)
	}
	// else nothing awaits a verdict: every packet's case, tested inline
}

// roceVerdictsAwaited is roceVerdicts when damaged requests await one.
func (c *Conn) roceVerdictsAwaited(p *dissect.Packet) {
	if p.Dir == dissect.DirUnknown || !p.Has(roce.LayerTypeBTH) || p.CM.Attr != 0 {
		return
	}
	op := p.BTH.OpCode
	psn := p.BTH.PSN & psnMask
	d := p.Dir.Index()
	if op.IsRequest() {
		list := &c.damage.roce[d]
		for i := 0; i < len(*list); i++ {
			if f := (*list)[i]; f.psn == psn {
				c.wireDamage(f, fmt.Sprintf("the requester sent PSN %d again in packet %d", psn, p.Number), p.Number)
				*list = append((*list)[:i], (*list)[i+1:]...)
				i--
			}
		}
		return
	}
	if !p.BTH.Has(roce.ExtAETH) {
		return
	}
	s := p.BTH.AETH.Syndrome
	list := &c.damage.roce[1-d] // the requests this answers went the other way
	for i := 0; i < len(*list); i++ {
		f := (*list)[i]
		switch {
		case s.IsNAK() && s.NAKCode() == roce.NAKPSNSequenceError && psn == f.psn:
			c.wireDamage(f, fmt.Sprintf("the responder answered NAK PSN sequence error for it in packet %d", p.Number), p.Number)
		case s.IsACK() && psnDiff(psn, f.psn) >= 0:
			c.captureDamage(f, fmt.Sprintf("the responder acknowledged PSN %d in packet %d with no NAK and no resend", psn, p.Number), p.Number)
		default:
			continue
		}
		*list = append((*list)[:i], (*list)[i+1:]...)
		i--
	}
}

// endDamage reports what the capture ended on before the peer told.
func endDamage(c *Conn, lists *[2][]damagedFrame) {
	for d := range lists {
		for _, f := range lists[d] {
			c.Reportf([]int{f.pkt}, "", "%s; the capture ends before its receiver tells whether it got the frame intact", f.msg)
		}
		lists[d] = nil
	}
}

func endICRC(c *Conn) { endDamage(c, &c.damage.roce) }

// checkTCPChecksum: TCP-CHECKSUM-BAD (RFC 9293 3.1; RFC 1122 4.2.2.7),
// iWARP connections: a segment whose IPv4 header or TCP checksum fails in
// a direction whose checksums were right before (dissect's
// Packet.TCPDiscarded; a capture on a sender that leaves checksums to its
// NIC has them all wrong, and they are not damage).
func checkTCPChecksum(c *Conn, p *dissect.Packet) {
	if c.ID == 0 || p.Dir == dissect.DirUnknown || !p.Has(layers.LayerTypeTCP) {
		return
	}
	t := &p.TCP
	d := p.Dir.Index()
	if p.TCPDiscarded {
		c.Checked()
		n := uint32(len(t.Payload))
		if n == 0 {
			// No octets: nothing resends it, the next segment's
			// acknowledgement supersedes it.
			c.Report(Finding{Packets: []int{p.Number}, Key: "ack", Severity: Info, Message: fmt.Sprintf(
				"TCP segment Seq=%d Ack=%d with a bad checksum; no data, superseded by the next acknowledgement: whether the wire or the capture damaged it, the capture cannot tell", t.Seq, t.Ack)})
			return
		}
		c.holdDamaged(&c.damage.tcp[d], damagedFrame{pkt: p.Number, seq: t.Seq, end: t.Seq + n,
			msg: fmt.Sprintf("TCP segment Seq=%d Len=%d with a bad checksum", t.Seq, n)})
		return
	}
	if len(t.Payload) > 0 {
		c.Checked()
		list := &c.damage.tcp[d]
		for i := 0; i < len(*list); i++ {
			f := (*list)[i]
			if int32(t.Seq-f.end) < 0 && int32(t.Seq+uint32(len(t.Payload))-f.seq) > 0 {
				c.wireDamage(f, fmt.Sprintf("the sender sent those octets again in packet %d", p.Number), p.Number)
				*list = append((*list)[:i], (*list)[i+1:]...)
				i--
			}
		}
	}
	if t.ACK {
		list := &c.damage.tcp[1-d]
		for i := 0; i < len(*list); i++ {
			f := (*list)[i]
			if int32(t.Ack-f.end) >= 0 {
				c.captureDamage(f, fmt.Sprintf("the receiver acknowledged them (Ack=%d) in packet %d with no resend", t.Ack, p.Number), p.Number)
				*list = append((*list)[:i], (*list)[i+1:]...)
				i--
			}
		}
	}
}

func endTCPChecksum(c *Conn) { endDamage(c, &c.damage.tcp) }
