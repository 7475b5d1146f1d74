package longstream

import (
	"encoding/binary"
	"sort"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// prepare finds, in every record, the fields a repetition shifts.
func (c *Capture) prepare() {
	if c.LinkType != layers.LinkTypeEthernet {
		return
	}
	p := &preparer{c: c, known: map[uint32]bool{}, dirs: map[dirKey]*tcpDir{}}
	for i := range c.recs {
		p.record(i)
	}
	// Second pass: the XIDs found by framing the TCP streams, wherever the
	// segments (retransmissions included) carry their octets.
	for i := range c.recs {
		r := &c.recs[i]
		if seg := p.segs[i]; seg.dir != nil {
			seg.dir.xidEdits(r, seg.seq, seg.off, seg.n, &c.Stats)
		}
	}
	c.Stats.Records = len(c.recs)
}

type preparer struct {
	c     *Capture
	bth   roce.BTH
	hdr   rpcrdma.Message
	known map[uint32]bool // XIDs seen in RPC-over-RDMA headers
	dirs  map[dirKey]*tcpDir
	segs  map[int]segment
}

// segment is where record i's TCP payload sits in its direction's stream.
type segment struct {
	dir    *tcpDir
	seq    uint32
	off, n int // in the record
}

type dirKey struct {
	src, dst     [4]byte
	sport, dport uint16
}

func (p *preparer) record(i int) {
	r := &p.c.recs[i]
	b := r.data
	// Ethernet II, IPv4 (RFC 791 3.1).
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 || b[14]>>4 != 4 {
		return
	}
	ip := 14
	ihl := int(b[ip]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[ip+2:]))
	if ihl < 20 || total < ihl || ip+total > len(b) || binary.BigEndian.Uint16(b[ip+6:])&0x3fff != 0 {
		return // cut, or a fragment
	}
	l4 := ip + ihl
	end := ip + total
	switch b[ip+9] {
	case 17:
		if end-l4 >= 8 && binary.BigEndian.Uint16(b[l4+2:]) == uint16(roce.UDPPortRoCEv2) {
			p.roce(r, ip, l4+8, end)
		}
	case 6:
		p.tcp(i, r, ip, l4, end)
	}
}

// roce prepares a RoCEv2 packet whose BTH starts at bth (IBA Vol 1 9.2,
// Annex A17).
func (p *preparer) roce(r *record, ip, bth, end int) {
	h := &p.bth
	if err := h.DecodeWithLength(r.data[bth:end], end-bth, gopacket.NilDecodeFeedback); err != nil || h.Truncated {
		return
	}
	p.c.Stats.RoCE++
	r.fix, r.ip = fixICRC, ip
	// The payload's offset: Payload is a slice of the frame.
	pay := bth + cap(r.data[bth:]) - cap(h.Payload)
	if h.DestQP == 1 {
		p.cm(r, pay, h.Payload)
		return
	}
	r.edits = append(r.edits, edit{off: bth + 5, kind: editQPN}, edit{off: bth + 9, kind: editPSN})
	op := h.OpCode
	switch {
	case op.IsSend() && (op.IsFirst() || op.IsOnly()):
		p.send(r, pay, h.Payload)
	case (op.IsReadResponse() || op.IsWrite()) && (op.IsFirst() || op.IsOnly()):
		p.rpcStart(r, pay, h.Payload)
	}
}

// cm prepares a CM MAD: the MAD header (IBA 13.4.3) is 24 octets; the CM
// message's fields are at the offsets of IBA 12.6 (layers/roce's
// cm_connect.go and cm_release.go read them there).
func (p *preparer) cm(r *record, pay int, mad []byte) {
	if len(mad) < 24+24 || mad[1] != 0x07 { // management class: CM
		return
	}
	p.c.Stats.CM++
	d := pay + 24
	comm := func(offs ...int) {
		for _, o := range offs {
			r.edits = append(r.edits, edit{off: d + o, kind: editComm})
		}
	}
	qpn := func(o int) { r.edits = append(r.edits, edit{off: d + o, kind: editQPN}) }
	psn := func(o int) { r.edits = append(r.edits, edit{off: d + o, kind: editPSN}) }
	switch binary.BigEndian.Uint16(mad[16:]) {
	case 0x10: // REQ: Local Comm ID, Local QPN, Starting PSN
		comm(0)
		qpn(32)
		psn(44)
	case 0x13: // REP
		comm(0, 4)
		qpn(12)
		psn(20)
	case 0x15: // DREQ: Remote QPN
		comm(0, 4)
		qpn(8)
	case 0x19: // LAP: Remote QPN
		comm(0, 4)
		qpn(12)
	case 0x11, 0x12, 0x14, 0x16, 0x1a: // MRA, REJ, RTU, DREP, APR
		comm(0, 4)
	}
}

