package dissect

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// segmentChecksum verifies the IPv4 header checksum (RFC 791 3.1) and the
// TCP checksum over the pseudo-header, the header and the data (RFC 9293
// 3.1; RFC 8200 8.1 for IPv6) of p's TCP segment: CRCGood, CRCBad, or
// CRCTruncated when the capture cut the segment or the checksum field holds
// the pseudo-header's sum alone, what a sender that leaves the checksum to
// its NIC puts there (Linux CHECKSUM_PARTIAL): not verifiable.
func segmentChecksum(p *Packet) CRCStatus {
	t := &p.TCP
	n := len(t.Contents) + len(t.Payload)
	var sum uint32
	switch {
	case p.Has(layers.LayerTypeIPv4):
		ip := &p.IPv4
		h := ip.Contents
		if len(h) < 20 || fold(onesSum(0, h)) != 0xffff {
			if len(h) < 20 {
				return CRCTruncated
			}
			return CRCBad
		}
		if int(ip.Length)-len(h) != n {
			return CRCTruncated
		}
		sum = onesSum(sum, h[12:20]) // source and destination addresses
		sum += uint32(layers.IPProtocolTCP) + uint32(n)
	case p.Has(layers.LayerTypeIPv6):
		ip := &p.IPv6
		if len(ip.Contents) < 40 || int(ip.Length) != n {
			return CRCTruncated // or extension headers between: not verified
		}
		sum = onesSum(sum, ip.Contents[8:40])
		sum += uint32(layers.IPProtocolTCP) + uint32(n)
	default:
		return CRCNotApplicable
	}
	pseudo := fold(sum)
	sum = onesSum(sum, t.Contents)
	if len(t.Contents)%2 != 0 {
		return CRCTruncated // a TCP header is a whole number of 32-bit words
	}
	sum = onesSum(sum, t.Payload)
	if fold(sum) != 0xffff {
		if t.Checksum == pseudo || t.Checksum == ^pseudo {
			return CRCTruncated // offloaded: the NIC fills it in
		}
		return CRCBad
	}
	return CRCGood
}

// onesSum adds b to sum as big-endian 16-bit words (an odd last octet
// padded with zero), carries left for fold.
func onesSum(sum uint32, b []byte) uint32 {
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		sum = fold32(uint64(sum) + v>>48 + v>>32&0xffff + v>>16&0xffff + v&0xffff)
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold32(v uint64) uint32 {
	for v>>32 != 0 {
		v = v&0xffffffff + v>>32
	}
	return uint32(v)
}

// fold reduces a ones' complement sum to 16 bits.
func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}
