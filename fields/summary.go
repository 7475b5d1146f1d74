package fields

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/pfc"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Source names where the packet came from, the way tshark's Source column
// does: the IP address, else the GID, else the LID, else the MAC address.
func Source(p *dissect.Packet) string {
	switch {
	case p.Has(layers.LayerTypeIPv4):
		return p.IPv4.SrcIP.String()
	case p.Has(layers.LayerTypeIPv6):
		return p.IPv6.SrcIP.String()
	case p.Has(roce.LayerTypeGRH):
		return net.IP(p.GRH.SGID[:]).String()
	case p.Has(roce.LayerTypeLRH):
		return fmt.Sprintf("LID %d", p.LRH.SLID)
	case p.Has(layers.LayerTypeEthernet):
		return p.Eth.SrcMAC.String()
	}
	return ""
}

// AppendSource appends Source to dst; an IPv4 address without allocating.
func AppendSource(p *dissect.Packet, dst []byte) []byte {
	if p.Has(layers.LayerTypeIPv4) {
		return appendIPv4(dst, p.IPv4.SrcIP)
	}
	return append(dst, Source(p)...)
}

// AppendDestination appends Destination to dst.
func AppendDestination(p *dissect.Packet, dst []byte) []byte {
	if p.Has(layers.LayerTypeIPv4) {
		return appendIPv4(dst, p.IPv4.DstIP)
	}
	return append(dst, Destination(p)...)
}

// appendIPv4 appends ip as net.IP.String does for a 4-byte address.
func appendIPv4(dst []byte, ip net.IP) []byte {
	if len(ip) != net.IPv4len {
		return append(dst, ip.String()...)
	}
	return netip.AddrFrom4([4]byte(ip)).AppendTo(dst)
}

// Destination is Source's counterpart.
func Destination(p *dissect.Packet) string {
	switch {
	case p.Has(layers.LayerTypeIPv4):
		return p.IPv4.DstIP.String()
	case p.Has(layers.LayerTypeIPv6):
		return p.IPv6.DstIP.String()
	case p.Has(roce.LayerTypeGRH):
		return net.IP(p.GRH.DGID[:]).String()
	case p.Has(roce.LayerTypeLRH):
		return fmt.Sprintf("LID %d", p.LRH.DLID)
	case p.Has(layers.LayerTypeEthernet):
		return p.Eth.DstMAC.String()
	}
	return ""
}

// Protocol names the packet's innermost protocol for the summary line.
func Protocol(p *dissect.Packet) string {
	switch pr := dissect.Classify(p); pr {
	case dissect.ProtoIPv4, dissect.ProtoIPv6:
		switch {
		case icmpBytes(p, false) != nil:
			return "ICMP"
		case icmpBytes(p, true) != nil:
			return "ICMPv6"
		}
		return pr.String()
	case dissect.ProtoCM, dissect.ProtoMAD, dissect.ProtoCNP:
		if p.Encap != dissect.EncapNone {
			return p.Encap.String()
		}
		return pr.String()
	default:
		return pr.String()
	}
}

// infoFuncs are the plug-ins' parts of the summary line (RegisterInfo).
var infoFuncs []func(p *dissect.Packet, dst []byte) []byte

// RegisterInfo adds a plug-in's part of the summary line (tshark's Info
// column): f appends what the packet's records of its ULP say
// (dissect.Packet.ULP), or nothing. The command's list of plug-ins calls it
// before any output is made.
func RegisterInfo(f func(p *dissect.Packet, dst []byte) []byte) { infoFuncs = append(infoFuncs, f) }

// Info is the summary line's description, e.g.
// "RC SEND_ONLY QP=0x000011 PSN=3431571".
func Info(p *dissect.Packet) string {
	return string(AppendInfo(p, nil))
}

