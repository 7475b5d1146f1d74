package dissect

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// iWARP connections built byte by byte, for what the siw captures lack:
// markers and CRC32c, a bad CRC, a rejected connection, FPDUs ahead of the
// Reply, Terminate. Every header is written here from the RFC's layout, not
// with the layers under test.

// iwConn writes the TCP segments of one connection.
type iwConn struct {
	t     testing.TB
	ip    [2]net.IP
	port  [2]uint16
	seq   [2]uint32 // next sequence number each way
	n     int
	t0    time.Time
	out   []iwFrame
	noAck bool
}

func newIWConn(t testing.TB, clientPort, serverPort uint16) *iwConn {
	return &iwConn{t: t, ip: [2]net.IP{{192, 0, 2, 2}, {192, 0, 2, 1}}, port: [2]uint16{clientPort, serverPort},
		seq: [2]uint32{1000, 500000}, t0: time.Unix(1700000000, 0)}
}

// frame writes a segment of direction d at sequence number seq.
func (c *iwConn) frame(d int, seq uint32, payload []byte) iwFrame {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(d)}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(1 - d)},
		EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: c.ip[d], DstIP: c.ip[1-d]}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(c.port[d]), DstPort: layers.TCPPort(c.port[1-d]), Seq: seq,
		Ack: c.seq[1-d], ACK: !c.noAck, Window: 1024}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		c.t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		c.t.Fatal(err)
	}
	c.n++
	data := append([]byte(nil), buf.Bytes()...)
	return iwFrame{num: c.n, link: layers.LinkTypeEthernet, data: data,
		ci: gopacket.CaptureInfo{Timestamp: c.t0.Add(time.Duration(c.n) * time.Millisecond), CaptureLength: len(data), Length: len(data)}}
}

// send appends the next segment of direction d carrying payload.
func (c *iwConn) send(d int, payload []byte) {
	c.out = append(c.out, c.frame(d, c.seq[d], payload))
	c.seq[d] += uint32(len(payload))
}

// sendSplit sends payload in segments of at most mss octets.
func (c *iwConn) sendSplit(d int, payload []byte, mss int) {
	for len(payload) > 0 {
		n := min(mss, len(payload))
		c.send(d, payload[:n])
		payload = payload[n:]
	}
}

// mpaFrame writes an MPA Request or Reply (RFC 5044 section 7.1): the key,
// M C R flags and reserved bits, Rev, PD_Length, private data.
func mpaFrame(req, m, crc, rej bool, rev byte, pd []byte) []byte {
	return mpaFrameRes(req, m, crc, rej, 0, rev, pd)
}

// mpaFrameRes is mpaFrame with the low five bits of the flags octet set to
// res (0x10: the enhanced-connection flag of MPA revision 2).
func mpaFrameRes(req, m, crc, rej bool, res, rev byte, pd []byte) []byte {
	key := iwarp.MPAKeyRep
	if req {
		key = iwarp.MPAKeyReq
	}
	b := []byte(key)
	var f byte
	if m {
		f |= 0x80
	}
	if crc {
		f |= 0x40
	}
	if rej {
		f |= 0x20
	}
	b = append(b, f|res&0x1f, rev, byte(len(pd)>>8), byte(len(pd)))
	return append(b, pd...)
}

// RFC 5041 section 4: DDP control octet T L Rsvd(4) DV(2); RFC 5040
// section 4.2: RDMAP control octet RV(2) Rsv(2) Opcode(4).
func ddpCtl(tagged, last bool) byte {
	c := byte(0x01) // DV 1
	if tagged {
		c |= 0x80
	}
	if last {
		c |= 0x40
	}
	return c
}

func rdmaCtl(op iwarp.Opcode) byte { return 0x40 | byte(op) } // RV 1

