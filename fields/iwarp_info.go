package fields

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// iwarpInfo writes the summary line's description of an iWARP packet: the
// MPA Request/Reply, then one item per FPDU, comma-separated.
func iwarpInfo(p *dissect.Packet, b *infoBuf) {
	n := iwarpHeadInfo(p, b)
	for i := range p.IWARP.FPDUs {
		if n > 0 {
			b.WriteString(", ")
		}
		n++
		fpduInfo(&p.IWARP.FPDUs[i], b)
	}
}

// iwarpHeadInfo writes what comes before a packet's FPDUs — the MPA
// Request/Reply, the note that framing was picked up here — and returns how
// many items it wrote.
func iwarpHeadInfo(p *dissect.Packet, b *infoBuf) int {
	w := &p.IWARP
	n := 0
	sep := func() {
		if n > 0 {
			b.WriteString(", ")
		}
		n++
	}
	if w.HasReqRep {
		sep()
		m := &w.ReqRep
		kind := "Reply"
		if m.IsRequest() {
			kind = "Request"
		}
		b.printf("MPA %s Rev=%d", kind, m.Rev)
		for _, f := range []struct {
			on   bool
			name string
		}{{m.M, "M"}, {m.C, "C"}, {m.R, "R"}} {
			if f.on {
				b.WriteString(" " + f.name)
			}
		}
		if m.HasEnhancedData {
			b.printf(" IRD=%d ORD=%d", m.EnhancedData.IRD, m.EnhancedData.ORD)
		}
		if m.HasLegacyIRDORD {
			b.printf(" legacy IRD=%d ORD=%d", m.LegacyIRDORD.IRD, m.LegacyIRDORD.ORD)
			if m.LegacyIRDORD.LittleEndian {
				b.WriteString(" (little-endian)")
			}
		}
		b.printf(" PD=%d", m.PDLength)
		if m.R && m.IsReply() {
			b.WriteString(" [rejected]")
		}
	}
	if w.Resync {
		sep()
		b.WriteString("[MPA framing picked up here]")
	}
	return n
}

func fpduInfo(f *dissect.IWARPFPDU, b *infoBuf) {
	d, r := &f.DDP, &f.RDMAP
	switch {
	case f.Err != nil && d.DV == 0:
		b.WriteString("FPDU Len=")
		b.uint(uint64(f.ULPDULength))
	case d.T:
		// "%s STag=0x%08x TO=0x%x Len=%d", without fmt (one per FPDU).
		b.WriteString(r.Opcode.String())
		b.WriteString(" STag=")
		b.hex(uint64(d.STag), 8)
		b.WriteString(" TO=")
		b.hex(d.TO, 0)
		b.WriteString(" Len=")
		b.int(int64(f.DataLen))
	default:
		b.WriteString(r.Opcode.String())
		if d.QN != standardQN(r.Opcode) {
			b.WriteString(" QN=")
			b.uint(uint64(d.QN))
		}
		b.WriteString(" MSN=")
		b.uint(uint64(d.MSN))
		if d.MO != 0 {
			b.WriteString(" MO=")
			b.uint(uint64(d.MO))
		}
		switch {
		case r.Opcode == iwarp.OpRDMAReadRequest:
			q := &r.ReadRequest
			b.WriteString(" SrcSTag=")
			b.hex(uint64(q.SourceSTag), 8)
			b.WriteString(" SrcTO=")
			b.hex(q.SourceTaggedOffset, 0)
			b.WriteString(" Len=")
			b.uint(uint64(q.RDMAReadMessageSize))
			b.WriteString(" SinkSTag=")
			b.hex(uint64(q.SinkSTag), 8)
			b.WriteString(" SinkTO=")
			b.hex(q.SinkTaggedOffset, 0)
		case r.Opcode == iwarp.OpTerminate:
			t := &r.Terminate
			b.printf(" Layer=%s EType=%s Code=%s", t.Layer, t.ETypeString(), t.ErrorCodeString())
			if t.AltOrder != iwarp.TermOrderRFC {
				m := t.Meaning()
				b.printf(" [as %s: Layer=%s EType=%s Code=%s]", t.AltOrder, m.Layer, m.ETypeString(), m.ErrorCodeString())
			}
		default:
			if r.Opcode.HasInvalidateSTag() {
				b.WriteString(" InvSTag=")
				b.hex(uint64(r.InvalidateSTag), 8)
			}
			b.WriteString(" Len=")
			b.int(int64(f.DataLen))
		}
	}
	if !d.L && f.Err == nil {
		b.WriteString(" [more]")
	}
	if f.CRCBad() {
		b.printf(" [CRC bad: 0x%08x, computed 0x%08x]", f.CRC, f.CRCComputed)
	}
	if f.Err != nil {
		b.printf(" [malformed: %v]", f.Err)
	}
}

// standardQN is the untagged queue an RDMAP opcode uses (RFC 5040 section
// 4.3), so that the summary names only an unusual one.
func standardQN(o iwarp.Opcode) uint32 {
	switch o {
	case iwarp.OpRDMAReadRequest:
		return iwarp.QNReadRequest
	case iwarp.OpTerminate:
		return iwarp.QNTerminate
	}
	return iwarp.QNSend
}
