package roce

import (
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// rcFrames are the RC packets of rxe-nfs3 (sends, writes, reads, ACKs,
// send-with-invalidate), whole Ethernet frames.
func rcFrames(t testing.TB) [][]byte {
	var out [][]byte
	for _, f := range capRoCE(t, filepath.Join(capDir, "rxe-nfs3.pcap")) {
		if OpCode(f.bth[0]).Transport() == TransportRC {
			out = append(out, f.data)
		}
	}
	if len(out) < 1000 {
		t.Fatalf("only %d RC packets", len(out))
	}
	return out
}

type roceParser struct {
	eth     layers.Ethernet
	ip4     layers.IPv4
	ip6     layers.IPv6
	udp     layers.UDP
	bth     BTH
	payload gopacket.Payload
	parser  *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newRoCEParser() *roceParser {
	p := &roceParser{decoded: make([]gopacket.LayerType, 0, 8)}
	p.parser = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &p.eth, &p.ip4, &p.ip6, &p.udp, &p.bth, &p.payload)
	return p
}

// The hot path allocates nothing per packet.
func TestDecodeRoCEv2ZeroAlloc(t *testing.T) {
	frames := rcFrames(t)
	p := newRoCEParser()
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		if err := p.parser.DecodeLayers(frames[i%len(frames)], &p.decoded); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per packet", allocs)
	}
	if len(p.decoded) != 5 || !p.bth.HasICRC {
		t.Errorf("decoded %v", p.decoded)
	}
}

func BenchmarkDecodeRoCEv2(b *testing.B) {
	frames := rcFrames(b)
	p := newRoCEParser()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.parser.DecodeLayers(frames[i%len(frames)], &p.decoded); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkICRC: ICRCv2 over a real 1 KiB-payload RDMA WRITE MIDDLE; the
// throughput is in bytes of IP packet.
func BenchmarkICRC(b *testing.B) {
	var ip []byte
	for _, f := range capRoCE(b, filepath.Join(capDir, "rxe-nfs3.pcap")) {
		if OpCode(f.bth[0]) == OpRCRDMAWriteMiddle {
			ip = f.ip
			break
		}
	}
	b.SetBytes(int64(len(ip)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ICRCv2(ip); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkICRCMethod is BenchmarkICRC through an ICRC of the caller's, as
// the dissect engine calls it (no sync.Pool).
func BenchmarkICRCMethod(b *testing.B) {
	var ip []byte
	for _, f := range capRoCE(b, filepath.Join(capDir, "rxe-nfs3.pcap")) {
		if OpCode(f.bth[0]) == OpRCRDMAWriteMiddle {
			ip = f.ip
			break
		}
	}
	var c ICRC
	b.SetBytes(int64(len(ip)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.V2(ip); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkICRCSmall: ICRCv2 of a real RoCEv2 Send Only carrying an
// RPC-over-RDMA call (under 200 bytes), where the headers weigh most.
func BenchmarkICRCSmall(b *testing.B) {
	var ip []byte
	for _, f := range capRoCE(b, filepath.Join(capDir, "rxe-nfs3.pcap")) {
		if OpCode(f.bth[0]) == OpRCSendOnly && len(f.ip) < 200 {
			ip = f.ip
			break
		}
	}
	var c ICRC
	b.SetBytes(int64(len(ip)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.V2(ip); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVCRC(b *testing.B) {
	f := capIB(b)[0]
	b.SetBytes(int64(len(f.data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := VCRC(f.data); err != nil {
			b.Fatal(err)
		}
	}
}
