package dissect

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// maxCRCSenders bounds crcTrust's set: a capture has a few senders; past
// the bound a new sender's bad CRCs are taken as not real, as before any
// of its CRCs has been seen right.
const maxCRCSenders = 1024

// crcTrust remembers which senders' invariant and variant CRCs the capture
// has shown right. A bad CRC means a corrupted packet, one its receiver
// discards (Packet.CRCDiscarded), only from a sender whose CRCs were right
// before: a capture taken where the CRCs are not yet filled in — on the
// sending host, ahead of a NIC that computes them, or by a tool that
// leaves them zero — has every one of that sender's CRCs wrong, and
// discarding them all would leave nothing to analyse. Such packets are
// analysed as received, and ICRC-BAD/VCRC-BAD still name them. It is the
// iWARP engine's rule for TCP checksums (iwHalf.sumsReal) for the CRCs of
// InfiniBand and RoCE.
type crcTrust struct {
	real map[uint64]struct{}
	// last is the sender the previous verdict came from, lastReal whether
	// it is in real: consecutive packets mostly come from one sender.
	last     uint64
	lastReal bool
}

// note records p's CRC verdict and sets p.CRCDiscarded (Decode's reset
// cleared it).
func (t *crcTrust) note(p *Packet) {
	bad := p.CRCFailed()
	if !bad && p.ICRC.Status != CRCGood && p.VCRC.Status != CRCGood {
		return // no CRC verified
	}
	k := crcSender(p)
	if k != t.last || t.real == nil {
		_, t.lastReal = t.real[k]
		t.last = k
	}
	if !bad {
		if !t.lastReal && len(t.real) < maxCRCSenders {
			if t.real == nil {
				t.real = make(map[uint64]struct{})
			}
			t.real[k], t.lastReal = struct{}{}, true
		}
		return
	}
	p.CRCDiscarded = t.lastReal
}

// crcSender names the sender of p by what its CRCs do not cover, so that
// a corrupted packet still names its sender: the Ethernet (or Linux cooked
// capture) source address, which the ICRC does not cover (IBA Vol 1 Annex
// A17.3.3) and a frame check sequence does; for native InfiniBand the
// LRH's source LID (covered by the VCRC only, so a corrupted one names an
// unknown sender, whose packet is then not discarded). 0 when none.
func crcSender(p *Packet) uint64 {
	var addr []byte
	switch {
	case p.Has(layers.LayerTypeEthernet):
		addr = p.Eth.SrcMAC
	case p.Has(layers.LayerTypeLinuxSLL):
		addr = p.SLL.Addr
	case p.Has(layers.LayerTypeLinuxSLL2):
		addr = p.SLL2.Addr
	case p.Has(roce.LayerTypeLRH):
		return 2<<62 | uint64(p.LRH.SLID)
	}
	if addr == nil {
		return 0
	}
	k := uint64(1) << 62
	a := addr[:min(len(addr), 7)]
	if len(a) >= 6 {
		// A MAC address, most often: its bytes as the loop below places
		// them, in two loads instead of ~70 instructions of loop.
		k |= uint64(binary.LittleEndian.Uint32(a)) | uint64(binary.LittleEndian.Uint16(a[4:]))<<32
		if len(a) == 7 {
			k |= uint64(a[6]) << 48
		}
		return k
	}
	for i, b := range a {
		k |= uint64(b) << (8 * i)
	}
	return k
}
