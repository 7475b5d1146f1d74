package fields

import "github.com/rdmashark/rdmashark/dissect"

// The per-packet verdicts of the RC requester model (rcmodel.go) and of
// iWARP's TCP health (health_tcp.go), under rdmashark.analysis. as
// Wireshark shows TCP's under tcp.analysis.: present only on the packets
// they apply to.

func analysisTable() *Table {
	F := new(Table)
	const A = "rdmashark.analysis"
	F.Group(A, "Transport analysis (rdmashark)")
	flag := func(name, label string, get func(a *dissect.Analysis) bool) *Field {
		return &Field{Name: name, Label: label, Type: FTBoolean, Parent: A,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if p.Analysis.Valid && get(&p.Analysis) {
					emit(Value{U: 1})
				}
			}}
	}
	num := func(name, label string, b Base, get func(a *dissect.Analysis) (uint64, bool)) *Field {
		return &Field{Name: name, Label: label, Type: FTUint32, Base: b, Parent: A,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if !p.Analysis.Valid {
					return
				}
				if v, ok := get(&p.Analysis); ok {
					emit(Value{U: v})
				}
			}}
	}
	F.Register(
		flag(A+".retransmission", "Retransmission: a PSN already seen in this direction (TCP: data already sent)",
			func(a *dissect.Analysis) bool { return a.Retransmission }),
		flag(A+".reissued_read", "RDMA Read Request re-issued for the part still missing",
			func(a *dissect.Analysis) bool { return a.Reissue }),
		flag(A+".duplicate", "Duplicate: a repeated Read Response, a resend already acknowledged (TCP: duplicate ACK)",
			func(a *dissect.Analysis) bool { return a.Duplicate }),
		flag(A+".out_of_order", "Out of order: fills a PSN gap",
			func(a *dissect.Analysis) bool { return a.OutOfOrder }),
		num(A+".lost_segment", "PSNs missing before this packet (TCP: octets)", BaseDec,
			func(a *dissect.Analysis) (uint64, bool) { return uint64(a.LostSegment), a.LostSegment > 0 }),
		&Field{Name: A + ".nak", Label: "NAK", Type: FTString, Parent: A,
			Get: func(p *dissect.Packet, emit func(Value)) {
				a := &p.Analysis
				switch {
				case !a.Valid || !a.NAK:
				case a.RNR:
					emit(Value{S: "RNR NAK, timer " + a.RNRTimer.String()})
				default:
					emit(Value{S: a.NAKCode.String()})
				}
			}},
		&Field{Name: A + ".ack_rtt", Label: "Time from the request this ACK or first Read Response answers", Type: FTRelTime, Parent: A,
			Get: func(p *dissect.Packet, emit func(Value)) {
				if a := &p.Analysis; a.Valid && a.HasAckRTT {
					emit(Value{U: uint64(a.AckRTT)})
				}
			}},
		flag(A+".ecn_ce", "ECN Congestion Experienced", func(a *dissect.Analysis) bool { return a.ECNCE }),
		flag(A+".cnp", "Congestion Notification Packet", func(a *dissect.Analysis) bool { return a.CNP }),
		num(A+".episode", "Retransmission episode of this direction", BaseDec,
			func(a *dissect.Analysis) (uint64, bool) { return uint64(a.Episode), a.Episode > 0 }),
		num(A+".differs_from", "Retransmission differing from its original, in this packet", BaseDec,
			func(a *dissect.Analysis) (uint64, bool) { return uint64(a.OriginalPacket), a.PayloadDiffers }),
	)
	return F
}

// analysisInfo tags the summary line as tshark tags TCP's
// ("[TCP Retransmission]").
func analysisInfo(p *dissect.Packet, b *infoBuf) {
	a := &p.Analysis
	if !a.Valid {
		return
	}
	if a.LostSegment > 0 {
		unit := " PSN"
		if p.Conn != nil && p.Conn.Transport == dissect.TransportIWARP {
			unit = " octet"
		}
		b.WriteString(" [gap: ")
		b.uint(uint64(a.LostSegment))
		b.WriteString(unit)
		if a.LostSegment != 1 {
			b.WriteString("s")
		}
		b.WriteString(" missing]")
	}
	switch {
	case a.Reissue:
		b.WriteString(" [Re-issued Read]")
	case a.Retransmission && a.Duplicate:
		b.WriteString(" [Duplicate]")
	case a.Retransmission:
		b.WriteString(" [Retransmission]")
	case a.Duplicate:
		b.WriteString(" [Dup ACK]")
	case a.OutOfOrder:
		b.WriteString(" [Out-Of-Order]")
	}
	if a.PayloadDiffers {
		b.WriteString(" [differs from packet ")
		b.uint(uint64(a.OriginalPacket))
		b.WriteByte(']')
	}
	if a.ECNCE {
		b.WriteString(" [ECN CE]")
	}
}
