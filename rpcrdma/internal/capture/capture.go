// Package capture pulls RDMA Send payloads and TCP payloads out of the
// project's pcap captures, for tests of the rpcrdma and oncrpc decoders.
// It is deliberately small: classic pcap, Ethernet, IPv4, RoCEv2 (UDP 4791)
// and iWARP (MPA/DDP/RDMAP on TCP, no markers); it is test scaffolding, not
// the dissector.
package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Packet is one pcap record.
type Packet struct {
	Frame int // 1-based, as tshark numbers frames
	Data  []byte
}

// ReadPcap reads every record of a classic pcap file (microsecond or
// nanosecond, either byte order) with link type Ethernet.
func ReadPcap(path string) ([]Packet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 24 {
		return nil, errors.New("capture: short pcap header")
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return nil, errors.New("capture: not a classic pcap file")
	}
	if lt := bo.Uint32(b[20:]); lt != 1 {
		return nil, fmt.Errorf("capture: link type %d, want Ethernet (1)", lt)
	}
	var pkts []Packet
	for off, n := 24, 1; off < len(b); n++ {
		if len(b)-off < 16 {
			return nil, io.ErrUnexpectedEOF
		}
		incl := int(bo.Uint32(b[off+8:]))
		off += 16
		if len(b)-off < incl {
			return nil, io.ErrUnexpectedEOF
		}
		pkts = append(pkts, Packet{Frame: n, Data: b[off : off+incl]})
		off += incl
	}
	return pkts, nil
}

// ip4 is the part of an IPv4 packet the helpers need.
type ip4 struct {
	src, dst [4]byte
	proto    byte
	payload  []byte
}

func parseIPv4(eth []byte) (ip4, bool) {
	if len(eth) < 14 {
		return ip4{}, false
	}
	et := binary.BigEndian.Uint16(eth[12:])
	p := eth[14:]
	if et == 0x8100 && len(p) >= 4 {
		et = binary.BigEndian.Uint16(p[2:])
		p = p[4:]
	}
	if et != 0x0800 || len(p) < 20 || p[0]>>4 != 4 {
		return ip4{}, false
	}
	ihl := int(p[0]&0x0f) * 4
	tot := int(binary.BigEndian.Uint16(p[2:]))
	if ihl < 20 || tot < ihl || tot > len(p) {
		return ip4{}, false
	}
	var r ip4
	copy(r.src[:], p[12:16])
	copy(r.dst[:], p[16:20])
	r.proto = p[9]
	r.payload = p[ihl:tot]
	return r, true
}

// Send is one complete RDMA Send message (all its packets or FPDUs joined).
type Send struct {
	Frame      int    // frame that completed the message
	Transport  string // "roce" or "iwarp"
	Opcode     uint8  // BTH opcode of the last packet, or RDMAP opcode
	Invalidate bool   // Send With Invalidate
	InvSTag    uint32 // the STag to invalidate (IETH / DDP Inv STag)
	Payload    []byte
}

// Sends returns every RDMA Send message of a RoCEv2 or iWARP capture, in the
// order their last packet appears.
func Sends(pkts []Packet) []Send {
	var out []Send
	r := newRoCE()
	w := newIWARP()
	for _, pk := range pkts {
		ip, ok := parseIPv4(pk.Data)
		if !ok {
			continue
		}
		switch ip.proto {
		case 17:
			out = r.packet(pk.Frame, ip, out)
		case 6:
			out = w.segment(pk.Frame, ip, out)
		}
	}
	return out
}

// RoCEv2 (IBTA Annex A17): UDP port 4791, BTH (12 bytes), extended headers,
// payload, pad, ICRC (4).
type roce struct {
	partial map[[12]byte][]byte // keyed by src, dst, dest QP
}

func newRoCE() *roce { return &roce{partial: map[[12]byte][]byte{}} }

func (r *roce) packet(frame int, ip ip4, out []Send) []Send {
	u := ip.payload
	if len(u) < 8 || binary.BigEndian.Uint16(u[2:]) != 4791 {
		return out
	}
	b := u[8:]
	if len(b) < 12+4 {
		return out
	}
	op := b[0]
	padCount := int(b[1]>>4) & 3
	var key [12]byte
	copy(key[0:4], ip.src[:])
	copy(key[4:8], ip.dst[:])
	copy(key[9:12], b[5:8])
	end := len(b) - 4 - padCount
	hdr := 12
	var inv uint32
	switch op {
	case 0, 1, 2, 4: // SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY
	case 3, 5: // SEND_LAST/ONLY_WITH_IMMEDIATE: ImmDt
		hdr += 4
	case 22, 23: // SEND_LAST/ONLY_WITH_INVALIDATE: IETH
		if end < hdr+4 {
			return out
		}
		inv = binary.BigEndian.Uint32(b[hdr:])
		hdr += 4
	default:
		return out
	}
	if end < hdr {
		return out
	}
	data := b[hdr:end]
	switch op {
	case 0:
		r.partial[key] = append([]byte(nil), data...)
		return out
	case 1:
		if p, ok := r.partial[key]; ok {
			r.partial[key] = append(p, data...)
		}
		return out
	case 2, 3, 22:
		p, ok := r.partial[key]
		if !ok {
			return out
		}
		delete(r.partial, key)
		data = append(p, data...)
	}
	return append(out, Send{Frame: frame, Transport: "roce", Opcode: op, Invalidate: op == 22 || op == 23, InvSTag: inv, Payload: data})
}