// untaggedULPDU: control, RDMAP control, 4 octets (Inv STag or reserved),
// QN, MSN, MO (RFC 5041 section 4.4), then the payload.
func untaggedULPDU(op iwarp.Opcode, last bool, word, qn, msn, mo uint32, payload []byte) []byte {
	b := []byte{ddpCtl(false, last), rdmaCtl(op)}
	b = binary.BigEndian.AppendUint32(b, word)
	b = binary.BigEndian.AppendUint32(b, qn)
	b = binary.BigEndian.AppendUint32(b, msn)
	b = binary.BigEndian.AppendUint32(b, mo)
	return append(b, payload...)
}

// taggedULPDU: control, RDMAP control, STag, TO (RFC 5041 section 4.3).
func taggedULPDU(op iwarp.Opcode, last bool, stag uint32, to uint64, payload []byte) []byte {
	b := []byte{ddpCtl(true, last), rdmaCtl(op)}
	b = binary.BigEndian.AppendUint32(b, stag)
	b = binary.BigEndian.AppendUint64(b, to)
	return append(b, payload...)
}

// readRequest: the untagged header on QN 1, then Sink STag, Sink TO, RDMA
// Read Message Size, Source STag, Source TO (RFC 5040 section 4.4).
func readRequestULPDU(msn, sinkSTag uint32, sinkTO uint64, size, srcSTag uint32, srcTO uint64) []byte {
	var h []byte
	h = binary.BigEndian.AppendUint32(h, sinkSTag)
	h = binary.BigEndian.AppendUint64(h, sinkTO)
	h = binary.BigEndian.AppendUint32(h, size)
	h = binary.BigEndian.AppendUint32(h, srcSTag)
	h = binary.BigEndian.AppendUint64(h, srcTO)
	return untaggedULPDU(iwarp.OpRDMAReadRequest, true, 0, iwarp.QNReadRequest, msn, 0, h)
}

// iwCastagnoli is an independent CRC32c (hash/crc32, polynomial 0x1EDC6F41).
var iwCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// fpdus frames ULPDUs for one direction: ULPDU_Length, ULPDU, pad to a
// multiple of four, CRC — and with markers a marker every 512 octets of
// the stream from markerSeq, FPDUPTR the marker's distance from the start
// of the FPDU it sits in (RFC 5044 sections 4 and 5). The CRC covers
// everything before it, markers included, and goes on the wire least
// significant octet first (RFC 5044 section 4, RFC 3720 appendix B.4).
func fpdus(markers, crc bool, seq, markerSeq uint32, ulpdus ...[]byte) []byte {
	var out []byte
	for _, u := range ulpdus {
		body := binary.BigEndian.AppendUint16(nil, uint16(len(u)))
		body = append(body, u...)
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		start := seq + uint32(len(out))
		var raw []byte
		put := func(b []byte) {
			for _, x := range b {
				if markers && (start+uint32(len(raw))-markerSeq)%512 == 0 {
					raw = binary.BigEndian.AppendUint16(raw, 0)
					raw = binary.BigEndian.AppendUint16(raw, uint16(len(raw)-2))
				}
				raw = append(raw, x)
			}
		}
		put(body)
		var c [4]byte
		if crc {
			// Markers inside the CRC field cannot happen: FPDUs and
			// markers are four-aligned.
			binary.LittleEndian.PutUint32(c[:], crc32.Checksum(raw, iwCastagnoli))
		}
		put(c[:])
		out = append(out, raw...)
	}
	return out
}