// send notes the XIDs of a Send that starts with an RPC-over-RDMA header:
// rdma_xid (RFC 8166 section 4.1) and, behind the header, the inline RPC
// message's xid (RFC 5531 section 9).
func (p *preparer) send(r *record, pay int, b []byte) {
	if len(b) < 4 {
		return
	}
	m := &p.hdr
	c, err := rpcrdma.ParseCommon(b)
	if err != nil || c.Vers != rpcrdma.Version1 {
		return
	}
	xid := c.XID
	p.known[xid] = true
	r.addXID(pay, xid)
	p.c.Stats.XIDs++
	if m.DecodeFromBytes(b) == nil {
		if rpc := m.RPCMessage(); len(rpc) >= 4 && binary.BigEndian.Uint32(rpc) == xid {
			r.addXID(pay+m.HeaderLen(), xid)
			p.c.Stats.XIDs++
		}
	}
}

// rpcStart notes the XID of an RPC message that RDMA moves (a Long Call's
// position-zero Read chunk, a Long Reply's Reply chunk: RFC 8166 section
// 3.5): data that starts with a known XID and msg_type CALL or REPLY.
func (p *preparer) rpcStart(r *record, pay int, b []byte) {
	if xid, ok := p.rpcXID(b); ok {
		r.addXID(pay, xid)
		p.c.Stats.XIDs++
	}
}

func (p *preparer) rpcXID(b []byte) (uint32, bool) {
	if len(b) < 8 {
		return 0, false
	}
	xid := binary.BigEndian.Uint32(b)
	mt := binary.BigEndian.Uint32(b[4:])
	return xid, p.known[xid] && mt <= 1
}

func (r *record) addXID(off int, xid uint32) {
	for j := 0; j < 4; j++ {
		r.edits = append(r.edits, edit{off: off + j, kind: editXID, i: uint8(j), xid: xid})
	}
}

// tcp prepares a TCP segment (RFC 793 3.1): ports, sequence and
// acknowledgement numbers move; on the nfsrdma port the stream is framed
// to find the XIDs.
func (p *preparer) tcp(i int, r *record, ip, l4, end int) {
	b := r.data
	if end-l4 < 20 {
		return
	}
	off := int(b[l4+12]>>4) * 4
	if off < 20 || l4+off > end {
		return
	}
	p.c.Stats.TCP++
	r.fix, r.ip, r.l4 = fixTCP, ip, l4
	flags := b[l4+13]
	r.edits = append(r.edits, edit{off: l4, kind: editPort}, edit{off: l4 + 2, kind: editPort}, edit{off: l4 + 4, kind: editSeq})
	if flags&0x10 != 0 { // ACK
		r.edits = append(r.edits, edit{off: l4 + 8, kind: editSeq})
	}
	var k dirKey
	copy(k.src[:], b[ip+12:ip+16])
	copy(k.dst[:], b[ip+16:ip+20])
	k.sport, k.dport = binary.BigEndian.Uint16(b[l4:]), binary.BigEndian.Uint16(b[l4+2:])
	if k.sport != NFSRDMAPort && k.dport != NFSRDMAPort {
		return
	}
	d := p.dirs[k]
	if d == nil {
		d = &tcpDir{p: p}
		p.dirs[k] = d
	}
	seq := binary.BigEndian.Uint32(b[l4+4:])
	payload := b[l4+off : end]
	if p.segs == nil {
		p.segs = map[int]segment{}
	}
	p.segs[i] = segment{dir: d, seq: seq, off: l4 + off, n: len(payload)}
	d.segment(seq, flags, payload)
}

// tcpDir frames one direction of an iWARP connection's TCP stream in
// order: the MPA Request or Reply, then FPDUs (RFC 5044 sections 4, 7).
type tcpDir struct {
	p     *preparer
	init  bool
	dead  bool
	next  uint32 // sequence number of the next octet in order
	buf   []byte // octets not framed yet, starting at bufSeq
	bufAt uint32
	fpdus bool     // the MPA frame is done
	xids  []xidPos // where the XIDs sit, in stream order
	// origin is the first sequence number of the stream: positions are
	// kept from it.
	origin    uint32
	hasOrigin bool
}

type xidPos struct {
	rel uint32 // from the first sequence number seen
	xid uint32
}

func (d *tcpDir) segment(seq uint32, flags byte, payload []byte) {
	if flags&0x02 != 0 { // SYN: the stream starts after it
		d.init, d.next, d.bufAt, d.buf = true, seq+1, seq+1, d.buf[:0]
		d.base(seq + 1)
		return
	}
	if d.dead || len(payload) == 0 {
		return
	}
	if !d.init {
		d.init, d.next, d.bufAt = true, seq, seq
		d.base(seq)
	}
	ahead := int32(seq - d.next)
	switch {
	case ahead > 0:
		d.dead = true // a gap: framing stops (the captures have none)
		return
	case int(-ahead) >= len(payload):
		return // a retransmission of octets seen
	}
	payload = payload[-ahead:]
	d.buf = append(d.buf, payload...)
	d.next += uint32(len(payload))
	d.frame()
}

