package pcaptest

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"
)

// RoCE is a RoCEv2 packet read by hand from a frame's bytes — Ethernet (at
// most one 802.1Q tag), IPv4, UDP destination port 4791, BTH — without the
// engine or gopacket's layers, so that tests can check the engine against
// an independent reading.
type RoCE struct {
	Src    netip.Addr // the IPv4 source
	OpCode byte
	DestQP uint32
	PSN    uint32
	// BTH is the BTH and what follows it up to the end of the UDP datagram
	// as its Length field says (ICRC included), cut to the captured bytes.
	BTH []byte
	// UDPLength is the UDP Length field.
	UDPLength int
	// ip is the IPv4 header and what follows it, cut to the captured
	// bytes; ihl the header's length.
	ip  []byte
	ihl int
}

// ParseRoCEv2 reads frame; false if it is not RoCEv2 over IPv4 with a
// whole BTH.
func ParseRoCEv2(frame []byte) (RoCE, bool) {
	b := frame
	if len(b) < 14 {
		return RoCE{}, false
	}
	et, off := binary.BigEndian.Uint16(b[12:]), 14
	if et == 0x8100 && len(b) >= 18 {
		et, off = binary.BigEndian.Uint16(b[16:]), 18
	}
	if et != 0x0800 || len(b) < off+20 {
		return RoCE{}, false
	}
	ip := b[off:]
	ihl := int(ip[0]&0xf) * 4
	if ip[9] != 17 || ihl < 20 || len(ip) < ihl+8+12 {
		return RoCE{}, false
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp[2:]) != 4791 {
		return RoCE{}, false
	}
	r := RoCE{Src: netip.AddrFrom4([4]byte(ip[12:16])), UDPLength: int(binary.BigEndian.Uint16(udp[4:])), ip: ip, ihl: ihl}
	end := min(len(udp), max(r.UDPLength, 8+12))
	r.BTH = udp[8:end]
	r.OpCode = r.BTH[0]
	r.DestQP = binary.BigEndian.Uint32(r.BTH[4:]) & 0xffffff
	r.PSN = binary.BigEndian.Uint32(r.BTH[8:]) & 0xffffff
	return r, true
}

// RC tells whether the opcode is of the Reliable Connection transport
// (IBA Vol 1 9.2.1: its top three bits are 000).
func (r RoCE) RC() bool { return r.OpCode>>5 == 0 }

// PayloadLength is the payload after a bare BTH (no extended header):
// UDP Length less the UDP header, the BTH and the ICRC.
func (r RoCE) PayloadLength() int { return r.UDPLength - 8 - 12 - 4 }

// Middle tells whether the opcode is an RC SEND, RDMA WRITE or RDMA READ
// RESPONSE MIDDLE, which carry no extended header and exactly one PMTU of
// payload (IBA Vol 1 9.4.1).
func (r RoCE) Middle() bool { return r.OpCode == 0x01 || r.OpCode == 0x07 || r.OpCode == 0x0e }

// DMALength is an RC RDMA READ Request's RETH DMA Length.
func (r RoCE) DMALength() (uint32, bool) {
	if r.OpCode != 0x0c || len(r.BTH) < 28 {
		return 0, false
	}
	return binary.BigEndian.Uint32(r.BTH[24:]), true
}

// Syndrome is the AETH syndrome of the RC opcodes that carry one (RDMA
// READ RESPONSE FIRST/LAST/ONLY, ACKNOWLEDGE, ATOMIC ACKNOWLEDGE).
func (r RoCE) Syndrome() (byte, bool) {
	switch r.OpCode {
	case 0x0d, 0x0f, 0x10, 0x11, 0x12:
		if len(r.BTH) >= 13 {
			return r.BTH[12], true
		}
	}
	return 0, false
}

// AfterBTH is what follows the BTH, up to the ICRC.
func (r RoCE) AfterBTH() []byte {
	if len(r.BTH) < 12+4 {
		return nil
	}
	return r.BTH[12 : len(r.BTH)-4]
}

// ICRCGood recomputes the invariant CRC by hand and compares it with the
// one the packet carries (IBA Vol 1 7.8.1; RoCEv2, Annex A17.3.3): CRC-32
// (the Ethernet polynomial) over eight octets of ones, then the IPv4 header
// with Type of Service, Time to Live and Header Checksum set to ones, the
// UDP header with its Checksum set to ones, and the BTH with its reserved
// octet (the fifth) set to ones, through the last octet before the ICRC,
// which is carried least significant octet first. false too when the packet
// is cut short.
func (r RoCE) ICRCGood() bool {
	if len(r.ip) < r.ihl+8+12+4 {
		return false
	}
	total := int(binary.BigEndian.Uint16(r.ip[2:]))
	if total < r.ihl+8+12+4 || total > len(r.ip) || r.ihl+r.UDPLength != total {
		return false
	}
	m := append(make([]byte, 0, 8+total), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	m = append(m, r.ip[:total-4]...)
	h := m[8:]
	h[1] = 0xff               // Type of Service
	h[8] = 0xff               // Time to Live
	h[10], h[11] = 0xff, 0xff // Header Checksum
	h[r.ihl+6], h[r.ihl+7] = 0xff, 0xff
	h[r.ihl+8+4] = 0xff
	return crc32.ChecksumIEEE(m) == binary.LittleEndian.Uint32(r.ip[total-4:])
}
