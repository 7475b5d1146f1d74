package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestSummaryLineMatchesFmt: the summary writer, which builds its lines
// with strconv, prints every packet of a RoCE, an iWARP (several FPDUs per
// segment) and an SLL2 capture exactly as the fmt format it replaced does,
// and allocates nothing per RoCE data packet of the NFS capture (no RPC
// message, no acknowledgement) once its buffers have grown. (iWARP's FPDU
// summaries are still printed with fmt.)
func TestSummaryLineMatchesFmt(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-rping-any-sll2.pcap"} {
		r, err := source.Open(filepath.Join("..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var want strings.Builder
		sw, quiet := NewSummaryWriter(&out), NewSummaryWriter(io.Discard)
		measured := 0
		e := dissect.NewEngine(rpcordma.With(dissect.Options{Pipeline: dissect.PipelineOff}, nil, nil))
		err = e.Run(r, func(p *dissect.Packet) error {
			for _, info := range fields.InfoLines(p) {
				fmt.Fprintf(&want, "%5d %11.6f %s → %s %-7s %5d %s\n",
					p.Number, p.RelTime.Seconds(), fields.Source(p), fields.Destination(p), fields.Protocol(p), p.Length, info)
			}
			if info := fields.Info(p); name == "rxe-nfs3.pcap" && p.Has(roce.LayerTypeBTH) && p.CM.Attr == 0 && p.Number > 100 && fields.OneInfoLine(p) && len(rpcordma.Records(p)) == 0 && p.Err == nil &&
				!strings.Contains(info, "ACK") && !strings.Contains(info, "MPA") {
				measured++
				if a := testing.AllocsPerRun(3, func() { _ = quiet.WritePacket(p) }); a != 0 {
					t.Errorf("%s packet %d (%s): %v allocations", name, p.Number, info, a)
				}
			}
			return sw.WritePacket(p)
		})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Errorf("%s: the summary lines differ from fmt's", name)
		}
		if (name == "rxe-nfs3.pcap" && measured < 1000) || out.Len() == 0 {
			t.Errorf("%s: %d packets measured, %d octets printed", name, measured, out.Len())
		}
	}
}
