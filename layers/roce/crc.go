package roce

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync"
)

// Invariant and variant CRCs (IBA Vol 1 §7.8).
//
// The ICRC is the CRC-32 of IEEE 802.3 (polynomial 0x04C11DB7, reflected,
// initial value and final XOR all ones) over the packet from the first byte
// of the LRH through the last byte before the ICRC, with the variant fields
// replaced by ones (§7.8.1): LRH VL; GRH TClass, FlowLabel and HopLmt; BTH
// Resv8a. When a GRH is present the whole LRH counts as variant (routers
// rewrite it), so the CRC starts with 8 bytes of 0xFF in its place; RoCEv1
// (Annex A16) and RoCEv2 (Annex A17.3.3) keep that 64-bit all-ones prefix
// for the LRH they do not have. RoCEv2 covers the IP and UDP headers
// instead of the GRH, with IPv4 TOS, TTL and header checksum, IPv6 traffic
// class, flow label and hop limit, and the UDP checksum replaced by ones.
// The CRC goes on the wire least significant byte first, like the Ethernet
// FCS.
//
// The VCRC (§7.8.2) is a CRC-16 with polynomial 0x100B (reflected, initial
// value and final XOR 0xFFFF) over the LRH through the ICRC, also sent
// least significant byte first.
//
// The functions here return CRCs in the representation BTH.ICRC and
// LRH.VCRC use and tshark prints (infiniband.invariant.crc,
// infiniband.variant.crc): the wire bytes read big-endian. Verified on
// every RoCEv2 packet of the rxe captures (computed by the Linux kernel)
// and on every packet of the native-IB ERF capture (LRH-only and LRH+GRH).

