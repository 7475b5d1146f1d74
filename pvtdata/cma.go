package pvtdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// ServiceID is the 64-bit ServiceID of an InfiniBand CM REQ (IBA 12.6.5),
// as it appears on the wire (big-endian), here as a host integer.
//
// Linux RDMA-CM builds it from a port space and a port
// (drivers/infiniband/core/cma.c, cma_get_service_id):
//
//	service ID = port space << 16 | port
//
// which for the TCP and UDP port spaces lands in the "RDMA IP CM Service"
// range of IBA Annex A11: prefix 0x0000000001, then the IP protocol number,
// then the destination port.
type ServiceID uint64

// Masks of the RDMA-CM service ID (Linux include/rdma/rdma_cm.h
// RDMA_IB_IP_PS_MASK, RDMA_IB_IP_PORT_MASK) and of the IBA Annex A11 prefix.
const (
	ServiceIDPortSpaceMask ServiceID = 0xFFFFFFFFFFFF0000
	ServiceIDPortMask      ServiceID = 0x000000000000FFFF
	// ServiceIDIPPrefixMask and ServiceIDIPPrefix: the service IDs IBA
	// Annex A11 (A11.2) designates for the RDMA IP CM Service, whose REQ
	// private data starts with the IP addressing header.
	ServiceIDIPPrefixMask ServiceID = 0xFFFFFFFFFF000000
	ServiceIDIPPrefix     ServiceID = 0x0000000001000000
)

// PortSpace is an RDMA-CM port space (Linux enum rdma_ucm_port_space), bits
// 31..16 of a service ID built by RDMA-CM.
type PortSpace uint16

// RDMA-CM port spaces (Linux include/uapi/rdma/rdma_user_cm.h /
// include/rdma/rdma_cm.h).
const (
	PortSpaceIPoIB PortSpace = 0x0002 // RDMA_PS_IPOIB
	PortSpaceIB    PortSpace = 0x013F // RDMA_PS_IB
	PortSpaceTCP   PortSpace = 0x0106 // RDMA_PS_TCP: 0x01, then IP protocol 6
	PortSpaceUDP   PortSpace = 0x0111 // RDMA_PS_UDP: 0x01, then IP protocol 17
)

// String names the port space as Linux does, without the RDMA_PS_ prefix.
func (p PortSpace) String() string {
	switch p {
	case PortSpaceIPoIB:
		return "IPoIB"
	case PortSpaceIB:
		return "IB"
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	case 0:
		return "none"
	}
	return "PortSpace(0x" + strconv.FormatUint(uint64(p), 16) + ")"
}

// ServiceIDFor returns the service ID Linux RDMA-CM uses for a port in a
// port space (cma_get_service_id: ps << 16 + port).
func ServiceIDFor(ps PortSpace, port uint16) ServiceID {
	return ServiceID(ps)<<16 | ServiceID(port)
}

// PortSpace returns bits 31..16 of the service ID when bits 63..32 are zero,
// as they are in every service ID RDMA-CM builds from a port space;
// otherwise (e.g. IPoIB connected mode, 0x1000000000000000 | QPN) it
// returns 0, "none".
func (s ServiceID) PortSpace() PortSpace {
	if s>>32 != 0 {
		return 0
	}
	return PortSpace(s >> 16)
}

// Port returns the low 16 bits: for an RDMA-CM service ID, the port the
// passive side listens on (cma_port_from_service_id), i.e. the destination
// port of the connection.
func (s ServiceID) Port() uint16 { return uint16(s & ServiceIDPortMask) }