// TestIWARPMarkersAndCRC: a connection that negotiates markers and CRC32c
// both ways (Request M=1 C=1, Reply M=1 C=1: RFC 5044 section 7.1). The
// engine must remove the markers, verify every CRC and decode what the
// FPDUs carry.
func TestIWARPMarkersAndCRC(t *testing.T) {
	c := newIWConn(t, 40000, 20049)
	pd := []byte{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3} // RFC 8797: v1, R=1, 4096/4096
	req := mpaFrame(true, true, true, false, 1, pd)
	rep := mpaFrame(false, true, true, false, 1, []byte{0xf6, 0xab, 0x0e, 0x18, 1, 0, 7, 7})
	c.send(0, req)
	c.send(1, rep)
	sendData := make([]byte, 3000)
	for i := range sendData {
		sendData[i] = byte(i * 7)
	}
	readData := make([]byte, 2000)
	for i := range readData {
		readData[i] = byte(i * 13)
	}
	client := fpdus(true, true, c.seq[0], c.seq[0],
		untaggedULPDU(iwarp.OpSend, false, 0, 0, 1, 0, sendData[:1500]),
		untaggedULPDU(iwarp.OpSend, true, 0, 0, 1, 1500, sendData[1500:]),
		untaggedULPDU(iwarp.OpSendWithInvalidate, true, 0x00c0ffee, 0, 2, 0, []byte("invalidate me")),
		readRequestULPDU(1, 0x11223344, 0x1000, 2000, 0xaabbcc00, 0x7f0000001000),
	)
	server := fpdus(true, true, c.seq[1], c.seq[1],
		taggedULPDU(iwarp.OpRDMAReadResponse, false, 0x11223344, 0x1000, readData[:1200]),
		taggedULPDU(iwarp.OpRDMAReadResponse, true, 0x11223344, 0x1000+1200, readData[1200:]),
		taggedULPDU(iwarp.OpRDMAWrite, true, 0x55667788, 0x2000, readData[:777]),
	)
	c.sendSplit(0, client, 700)
	c.sendSplit(1, server, 900)

	var msgs []Message
	var msgData [][]byte
	var ops []RDMAOp
	var opData [][]byte
	obs := &iwObserver{
		onMsg: func(m *Message) { msgs = append(msgs, *m); msgData = append(msgData, append([]byte(nil), m.Data...)) },
		onOp:  func(op *RDMAOp) { ops = append(ops, *op); opData = append(opData, append([]byte(nil), op.Data...)) },
	}
	var fps []IWARPFPDU
	var first IWARPFPDU
	e := iwRun(c.out, Options{Observer: obs}, func(p *Packet) {
		for i, f := range p.IWARP.FPDUs {
			if len(fps) == 0 && i == 0 {
				first = f
				first.Markers = append([]iwarp.Marker(nil), f.Markers...)
			}
			fps = append(fps, f)
		}
	})
	conn := e.Conns.Connections()[0]
	in := conn.IWARP
	want := iwarp.Framing{Markers: true, CRC: true}
	if !in.Negotiated || in.Framing[0] != want || in.Framing[1] != want || conn.State != StateEstablished {
		t.Fatalf("negotiated %v framing %+v state %v", in.Negotiated, in.Framing, conn.State)
	}
	if len(fps) != 7 {
		t.Fatalf("%d FPDUs, want 7", len(fps))
	}
	markers := 0
	for i, f := range fps {
		if !f.CRCChecked || f.CRCBad() || f.Err != nil {
			t.Errorf("FPDU %d: CRC checked %v bad %v err %v", i, f.CRCChecked, f.CRCBad(), f.Err)
		}
		for _, m := range f.Markers {
			if int(m.FPDUPTR) != m.Offset {
				t.Errorf("FPDU %d: marker at %d points back %d", i, m.Offset, m.FPDUPTR)
			}
		}
		markers += len(f.Markers)
	}
	// A marker every 512 octets of each direction's FPDU stream, the first
	// at its first octet.
	if w := (len(client)+511)/512 + (len(server)+511)/512; markers != w {
		t.Errorf("%d markers, want %d", markers, w)
	}
	// The first FPDU starts with a marker (FPDUPTR 0) and has the next
	// 512 octets on; its CRC is hash/crc32's Castagnoli CRC of the raw
	// octets before it, read from the wire's least significant octet first.
	if len(first.Markers) != 3 || first.Markers[0] != (iwarp.Marker{Offset: 0, FPDUPTR: 0}) ||
		first.Markers[1] != (iwarp.Marker{Offset: 512, FPDUPTR: 512}) || first.Markers[2] != (iwarp.Marker{Offset: 1024, FPDUPTR: 1024}) {
		t.Errorf("first FPDU markers %+v", first.Markers)
	}
	raw := client[:first.Len]
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], crc32.Checksum(raw[:len(raw)-4], iwCastagnoli))
	if first.CRC != binary.BigEndian.Uint32(le[:]) || first.CRCComputed != first.CRC {
		t.Errorf("first FPDU CRC 0x%08x computed 0x%08x, want 0x%08x", first.CRC, first.CRCComputed, binary.BigEndian.Uint32(le[:]))
	}
	if len(msgs) != 2 || string(msgData[0]) != string(sendData) || msgs[0].Invalidate ||
		string(msgData[1]) != "invalidate me" || !msgs[1].Invalidate || msgs[1].InvalidatedSTag != 0x00c0ffee {
		t.Errorf("messages: %d, %+v", len(msgs), msgs)
	}
	if len(ops) != 2 {
		t.Fatalf("%d operations, want 2", len(ops))
	}
	rd, wr := ops[0], ops[1]
	if rd.Kind != RDMARead || rd.Dir != DirClientToServer || rd.STag != 0xaabbcc00 || rd.Offset != 0x7f0000001000 ||
		rd.Length != 2000 || !rd.Complete || string(opData[0]) != string(readData) {
		t.Errorf("read: %+v", rd)
	}
	if wr.Kind != RDMAWrite || wr.Dir != DirServerToClient || wr.STag != 0x55667788 || wr.Offset != 0x2000 ||
		wr.Length != 777 || !wr.Complete || string(opData[1]) != string(readData[:777]) {
		t.Errorf("write: %+v", wr)
	}
	for d := range in.Dir {
		x := &in.Dir[d]
		if x.CRCErrors+x.LostSync+x.GapOctets+x.Discarded+x.Malformed != 0 {
			t.Errorf("dir %d: %+v", d, *x)
		}
	}
}