// AppendInfo appends Info to dst, without allocating for the common
// packets (RoCE and IB transport packets, TCP, UDP).
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	start := len(dst)
	b := infoBuf{dst}
	switch {
	case p.CM.Attr != 0:
		cmInfo(p, &b)
	case p.Has(roce.LayerTypeMAD):
		b.printf("MAD %s %s attr=0x%04x", p.MAD.MgmtClass, p.MAD.Method, p.MAD.AttributeID)
	case p.Has(roce.LayerTypeBTH):
		bthInfo(p, &b)
	case p.IWARP.HasReqRep || len(p.IWARP.FPDUs) > 0 || p.IWARP.Resync:
		iwarpInfo(p, &b)
	case p.Has(layers.LayerTypeTCP):
		tcpInfo(p, &b) // summary_words.go
	case p.Has(layers.LayerTypeUDP):
		b.uint(uint64(p.UDP.SrcPort))
		b.WriteString(" → ")
		b.uint(uint64(p.UDP.DstPort))
		b.WriteString(" Len=")
		b.uint(uint64(len(p.UDP.Payload)))
	case p.Has(layers.LayerTypeARP):
		arpInfo(p, &b)
	case icmpBytes(p, false) != nil:
		icmpInfo(p, &b, false)
	case icmpBytes(p, true) != nil:
		icmpInfo(p, &b, true)
	case p.Has(pfc.LayerTypeMACControl):
		// tshark 4.0's words (fields/testdata/macc).
		switch p.PFC.Opcode {
		case pfc.OpPause:
			b.WriteString("Pause: pause_time: ")
			b.uint(uint64(p.PFC.Quanta[0]))
			b.WriteString(" quanta")
		case pfc.OpPFC:
			b.WriteString("Class Based Flow Control [CBFC] Pause")
		default:
			b.printf("MAC Control opcode 0x%04x", uint16(p.PFC.Opcode))
		}
	}
	analysisInfo(p, &b) // fields_analysis.go
	for _, f := range infoFuncs {
		// A plug-in's part (RegisterInfo), after " | " when it writes one.
		mark := len(b.b)
		if mark > start {
			b.b = append(b.b, " | "...)
		}
		sep := len(b.b)
		if b.b = f(p, b.b); len(b.b) == sep {
			b.b = b.b[:mark]
		}
	}
	if s := p.ICRC.Status; s == dissect.CRCBad || s == dissect.CRCTruncated {
		b.printf(" [ICRC %s]", s)
	}
	if s := p.VCRC.Status; s == dissect.CRCBad {
		b.printf(" [VCRC %s]", s)
	}
	if p.Err != nil {
		b.printf(" [malformed: %v]", p.Err)
	}
	// strings.TrimSpace of the appended text.
	out := b.b
	text := bytes.TrimSpace(out[start:])
	n := copy(out[start:], text)
	return out[:start+n]
}

// OneInfoLine tells whether InfoLines has a single line, Info.
func OneInfoLine(p *dissect.Packet) bool {
	w := &p.IWARP
	items := len(w.FPDUs)
	if w.HasReqRep {
		items++
	}
	if w.Resync {
		items++
	}
	return items <= 1 || p.Has(roce.LayerTypeBTH)
}

// InfoLines is Info for the one-line-per-item summary: an iWARP packet that
// carries several FPDUs (or an MPA Request/Reply and FPDUs) gets one line per
// FPDU, each RPC-over-RDMA message on the line of the Send that completed it
// (the untagged Sends with the Last bit, in order), as each plug-in's
// messages (Table.Messages) are; anything else one line.
func InfoLines(p *dissect.Packet) []string {
	w := &p.IWARP
	if OneInfoLine(p) {
		return []string{Info(p)}
	}
	var lines []string
	var head infoBuf
	if iwarpHeadInfo(p, &head) > 0 {
		lines = append(lines, head.String())
	}
	m, n := messagesOf(p)
	msg := 0
	for i := range w.FPDUs {
		f := &w.FPDUs[i]
		var b infoBuf
		fpduInfo(f, &b)
		if !f.DDP.T && f.DDP.L && f.RDMAP.Opcode.IsSend() && msg < n {
			b.WriteString(" | ")
			b.b = m.Info(p, msg, b.b)
			msg++
		}
		lines = append(lines, b.String())
	}
	last := &infoBuf{}
	last.WriteString(lines[len(lines)-1])
	for ; msg < n; msg++ {
		last.WriteString(" | ")
		last.b = m.Info(p, msg, last.b)
	}
	if p.Err != nil {
		last.printf(" [malformed: %v]", p.Err)
	}
	lines[len(lines)-1] = last.String()
	return lines
}

// bthInfo appends the transport header's summary.
func bthInfo(p *dissect.Packet, b *infoBuf) {
	h := &p.BTH
	b.WriteString(h.OpCode.String())
	b.WriteString(" QP=")
	b.hex(uint64(h.DestQP), 6)
	b.WriteString(" PSN=")
	b.uint(uint64(h.PSN))
	if h.Has(roce.ExtRETH) {
		b.WriteString(" VA=")
		b.hex(h.RETH.VA, 0)
		b.WriteString(" R_Key=")
		b.hex(uint64(h.RETH.RKey), 8)
		b.WriteString(" Len=")
		b.uint(uint64(h.RETH.DMALen))
	}
	if h.Has(roce.ExtAETH) {
		b.WriteByte(' ')
		aethInfo(h.AETH.Syndrome, b)
		b.WriteString(" MSN=")
		b.uint(uint64(h.AETH.MSN))
	}
	if h.Has(roce.ExtIETH) {
		b.WriteString(" Inv_R_Key=")
		b.hex(uint64(h.IETH.RKey), 8)
	}
	if h.Has(roce.ExtImmDt) {
		b.WriteString(" Imm=")
		b.hex(uint64(h.ImmDt.Data), 8)
	}
	if h.Has(roce.ExtDETH) {
		b.WriteString(" SrcQP=")
		b.hex(uint64(h.DETH.SrcQP), 6)
	}
	if n := len(h.Payload); n > 0 {
		b.WriteString(" Payload=")
		b.uint(uint64(n))
	}
}

