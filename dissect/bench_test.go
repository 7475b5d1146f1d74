package dissect_test

import (
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// nfs3Packets is rxe-nfs3.pcap in memory: 7245 frames, two NFS connections.
func nfs3Packets(b testing.TB) ([]capPacket, int64) {
	pkts := loadCapture(b, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	var n int64
	for _, cp := range pkts {
		n += int64(len(cp.data))
	}
	return pkts, n
}

// BenchmarkEngineRoCE runs the whole of rxe-nfs3.pcap, preloaded, through a
// fresh Engine per iteration: decoding, CM tracking, Send reassembly and
// the RPC-over-RDMA layer. allocs/op are per capture (connection set-up,
// reassembled messages); ns/pkt and allocs/pkt per packet.
func BenchmarkEngineRoCE(b *testing.B) {
	pkts, size := nfs3Packets(b)
	b.SetBytes(size)
	b.ReportAllocs()
	p := new(dissect.Packet)
	for b.Loop() {
		e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
		for _, cp := range pkts {
			p.Number, p.Timestamp, p.LinkType = cp.num, cp.ts, cp.lt
			p.CaptureLength, p.Length = len(cp.data), cp.length
			e.Process(p, cp.data)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pkts)), "ns/pkt")
}

// steadyState decodes and tracks every packet of pkts once, so that the
// connection table knows the connections and the Packet's slices have
// grown, and returns the decoder, table and packet to measure with.
func steadyState(pkts []capPacket) (*dissect.Decoder, *dissect.ConnTable, *dissect.Packet) {
	d := &dissect.Decoder{RoCEPort: dissect.DefaultRoCEPort}
	tab := dissect.NewConnTable()
	p := new(dissect.Packet)
	for _, cp := range pkts {
		p.Number, p.LinkType, p.CaptureLength, p.Length = cp.num, cp.lt, len(cp.data), cp.length
		d.Decode(p, cp.data)
		tab.Track(p)
	}
	return d, tab, p
}

// BenchmarkDecodeTrackRoCE is the per-packet hot path in steady state:
// Decoder.Decode and ConnTable.Track of rxe-nfs3.pcap's packets, the
// connections already known.
func BenchmarkDecodeTrackRoCE(b *testing.B) {
	pkts, size := nfs3Packets(b)
	d, tab, p := steadyState(pkts)
	b.SetBytes(size / int64(len(pkts)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		cp := &pkts[i]
		p.Number, p.LinkType, p.CaptureLength, p.Length = cp.num, cp.lt, len(cp.data), cp.length
		d.Decode(p, cp.data)
		tab.Track(p)
		i++
		if i == len(pkts) {
			i = 0
		}
	}
}

// TestDecodeTrackAllocatesNothing: in steady state, decoding an RC data
// packet (any opcode of the real NFS capture, and the synthetic
// encapsulations: IPv6, VLAN tags, SLL2, RoCEv1, native IB, ERF) and
// placing it on its connection allocates nothing. CM packets may allocate
// (a new connection, its private data); they are not measured.
func TestDecodeTrackAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 5 MB capture")
	}
	pkts, _ := nfs3Packets(t)
	d, tab, p := steadyState(pkts)
	measured := map[roce.OpCode]int{}
	for _, cp := range pkts {
		p.LinkType, p.CaptureLength, p.Length = cp.lt, len(cp.data), cp.length
		d.Decode(p, cp.data)
		if !p.Has(roce.LayerTypeBTH) || p.BTH.OpCode.Transport() != roce.TransportRC || measured[p.BTH.OpCode] >= 3 {
			continue
		}
		op := p.BTH.OpCode
		measured[op]++
		allocs := testing.AllocsPerRun(20, func() {
			d.Decode(p, cp.data)
			tab.Track(p)
		})
		if allocs != 0 || p.Conn == nil {
			t.Errorf("packet %d (%v): %v allocations per decode+track, connection %v", cp.num, op, allocs, p.Conn != nil)
		}
	}
	// The NFS capture's RC opcodes (tshark -e infiniband.bth.opcode: 0, 2,
	// 4, 6, 7, 8, 10, 12-15, 17, 23): Send (only, first, last, only with
	// invalidate), RDMA Write (first, middle, last, only), RDMA Read request
	// and responses, acknowledgements.
	for _, op := range []roce.OpCode{roce.OpRCSendOnly, roce.OpRCSendFirst, roce.OpRCSendLast,
		roce.OpRCSendOnlyWithInvalidate, roce.OpRCRDMAWriteFirst, roce.OpRCRDMAWriteMiddle, roce.OpRCRDMAWriteLast,
		roce.OpRCRDMAWriteOnly, roce.OpRCRDMAReadRequest, roce.OpRCRDMAReadResponseFirst,
		roce.OpRCRDMAReadResponseMiddle, roce.OpRCRDMAReadResponseLast, roce.OpRCAcknowledge} {
		if measured[op] == 0 {
			t.Errorf("%v not measured: not in the capture?", op)
		}
	}

	// Every synthetic encapsulation: the connection is learnt from the
	// first packet (no set-up), then measured.
	for _, c := range encapCases() {
		f := build(t, c.o, c.nodes[0], c.nodes[1], synth.Send(roce.OpRCSendOnly, 0x22, 1), make([]byte, 100))
		d := &dissect.Decoder{RoCEPort: dissect.DefaultRoCEPort}
		tab := dissect.NewConnTable()
		p := &dissect.Packet{LinkType: f.LinkType, CaptureLength: len(f.Data), Length: f.Length}
		d.Decode(p, f.Data)
		tab.Track(p)
		allocs := testing.AllocsPerRun(20, func() {
			d.Decode(p, f.Data)
			tab.Track(p)
		})
		if allocs != 0 || p.Conn == nil || p.ICRC.Status != dissect.CRCGood {
			t.Errorf("%s: %v allocations per decode+track (connection %v, ICRC %v)", c.name, allocs, p.Conn != nil, p.ICRC.Status)
		}
	}
}
