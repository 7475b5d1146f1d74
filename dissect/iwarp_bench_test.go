package dissect

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// iwRenumber returns copies of an Ethernet/IPv4 capture's frames with every
// TCP port other than the server's (20049) moved by k, so that each pass
// over the capture opens new connections (the same 4-tuples and sequence
// numbers would be retransmissions of the first pass).
func iwRenumber(frames []iwFrame, k int) []iwFrame {
	out := make([]iwFrame, len(frames))
	for i, f := range frames {
		out[i] = f
		d := f.data
		if f.link != layers.LinkTypeEthernet || len(d) < 14+20+4 || binary.BigEndian.Uint16(d[12:]) != 0x0800 || d[23] != 6 {
			continue
		}
		ihl := int(d[14]&0x0f) * 4
		if len(d) < 14+ihl+4 {
			continue
		}
		c := append([]byte(nil), d...)
		for _, off := range []int{14 + ihl, 14 + ihl + 2} {
			if p := binary.BigEndian.Uint16(c[off:]); p != IWARPHintPort {
				binary.BigEndian.PutUint16(c[off:], p+uint16(k))
			}
		}
		out[i].data = c
	}
	return out
}

// BenchmarkIWARPEngine runs siw-nfs3.pcap (5225 frames: two NFS mounts
// over iWARP, 3424 FPDUs, 3.7 MB) through one engine again and again, each
// pass on new connections. ns/packet and allocs/packet are per frame over
// all passes, connection set-up included; allocs/packet-steady counts the
// frames of a pass that is not the first.
func BenchmarkIWARPEngine(b *testing.B) {
	base := iwReadFrames(b, "siw-nfs3.pcap")
	passes := make([][]iwFrame, 8)
	for i := range passes {
		passes[i] = iwRenumber(base, i+1)
	}
	e := newEngine(Options{})
	var p Packet
	run := func(frames []iwFrame) {
		for _, f := range frames {
			p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
			p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
			e.Process(&p, f.data)
		}
	}
	run(passes[0])
	b.ReportAllocs()
	size := 0
	for _, f := range base {
		size += len(f.data)
	}
	b.SetBytes(int64(size))
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(passes[1+i%(len(passes)-1)])
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	n := float64(b.N) * float64(len(base))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/packet")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/packet")
}

// TestIWARPSteadyStateAllocs: once an engine has seen a capture, another
// pass over it on new connections allocates for each connection (its
// Connection, stream, private data copies, RFC 8797 results) and for the
// out-of-order octets TCP reassembly holds, not per packet: fewer than one
// allocation per 20 packets, all connection set-up included.
func TestIWARPSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count over whole captures")
	}
	base := iwReadFrames(t, "siw-nfs3.pcap")
	e := newEngine(Options{})
	var p Packet
	run := func(frames []iwFrame) {
		for _, f := range frames {
			p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
			p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
			e.Process(&p, f.data)
		}
	}
	run(iwRenumber(base, 1))
	run(iwRenumber(base, 2))
	next := iwRenumber(base, 3)
	allocs := testing.AllocsPerRun(1, func() { run(next) })
	perPacket := allocs / float64(len(base))
	t.Logf("%.0f allocations for %d packets (%.4f per packet)", allocs, len(base), perPacket)
	if perPacket > 0.05 {
		t.Errorf("%.4f allocations per packet", perPacket)
	}
}
