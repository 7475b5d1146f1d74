package dissect

import (
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// walkHas is what Has answered before it kept a bit per layer: a walk of
// Decoded.
func walkHas(p *Packet, t gopacket.LayerType) bool {
	for _, d := range p.Decoded {
		if d == t {
			return true
		}
	}
	return false
}

// TestHasAgreesWithDecoded decodes every packet of every capture under
// testdata/pcaps (real, lossy, public, mutated, synthetic: every link
// type and the damaged ones) and asks Has about every layer type the
// decoder appends, and about types it never appends (no bit: Has walks):
// its answer is the walk's. A Packet whose Decoded is set from outside
// (a test's literal) is answered by the walk too.
func TestHasAgreesWithDecoded(t *testing.T) {
	var asked []gopacket.LayerType
	for lt := range layerMask {
		if layerMask[lt] != 0 {
			asked = append(asked, gopacket.LayerType(lt))
		}
	}
	if len(asked) > 64 {
		t.Fatalf("%d layer types with a bit: Packet.has holds 64", len(asked))
	}
	asked = append(asked, roce.LayerTypeRETH, iwarp.LayerTypeMPA, layers.LayerTypeICMPv4, gopacket.LayerTypePayload)
	names, _ := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*.pcap*"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*", "*.pcap*"))
	names = append(names, more...)
	if len(names) < 20 {
		t.Fatalf("%d captures found", len(names))
	}
	types := map[gopacket.LayerType]int{}
	packets := 0
	for _, name := range names {
		r, err := source.Open(name)
		if err != nil {
			continue // the mutated files that do not open
		}
		var d Decoder
		var p Packet
		for n := 1; ; n++ {
			rec, err := r.Next()
			if err != nil {
				break
			}
			p.LinkType, p.CaptureLength, p.Length = rec.LinkType, len(rec.Data), rec.CI.Length
			d.Decode(&p, rec.Data)
			for _, lt := range asked {
				if got, want := p.Has(lt), walkHas(&p, lt); got != want {
					t.Fatalf("%s packet %d: Has(%v) = %v, Decoded %v", name, n, lt, got, p.Decoded)
				}
			}
			for _, lt := range p.Decoded {
				types[lt]++
			}
			packets++
		}
		r.Close()
	}
	t.Logf("%d captures, %d packets", len(names), packets)
	for _, lt := range []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeLinuxSLL, layers.LayerTypeLinuxSLL2,
		layers.LayerTypeIPv4, layers.LayerTypeIPv6, layers.LayerTypeUDP, layers.LayerTypeTCP, roce.LayerTypeLRH,
		roce.LayerTypeBTH, roce.LayerTypeMAD, roce.LayerTypeCMREQ, roce.LayerTypeCMDREP} {
		if types[lt] == 0 {
			t.Errorf("no packet decoded %v: the captures do not ask Has about it", lt)
		}
	}
	p := Packet{Decoded: []gopacket.LayerType{roce.LayerTypeBTH}}
	if !p.Has(roce.LayerTypeBTH) || p.Has(layers.LayerTypeUDP) {
		t.Errorf("Decoded set from outside: Has(BTH) %v, Has(UDP) %v", p.Has(roce.LayerTypeBTH), p.Has(layers.LayerTypeUDP))
	}
	p.decoded(layers.LayerTypeUDP)
	if !p.Has(layers.LayerTypeUDP) {
		t.Errorf("Decoded set from outside, then a layer decoded: Has(UDP) false")
	}
}