// iWARP: TCP stream per direction; MPA Request/Reply (RFC 5044 section 7),
// then FPDUs: ULPDU_Length (2), DDP/RDMAP header, payload, pad to 4, CRC (4).
type stream struct {
	next    uint32
	synced  bool
	mpaDone bool
	buf     []byte
}

type iwarp struct {
	streams map[[12]byte]*stream
	partial map[[16]byte][]byte // keyed by direction and MSN
}

func newIWARP() *iwarp {
	return &iwarp{streams: map[[12]byte]*stream{}, partial: map[[16]byte][]byte{}}
}

func (w *iwarp) segment(frame int, ip ip4, out []Send) []Send {
	t := ip.payload
	if len(t) < 20 {
		return out
	}
	sport, dport := binary.BigEndian.Uint16(t), binary.BigEndian.Uint16(t[2:])
	if sport != 20049 && dport != 20049 {
		return out
	}
	seq := binary.BigEndian.Uint32(t[4:])
	doff := int(t[12]>>4) * 4
	flags := t[13]
	if doff < 20 || doff > len(t) {
		return out
	}
	var key [12]byte
	copy(key[0:4], ip.src[:])
	copy(key[4:8], ip.dst[:])
	binary.BigEndian.PutUint16(key[8:], sport)
	binary.BigEndian.PutUint16(key[10:], dport)
	s := w.streams[key]
	if s == nil {
		s = &stream{}
		w.streams[key] = s
	}
	data := t[doff:]
	if flags&0x02 != 0 { // SYN
		*s = stream{next: seq + 1, synced: true}
		return out
	}
	if !s.synced || len(data) == 0 {
		return out
	}
	d := int32(s.next - seq)
	switch {
	case d < 0: // gap: lost bytes, resynchronisation is out of scope
		s.synced = false
		return out
	case int(d) >= len(data): // pure retransmission
		return out
	}
	data = data[d:]
	s.next += uint32(len(data))
	s.buf = append(s.buf, data...)
	return w.drain(frame, key, s, out)
}

func (w *iwarp) drain(frame int, key [12]byte, s *stream, out []Send) []Send {
	for {
		b := s.buf
		if !s.mpaDone {
			if len(b) < 20 {
				return out
			}
			pd := int(binary.BigEndian.Uint16(b[18:]))
			if len(b) < 20+pd {
				return out
			}
			s.buf = b[20+pd:]
			s.mpaDone = true
			continue
		}
		if len(b) < 2 {
			return out
		}
		ulpdu := int(binary.BigEndian.Uint16(b))
		total := (2+ulpdu+3)&^3 + 4
		if len(b) < total {
			return out
		}
		out = w.fpdu(frame, key, b[2:2+ulpdu], out)
		s.buf = b[total:]
	}
}

func (w *iwarp) fpdu(frame int, key [12]byte, u []byte, out []Send) []Send {
	if len(u) < 2 {
		return out
	}
	tagged := u[0]&0x80 != 0
	last := u[0]&0x40 != 0
	op := u[1] & 0x0f
	if tagged || op < 3 || op > 6 || len(u) < 18 {
		return out // RDMA Write / Read Response / Read Request / Terminate
	}
	inv := binary.BigEndian.Uint32(u[2:])
	msn := binary.BigEndian.Uint32(u[10:])
	mo := binary.BigEndian.Uint32(u[14:])
	var pk [16]byte
	copy(pk[:12], key[:])
	binary.BigEndian.PutUint32(pk[12:], msn)
	data := u[18:]
	if mo != 0 || !last {
		p := w.partial[pk]
		if uint32(len(p)) != mo {
			delete(w.partial, pk)
			return out
		}
		p = append(p, data...)
		if !last {
			w.partial[pk] = p
			return out
		}
		delete(w.partial, pk)
		data = p
	}
	isInv := op == 4 || op == 6
	if !isInv {
		inv = 0
	}
	return append(out, Send{Frame: frame, Transport: "iwarp", Opcode: op, Invalidate: isInv, InvSTag: inv, Payload: data})
}

// TCPSegment is the payload of one TCP segment.
type TCPSegment struct {
	Frame            int
	SrcPort, DstPort uint16
	Payload          []byte
}

// TCPPayloads returns the non-empty TCP payloads of a capture.
func TCPPayloads(pkts []Packet) []TCPSegment {
	var out []TCPSegment
	for _, pk := range pkts {
		ip, ok := parseIPv4(pk.Data)
		if !ok || ip.proto != 6 || len(ip.payload) < 20 {
			continue
		}
		t := ip.payload
		doff := int(t[12]>>4) * 4
		if doff < 20 || doff >= len(t) {
			continue
		}
		out = append(out, TCPSegment{Frame: pk.Frame, SrcPort: binary.BigEndian.Uint16(t), DstPort: binary.BigEndian.Uint16(t[2:]), Payload: t[doff:]})
	}
	return out
}