// TestIWARPBadCRC: one octet of one FPDU changed on the way. The CRC does
// not match (counted, shown), framing goes on.
func TestIWARPBadCRC(t *testing.T) {
	c := newIWConn(t, 40001, 5000)
	c.send(0, mpaFrame(true, false, true, false, 1, nil))
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	s := fpdus(false, true, c.seq[0], c.seq[0],
		untaggedULPDU(iwarp.OpSend, true, 0, 0, 1, 0, []byte("first")),
		untaggedULPDU(iwarp.OpSend, true, 0, 0, 2, 0, []byte("second")),
		untaggedULPDU(iwarp.OpSend, true, 0, 0, 3, 0, []byte("third")))
	s[2+18+2] ^= 0x20 // "fiRst"
	c.send(0, s)
	var info string
	var bad []bool
	e := iwRun(c.out, Options{}, func(p *Packet) {
		for _, f := range p.IWARP.FPDUs {
			bad = append(bad, f.CRCBad())
			info = summary(p)
		}
	})
	in := e.Conns.Connections()[0].IWARP
	if in.Framing[0].CRC != true || in.Dir[0].CRCErrors != 1 || in.Dir[0].FPDUs != 3 || len(bad) != 3 || !bad[0] || bad[1] || bad[2] {
		t.Errorf("CRC errors %d FPDUs %d per FPDU %v", in.Dir[0].CRCErrors, in.Dir[0].FPDUs, bad)
	}
	if !strings.Contains(info, "[CRC bad") || strings.Count(info, "Send") != 3 {
		t.Errorf("info %q", info)
	}
	if _, ok := Present.Values("iwarp_mpa.crc_check", new(Packet), nil); !ok {
		t.Fatal("no iwarp_mpa.crc_check")
	}
}

// TestIWARPRejected: a Reply with the R flag (RFC 5044 section 7.1).
func TestIWARPRejected(t *testing.T) {
	c := newIWConn(t, 40002, 20049)
	c.send(0, mpaFrame(true, false, false, false, 1, []byte("please")))
	c.send(1, mpaFrame(false, false, false, true, 1, []byte("no")))
	var info string
	e := iwRun(c.out, Options{}, func(p *Packet) {
		if p.IWARP.HasReqRep && p.IWARP.ReqRep.IsReply() {
			info = summary(p)
		}
	})
	conn := e.Conns.Connections()[0]
	if conn.State != StateRejected || conn.RejectReason == "" || !conn.IWARP.MPA[1].Rejected || info != "MPA Reply Rev=1 R PD=2 [rejected]" {
		t.Errorf("state %v reason %q info %q", conn.State, conn.RejectReason, info)
	}
}

