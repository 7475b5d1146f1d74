package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// frame is one captured packet. orig is its number in the source capture
// (1-based); generated frames (split Sends) keep the number they replace.
type frame struct {
	ci   gopacket.CaptureInfo
	data []byte
	orig int
	// badICRC: leave the ICRC as the mutation wrote it.
	badICRC bool
	// psnFixed: the mutation set this frame's PSN and MSN itself; the
	// renumbering pass leaves them.
	psnFixed bool
	// piece numbers the packets a Send was split into (1, 2, ...); 0 for
	// other frames. They share the original's number and PSN.
	piece int
}

type capture struct {
	name     string
	linkType layers.LinkType
	snaplen  uint32
	frames   []*frame
}

func load(path string) (*capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &capture{name: path, linkType: r.LinkType(), snaplen: r.Snaplen()}
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: packet %d: %w", path, n, err)
		}
		c.frames = append(c.frames, &frame{ci: ci, data: slices.Clone(data), orig: n})
	}
	return c, nil
}

func (c *capture) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(c.snaplen, c.linkType); err != nil {
		f.Close()
		return err
	}
	for _, fr := range c.frames {
		fr.ci.CaptureLength = len(fr.data)
		fr.ci.Length = len(fr.data)
		if err := w.WritePacket(fr.ci, fr.data); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// cut keeps the frames whose original numbers fall in the ranges
// (inclusive), in capture order, as a new capture with copies of them.
func (c *capture) cut(ranges ...[2]int) *capture {
	out := &capture{name: c.name, linkType: c.linkType, snaplen: c.snaplen}
	for _, fr := range c.frames {
		for _, r := range ranges {
			if fr.orig >= r[0] && fr.orig <= r[1] {
				cp := *fr
				cp.data = slices.Clone(fr.data)
				out.frames = append(out.frames, &cp)
				break
			}
		}
	}
	return out
}

// at returns the frame that was packet n of the source capture.
func (c *capture) at(n int) *frame {
	for _, fr := range c.frames {
		if fr.orig == n {
			return fr
		}
	}
	panic(fmt.Sprintf("%s: packet %d is not in the cut", c.name, n))
}

func (c *capture) index(fr *frame) int {
	for i, x := range c.frames {
		if x == fr {
			return i
		}
	}
	panic("frame not in capture")
}

// drop removes the frame that was packet n.
func (c *capture) drop(n int) {
	i := c.index(c.at(n))
	c.frames = slices.Delete(c.frames, i, i+1)
}

// replace puts frames in the place of the one that was packet n.
func (c *capture) replace(n int, with ...*frame) {
	i := c.index(c.at(n))
	c.frames = slices.Replace(c.frames, i, i+1, with...)
}

// RoCEv2 view of a frame: Ethernet (no VLAN) / IPv4 / UDP 4791 / BTH /
// extended headers / payload / pad / ICRC (IBA Vol 1 9.2, Annex A17).
type rv struct {
	f           *frame
	ip, udp     int // offsets of the IPv4 and UDP headers
	bth         int // offset of the BTH
	pay, payEnd int // the payload
	op          roce.OpCode
}

const ethLen = 14

func roceOf(f *frame) (*rv, bool) {
	d := f.data
	if len(d) < ethLen+20+8+12+4 || binary.BigEndian.Uint16(d[12:]) != 0x0800 {
		return nil, false
	}
	ip := ethLen
	ihl := int(d[ip]&0x0f) * 4
	if d[ip+9] != 17 {
		return nil, false
	}
	udp := ip + ihl
	if binary.BigEndian.Uint16(d[udp+2:]) != 4791 {
		return nil, false
	}
	bth := udp + 8
	op := roce.OpCode(d[bth])
	pad := int(d[bth+1]>>4) & 3
	r := &rv{f: f, ip: ip, udp: udp, bth: bth, op: op}
	r.pay = bth + op.HeaderLen()
	r.payEnd = len(d) - 4 - pad
	if r.payEnd < r.pay {
		return nil, false
	}
	return r, true
}

func mustRoCE(f *frame) *rv {
	r, ok := roceOf(f)
	if !ok {
		panic(fmt.Sprintf("packet %d is not RoCEv2", f.orig))
	}
	return r
}

func (r *rv) payload() []byte { return r.f.data[r.pay:r.payEnd] }
func (r *rv) srcIP() string   { return fmt.Sprint(r.f.data[r.ip+12 : r.ip+16]) }
func (r *rv) dstIP() string   { return fmt.Sprint(r.f.data[r.ip+16 : r.ip+20]) }
func (r *rv) psn() uint32     { return binary.BigEndian.Uint32(r.f.data[r.bth+8:]) & 0xffffff }
func (r *rv) destQP() uint32  { return binary.BigEndian.Uint32(r.f.data[r.bth+4:]) & 0xffffff }
func (r *rv) ext(h roce.ExtHeaders) int {
	// Offsets of the extended headers in the order IBA Vol 1 9.2 lays
	// them out for RC: RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
	off := r.bth + 12
	order := []struct {
		h roce.ExtHeaders
		n int
	}{{roce.ExtRETH, 16}, {roce.ExtAtomicETH, 28}, {roce.ExtAETH, 4}, {roce.ExtAtomicAckETH, 8}, {roce.ExtImmDt, 4}, {roce.ExtIETH, 4}}
	have := r.op.ExtHeaders()
	for _, e := range order {
		if e.h == h {
			if have&h == 0 {
				panic(fmt.Sprintf("packet %d (%s) has no such header", r.f.orig, r.op.Name()))
			}
			return off
		}
		if have&e.h != 0 {
			off += e.n
		}
	}
	panic("unknown header")
}

func (r *rv) setPSN(p uint32) {
	d := r.f.data[r.bth+8:]
	d[1], d[2], d[3] = byte(p>>16), byte(p>>8), byte(p)
}

func (r *rv) hasAETH() bool { return r.op.ExtHeaders()&roce.ExtAETH != 0 }

func (r *rv) msn() uint32 {
	return binary.BigEndian.Uint32(r.f.data[r.ext(roce.ExtAETH):]) & 0xffffff
}

func (r *rv) setMSN(m uint32) {
	d := r.f.data[r.ext(roce.ExtAETH):]
	d[1], d[2], d[3] = byte(m>>16), byte(m>>8), byte(m)
}

// rebuild gives the frame a new opcode and payload (the extended headers
// given in ext, already laid out), fixing the pad count, the IPv4 total
// length and checksum and the UDP length. The ICRC is fixed later.
func (r *rv) rebuild(op roce.OpCode, ext, payload []byte) {
	pad := (4 - len(payload)%4) % 4
	d := slices.Clone(r.f.data[:r.bth+12])
	d[r.bth] = byte(op)
	d[r.bth+1] = d[r.bth+1]&^0x30 | byte(pad)<<4
	d = append(d, ext...)
	d = append(d, payload...)
	d = append(d, make([]byte, pad+4)...)
	binary.BigEndian.PutUint16(d[r.ip+2:], uint16(len(d)-r.ip))
	ipChecksum(d[r.ip : r.ip+int(d[r.ip]&0x0f)*4])
	binary.BigEndian.PutUint16(d[r.udp+4:], uint16(len(d)-r.udp))
	binary.BigEndian.PutUint16(d[r.udp+6:], 0) // RoCEv2 sends UDP checksum 0 (Annex A17.3.3)
	r.f.data = d
	r.op = op
	r.pay = r.bth + 12 + len(ext)
	r.payEnd = r.pay + len(payload)
}

// extBytes returns the frame's extended headers.
func (r *rv) extBytes() []byte { return slices.Clone(r.f.data[r.bth+12 : r.pay]) }

func ipChecksum(h []byte) {
	h[10], h[11] = 0, 0
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	binary.BigEndian.PutUint16(h[10:], ^uint16(s))
}

// fixICRCs recomputes the ICRC of every RoCEv2 frame but those a mutation
// corrupted on purpose (layers/roce FixICRCv2).
func (c *capture) fixICRCs() error {
	for _, f := range c.frames {
		r, ok := roceOf(f)
		if !ok || f.badICRC {
			continue
		}
		if err := roce.FixICRCv2(f.data[r.ip:]); err != nil {
			return fmt.Errorf("packet %d: %w", f.orig, err)
		}
	}
	return nil
}

// fixTCPChecksums recomputes the TCP checksum of every IPv4/TCP frame (the
// iWARP mutations edit TCP payloads in place; siw negotiates no MPA CRC).
func (c *capture) fixTCPChecksums() {
	for _, f := range c.frames {
		d := f.data
		if len(d) < ethLen+20 || binary.BigEndian.Uint16(d[12:]) != 0x0800 || d[ethLen+9] != 6 {
			continue
		}
		ip := ethLen
		ihl := int(d[ip]&0x0f) * 4
		tot := int(binary.BigEndian.Uint16(d[ip+2:]))
		if ip+tot > len(d) {
			continue // cut by the snap length: leave it
		}
		seg := d[ip+ihl : ip+tot]
		seg[16], seg[17] = 0, 0
		var s uint32
		add := func(b []byte) {
			for i := 0; i+1 < len(b); i += 2 {
				s += uint32(binary.BigEndian.Uint16(b[i:]))
			}
			if len(b)%2 == 1 {
				s += uint32(b[len(b)-1]) << 8
			}
		}
		add(d[ip+12 : ip+20])
		s += 6 + uint32(len(seg))
		add(seg)
		for s > 0xffff {
			s = s>>16 + s&0xffff
		}
		binary.BigEndian.PutUint16(seg[16:], ^uint16(s))
	}
}
