package dissect

import (
	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/layers/ipoib"
)

// ipoib decodes a LINKTYPE_IPOIB (242) frame: libpcap's 44-byte IPoIB
// header, then IPv4, IPv6 or ARP.
func (d *Decoder) ipoib(p *Packet, data []byte) {
	if err := p.IPoIB.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
		p.fail("IPoIB", err)
		return
	}
	p.decoded(ipoib.LayerTypeIPoIB)
	d.etherType(p, p.IPoIB.Type, p.IPoIB.Payload)
}
