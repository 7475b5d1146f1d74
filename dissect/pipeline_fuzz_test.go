package dissect

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/source"
)

// FuzzLinkTypes is what the first byte of a fuzz input selects (modulo
// its length): every link type the decoder reads, and two it does not.
// Exported for the fuzz targets of package dissect_test (fuzz_test.go).
var FuzzLinkTypes = []layers.LinkType{
	layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2, layers.LinkTypeRaw,
	layers.LinkTypeIPv4, layers.LinkTypeIPv6, 247 /* InfiniBand */, 197 /* ERF */, 242, /* IPoIB */
	0 /* NULL: unsupported */, 9, /* PPP: unsupported */
}

// FuzzPipelineHandOver: whatever the bytes, a frame held in a pipeline
// batch by the reading goroutine (its CRC verdicts and request hash
// computed ahead, or left to the engine) and decoded on the engine's side
// makes the same Packet as the frame decoded in line, and neither panics
// (sel picks its link type from FuzzLinkTypes, as FuzzDecode's first byte does).
// Seeded with the first records of real captures of every encapsulation
// (RoCEv2, iWARP, SLL/SLL2, native InfiniBand with its VCRC in ERF, IPoIB).
func FuzzPipelineHandOver(f *testing.F) {
	seeds := []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-rping-any-sll2.pcap", "siw-rping-any-sll.pcap",
		"lossy/rxe-ib_write_bw-lossy.pcap"}
	extra, _ := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "public", "*"))
	for _, e := range extra {
		seeds = append(seeds, filepath.Join("public", filepath.Base(e)))
	}
	for _, name := range seeds {
		r, err := source.Open(filepath.Join("..", "testdata", "pcaps", name))
		if err != nil {
			continue
		}
		for i := 0; i < 60; i++ {
			rec, err := r.Next()
			if err != nil {
				break
			}
			sel := -1
			for k, lt := range FuzzLinkTypes {
				if lt == rec.LinkType {
					sel = k
				}
			}
			if sel >= 0 {
				f.Add(byte(sel), byte(i), append([]byte(nil), rec.Data...))
			}
		}
		r.Close()
	}
	pl := &pipeline{dec: Decoder{RoCEPort: DefaultRoCEPort}}
	b := &pipeBatchBuf{}
	inline := Decoder{RoCEPort: DefaultRoCEPort}
	dec := Decoder{RoCEPort: DefaultRoCEPort}
	f.Fuzz(func(t *testing.T, sel, mode byte, data []byte) {
		lt := FuzzLinkTypes[int(sel)%len(FuzzLinkTypes)]
		rec := source.Record{Number: 1, Data: data, LinkType: lt,
			CI: gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}}
		b.n, b.data, b.cdata, b.comments = 0, b.data[:0], b.cdata[:0], b.comments[:0]
		it := &b.recs[0]
		b.n++
		pl.hold(b, it, &rec, mode&1 == 0)

		var want, got Packet
		want.Number, want.LinkType, want.CaptureLength, want.Length = 1, lt, len(data), len(data)
		inline.Decode(&want, data)
		got.Number, got.Timestamp, got.Interface = it.number, it.ts, it.iface
		got.CaptureLength, got.Length, got.LinkType = it.caplen, it.length, it.linkType
		if it.cend > it.cstart {
			got.Comments = b.comments[it.cstart:it.cend:it.cend]
		}
		dec.decodePre(&got, b.data[it.start:it.end:it.end], &it.pre)
		if got.hashed && requestHash(&got) != packetHash(&want.BTH) {
			t.Fatalf("request hash computed ahead %x, in line %x", requestHash(&got), packetHash(&want.BTH))
		}
		if got.tcpSummed && got.tcpSum != segmentChecksum(&want) {
			t.Fatalf("TCP checksums %v ahead, %v in line", got.tcpSum, segmentChecksum(&want))
		}
		want.hash, want.hashed = got.hash, got.hashed
		want.tcpSum, want.tcpSummed = got.tcpSum, got.tcpSummed
		if !reflect.DeepEqual(&want, &got) {
			t.Fatalf("handed over and decoded, the packet differs from the one decoded in line in %v", differentFields(&want, &got))
		}
	})
}
