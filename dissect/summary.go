package dissect

import (
	"fmt"
	"net"
	"strings"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// Source names where the packet came from, the way tshark's Source column
// does: the IP address, else the GID, else the LID, else the MAC address.
func (p *Packet) Source() string {
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

// Destination is Source's counterpart.
func (p *Packet) Destination() string {
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
func (p *Packet) Protocol() string {
	switch pr := Classify(p); pr {
	case ProtoCM, ProtoMAD, ProtoCNP:
		if p.Encap != EncapNone {
			return p.Encap.String()
		}
		return pr.String()
	default:
		return pr.String()
	}
}

// Info is the summary line's description, e.g.
// "RC SEND_ONLY QP=0x000011 PSN=3431571".
func (p *Packet) Info() string {
	var b strings.Builder
	switch {
	case p.CM.Attr != 0:
		p.cmInfo(&b)
	case p.Has(roce.LayerTypeMAD):
		fmt.Fprintf(&b, "MAD %s %s attr=0x%04x", p.MAD.MgmtClass, p.MAD.Method, p.MAD.AttributeID)
	case p.Has(roce.LayerTypeBTH):
		p.bthInfo(&b)
	case p.IWARP.HasReqRep || len(p.IWARP.FPDUs) > 0 || p.IWARP.Resync:
		p.iwarpInfo(&b)
	case p.Has(layers.LayerTypeTCP):
		fmt.Fprintf(&b, "%d → %d", p.TCP.SrcPort, p.TCP.DstPort)
	case p.Has(layers.LayerTypeUDP):
		fmt.Fprintf(&b, "%d → %d Len=%d", p.UDP.SrcPort, p.UDP.DstPort, len(p.UDP.Payload))
	case p.Has(layers.LayerTypeARP):
		b.WriteString("ARP")
	}
	p.analysisInfo(&b) // fields_analysis.go
	p.rpcInfo(&b)      // rpc_info.go
	if s := p.ICRC.Status; s == CRCBad || s == CRCTruncated {
		fmt.Fprintf(&b, " [ICRC %s]", s)
	}
	if s := p.VCRC.Status; s == CRCBad {
		fmt.Fprintf(&b, " [VCRC %s]", s)
	}
	if p.Err != nil {
		fmt.Fprintf(&b, " [malformed: %v]", p.Err)
	}
	return strings.TrimSpace(b.String())
}

// InfoLines is Info for the one-line-per-item summary: an iWARP packet that
// carries several FPDUs (or an MPA Request/Reply and FPDUs) gets one line per
// FPDU, each RPC-over-RDMA message on the line of the Send that completed it
// (the untagged Sends with the Last bit, in order); anything else one line.
func (p *Packet) InfoLines() []string {
	w := &p.IWARP
	items := len(w.FPDUs)
	if w.HasReqRep {
		items++
	}
	if w.Resync {
		items++
	}
	if items <= 1 || p.Has(roce.LayerTypeBTH) {
		return []string{p.Info()}
	}
	var lines []string
	var head strings.Builder
	if p.iwarpHeadInfo(&head) > 0 {
		lines = append(lines, head.String())
	}
	rpc := 0
	for i := range w.FPDUs {
		f := &w.FPDUs[i]
		var b strings.Builder
		f.info(&b)
		if !f.DDP.T && f.DDP.L && f.RDMAP.Opcode.IsSend() && rpc < len(p.RPC) {
			b.WriteString(" | ")
			p.RPC[rpc].info(&b)
			rpc++
		}
		lines = append(lines, b.String())
	}
	last := &strings.Builder{}
	last.WriteString(lines[len(lines)-1])
	for ; rpc < len(p.RPC); rpc++ {
		last.WriteString(" | ")
		p.RPC[rpc].info(last)
	}
	if p.Err != nil {
		fmt.Fprintf(last, " [malformed: %v]", p.Err)
	}
	lines[len(lines)-1] = last.String()
	return lines
}

func (p *Packet) bthInfo(b *strings.Builder) {
	h := &p.BTH
	fmt.Fprintf(b, "%s QP=0x%06x PSN=%d", h.OpCode, h.DestQP, h.PSN)
	if h.Has(roce.ExtRETH) {
		fmt.Fprintf(b, " VA=0x%x R_Key=0x%08x Len=%d", h.RETH.VA, h.RETH.RKey, h.RETH.DMALen)
	}
	if h.Has(roce.ExtAETH) {
		fmt.Fprintf(b, " %s MSN=%d", h.AETH.Syndrome.String(), h.AETH.MSN)
	}
	if h.Has(roce.ExtIETH) {
		fmt.Fprintf(b, " Inv_R_Key=0x%08x", h.IETH.RKey)
	}
	if h.Has(roce.ExtImmDt) {
		fmt.Fprintf(b, " Imm=0x%08x", h.ImmDt.Data)
	}
	if h.Has(roce.ExtDETH) {
		fmt.Fprintf(b, " SrcQP=0x%06x", h.DETH.SrcQP)
	}
	if n := len(h.Payload); n > 0 {
		fmt.Fprintf(b, " Payload=%d", n)
	}
}

func (p *Packet) cmInfo(b *strings.Builder) {
	cm := &p.CM
	switch cm.Attr {
	case roce.LayerTypeCMREQ:
		r := &cm.REQ
		fmt.Fprintf(b, "CM REQ LocalCommID=0x%08x QPN=0x%06x PSN=%d ServiceID=0x%016x", r.LocalCommID, r.LocalQPN, r.StartingPSN, r.ServiceID)
	case roce.LayerTypeCMREP:
		r := &cm.REP
		fmt.Fprintf(b, "CM REP LocalCommID=0x%08x RemoteCommID=0x%08x QPN=0x%06x PSN=%d", r.LocalCommID, r.RemoteCommID, r.LocalQPN, r.StartingPSN)
	case roce.LayerTypeCMRTU:
		fmt.Fprintf(b, "CM RTU LocalCommID=0x%08x RemoteCommID=0x%08x", cm.RTU.LocalCommID, cm.RTU.RemoteCommID)
	case roce.LayerTypeCMREJ:
		fmt.Fprintf(b, "CM REJ LocalCommID=0x%08x RemoteCommID=0x%08x Reason=%d (%s)", cm.REJ.LocalCommID, cm.REJ.RemoteCommID, uint16(cm.REJ.Reason), cm.REJ.Reason)
	case roce.LayerTypeCMMRA:
		fmt.Fprintf(b, "CM MRA LocalCommID=0x%08x RemoteCommID=0x%08x", cm.MRA.LocalCommID, cm.MRA.RemoteCommID)
	case roce.LayerTypeCMDREQ:
		fmt.Fprintf(b, "CM DREQ LocalCommID=0x%08x RemoteCommID=0x%08x", cm.DREQ.LocalCommID, cm.DREQ.RemoteCommID)
	case roce.LayerTypeCMDREP:
		fmt.Fprintf(b, "CM DREP LocalCommID=0x%08x RemoteCommID=0x%08x", cm.DREP.LocalCommID, cm.DREP.RemoteCommID)
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
		fmt.Fprintf(b, " (%s)", p.MAD.Method)
	}
}
