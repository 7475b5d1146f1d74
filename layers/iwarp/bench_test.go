package iwarp

import (
	"testing"

	"github.com/gopacket/gopacket"
)

func benchStream(b *testing.B) (*halfStream, [][]byte, int) {
	h := mpaStreams(b, "siw-nfs41")[0]
	var pieces [][]byte
	n := 0
	for _, p := range h.pieces {
		pieces = append(pieces, p.data)
		n += len(p.data)
	}
	return h, pieces, n
}

// BenchmarkFramer frames the client half of siw-nfs41 as TCP delivered it.
func BenchmarkFramer(b *testing.B) {
	h, pieces, n := benchStream(b)
	fr := NewFramer(h.framerConfig())
	b.SetBytes(int64(n))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fr.Reset(h.framerConfig())
		for _, p := range pieces {
			fr.Feed(p)
			for {
				if _, err := fr.Next(); err != nil {
					break
				}
			}
		}
	}
}

// BenchmarkFramerMarkersCRC frames the same ULPDUs re-encoded with markers
// and CRC32c, in 1448-octet pieces.
func BenchmarkFramerMarkersCRC(b *testing.B) {
	h, _, _ := benchStream(b)
	fr := NewFramer(h.framerConfig())
	fr.Feed(h.bytes())
	enc := Encoder{Framing: Framing{Markers: true, CRC: true}}
	var stream []byte
	for {
		fp, err := fr.Next()
		if err != nil {
			break
		}
		stream, _ = enc.AppendFPDU(stream, fp.ULPDU)
	}
	cfg := FramerConfig{Framing: enc.Framing}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fr.Reset(cfg)
		for s := stream; len(s) > 0; {
			n := min(1448, len(s))
			fr.Feed(s[:n])
			s = s[n:]
			for {
				if _, err := fr.Next(); err != nil {
					break
				}
			}
		}
	}
}

// BenchmarkDecodingLayerParser decodes one FPDU per op (rotating through
// the stream) as MPA, DDP and RDMAP with a DecodingLayerParser.
func BenchmarkDecodingLayerParser(b *testing.B) {
	h, _, _ := benchStream(b)
	fr := NewFramer(h.framerConfig())
	fr.Feed(h.bytes())
	var fpdus [][]byte
	for {
		fp, err := fr.Next()
		if err != nil {
			break
		}
		fpdus = append(fpdus, fp.Raw)
	}
	var m MPA
	var d DDP
	var r RDMAP
	var pl gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(LayerTypeMPA, &m, &d, &r, &pl)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := parser.DecodeLayers(fpdus[i%len(fpdus)], &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMPAReqRep(b *testing.B) {
	h := mpaStreams(b, "siw-nfs41")[0]
	s, _ := segmentByFrame(readSegments(b, "siw-nfs41"), h.reqFrame)
	var m MPAReqRep
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.DecodeFromBytes(s.payload, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReassembler reassembles 64 KiB messages of 1424-octet segments.
func BenchmarkReassembler(b *testing.B) {
	ra := NewReassembler(ReassemblerConfig{})
	data := make([]byte, 1424)
	b.SetBytes(65536)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for mo := 0; mo < 65536; mo += 1424 {
			d := DDP{DV: 1, MSN: uint32(i), MO: uint32(mo), L: mo+1424 >= 65536, Data: data[:min(1424, 65536-mo)]}
			ra.Add(&d, uint64(mo))
		}
	}
}

func BenchmarkCRC32c(b *testing.B) {
	p := make([]byte, 1448)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		CRC32c(p)
	}
}