// IsIP reports whether the service ID is in the RDMA IP CM Service range of
// IBA Annex A11 (prefix 0x0000000001; the next octet is an IP protocol
// number), whose CM REQ private data begins with the IP addressing header
// (CMAHeader). This is the test Wireshark's InfiniBand dissector uses for
// its "IP CM" decoding.
//
// It covers Linux's TCP and UDP port spaces, and also RDMA_PS_IB (0x013F).
// The wire does not say everything: Linux adds the header whenever the
// active side's address is not AF_IB (cma.c cma_user_data_offset), so an
// RDMA_PS_IB or RDMA_PS_TCP connection made with AF_IB addresses has none,
// and an RDMA_PS_IPOIB (0x0002) one made with IP addresses has one. Parse
// copes with both: it checks the header and falls back to searching the
// whole private data when the header does not decode.
func (s ServiceID) IsIP() bool {
	return s&ServiceIDIPPrefixMask == ServiceIDIPPrefix
}

// String returns the service ID in hexadecimal, 16 digits.
func (s ServiceID) String() string {
	return fmt.Sprintf("0x%016x", uint64(s))
}

// CMAHeaderLen is the size of the RDMA-CM IP addressing header (struct
// cma_hdr): 1 + 1 + 2 + 16 + 16 octets.
const CMAHeaderLen = 36

// CMAVersion is the only cma_version Linux sends and accepts (CMA_VERSION);
// cma.c cma_save_ip_info rejects a REQ whose header has any other value.
const CMAVersion = 0x00

// CMAHeader is the IP addressing header Linux RDMA-CM (cma.c, struct
// cma_hdr) puts at the start of the private data of a CM REQ when the
// connection uses IP addressing; it is the "IP CM Request Message" of IBA
// Annex A11.4. All fields are big-endian.
//
//	octet 0      cma_version  (Annex A11: MajV in bits 7..4, MinV in 3..0)
//	octet 1      ip_version   bits 7..4: IP version 4 or 6; bits 3..0 reserved
//	octets 2-3   port         the active side's source port
//	octets 4-19  src_addr     IPv6, or IPv4 in octets 16-19 (12 zero octets first)
//	octets 20-35 dst_addr     IPv6, or IPv4 in octets 32-35
//
// The destination port is not in the header: it is the low 16 bits of the
// REQ's service ID (ServiceID.Port).
type CMAHeader struct {
	Version   uint8      // cma_version
	IPVersion uint8      // ip_version bits 7..4
	Reserved  uint8      // ip_version bits 3..0 (Linux preserves them, sends zero)
	SrcPort   uint16     // port
	SrcAddr   netip.Addr // src_addr; zero Addr when IPVersion is neither 4 nor 6
	DstAddr   netip.Addr // dst_addr; zero Addr when IPVersion is neither 4 nor 6
}

// Errors of the CMA header. DecodeCMAHeader wraps them with context;
// Result.CMAErr holds them bare.
var (
	ErrCMATruncated = errors.New("RDMA-CM IP header truncated: fewer than 36 octets")
	ErrCMAVersion   = errors.New("RDMA-CM IP header: cma_version is not 0")
	ErrCMAIPVersion = errors.New("RDMA-CM IP header: IP version is neither 4 nor 6")
)

// DecodeCMAHeader decodes the RDMA-CM IP addressing header at the start of
// b, the private data of a CM REQ. On error the returned header holds what
// could be decoded (the first 4 octets when present; everything but the
// addresses for an unknown IP version), and the error names the octets
// found; it wraps ErrCMATruncated, ErrCMAVersion or ErrCMAIPVersion.
func DecodeCMAHeader(b []byte) (CMAHeader, error) {
	h, err := decodeCMA(b)
	if err != nil {
		return h, &CMAError{Len: len(b), Version: h.Version, IPVersion: h.IPVersion, Err: err}
	}
	return h, nil
}