// allOnes8 stands in for the LRH (§7.8.1, Annex A16/A17.3.3).
var allOnes8 = [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// crcAfterLRHMask is the CRC-32 state after the 8 all-ones bytes.
var crcAfterLRHMask = crc32.Update(0, crc32.IEEETable, allOnes8[:])

// maxMaskedHeaders bounds the header bytes copied for masking: IPv4 with
// options (60) + UDP (8) + BTH (12).
const maxMaskedHeaders = 60 + 8 + BTHLen

// icrcScratch is the size of ICRC's buffer: the masked headers topped up
// with the first payload bytes, so that one crc32.Update call takes at least
// the 64 bytes its carry-less-multiplication path needs.
const icrcScratch = 128

// The scratch buffer holds the largest masked headers (a compile-time check:
// a negative array length does not build).
var _ [icrcScratch - maxMaskedHeaders]byte

// ICRC computes invariant CRCs without allocating: the masked copy of the
// headers lives in it instead of on the stack, where crc32.Update (which
// calls through a function variable) would make it escape. The zero value
// is ready; an ICRC must not be used by two goroutines at once.
//
// The invariant fields are masked in a copy of the few header bytes (at
// most 80); the payload, a slice of the input, goes through the standard
// library's hardware-accelerated crc32.Update in place, continuing the CRC
// of the masked headers.
type ICRC struct {
	buf [icrcScratch]byte
}

// icrcPool lends ICRCs to the package-level functions.
var icrcPool = sync.Pool{New: func() any { return new(ICRC) }}

// finish runs the CRC from crc over c.buf[:n], the masked headers, and
// rest, the packet up to the ICRC, and returns it as wire bytes read
// big-endian.
func (c *ICRC) finish(crc uint32, n int, rest []byte) uint32 {
	m := copy(c.buf[n:], rest)
	crc = crc32.Update(crc, crc32.IEEETable, c.buf[:n+m])
	crc = crc32.Update(crc, crc32.IEEETable, rest[m:])
	return bits.ReverseBytes32(crc)
}

// ICRCv2 computes the ICRC of a RoCEv2 packet (Annex A17.3.3). ip holds the
// packet from the first byte of the IPv4 or IPv6 header through the ICRC;
// the IP length field bounds it, so trailing Ethernet padding is ignored.
// IPv6 extension headers and IPv4 fragments are not supported.
func ICRCv2(ip []byte) (uint32, error) {
	c := icrcPool.Get().(*ICRC)
	crc, _, err := c.v2(ip)
	icrcPool.Put(c)
	return crc, err
}

// V2 is ICRCv2 with c's buffer.
func (c *ICRC) V2(ip []byte) (uint32, error) {
	crc, _, err := c.v2(ip)
	return crc, err
}

// FixICRCv2 writes the ICRCv2 of the packet into its last four bytes.
func FixICRCv2(ip []byte) error {
	var c ICRC
	crc, off, err := c.v2(ip)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(ip[off:], crc)
	return nil
}

// icrcV2 returns the CRC and the offset of the ICRC field.
func (c *ICRC) v2(ip []byte) (uint32, int, error) {
	if len(ip) < 1 {
		return 0, 0, shortError("ICRC: IP header", len(ip), 20)
	}
	buf := &c.buf
	var hdr, total int
	switch ip[0] >> 4 {
	case 4:
		if len(ip) < 20 {
			return 0, 0, shortError("ICRC: IPv4 header", len(ip), 20)
		}
		ihl := int(ip[0]&0xF) * 4
		total = int(binary.BigEndian.Uint16(ip[2:4]))
		if ihl < 20 {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv4 header length %d: %w", ihl, ErrBadLength)
		}
		if ip[9] != 17 {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv4 protocol %d is not UDP: %w", ip[9], ErrNotICRC)
		}
		if binary.BigEndian.Uint16(ip[6:8])&0x3FFF != 0 {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv4 fragment: %w", ErrNotICRC)
		}
		hdr = ihl + 8
		if total < hdr+BTHLen+ICRCLen {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv4 total length %d too small for UDP, BTH and ICRC: %w", total, ErrBadLength)
		}
		if len(ip) < total {
			return 0, 0, shortError("ICRC: IPv4 packet", len(ip), total)
		}
		n := copy(buf[:], ip[:hdr+BTHLen])
		m := buf[:n]
		m[1] = 0xFF                     // TOS
		m[8] = 0xFF                     // TTL
		m[10], m[11] = 0xFF, 0xFF       // header checksum
		m[ihl+6], m[ihl+7] = 0xFF, 0xFF // UDP checksum
		m[hdr+4] = 0xFF                 // BTH Resv8a
	case 6:
		if len(ip) < 40 {
			return 0, 0, shortError("ICRC: IPv6 header", len(ip), 40)
		}
		if ip[6] != 17 {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv6 next header %d is not UDP (extension headers are not supported): %w", ip[6], ErrNotICRC)
		}
		hdr = 40 + 8
		total = 40 + int(binary.BigEndian.Uint16(ip[4:6]))
		if total < hdr+BTHLen+ICRCLen {
			return 0, 0, fmt.Errorf("roce: ICRC: IPv6 payload length %d too small for UDP, BTH and ICRC: %w", total-40, ErrBadLength)
		}
		if len(ip) < total {
			return 0, 0, shortError("ICRC: IPv6 packet", len(ip), total)
		}
		n := copy(buf[:], ip[:hdr+BTHLen])
		m := buf[:n]
		m[0] |= 0x0F                        // traffic class, high 4 bits
		m[1], m[2], m[3] = 0xFF, 0xFF, 0xFF // traffic class low 4 bits, flow label
		m[7] = 0xFF                         // hop limit
		m[46], m[47] = 0xFF, 0xFF           // UDP checksum
		m[hdr+4] = 0xFF                     // BTH Resv8a
	default:
		return 0, 0, fmt.Errorf("roce: ICRC: IP version %d: %w", ip[0]>>4, ErrNotICRC)
	}
	off := total - ICRCLen
	return c.finish(crcAfterLRHMask, hdr+BTHLen, ip[hdr+BTHLen:off]), off, nil
}

// maskGRHAndBTH sets the variant GRH fields and BTH Resv8a to ones in a
// copy of GRH+BTH (§7.8.1).
func maskGRHAndBTH(m []byte) {
	m[0] |= 0x0F                        // TClass, high 4 bits
	m[1], m[2], m[3] = 0xFF, 0xFF, 0xFF // TClass low 4 bits, FlowLabel
	m[7] = 0xFF                         // HopLmt
	m[GRHLen+4] = 0xFF                  // BTH Resv8a
}

// ICRCv1 computes the ICRC of a RoCEv1 packet (Annex A16): grh holds the
// packet from the first byte of the GRH through the ICRC, bounded by PayLen.
func ICRCv1(grh []byte) (uint32, error) {
	c := icrcPool.Get().(*ICRC)
	crc, _, err := c.v1(grh)
	icrcPool.Put(c)
	return crc, err
}

// V1 is ICRCv1 with c's buffer.
func (c *ICRC) V1(grh []byte) (uint32, error) {
	crc, _, err := c.v1(grh)
	return crc, err
}

// FixICRCv1 writes the ICRCv1 of the packet into its ICRC field.
func FixICRCv1(grh []byte) error {
	var c ICRC
	crc, off, err := c.v1(grh)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(grh[off:], crc)
	return nil
}

func (c *ICRC) v1(grh []byte) (uint32, int, error) {
	if len(grh) < GRHLen {
		return 0, 0, shortError("ICRC: GRH", len(grh), GRHLen)
	}
	if grh[6] != NxtHdrIBA {
		return 0, 0, fmt.Errorf("roce: ICRC: GRH NxtHdr 0x%02x is not IBA transport: %w", grh[6], ErrNotICRC)
	}
	total := GRHLen + int(binary.BigEndian.Uint16(grh[4:6]))
	if total < GRHLen+BTHLen+ICRCLen {
		return 0, 0, fmt.Errorf("roce: ICRC: GRH PayLen %d too small for BTH and ICRC: %w", total-GRHLen, ErrBadLength)
	}
	if len(grh) < total {
		return 0, 0, shortError("ICRC: GRH packet", len(grh), total)
	}
	const n = GRHLen + BTHLen
	copy(c.buf[:n], grh)
	maskGRHAndBTH(c.buf[:n])
	off := total - ICRCLen
	return c.finish(crcAfterLRHMask, n, grh[n:off]), off, nil
}

// ICRCIB computes the ICRC of a native InfiniBand packet: lrh holds the
// packet from the first byte of the LRH through at least the ICRC (PktLen
// bounds it; a trailing VCRC is ignored). Raw packets (LNH 0 and 1) carry no
// ICRC.
func ICRCIB(lrh []byte) (uint32, error) {
	c := icrcPool.Get().(*ICRC)
	crc, _, err := c.ib(lrh)
	icrcPool.Put(c)
	return crc, err
}

// IB is ICRCIB with c's buffer.
func (c *ICRC) IB(lrh []byte) (uint32, error) {
	crc, _, err := c.ib(lrh)
	return crc, err
}

// FixICRCIB writes the ICRCIB of the packet into its ICRC field.
func FixICRCIB(lrh []byte) error {
	var c ICRC
	crc, off, err := c.ib(lrh)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(lrh[off:], crc)
	return nil
}

func (c *ICRC) ib(lrh []byte) (uint32, int, error) {
	end, err := lrhEnd(lrh)
	if err != nil {
		return 0, 0, err
	}
	off := end - ICRCLen
	switch LNH(lrh[1] & 0x3) {
	case LNHLocal:
		if end < LRHLen+BTHLen+ICRCLen {
			return 0, 0, fmt.Errorf("roce: ICRC: LRH PktLen %d words too small for BTH and ICRC: %w", end/4, ErrBadLength)
		}
		const n = LRHLen + BTHLen
		copy(c.buf[:n], lrh)
		c.buf[0] |= 0xF0       // VL
		c.buf[LRHLen+4] = 0xFF // BTH Resv8a
		return c.finish(0, n, lrh[n:off]), off, nil
	case LNHGlobal:
		if end < LRHLen+GRHLen+BTHLen+ICRCLen {
			return 0, 0, fmt.Errorf("roce: ICRC: LRH PktLen %d words too small for GRH, BTH and ICRC: %w", end/4, ErrBadLength)
		}
		if lrh[LRHLen+6] != NxtHdrIBA {
			return 0, 0, fmt.Errorf("roce: ICRC: GRH NxtHdr 0x%02x is not IBA transport: %w", lrh[LRHLen+6], ErrNotICRC)
		}
		const n = GRHLen + BTHLen
		copy(c.buf[:n], lrh[LRHLen:])
		maskGRHAndBTH(c.buf[:n])
		return c.finish(crcAfterLRHMask, n, lrh[LRHLen+n:off]), off, nil
	}
	return 0, 0, fmt.Errorf("roce: ICRC: LRH LNH %s: %w", LNH(lrh[1]&0x3), ErrNotICRC)
}

// lrhEnd returns PktLen*4 after checking the data holds that many bytes.
func lrhEnd(lrh []byte) (int, error) {
	if len(lrh) < LRHLen {
		return 0, shortError("LRH", len(lrh), LRHLen)
	}
	end := int(binary.BigEndian.Uint16(lrh[4:6])&0x7FF) * 4
	if end < LRHLen {
		return 0, fmt.Errorf("roce: LRH: PktLen %d words is less than the LRH itself: %w", end/4, ErrBadLength)
	}
	if len(lrh) < end {
		return 0, shortError("LRH packet", len(lrh), end)
	}
	return end, nil
}

// crc16Table is the table of the reflected CRC-16 with polynomial 0x100B
// (reflected: 0xD008) (§7.8.2).
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// VCRC computes the variant CRC over the LRH through the ICRC (PktLen
// bounds it); lrh need not include the VCRC itself.
func VCRC(lrh []byte) (uint16, error) {
	end, err := lrhEnd(lrh)
	if err != nil {
		return 0, err
	}
	return vcrc(lrh[:end]), nil
}

func vcrc(d []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range d {
		c = c>>8 ^ crc16Table[byte(c)^x]
	}
	return bits.ReverseBytes16(^c)
}

// FixVCRC writes the VCRC into the two bytes after PktLen*4.
func FixVCRC(lrh []byte) error {
	end, err := lrhEnd(lrh)
	if err != nil {
		return err
	}
	if len(lrh) < end+VCRCLen {
		return shortError("LRH packet with VCRC", len(lrh), end+VCRCLen)
	}
	binary.BigEndian.PutUint16(lrh[end:], vcrc(lrh[:end]))
	return nil
}
