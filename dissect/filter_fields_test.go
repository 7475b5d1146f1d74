package dissect_test

import (
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// hotFilters are display filters of the kinds users carve captures with.
var hotFilters = []string{
	"ip.addr == 192.0.2.0/24 && udp.port == 4791",
	"rpcordma.xid == 0xa8ad315d || infiniband.cm.req",
	"infiniband.bth.opcode in {4, 6..12} && !(infiniband.bth.destqp == 0x000001)",
	"rpcordma.rdma_length > 1000 and eth.src[0:3] == 52:54:00",
	"rpc.auth.machinename contains \"cli\" or nfs.procedure_v3 == 6",
	"rpcordma",
	"rpcordma.msg_type == RDMA_NOMSG || rpc.msgtyp == \"Reply\"",
	"frame.number % 2 == 1 && udp.srcport - udp.dstport > 0 && {frame.number - 100} * 2 > 0 - 50",
	"udp[2:2] == 12:b7 && len(ip) == 20 && frame[0:3] == 52:54:00 && infiniband[0] == 04 || tcp[13] & 0x02",
	"frame.protocols contains \"rpcordma:rpc:nfs\" && !(frame.protocols == \"eth:ethertype:ip:udp:infiniband:rpcordma:rpc:nfsacl\")",
	"count(rpcordma.rdma_length) > 1 && max(rpcordma.rdma_length) > 1000 || upper(rpc.auth.machinename) contains \"CLI\" || string(ip.src) == \"192.0.2.1\" && len(eth.src) == 6",
}

// TestFilterNoAllocs evaluates compiled filters on rxe-nfs3.pcap's packets
// as the engine hands them out, and requires no allocation per packet.
func TestFilterNoAllocs(t *testing.T) {
	pkts := loadCapture(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	var flts []*dfilter.Filter[*dissect.Packet]
	for _, s := range hotFilters {
		f, err := dfilter.Compile(s, fields.FilterRegistry(fields.Registry))
		if err != nil {
			t.Fatal(err)
		}
		flts = append(flts, f)
	}
	e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
	p := new(dissect.Packet)
	matched := make([]int, len(flts))
	for i, cp := range pkts {
		p.Number, p.Timestamp, p.LinkType = cp.num, cp.ts, cp.lt
		p.CaptureLength, p.Length = len(cp.data), cp.length
		e.Process(p, cp.data)
		for k, f := range flts {
			if f.Match(p) {
				matched[k]++
			}
			if i%97 == 0 {
				if n := testing.AllocsPerRun(5, func() { f.Match(p) }); n != 0 {
					t.Errorf("frame %d: %s: %v allocations", p.Number, hotFilters[k], n)
				}
			}
		}
	}
	for k, n := range matched {
		if n == 0 {
			t.Errorf("%s matches nothing", hotFilters[k])
		}
	}
}

// BenchmarkFilter is a display filter's cost per packet on real packets
// (rxe-nfs3.pcap): decoding alone, then decoding and filtering; ns/pkt, and
// allocs/op per capture.
func BenchmarkFilter(b *testing.B) {
	pkts := loadCapture(b, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	f, err := dfilter.Compile(hotFilters[0]+" || "+hotFilters[2], fields.FilterRegistry(fields.Registry))
	if err != nil {
		b.Fatal(err)
	}
	for _, filter := range []bool{false, true} {
		name := "decode-only"
		if filter {
			name = "decode+filter"
		}
		b.Run(name, func(b *testing.B) {
			d, _, p := steadyState(pkts[:1])
			b.ReportAllocs()
			for b.Loop() {
				for _, cp := range pkts {
					p.Number, p.LinkType, p.CaptureLength, p.Length = cp.num, cp.lt, len(cp.data), cp.length
					d.Decode(p, cp.data)
					if filter {
						f.Match(p)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pkts)), "ns/pkt")
		})
	}
}