// aethInfo appends an AETH syndrome in tshark's terms: an ACK's "Credit
// Count" is its 5-bit code (IBA Vol 1 9.7.5.1, table of AETH credit count
// encodings), with the credits it stands for; code 31 says the responder
// advertises no credits (rxe's every ACK: it is no error). A NAK or RNR
// NAK as Syndrome.String says.
func aethInfo(s roce.Syndrome, b *infoBuf) {
	if !s.IsACK() {
		b.WriteString(s.String())
		return
	}
	b.WriteString("ACK Credit Count=")
	b.uint(uint64(s.CreditCode()))
	if n, ok := s.Credits(); ok {
		b.WriteString(" (")
		b.uint(uint64(n))
		if n == 1 {
			b.WriteString(" credit)")
		} else {
			b.WriteString(" credits)")
		}
		return
	}
	b.WriteString(" (none advertised)")
}

func cmInfo(p *dissect.Packet, b *infoBuf) {
	cm := &p.CM
	switch cm.Attr {
	case roce.LayerTypeCMREQ:
		// "CM REQ LocalCommID=0x%08x QPN=0x%06x PSN=%d ServiceID=0x%016x"
		r := &cm.REQ
		b.WriteString("CM REQ LocalCommID=")
		b.hex(uint64(r.LocalCommID), 8)
		b.WriteString(" QPN=")
		b.hex(uint64(r.LocalQPN), 6)
		b.WriteString(" PSN=")
		b.uint(uint64(r.StartingPSN))
		b.WriteString(" ServiceID=")
		b.hex(uint64(r.ServiceID), 16)
	case roce.LayerTypeCMREP:
		// "CM REP LocalCommID=0x%08x RemoteCommID=0x%08x QPN=0x%06x PSN=%d"
		r := &cm.REP
		cmIDs(b, "CM REP", r.LocalCommID, r.RemoteCommID)
		b.WriteString(" QPN=")
		b.hex(uint64(r.LocalQPN), 6)
		b.WriteString(" PSN=")
		b.uint(uint64(r.StartingPSN))
	case roce.LayerTypeCMRTU:
		cmIDs(b, "CM RTU", cm.RTU.LocalCommID, cm.RTU.RemoteCommID)
	case roce.LayerTypeCMREJ:
		// "... Reason=%d (%s)"
		cmIDs(b, "CM REJ", cm.REJ.LocalCommID, cm.REJ.RemoteCommID)
		b.WriteString(" Reason=")
		b.uint(uint64(uint16(cm.REJ.Reason)))
		b.WriteString(" (")
		b.WriteString(cm.REJ.Reason.String())
		b.WriteByte(')')
	case roce.LayerTypeCMMRA:
		cmIDs(b, "CM MRA", cm.MRA.LocalCommID, cm.MRA.RemoteCommID)
	case roce.LayerTypeCMDREQ:
		cmIDs(b, "CM DREQ", cm.DREQ.LocalCommID, cm.DREQ.RemoteCommID)
	case roce.LayerTypeCMDREP:
		cmIDs(b, "CM DREP", cm.DREP.LocalCommID, cm.DREP.RemoteCommID)
	case roce.LayerTypeCMSIDRREQ:
		b.WriteString("CM SIDR_REQ")
	case roce.LayerTypeCMSIDRREP:
		b.WriteString("CM SIDR_REP")
	case roce.LayerTypeCMLAP:
		b.WriteString("CM LAP")
	case roce.LayerTypeCMAPR:
		b.WriteString("CM APR")
	case roce.LayerTypeClassPortInfo:
		b.WriteString("CM ClassPortInfo")
	}
	if p.Has(roce.LayerTypeMAD) {
		b.printf(" (%s)", p.MAD.Method)
	}
}

// cmIDs appends "NAME LocalCommID=0x%08x RemoteCommID=0x%08x".
func cmIDs(b *infoBuf, name string, local, remote uint32) {
	b.WriteString(name)
	b.WriteString(" LocalCommID=")
	b.hex(uint64(local), 8)
	b.WriteString(" RemoteCommID=")
	b.hex(uint64(remote), 8)
}