// decodeCMA is DecodeCMAHeader returning bare sentinel errors: it never
// allocates.
func decodeCMA(b []byte) (CMAHeader, error) {
	var h CMAHeader
	if len(b) >= 4 {
		h.Version = b[0]
		h.IPVersion = b[1] >> 4
		h.Reserved = b[1] & 0x0F
		h.SrcPort = binary.BigEndian.Uint16(b[2:4])
	}
	if len(b) < CMAHeaderLen {
		return h, ErrCMATruncated
	}
	switch h.IPVersion {
	case 4:
		h.SrcAddr = netip.AddrFrom4([4]byte(b[16:20]))
		h.DstAddr = netip.AddrFrom4([4]byte(b[32:36]))
	case 6:
		h.SrcAddr = netip.AddrFrom16([16]byte(b[4:20]))
		h.DstAddr = netip.AddrFrom16([16]byte(b[20:36]))
	}
	if h.Version != CMAVersion {
		return h, ErrCMAVersion
	}
	if h.IPVersion != 4 && h.IPVersion != 6 {
		return h, ErrCMAIPVersion
	}
	return h, nil
}

// CMAError is the error DecodeCMAHeader returns: the sentinel and what was
// found.
type CMAError struct {
	Len       int   // octets of private data given
	Version   uint8 // cma_version found (0 when fewer than 4 octets)
	IPVersion uint8 // IP version found (0 when fewer than 4 octets)
	Err       error // ErrCMATruncated, ErrCMAVersion or ErrCMAIPVersion
}

func (e *CMAError) Error() string {
	return fmt.Sprintf("pvtdata: %v (%d octets of private data, cma_version %d, IP version %d)",
		e.Err, e.Len, e.Version, e.IPVersion)
}

func (e *CMAError) Unwrap() error { return e.Err }

// SrcAddrPort returns the active side's address and port.
func (h CMAHeader) SrcAddrPort() netip.AddrPort { return netip.AddrPortFrom(h.SrcAddr, h.SrcPort) }

// DstAddrPort returns the passive side's address and port; the port comes
// from the REQ's service ID.
func (h CMAHeader) DstAddrPort(sid ServiceID) netip.AddrPort {
	return netip.AddrPortFrom(h.DstAddr, sid.Port())
}

// AppendBinary appends the 36-octet header to b (encoding.BinaryAppender).
// IPVersion 4 needs IPv4 addresses (IPv4-mapped IPv6 ones are unmapped);
// IPVersion 6 writes any address in its 16-octet form. An invalid (zero)
// netip.Addr is written as 16 zero octets, whatever IPVersion says, so that
// malformed headers can be built for tests.
func (h CMAHeader) AppendBinary(b []byte) ([]byte, error) {
	if h.IPVersion > 0x0F || h.Reserved > 0x0F {
		return b, fmt.Errorf("pvtdata: CMA header IP version %d / reserved %d do not fit in 4 bits", h.IPVersion, h.Reserved)
	}
	var buf [CMAHeaderLen]byte
	buf[0] = h.Version
	buf[1] = h.IPVersion<<4 | h.Reserved
	binary.BigEndian.PutUint16(buf[2:4], h.SrcPort)
	if err := putCMAAddr(buf[4:20], h.SrcAddr, h.IPVersion); err != nil {
		return b, fmt.Errorf("pvtdata: CMA header src_addr: %w", err)
	}
	if err := putCMAAddr(buf[20:36], h.DstAddr, h.IPVersion); err != nil {
		return b, fmt.Errorf("pvtdata: CMA header dst_addr: %w", err)
	}
	return append(b, buf[:]...), nil
}

// MarshalBinary returns the 36-octet header (encoding.BinaryMarshaler).
func (h CMAHeader) MarshalBinary() ([]byte, error) {
	return h.AppendBinary(make([]byte, 0, CMAHeaderLen))
}

func putCMAAddr(dst []byte, a netip.Addr, ipVersion uint8) error {
	if !a.IsValid() {
		return nil // dst is already zero
	}
	if a.Zone() != "" {
		return fmt.Errorf("address %v has a zone, which the header cannot carry", a)
	}
	if ipVersion == 4 {
		a = a.Unmap()
		if !a.Is4() {
			return fmt.Errorf("IP version 4 but address %v is IPv6", a)
		}
		v4 := a.As4()
		copy(dst[12:16], v4[:])
		return nil
	}
	v6 := a.As16()
	copy(dst, v6[:])
	return nil
}
