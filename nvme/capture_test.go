package nvme

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// This file takes the NVMe/RDMA traffic out of the real captures of
// testdata/pcaps/ulp with the transport layers of this module (roce's CM
// messages, pvtdata's RDMA-CM IP header, iwarp's MPA framer, DDP and RDMAP
// layers) and a small hand-written RoCEv2 walk, so that the tests of this
// package see what the kernel put on the wire:
//
//	RoCEv2: Ethernet 14, IPv4 (IHL*4), UDP 8 (dst 4791), BTH 12, then the
//	extended headers the opcode implies (IBA 9.2-9.3; RETH 16 for RDMA
//	Write First/Only and Read Request, AETH 4 for Read Response
//	First/Last/Only, ImmDt 4 for ..._WITH_IMMEDIATE, IETH 4 for
//	..._WITH_INVALIDATE, DETH 8 for UD), the payload, PadCnt pad octets
//	(BTH octet 1 bits 5:4) and the 4-octet ICRC.

const ulpDir = "../testdata/pcaps/ulp"

// capsule is one RDMA Send of an NVMe/RDMA queue, reassembled.
type capsule struct {
	frames    []int // the frames of the Send, first to last
	qid       uint16
	toCtrl    bool // host to controller (a command capsule)
	invalid   bool // Send With Invalidate
	invKey    uint32
	immediate bool
	data      []byte
}

// frame is the frame of the Send's last packet.
func (c *capsule) frame() int { return c.frames[len(c.frames)-1] }

// cmEvent is the NVMe/RDMA private data of one connection-setup message.
type cmEvent struct {
	frame int
	kind  string // "REQ", "REP", "REJ"
	pd    []byte // the consumer's private data (RDMA-CM header / IRD-ORD removed)
}

// transfer is the data of one RDMA Write (controller to host) or of one
// RDMA Read's responses (host to controller).
type transfer struct {
	frames []int
	qid    uint16
	write  bool
	va     uint64
	key    uint32
	length uint32 // as the RETH / Read Request said
	data   []byte
}

type nvmeCapture struct {
	name      string
	capsules  []capsule
	cm        []cmEvent
	transfers []transfer
	dupPSN    int // RC packets dropped as go-back-N retransmissions
}

var captureCache = map[string]*nvmeCapture{}

// rc opcodes (IBA Table 38) this walk knows.
const (
	opSendFirst       = 0x00
	opSendMiddle      = 0x01
	opSendLast        = 0x02
	opSendLastImm     = 0x03
	opSendOnly        = 0x04
	opSendOnlyImm     = 0x05
	opWriteFirst      = 0x06
	opWriteMiddle     = 0x07
	opWriteLast       = 0x08
	opWriteLastImm    = 0x09
	opWriteOnly       = 0x0a
	opWriteOnlyImm    = 0x0b
	opReadRequest     = 0x0c
	opReadRespFirst   = 0x0d
	opReadRespMiddle  = 0x0e
	opReadRespLast    = 0x0f
	opReadRespOnly    = 0x10
	opAck             = 0x11
	opSendLastInv     = 0x16
	opSendOnlyInv     = 0x17
	opUDSendOnly      = 0x64
	cmMgmtClass       = 0x07
	cmAttrREQ         = 0x0010
	cmAttrREJ         = 0x0012
	cmAttrREP         = 0x0013
	udpPortRoCEv2     = 4791
	ethTypeIPv4       = 0x0800
	ipProtoUDP        = 17
	bthLen            = 12
	icrcLen           = 4
	rethLen           = 16
	aethLen           = 4
	immLen            = 4
	iethLen           = 4
	dethLen           = 8
	madHeaderLen      = 24
	madLen            = 256
	rdmaCMHeaderLen   = pvtdata.CMAHeaderLen
	mpaIRDORDLen      = 4
	nvmeRDMAPort      = 4420
	nvmeDiscoveryPort = 8009
)

