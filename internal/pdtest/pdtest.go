// Package pdtest holds what the set-up private data tests of pvtdata
// (the generic framing) and rpcrdma/rfc8797 (RFC 8797's message) share:
// real private data copied from the captures, and the private data of
// every set-up message of a capture read with the standard library only.
package pdtest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// Unhex decodes hex written with spaces, newlines and "//" comments to the
// end of a line, then pads with zero octets to n (the captures' private
// data ends in zero padding).
func Unhex(t testing.TB, s string, n int) []byte {
	t.Helper()
	var digits strings.Builder
	for line := range strings.Lines(s) {
		line, _, _ = strings.Cut(line, "//")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > n {
		t.Fatalf("literal of %d octets longer than %d", len(b), n)
	}
	return append(b, make([]byte, n-len(b))...)
}

// Real private data, copied from tshark -V -x of the captures and checked
// against the captures by TestLiteralsMatchCaptures.

// RxeNFS3REQ: rxe-nfs3.pcap frame 36, CM REQ (ConnectRequest), NFSv3 client 192.0.2.2
// to server 192.0.2.1. ServiceID 0x0000000001064e51 (tshark: "IP CM
// ServiceID", Prefix 0000000001, Protocol 0x06, Destination Port 0x4e51 =
// 20049). 92 octets of private data, MAD offset 164 (frame offset 0xe2).
func RxeNFS3REQ(t testing.TB) []byte {
	return Unhex(t, `
		00            // cma_version 0 (tshark: IP CM Major/Minor Version 0/0)
		40            // ip_version: IP version 4 in bits 7..4, reserved 0
		88c2          // source port 35010
		000000000000000000000000 c0000202   // src_addr: IPv4 192.0.2.2 in the last 4 octets
		000000000000000000000000 c0000201   // dst_addr: IPv4 192.0.2.1
		f6ab0e18      // [offset 36] RFC 8797 Format Identifier
		01            // Version 1
		01            // Reserved 0000000, R=1 (client supports remote invalidation)
		03            // Send Size 3: (3+1)*1024 = 4096 octets
		03            // Receive Size 3: 4096 octets
		`, 92) // then 48 zero octets
}

// RxeNFS3REP: rxe-nfs3.pcap frame 37, CM REP (ConnectReply) from the server. 196 octets
// of private data at MAD offset 60 (frame offset 0x7a); no CMA header.
func RxeNFS3REP(t testing.TB) []byte {
	return Unhex(t, `
		f6ab0e18      // [offset 0] Format Identifier
		01            // Version 1
		00            // Reserved 0, R=0 (the Linux server never sets R)
		03            // Send Size 3: 4096 octets
		03            // Receive Size 3: 4096 octets
		`, 196) // then 188 zero octets
}

// SiwNFS3MPAReq: siw-nfs3.pcap frame 39, MPA Request Frame, revision 2, flags 0x10 (tshark
// shows it as Reserved 0x10; no Marker, no CRC), Private data length 12.
func SiwNFS3MPAReq(t testing.TB) []byte {
	return Unhex(t, `
		0080 0000     // RFC 6581 IRD/ORD: A=0 B=0 IRD=128, C=0 D=0 ORD=0
		f6ab0e18      // [offset 4] Format Identifier
		01 01 03 03   // Version 1, R=1, Send 4096, Receive 4096
		`, 12)
}

// SiwNFS3MPARep: siw-nfs3.pcap frame 41, MPA Reply Frame, revision 2, Private data length 12.
func SiwNFS3MPARep(t testing.TB) []byte {
	return Unhex(t, `
		0000 0080     // RFC 6581 IRD/ORD: IRD=0, ORD=128
		f6ab0e18      // [offset 4] Format Identifier
		01 00 03 03   // Version 1, R=0, Send 4096, Receive 4096
		`, 12)
}

// RxeRpingREQ: rxe-rping.pcap frame 13, CM REQ of rping (not RPC-over-RDMA): ServiceID
// 0x0000000001061c06 (TCP port space, port 7174); the CMA header and then
// 56 zero octets: rping sends no private data of its own.
func RxeRpingREQ(t testing.TB) []byte {
	return Unhex(t, `
		00 40 82e7    // cma_version 0, IPv4, source port 33511
		000000000000000000000000 c0000202   // 192.0.2.2
		000000000000000000000000 c0000201   // 192.0.2.1
		`, 92)
}

// IPoIBCMREQ: srinivaskoritala-rdma-softroce-demo-infiniband.pcap frame 7 (ERF, native
// IB), CM REQ of IPoIB connected mode: ServiceID 0x1000000000000404 (IPoIB
// CM service ID base | QPN 0x404), private data = the IPoIB CM data (QPN
// 0x000405, MTU 0xfff4), not an RDMA-CM IP header and no RFC 8797 message.
func IPoIBCMREQ(t testing.TB) []byte {
	return Unhex(t, `00000405 0000fff4`, 92)
}

// This file reads the real captures of testdata/pcaps with the standard
// library only (classic pcap, Ethernet, IPv4, no VLAN), to take the private
// data of every IB CM REQ/REP and MPA Request/Reply out of them. The
// offsets are those tshark 4.0.17 shows for the same frames:
//
//	RoCEv2 CM MAD: Ethernet 14 + IPv4 20 + UDP 8, then BTH 12 (opcode 0x64
//	UD SEND only), DETH 8, MAD 256 (+ ICRC 4). In the MAD: common header
//	24 octets, attribute ID at 16..17 (0x0010 REQ, 0x0013 REP); REQ
//	service ID at 32..39, REQ private data at 164..255 (92 octets, IBA
//	12.6.5); REP private data at 60..255 (196 octets, IBA 12.6.8).
//
//	MPA Request/Reply (RFC 5044 7.1): TCP payload = 16-octet key "MPA ID
//	Req Frame" / "MPA ID Rep Frame", flags, revision, 16-bit private data
//	length, private data.

// SetupPD is the private data of one connection-setup message of a capture.
type SetupPD struct {
	Frame int    // 1-based, as Wireshark numbers frames
	Kind  string // "REQ", "REP", "MPAReq", "MPARep"
	SID   uint64 // REQ only: the service ID
	Rev   uint8  // MPA revision (MPA only)
	Flags uint8  // MPA flags octet: M C R, 0x10 enhanced (MPA only)
	Src   string // source IPv4 address
	PD    []byte
}

// ReadSetupPD returns the private data of every set-up message of the
// capture at path.
func ReadSetupPD(t testing.TB, path string) []SetupPD {
	t.Helper()
	lt, frames := pcaptest.Read(t, path)
	if lt != layers.LinkTypeEthernet {
		t.Fatalf("%s: link type %d, want Ethernet (1)", path, lt)
	}
	var out []SetupPD
	for _, f := range frames {
		if p, ok := setupFromFrame(f.Data); ok {
			p.Frame = f.Num
			out = append(out, p)
		}
	}
	return out
}

func setupFromFrame(b []byte) (SetupPD, bool) {
	var p SetupPD
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:14]) != 0x0800 {
		return p, false
	}
	ip := b[14:]
	ihl := int(ip[0]&0x0F) * 4
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	if ihl < 20 || total > len(ip) || total < ihl {
		return p, false
	}
	p.Src = fmt.Sprintf("%d.%d.%d.%d", ip[12], ip[13], ip[14], ip[15])
	l4 := ip[ihl:total]
	switch ip[9] {
	case 17: // UDP
		if len(l4) < 8 || binary.BigEndian.Uint16(l4[2:4]) != 4791 {
			return p, false
		}
		ib := l4[8:]
		if len(ib) < 12+8+256 || ib[0] != 0x64 { // UD SEND only
			return p, false
		}
		mad := ib[20 : 20+256]
		if mad[1] != 0x07 { // CM class
			return p, false
		}
		switch binary.BigEndian.Uint16(mad[16:18]) {
		case 0x0010:
			p.Kind = "REQ"
			p.SID = binary.BigEndian.Uint64(mad[32:40])
			p.PD = mad[164:256]
		case 0x0013:
			p.Kind = "REP"
			p.PD = mad[60:256]
		default:
			return p, false
		}
		return p, true
	case 6: // TCP
		if len(l4) < 20 {
			return p, false
		}
		pl := l4[int(l4[12]>>4)*4:]
		if len(pl) < 20 {
			return p, false
		}
		switch string(pl[:16]) {
		case "MPA ID Req Frame":
			p.Kind = "MPAReq"
		case "MPA ID Rep Frame":
			p.Kind = "MPARep"
		default:
			return p, false
		}
		p.Flags = pl[16]
		p.Rev = pl[17]
		n := int(binary.BigEndian.Uint16(pl[18:20]))
		if 20+n > len(pl) {
			return p, false
		}
		p.PD = pl[20 : 20+n]
		return p, true
	}
	return p, false
}

