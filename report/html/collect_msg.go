package html

import (
	"fmt"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// bth records an IB/RoCE packet (IBA 9.2): the first (or only) packet of
// a Send, RDMA Write or RDMA Read Response starts an arrow, its middle and
// last packets extend it; an RDMA Read Request is an arrow of its own.
func (cd *connData) bth(p *dissect.Packet, src string, max int) {
	op := p.BTH.OpCode
	// Labels are formatted only for arrows that will be drawn: past the
	// detail limit a packet costs no allocation.
	full := len(cd.events) >= max
	e := Event{Dir: p.Dir, Src: src, First: p.Number, Last: p.Number, Packets: 1, Bytes: uint64(p.Length), Time: p.RelTime}
	start, end := op.IsFirst() || op.IsOnly(), op.IsLast() || op.IsOnly()
	switch {
	case op.IsSend():
		e.Kind, e.Label = "send", "Send"
		if op.HasInvalidate() {
			e.Kind, e.Label = "send-inv", "Send With Invalidate"
			if start && !full {
				e.Label = fmt.Sprintf("Send With Invalidate (R_Key 0x%08x)", p.BTH.IETH.RKey)
			}
		}
		cd.message(p, clsSend, start, end, e, max)
	case op.IsWrite():
		e.Kind, e.Label = "write", "RDMA Write"
		if start && !full {
			e.Label = fmt.Sprintf("RDMA Write %d B R_Key 0x%08x", p.BTH.RETH.DMALen, p.BTH.RETH.RKey)
		}
		cd.message(p, clsWrite, start, end, e, max)
	case op.IsReadRequest():
		e.Kind, e.Label = "read-req", "RDMA Read Request"
		if !full {
			e.Label = fmt.Sprintf("RDMA Read Request %d B R_Key 0x%08x", p.BTH.RETH.DMALen, p.BTH.RETH.RKey)
		}
		cd.event(e, max)
	case op.IsReadResponse():
		e.Kind, e.Label = "read-resp", "RDMA Read Response"
		cd.message(p, clsReadResp, start, end, e, max)
	case op.IsCNP():
		// congestion notifications are not part of the exchange
	default:
		e.Kind = "other"
		if !full {
			e.Label = op.String()
		}
		cd.event(e, max)
	}
}

// fpdu records an iWARP FPDU (RFC 5040 section 4): the first DDP segment
// of a message starts an arrow, the others extend it, the Last flag ends it.
func (cd *connData) fpdu(p *dissect.Packet, f *dissect.IWARPFPDU, src string, max int) {
	if f.Err != nil {
		return
	}
	op := f.RDMAP.Opcode
	full := len(cd.events) >= max
	e := Event{Dir: p.Dir, Src: src, First: p.Number, Last: p.Number, Packets: 1, Bytes: uint64(p.Length), Time: p.RelTime,
		Label: op.String()}
	cls := -1
	switch {
	case op.IsSend():
		e.Kind, cls = "send", clsSend
		if op.HasInvalidateSTag() {
			e.Kind = "send-inv"
			if !full {
				e.Label = fmt.Sprintf("%s (STag 0x%08x)", op, f.RDMAP.InvalidateSTag)
			}
		}
	case op == iwarp.OpRDMAWrite:
		e.Kind, cls = "write", clsWrite
	case op == iwarp.OpRDMAReadResponse:
		e.Kind, cls = "read-resp", clsReadResp
	case op == iwarp.OpRDMAReadRequest:
		e.Kind = "read-req"
	case op == iwarp.OpTerminate:
		e.Kind = "terminate"
	default:
		e.Kind = "other"
	}
	if cls < 0 {
		cd.event(e, max)
		return
	}
	d := p.Dir.Index()
	// A message's later segments in the same packet do not extend it
	// again.
	if i := cd.open[d][cls]; i >= 0 && cd.events[i].Last == p.Number {
		if f.DDP.L {
			cd.open[d][cls] = openNone
		}
		return
	}
	cd.message(p, cls, cd.open[d][cls] == openNone, f.DDP.L, e, max)
}

func cmName(p *dissect.Packet) string {
	switch p.CM.Attr {
	case roce.LayerTypeCMREQ:
		return fmt.Sprintf("CM REQ ServiceID 0x%016x QPN 0x%06x", p.CM.REQ.ServiceID, p.CM.REQ.LocalQPN)
	case roce.LayerTypeCMREP:
		return fmt.Sprintf("CM REP QPN 0x%06x", p.CM.REP.LocalQPN)
	case roce.LayerTypeCMRTU:
		return "CM RTU"
	case roce.LayerTypeCMREJ:
		return fmt.Sprintf("CM REJ %s", p.CM.REJ.Reason)
	case roce.LayerTypeCMMRA:
		return "CM MRA"
	case roce.LayerTypeCMDREQ:
		return "CM DREQ"
	case roce.LayerTypeCMDREP:
		return "CM DREP"
	}
	return "CM " + p.CM.Attr.String()
}

func mpaName(m *iwarp.MPAReqRep) string {
	kind := "MPA Reply"
	if m.IsRequest() {
		kind = "MPA Request"
	}
	s := fmt.Sprintf("%s rev %d M=%d C=%d", kind, m.Rev, b01(m.M), b01(m.C))
	if m.R {
		s += " REJECTED"
	}
	return s + fmt.Sprintf(" private data %d B", m.PDLength)
}

func b01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// throughput adds frame bytes into time bins from the connection's first
// packet. The bins double in width (and pairs merge) when the capture
// outlasts them, so memory stays fixed whatever its length.
type throughput struct {
	// start is the connection's first packet's time since the capture's
	// start: bin 0 begins there.
	start time.Duration
	width time.Duration
	bytes [2][throughputBins]uint64
	pkts  [2][throughputBins]uint64
	// retx and retxPkts: the retransmitted packets' share (the RC
	// model's and TCP's Analysis.Retransmission, as transport_health
	// counts them).
	retx     [2][throughputBins]uint64
	retxPkts [2][throughputBins]uint64
	n        int // bins in use
}

func (t *throughput) add(at time.Duration, dir int, n uint64, retx bool) {
	if t.width == 0 {
		t.width = time.Millisecond
		t.start = at
	}
	at -= t.start
	if at < 0 {
		at = 0
	}
	i := int(at / t.width)
	for i >= throughputBins {
		for d := range t.bytes {
			for j := 0; j < throughputBins/2; j++ {
				t.bytes[d][j] = t.bytes[d][2*j] + t.bytes[d][2*j+1]
				t.pkts[d][j] = t.pkts[d][2*j] + t.pkts[d][2*j+1]
				t.retx[d][j] = t.retx[d][2*j] + t.retx[d][2*j+1]
				t.retxPkts[d][j] = t.retxPkts[d][2*j] + t.retxPkts[d][2*j+1]
			}
			for j := throughputBins / 2; j < throughputBins; j++ {
				t.bytes[d][j], t.pkts[d][j], t.retx[d][j], t.retxPkts[d][j] = 0, 0, 0, 0
			}
		}
		t.width *= 2
		t.n = (t.n + 1) / 2
		i = int(at / t.width)
	}
	t.bytes[dir][i] += n
	t.pkts[dir][i]++
	if retx {
		t.retx[dir][i] += n
		t.retxPkts[dir][i]++
	}
	if i+1 > t.n {
		t.n = i + 1
	}
}
