package dissect

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestCRCSenderKey: the sender key of an address of every length up to 8
// (an empty one too)
// is the bytes of its first 7 placed little-endian under the tag bit 62,
// as the byte loop of crcSender places them (its fast path for 6 and 7
// bytes included).
func TestCRCSenderKey(t *testing.T) {
	for n := 0; n <= 8; n++ {
		addr := make(net.HardwareAddr, n)
		for i := range addr {
			addr[i] = byte(0xa0 + i)
		}
		var p Packet
		p.Decoded = []gopacket.LayerType{layers.LayerTypeEthernet}
		p.Eth.SrcMAC = addr
		want := uint64(1) << 62
		for i := 0; i < min(n, 7); i++ {
			want |= uint64(0xa0+i) << (8 * i)
		}
		if got := crcSender(&p); got != want {
			t.Errorf("%d-byte address: key %#x, want %#x", n, got, want)
		}
	}
}