// roceCapture walks a RoCEv2 capture.
func roceCapture(t testing.TB, name string) *nvmeCapture {
	t.Helper()
	if c, ok := captureCache[name]; ok {
		return c
	}
	lt, frames := pcaptest.Read(t, filepath.Join(ulpDir, name))
	if lt != layers.LinkTypeEthernet {
		t.Fatalf("%s: link type %d, want Ethernet", name, lt)
	}
	c := &nvmeCapture{name: name}
	type reqInfo struct {
		qid    uint16
		hostQP uint64
	}
	reqs := map[uint32]reqInfo{} // by the REQ's local communication ID
	// QPs are named by IPv4 address and QPN (each side numbers its own
	// QPs: both ends of a connection may have the same QPN).
	qpQID := map[uint64]uint16{}
	ctrlQP := map[uint64]bool{} // the controller's QPs: commands go to them
	sends := map[uint64]*capsule{}
	writes := map[uint64]*transfer{}     // by destination (host) QP
	var reads = map[uint64][]*transfer{} // pending RDMA Reads by requester (controller) QP
	curRead := map[uint64]*transfer{}
	lastPSN := map[uint64]uint32{}
	for _, f := range frames {
		b := f.Data
		if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:14]) != ethTypeIPv4 {
			continue
		}
		ip := b[14:]
		ihl := int(ip[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(ip[2:4]))
		if ip[9] != ipProtoUDP || ihl < 20 || total > len(ip) || total < ihl+8 {
			continue
		}
		udp := ip[ihl:total]
		if binary.BigEndian.Uint16(udp[2:4]) != udpPortRoCEv2 {
			continue
		}
		ib := udp[8:]
		if len(ib) < bthLen+icrcLen {
			t.Fatalf("%s frame %d: %d octets after UDP", name, f.Num, len(ib))
		}
		op := ib[0]
		pad := int(ib[1]>>4) & 0x3
		srcIP, dstIP := uint64(binary.BigEndian.Uint32(ip[12:16])), uint64(binary.BigEndian.Uint32(ip[16:20]))
		qpn := uint32(ib[5])<<16 | uint32(ib[6])<<8 | uint32(ib[7])
		destQP := dstIP<<24 | uint64(qpn)
		psn := uint32(ib[9])<<16 | uint32(ib[10])<<8 | uint32(ib[11])
		body := ib[bthLen : len(ib)-icrcLen]

		if op == opUDSendOnly {
			if qpn != 1 || len(body) < dethLen+madLen {
				continue
			}
			mad := body[dethLen : dethLen+madLen]
			if mad[1] != cmMgmtClass {
				continue
			}
			data := mad[madHeaderLen:]
			switch binary.BigEndian.Uint16(mad[16:18]) {
			case cmAttrREQ:
				var m roce.CMREQ
				if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
					t.Fatalf("%s frame %d: %v", name, f.Num, err)
				}
				port := pvtdata.ServiceID(m.ServiceID).Port()
				if port != nvmeRDMAPort && port != nvmeDiscoveryPort {
					continue
				}
				if _, err := pvtdata.DecodeCMAHeader(m.PrivateData); err != nil {
					t.Fatalf("%s frame %d: RDMA-CM IP header: %v", name, f.Num, err)
				}
				pd := m.PrivateData[rdmaCMHeaderLen:]
				c.cm = append(c.cm, cmEvent{frame: f.Num, kind: "REQ", pd: pd})
				var r CMRequest
				if err := r.DecodeFromBytes(pd); err != nil {
					t.Fatalf("%s frame %d: %v", name, f.Num, err)
				}
				reqs[m.LocalCommID] = reqInfo{qid: r.QID, hostQP: srcIP<<24 | uint64(m.LocalQPN)}
			case cmAttrREP:
				var m roce.CMREP
				if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
					t.Fatalf("%s frame %d: %v", name, f.Num, err)
				}
				ri, ok := reqs[m.RemoteCommID]
				if !ok {
					continue
				}
				c.cm = append(c.cm, cmEvent{frame: f.Num, kind: "REP", pd: m.PrivateData})
				qpQID[ri.hostQP] = ri.qid
				qpQID[srcIP<<24|uint64(m.LocalQPN)] = ri.qid
				ctrlQP[srcIP<<24|uint64(m.LocalQPN)] = true
			case cmAttrREJ:
				var m roce.CMREJ
				if err := m.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
					t.Fatalf("%s frame %d: %v", name, f.Num, err)
				}
				if _, ok := reqs[m.RemoteCommID]; ok {
					c.cm = append(c.cm, cmEvent{frame: f.Num, kind: "REJ", pd: m.PrivateData})
				}
			}
			continue
		}
		qid, ok := qpQID[destQP]
		if !ok {
			continue
		}
		if pad > len(body) {
			t.Fatalf("%s frame %d: pad longer than payload", name, f.Num)
		}
		body = body[:len(body)-pad]
		// Go-back-N: a request packet whose PSN is not past the last
		// one seen on its QP is a retransmission (24-bit PSN space).
		// Responses (RDMA Read Responses, ACKs) carry the PSNs of the
		// requester's queue, a PSN space of their own.
		space := destQP
		if op >= opReadRespFirst && op <= opAck {
			space |= 1 << 60
		}
		if op != opAck {
			if last, seen := lastPSN[space]; seen && ((psn-last)&0xffffff >= 0x800000 || psn == last) {
				c.dupPSN++
				continue
			}
			lastPSN[space] = psn
		}
		need := func(n int) []byte {
			if len(body) < n {
				t.Fatalf("%s frame %d: opcode 0x%02x needs %d header octets, has %d", name, f.Num, op, n, len(body))
			}
			return body[:n]
		}
		switch op {
		case opSendFirst, opSendMiddle, opSendLast, opSendLastImm, opSendOnly, opSendOnlyImm, opSendLastInv, opSendOnlyInv:
			s := sends[destQP]
			if op == opSendFirst || op == opSendOnly || op == opSendOnlyImm || op == opSendOnlyInv {
				if s != nil {
					t.Fatalf("%s frame %d: Send started while one is in progress on QP 0x%x", name, f.Num, destQP)
				}
				s = &capsule{qid: qid, toCtrl: ctrlQP[destQP]}
				sends[destQP] = s
			}
			if s == nil {
				t.Fatalf("%s frame %d: Send middle/last without a first on QP 0x%x", name, f.Num, destQP)
			}
			p := body
			switch op {
			case opSendLastImm, opSendOnlyImm:
				need(immLen)
				s.immediate = true
				p = body[immLen:]
			case opSendLastInv, opSendOnlyInv:
				s.invalid = true
				s.invKey = binary.BigEndian.Uint32(need(iethLen))
				p = body[iethLen:]
			}
			s.frames = append(s.frames, f.Num)
			s.data = append(s.data, p...)
			if op != opSendFirst && op != opSendMiddle {
				c.capsules = append(c.capsules, *s)
				delete(sends, destQP)
			}
		case opWriteFirst, opWriteOnly, opWriteOnlyImm:
			h := need(rethLen)
			w := &transfer{qid: qid, write: true, va: binary.BigEndian.Uint64(h), key: binary.BigEndian.Uint32(h[8:]),
				length: binary.BigEndian.Uint32(h[12:]), frames: []int{f.Num}}
			p := body[rethLen:]
			if op == opWriteOnlyImm {
				need(rethLen + immLen)
				p = p[immLen:]
			}
			w.data = append(w.data, p...)
			if op == opWriteFirst {
				writes[destQP] = w
			} else {
				c.transfers = append(c.transfers, *w)
			}
		case opWriteMiddle, opWriteLast, opWriteLastImm:
			w := writes[destQP]
			if w == nil {
				t.Fatalf("%s frame %d: RDMA Write middle/last without a first", name, f.Num)
			}
			p := body
			if op == opWriteLastImm {
				need(immLen)
				p = body[immLen:]
			}
			w.frames = append(w.frames, f.Num)
			w.data = append(w.data, p...)
			if op != opWriteMiddle {
				c.transfers = append(c.transfers, *w)
				delete(writes, destQP)
			}
		case opReadRequest:
			h := need(rethLen)
			// The responses come back to the requester: the source QP
			// is not in the BTH, but a queue's two QPs map to the same
			// QID; find the controller's QP of this queue.
			var req uint64
			for qp, q := range qpQID {
				if q == qid && ctrlQP[qp] {
					req = qp
				}
			}
			reads[req] = append(reads[req], &transfer{qid: qid, va: binary.BigEndian.Uint64(h),
				key: binary.BigEndian.Uint32(h[8:]), length: binary.BigEndian.Uint32(h[12:])})
		case opReadRespFirst, opReadRespMiddle, opReadRespLast, opReadRespOnly:
			p := body
			if op != opReadRespMiddle {
				p = body[len(need(aethLen)):]
			}
			r := curRead[destQP]
			if op == opReadRespFirst || op == opReadRespOnly {
				q := reads[destQP]
				if len(q) == 0 {
					t.Fatalf("%s frame %d: RDMA Read Response without a request", name, f.Num)
				}
				r, reads[destQP] = q[0], q[1:]
				curRead[destQP] = r
			}
			if r == nil {
				t.Fatalf("%s frame %d: RDMA Read Response middle/last without a first", name, f.Num)
			}
			r.frames = append(r.frames, f.Num)
			r.data = append(r.data, p...)
			if op == opReadRespLast || op == opReadRespOnly {
				c.transfers = append(c.transfers, *r)
				delete(curRead, destQP)
			}
		}
	}
	if len(sends) != 0 || len(writes) != 0 || len(curRead) != 0 {
		t.Fatalf("%s: capture ends inside %d Sends, %d Writes, %d Read responses", name, len(sends), len(writes), len(curRead))
	}
	captureCache[name] = c
	return c
}

