package rfc8797

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

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

const pcapDir = "../../testdata/pcaps"

// setupPD is the private data of one connection-setup message of a capture.
type setupPD struct {
	Frame int       // 1-based, as Wireshark numbers frames
	Kind  string    // "REQ", "REP", "MPAReq", "MPARep"
	SID   ServiceID // REQ only
	Rev   uint8     // MPA revision (MPA only)
	Flags uint8     // MPA flags octet: M C R, 0x10 enhanced (MPA only)
	Src   string    // source IPv4 address
	PD    []byte
}

func readSetupPD(t testing.TB, name string) []setupPD {
	t.Helper()
	lt, frames := pcaptest.Read(t, filepath.Join(pcapDir, name))
	if lt != layers.LinkTypeEthernet {
		t.Fatalf("%s: link type %d, want Ethernet (1)", name, lt)
	}
	var out []setupPD
	for _, f := range frames {
		if p, ok := setupFromFrame(f.Data); ok {
			p.Frame = f.Num
			out = append(out, p)
		}
	}
	return out
}

func setupFromFrame(b []byte) (setupPD, bool) {
	var p setupPD
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
			p.SID = ServiceID(binary.BigEndian.Uint64(mad[32:40]))
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

// prefixFor is the prefix a connection tracker passes to Parse.
func prefixFor(p setupPD) Prefix {
	switch {
	case p.Kind == "REQ" && p.SID.IsIP():
		return PrefixCMA
	case (p.Kind == "MPAReq" || p.Kind == "MPARep") && p.Rev == 2 && p.Flags&0x10 != 0:
		return PrefixMPAv2
	}
	return PrefixNone
}