// base sets the origin of the relative positions.
func (d *tcpDir) base(seq uint32) {
	if !d.hasOrigin {
		d.origin, d.hasOrigin = seq, true
	}
}

func (d *tcpDir) frame() {
	for !d.dead {
		b := d.buf
		n := 0
		if !d.fpdus {
			// MPA Request/Reply: key, flags, Rev, PD_Length, private data.
			if len(b) < 20 {
				return
			}
			if !iwarp.IsMPAKey(b) || b[16]&0x80 != 0 { // not MPA, or markers
				d.dead = true
				return
			}
			n = 20 + int(binary.BigEndian.Uint16(b[18:]))
			if len(b) < n {
				return
			}
			d.fpdus = true
		} else {
			// FPDU: ULPDU_Length, ULPDU, pad to four, CRC (always there).
			if len(b) < 2 {
				return
			}
			l := int(binary.BigEndian.Uint16(b))
			n = 2 + l
			n += (4 - n%4) % 4
			n += 4
			if len(b) < n {
				return
			}
			d.ulpdu(d.bufAt+2, b[2:2+l])
		}
		d.bufAt += uint32(n)
		d.buf = append(d.buf[:0], b[n:]...)
	}
}

// ulpdu notes the XIDs of one DDP segment starting at sequence number seq
// (RFC 5041 4.3-4.4, RFC 5040 4.2).
func (d *tcpDir) ulpdu(seq uint32, u []byte) {
	if len(u) < 2 {
		return
	}
	tagged := u[0]&0x80 != 0
	op := iwarp.Opcode(u[1] & 0x0f)
	p := d.p
	if tagged {
		if len(u) >= 14 && (op == iwarp.OpRDMAWrite || op == iwarp.OpRDMAReadResponse) {
			if xid, ok := p.rpcXID(u[14:]); ok {
				d.add(seq+14, xid)
			}
		}
		return
	}
	if len(u) < 18+4 {
		return
	}
	qn, mo := binary.BigEndian.Uint32(u[6:]), binary.BigEndian.Uint32(u[14:])
	if qn != 0 || mo != 0 || op < iwarp.OpSend || op > iwarp.OpSendWithSEAndInvalidate {
		return
	}
	b := u[18:]
	c, err := rpcrdma.ParseCommon(b)
	if err != nil || c.Vers != rpcrdma.Version1 {
		return
	}
	p.known[c.XID] = true
	d.add(seq+18, c.XID)
	m := &p.hdr
	if m.DecodeFromBytes(b) == nil {
		if rpc := m.RPCMessage(); len(rpc) >= 4 && binary.BigEndian.Uint32(rpc) == c.XID {
			d.add(seq+18+uint32(m.HeaderLen()), c.XID)
		}
	}
}

func (d *tcpDir) add(seq, xid uint32) {
	d.xids = append(d.xids, xidPos{seq - d.origin, xid})
}

// xidEdits adds to r the edits of the XID octets its segment carries: the
// n payload octets at offset off, from sequence number seq.
func (d *tcpDir) xidEdits(r *record, seq uint32, off, n int, st *Stats) {
	if n == 0 || len(d.xids) == 0 || !d.hasOrigin {
		return
	}
	start := seq - d.origin
	// The first XID that may reach into the segment.
	i := sort.Search(len(d.xids), func(i int) bool { return d.xids[i].rel+4 > start })
	for ; i < len(d.xids) && d.xids[i].rel < start+uint32(n); i++ {
		x := d.xids[i]
		whole := true
		for j := uint32(0); j < 4; j++ {
			pos := x.rel + j
			if pos < start || pos >= start+uint32(n) {
				whole = false
				continue
			}
			r.edits = append(r.edits, edit{off: off + int(pos-start), kind: editXID, i: uint8(j), xid: x.xid})
		}
		if whole {
			st.XIDs++
		}
	}
}

// fixICRCv2 recomputes a RoCEv2 packet's ICRC.
func fixICRCv2(ip []byte) error { return roce.FixICRCv2(ip) }

// fixTCPChecksum recomputes the checksum of the TCP segment at l4 in the
// IPv4 packet ip (RFC 793 3.1: the one's complement sum over the pseudo
// header and the segment).
func fixTCPChecksum(ip []byte, l4 int) {
	total := int(binary.BigEndian.Uint16(ip[2:]))
	seg := ip[l4:total]
	seg[16], seg[17] = 0, 0
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(ip[12:20]) // source and destination addresses
	sum += 6 + uint32(len(seg))
	add(seg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(seg[16:], ^uint16(sum))
}
