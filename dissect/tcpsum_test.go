package dissect

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestSegmentChecksum: on siw-nfs3.pcap (captured on the wire: every
// checksum right, as tshark -o tcp.check_checksum:TRUE says) every TCP
// segment verifies; a flipped payload bit, a flipped IPv4 header bit and a
// flipped checksum bit fail; a checksum field holding the pseudo-header's
// sum alone (a sender offloading the checksum to its NIC) is not verifiable.
func TestSegmentChecksum(t *testing.T) {
	_, frames := pcaptest.Read(t, capturePath("siw-nfs3.pcap"))
	d := &Decoder{RoCEPort: DefaultRoCEPort}
	p := new(Packet)
	decode := func(b []byte) {
		p.LinkType = layers.LinkTypeEthernet
		p.CaptureLength, p.Length = len(b), len(b)
		d.Decode(p, b)
	}
	good, tried := 0, 0
	for _, fr := range frames {
		decode(fr.Data)
		if !p.Has(layers.LayerTypeTCP) {
			continue
		}
		if st := segmentChecksum(p); st != CRCGood {
			t.Fatalf("frame %d: %v", fr.Num, st)
		}
		good++
		if len(p.TCP.Payload) < 100 || tried > 20 {
			continue
		}
		tried++
		ihl := 14 + int(fr.Data[14]&0xf)*4
		tcpOff := ihl + 16 // the TCP checksum
		for _, at := range []int{len(fr.Data) - 1, 14 + 8, tcpOff} {
			b := append([]byte(nil), fr.Data...)
			b[at] ^= 0x10
			decode(b)
			if st := segmentChecksum(p); st != CRCBad {
				t.Errorf("frame %d with octet %d flipped: %v", fr.Num, at, st)
			}
		}
		// The pseudo-header's sum in the checksum field (Linux
		// CHECKSUM_PARTIAL: ~csum_tcpudp_magic(saddr, daddr, len, TCP, 0)).
		b := append([]byte(nil), fr.Data...)
		var s uint32
		s = onesSum(s, b[14+12:14+20])
		s += 6 + uint32(len(b)-ihl)
		binary.BigEndian.PutUint16(b[tcpOff:], fold(s))
		decode(b)
		if st := segmentChecksum(p); st != CRCTruncated {
			t.Errorf("frame %d with an offloaded checksum: %v", fr.Num, st)
		}
	}
	if good < 1000 || tried == 0 {
		t.Fatalf("%d segments verified, %d mutated", good, tried)
	}
}

// onesSumWords is onesSum's definition, word by word (RFC 1071 2).
func onesSumWords(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

// TestOnesSumMatchesWords: the eight-octets-at-a-time sum folds to the
// word-by-word one for every length from 0 to 300 and every start offset
// within a word, on random octets and on all-ones octets (the most carries).
func TestOnesSumMatchesWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 308)
	for _, fill := range []string{"random", "0xff"} {
		for i := range buf {
			buf[i] = 0xff
			if fill == "random" {
				buf[i] = byte(rng.Uint32())
			}
		}
		for off := 0; off < 8; off++ {
			for n := 0; n <= 300; n++ {
				b := buf[off : off+n]
				for _, start := range []uint32{0, 0xffff, 0x1fffe} {
					if got, want := fold(onesSum(start, b)), fold(onesSumWords(start, b)); got != want {
						t.Fatalf("%s, offset %d, %d octets, from %#x: %#04x, word by word %#04x", fill, off, n, start, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkOnesSum(b *testing.B) {
	buf := make([]byte, 1460)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		onesSum(0, buf)
	}
}
