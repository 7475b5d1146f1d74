package fields

import (
	"fmt"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// bthInfoFmt is the transport header's summary as fmt prints it: the
// reference AppendInfo's strconv code must equal.
func bthInfoFmt(h *roce.BTH) string {
	s := fmt.Sprintf("%s QP=0x%06x PSN=%d", h.OpCode, h.DestQP, h.PSN)
	if h.Has(roce.ExtRETH) {
		s += fmt.Sprintf(" VA=0x%x R_Key=0x%08x Len=%d", h.RETH.VA, h.RETH.RKey, h.RETH.DMALen)
	}
	if h.Has(roce.ExtAETH) {
		// An ACK's credit count code and the credits it stands for (IBA
		// Vol 1 9.7.5.1's table; code 31: none), as tshark names the
		// field; a NAK as Syndrome.String says.
		syn := h.AETH.Syndrome
		switch n, ok := syn.Credits(); {
		case !syn.IsACK():
			s += " " + syn.String()
		case !ok:
			s += fmt.Sprintf(" ACK Credit Count=%d (none advertised)", syn.Value())
		case n == 1:
			s += fmt.Sprintf(" ACK Credit Count=%d (1 credit)", syn.Value())
		default:
			s += fmt.Sprintf(" ACK Credit Count=%d (%d credits)", syn.Value(), n)
		}
		s += fmt.Sprintf(" MSN=%d", h.AETH.MSN)
	}
	if h.Has(roce.ExtIETH) {
		s += fmt.Sprintf(" Inv_R_Key=0x%08x", h.IETH.RKey)
	}
	if h.Has(roce.ExtImmDt) {
		s += fmt.Sprintf(" Imm=0x%08x", h.ImmDt.Data)
	}
	if h.Has(roce.ExtDETH) {
		s += fmt.Sprintf(" SrcQP=0x%06x", h.DETH.SrcQP)
	}
	if n := len(h.Payload); n > 0 {
		s += fmt.Sprintf(" Payload=%d", n)
	}
	return s
}

// TestBTHInfoMatchesFmt: on every transport packet of the RoCE captures
// the summary built with strconv is fmt's, and appending it to a buffer
// that already holds text leaves that text alone and, but for
// acknowledgements, allocates nothing once the buffer has grown.
func TestBTHInfoMatchesFmt(t *testing.T) {
	n := 0
	for _, name := range []string{"rxe-nfs3.pcap", "rxe-ib_send_bw.pcap", "rxe-ib_write_bw.pcap", "rxe-rping.pcap"} {
		e := dissect.NewEngine(dissect.Options{})
		var p dissect.Packet
		for _, r := range loadRecords(t, name) {
			p.Number, p.Timestamp, p.LinkType = r.num, r.ts, r.lt
			p.CaptureLength, p.Length = len(r.data), r.length
			e.Process(&p, r.data)
			if !p.Has(roce.LayerTypeBTH) || p.CM.Attr != 0 {
				continue
			}
			var b infoBuf
			bthInfo(&p, &b)
			if want := bthInfoFmt(&p.BTH); b.String() != want {
				t.Fatalf("%s packet %d: %q, fmt says %q", name, p.Number, b.String(), want)
			}
			buf := append(make([]byte, 0, 4096), "head|"...)
			got := AppendInfo(&p, buf)
			if string(got[:5]) != "head|" || string(got[5:]) != Info(&p) {
				t.Fatalf("%s packet %d: AppendInfo gave %q", name, p.Number, got)
			}
			// (AETH's Syndrome.String formats its credit count with fmt.)
			if p.ICRC.Status == dissect.CRCGood && p.Err == nil && !p.BTH.Has(roce.ExtAETH) {
				if a := testing.AllocsPerRun(5, func() { AppendInfo(&p, buf[:0]) }); a != 0 {
					t.Fatalf("%s packet %d: %v allocations", name, p.Number, a)
				}
			}
			n++
		}
	}
	if n < 10000 {
		t.Errorf("only %d transport packets compared", n)
	}
}