// TestIWARPFPDUsBeforeReply: the client's first FPDUs reach the capture
// before the Reply (reordered). They are held until the Reply fixes the
// framing, then decoded and handed up; no packet of the client shows them
// (they were printed already), the Reply's packet neither (not its
// direction).
func TestIWARPFPDUsBeforeReply(t *testing.T) {
	c := newIWConn(t, 40003, 20049)
	c.send(0, mpaFrame(true, false, false, false, 1, nil))
	s := fpdus(false, false, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, true, 0, 0, 1, 0, []byte("early")))
	c.send(0, s)
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	c.send(0, fpdus(false, false, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, true, 0, 0, 2, 0, []byte("later"))))
	var got []string
	shown := 0
	e := iwRun(c.out, Options{Observer: &iwObserver{onMsg: func(m *Message) { got = append(got, string(m.Data)) }}}, func(p *Packet) {
		shown += len(p.IWARP.FPDUs)
	})
	in := e.Conns.Connections()[0].IWARP
	if len(got) != 2 || got[0] != "early" || got[1] != "later" || in.Dir[0].FPDUs != 2 || shown != 1 {
		t.Errorf("messages %q, FPDUs %d, shown %d", got, in.Dir[0].FPDUs, shown)
	}
}

// TestIWARPTerminate: a Terminate (RFC 5040 section 4.8) for a DDP
// untagged buffer error, invalid MSN (layer 1, type 2, code 2), with the
// offending DDP header (D) — decoded, counted and shown.
func TestIWARPTerminate(t *testing.T) {
	c := newIWConn(t, 40004, 20049)
	c.send(0, mpaFrame(true, false, false, false, 1, nil))
	c.send(1, mpaFrame(false, false, false, false, 1, nil))
	term := []byte{0x12, 0x02, 0x40, 0x00, 0x00, 0x22} // Layer 1 EType 2, code 2, D; DDP Segment Length 34
	term = append(term, untaggedULPDU(iwarp.OpSend, true, 0, 0, 9, 0, nil)...)
	c.send(1, fpdus(false, false, c.seq[1], c.seq[1], untaggedULPDU(iwarp.OpTerminate, true, 0, iwarp.QNTerminate, 1, 0, term)))
	var p1 Packet
	e := iwRun(c.out, Options{}, func(p *Packet) {
		if len(p.IWARP.FPDUs) > 0 {
			p1.IWARP = p.IWARP
			p1.IWARP.FPDUs = append([]IWARPFPDU(nil), p.IWARP.FPDUs...)
			p1.Number = p.Number
		}
	})
	if n := e.Conns.Connections()[0].IWARP.Dir[1].Terminates; n != 1 {
		t.Fatalf("%d Terminates", n)
	}
	want := map[string]string{
		"iwarp_rdma.opcode":                    "0x07",
		"iwarp_rdma.term_layer":                "0x01",
		"iwarp_rdma.term_etype_ddp":            "0x02",
		"iwarp_rdma.term_errcode_ddp_untagged": "0x02",
		"iwarp_rdma.term_hdrct_m":              "0",
		"iwarp_rdma.hdrct_d":                   "1",
		"iwarp_rdma.hdrct_r":                   "0",
		"iwarp_rdma.term_ddp_seg_len":          "0022",
		"iwarp_rdma.term_ddp_h":                "4143" + "00000000" + "00000000" + "00000009" + "00000000",
		"iwarp_rdma.term_etype_rdma":           "",
		"iwarp_rdma.term_errcode_ddp_tagged":   "",
		"iwarp_rdma.term_rdma_h":               "",
		"iwarp_ddp.qn":                         "2",
	}
	for name, w := range want {
		v, ok := Present.Values(name, &p1, nil)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		if g := strings.Join(v, ","); g != w {
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	}
	if info := summary(&p1); !strings.Contains(info, "Terminate") {
		t.Errorf("info %q", info)
	}
}