// IPService reports whether a REQ's service ID is in the RDMA IP CM
// range (IBA Vol 1 Annex A11: prefix 0x0000000001).
func (p SetupPD) IPService() bool { return p.SID>>24 == 1 }

// Enhanced reports whether an MPA message is revision 2 with the
// enhanced-connection flag (RFC 6581: the IRD/ORD field leads its private
// data).
func (p SetupPD) Enhanced() bool {
	return (p.Kind == "MPAReq" || p.Kind == "MPARep") && p.Rev == 2 && p.Flags&0x10 != 0
}

// Prefix numbers, as pvtdata.Prefix numbers them (pdtest cannot import
// pvtdata, whose own tests import pdtest; pvtdata's TestPDTestPrefixes
// holds the two equal).
const (
	PrefixNone  uint8 = iota // the consumer's data starts at octet 0
	PrefixCMA                // the RDMA-CM IP header comes first
	PrefixMPAv2              // the RFC 6581 IRD/ORD field comes first
)

// Prefix is the framing a connection tracker finds in front of p's
// consumer data.
func (p SetupPD) Prefix() uint8 {
	switch {
	case p.Kind == "REQ" && p.IPService():
		return PrefixCMA
	case p.Enhanced():
		return PrefixMPAv2
	}
	return PrefixNone
}