// iwarpCapture walks an iWARP capture: TCP streams of port 4420/8009, the
// MPA Request/Reply with the NVMe/RDMA private data after the MPA v2
// IRD/ORD field, then FPDUs (siw: no markers, no CRC), DDP segments and
// RDMAP messages. Untagged Sends are reassembled with iwarp.Reassembler;
// tagged segments (RDMA Write, RDMA Read Response) are collected per STag.
func iwarpCapture(t testing.TB, name string) *nvmeCapture {
	t.Helper()
	if c, ok := captureCache[name]; ok {
		return c
	}
	lt, frames := pcaptest.Read(t, filepath.Join(ulpDir, name))
	type half struct {
		key      string
		reqRep   iwarp.MPAReqRep
		repFrame int
		toCtrl   bool
		conn     string // both directions share it
		fpduSeq  uint32
		next     uint32
		stream   []byte
		ends     []int // frame of the segment ending at each stream offset
		endOffs  []int
	}
	halves := map[string]*half{}
	var order []*half
	c := &nvmeCapture{name: name}
	for _, f := range frames {
		p := gopacket.NewPacket(f.Data, lt, gopacket.NoCopy)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil || len(tcp.Payload) == 0 {
			continue
		}
		sp, dp := uint16(tcp.SrcPort), uint16(tcp.DstPort)
		if sp != nvmeRDMAPort && dp != nvmeRDMAPort && sp != nvmeDiscoveryPort && dp != nvmeDiscoveryPort {
			continue
		}
		key := fmt.Sprintf("%s:%d>%s:%d", ip.SrcIP, sp, ip.DstIP, dp)
		h := halves[key]
		if h == nil {
			if !iwarp.IsMPAKey(tcp.Payload) {
				t.Fatalf("%s frame %d: first payload of %s is no MPA Request/Reply", name, f.Num, key)
			}
			h = &half{key: key, toCtrl: dp == nvmeRDMAPort || dp == nvmeDiscoveryPort, repFrame: f.Num}
			if err := h.reqRep.DecodeFromBytes(tcp.Payload, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s frame %d: %v", name, f.Num, err)
			}
			lo, hi := key, fmt.Sprintf("%s:%d>%s:%d", ip.DstIP, dp, ip.SrcIP, sp)
			if hi < lo {
				lo = hi
			}
			h.conn = lo
			h.fpduSeq = tcp.Seq + uint32(h.reqRep.Len())
			h.next = tcp.Seq + uint32(h.reqRep.Len())
			halves[key] = h
			order = append(order, h)
			kind := "REQ"
			if h.reqRep.IsReply() {
				kind = "REP"
			}
			c.cm = append(c.cm, cmEvent{frame: f.Num, kind: kind, pd: h.reqRep.PrivateData})
			if rest := tcp.Payload[h.reqRep.Len():]; len(rest) > 0 {
				h.stream = append(h.stream, rest...)
				h.next += uint32(len(rest))
				h.ends = append(h.ends, f.Num)
				h.endOffs = append(h.endOffs, len(h.stream))
			}
			continue
		}
		d := int32(tcp.Seq - h.next)
		switch {
		case d > 0:
			t.Fatalf("%s frame %d: %d octets missing in %s", name, f.Num, d, key)
		case int(-d) >= len(tcp.Payload):
			c.dupPSN++ // TCP retransmission
			continue
		}
		pl := tcp.Payload[-d:]
		h.stream = append(h.stream, pl...)
		h.next += uint32(len(pl))
		h.ends = append(h.ends, f.Num)
		h.endOffs = append(h.endOffs, len(h.stream))
	}
	// QIDs per connection come from the host's private data.
	connQID := map[string]uint16{}
	for _, h := range order {
		if h.toCtrl {
			var r CMRequest
			pd := h.reqRep.PrivateData
			if len(pd) >= mpaIRDORDLen {
				pd = pd[mpaIRDORDLen:]
			}
			if err := r.DecodeFromBytes(pd); err != nil {
				t.Fatalf("%s: %s: %v", name, h.key, err)
			}
			connQID[h.conn] = r.QID
		}
	}
	// Frame and decode every half-connection first: the RDMA Read
	// Requests (controller to host) say which host STag and offset the
	// Read Responses (host to controller, placed in the controller's sink
	// STag) carry (RFC 5040 section 4.4).
	type seg struct {
		end int
		ddp iwarp.DDP
		rd  iwarp.RDMAP
	}
	segs := map[*half][]seg{}
	readReqs := map[string][]iwarp.ReadRequest{} // conn + sink STag -> requests in order
	for _, h := range order {
		frameAt := func(off int) int { // frame carrying stream octet off
			i := sort.SearchInts(h.endOffs, off+1)
			if i == len(h.ends) {
				return -1
			}
			return h.ends[i]
		}
		fr := iwarp.NewFramer(iwarp.FramerConfig{Seq: h.fpduSeq, MarkerSeq: h.fpduSeq})
		if err := fr.Feed(h.stream); err != nil {
			t.Fatalf("%s %s: %v", name, h.key, err)
		}
		var off int
		for {
			fp, err := fr.Next()
			if err == iwarp.ErrNeedMore {
				break
			}
			if err != nil {
				t.Fatalf("%s %s: %v", name, h.key, err)
			}
			var s seg
			s.end = frameAt(off + len(fp.Raw) - 1)
			off += len(fp.Raw)
			if err := s.ddp.DecodeFromBytes(fp.ULPDU, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s frame %d: %v", name, s.end, err)
			}
			if err := s.rd.DecodeFromBytes(fp.ULPDU, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("%s frame %d: %v", name, s.end, err)
			}
			s.ddp.Data = append([]byte(nil), s.ddp.Data...)
			if s.rd.Opcode == iwarp.OpRDMAReadRequest {
				k := fmt.Sprintf("%s/%x", h.conn, s.rd.ReadRequest.SinkSTag)
				readReqs[k] = append(readReqs[k], s.rd.ReadRequest)
			}
			segs[h] = append(segs[h], s)
		}
	}
	for _, h := range order {
		qid := connQID[h.conn]
		ra := iwarp.NewReassembler(iwarp.ReassemblerConfig{})
		tagged := map[uint32]*transfer{}
		for i := range segs[h] {
			sg := &segs[h][i]
			dd, rd, end := &sg.ddp, &sg.rd, sg.end
			if dd.T {
				tr := tagged[dd.STag]
				if tr == nil {
					tr = &transfer{qid: qid, write: rd.Opcode == iwarp.OpRDMAWrite, key: dd.STag, va: dd.TO}
					if rd.Opcode == iwarp.OpRDMAReadResponse {
						k := fmt.Sprintf("%s/%x", h.conn, dd.STag)
						q := readReqs[k]
						if len(q) == 0 {
							t.Fatalf("%s frame %d: RDMA Read Response to STag 0x%x without a request", name, end, dd.STag)
						}
						tr.key, tr.va, tr.length = q[0].SourceSTag, q[0].SourceTaggedOffset, q[0].RDMAReadMessageSize
						readReqs[k] = q[1:]
					}
					tagged[dd.STag] = tr
				}
				if n := len(tr.frames); n == 0 || tr.frames[n-1] != end {
					tr.frames = append(tr.frames, end)
				}
				tr.data = append(tr.data, dd.Data...)
				if dd.L {
					if tr.write {
						tr.length = uint32(len(tr.data))
					}
					c.transfers = append(c.transfers, *tr)
					delete(tagged, dd.STag)
				}
				continue
			}
			if dd.QN != 0 { // only the Send queue carries capsules
				continue
			}
			m, err := ra.Add(dd, uint64(end))
			if err != nil {
				t.Fatalf("%s frame %d: %v", name, end, err)
			}
			if m == nil {
				continue
			}
			s := capsule{qid: qid, toCtrl: h.toCtrl, data: append([]byte(nil), m.Data...)}
			for _, r := range m.Refs {
				if n := len(s.frames); n == 0 || s.frames[n-1] != int(r) {
					s.frames = append(s.frames, int(r))
				}
			}
			if rd.Opcode == iwarp.OpSendWithInvalidate || rd.Opcode == iwarp.OpSendWithSEAndInvalidate {
				s.invalid, s.invKey = true, rd.InvalidateSTag
			}
			c.capsules = append(c.capsules, s)
		}
	}
	sort.SliceStable(c.capsules, func(i, j int) bool { return c.capsules[i].frame() < c.capsules[j].frame() })
	captureCache[name] = c
	return c
}
