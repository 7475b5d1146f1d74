package fields

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
)

// FuzzWordsFields: the ARP, ICMP, TCP and expert-info fields and summary
// lines (fields_words.go, summary_words.go) never panic, whatever the frame
// holds; seeded with the real ARP, ICMP and TCP frames of Ethernet, Linux
// cooked v1 and v2 and IPoIB captures.
func FuzzWordsFields(f *testing.F) {
	links := []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2, layers.LinkTypeIPv4}
	for _, c := range []struct {
		name string
		lt   int
	}{{"rxe-rping.pcap", 0}, {"siw-rping-any-sll.pcap", 1}, {"rxe-rping-any-sll2.pcap", 2}, {"public/tcpdump-tests-ipoib.pcap", -1}} {
		for i, r := range loadRecords(f, c.name) {
			if i >= 12 {
				break
			}
			lt := c.lt
			if lt < 0 {
				for k, l := range links {
					if l == r.lt {
						lt = k
					}
				}
				if lt < 0 {
					continue
				}
			}
			f.Add(uint8(lt), r.data)
		}
	}
	table := wordsTable()
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		var p dissect.Packet
		p.LinkType = links[int(lt)%len(links)]
		d := dissect.Decoder{RoCEPort: dissect.DefaultRoCEPort}
		d.Decode(&p, data)
		for _, fd := range table.fields {
			if fd.Get != nil {
				fd.Get(&p, func(v Value) { _ = fd.Format(v) })
			}
		}
		_ = Info(&p)
		_ = Protocol(&p)
		_ = frameProtocols(&p)
		for name, span := range protocolSpans {
			if _, ok := span(&p); ok && name == "" {
				t.Fatal("empty protocol name")
			}
		}
	})
}