// IPv6CMAHeader is a hand-built RDMA-CM IP header (offsets of Linux's
// struct cma_hdr) for an IPv6 connection.
var IPv6CMAHeader = []byte{
	0x00,       // cma_version
	0x60,       // IP version 6, reserved 0
	0xc0, 0x01, // port 49153
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // src 2001:db8::2
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, // dst 2001:db8::1
}

// Ident is the RFC 8797 Format Identifier in network byte order.
var Ident = []byte{0xf6, 0xab, 0x0e, 0x18}

// Cat joins byte slices.
func Cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Seed is one fuzz seed of the set-up private data decoders: the octets
// and the prefix a tracker would pass with them.
type Seed struct {
	PD     []byte
	Prefix uint8
}

// Seeds returns the private data of the real captures (literals, and every
// set-up message of four captures under dir) plus hand-built edge cases.
func Seeds(t testing.TB, dir string) []Seed {
	seeds := []Seed{
		{RxeNFS3REQ(t), PrefixCMA},
		{RxeNFS3REP(t), PrefixNone},
		{SiwNFS3MPAReq(t), PrefixMPAv2},
		{SiwNFS3MPARep(t), PrefixMPAv2},
		{RxeRpingREQ(t), PrefixCMA},
		{IPoIBCMREQ(t), PrefixNone},
		{IPv6CMAHeader, PrefixCMA},
		{Cat(IPv6CMAHeader, Ident, []byte{2, 0xff, 0, 0}), PrefixCMA},
		{Cat([]byte{0, 0x80, 0, 0}, Ident, []byte{1}), PrefixMPAv2},
		{Ident[:3], PrefixNone},
		{nil, PrefixCMA},
	}
	for _, f := range []string{"rxe-nfs41.pcap", "siw-nfs41.pcap", "siw-rping.pcap", "public/montybeatnik-rdma-roce-lab-test.pcap"} {
		for _, p := range ReadSetupPD(t, dir+"/"+f) {
			seeds = append(seeds, Seed{p.PD, p.Prefix()})
		}
	}
	return seeds
}
