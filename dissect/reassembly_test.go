package dissect

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// rig feeds hand-built IB transport packets of one connection straight into
// the reassembly, and keeps copies of what comes out.
type rig struct {
	e    *Engine
	c    *Connection
	n    int
	msgs []Message
	ops  []RDMAOp
}

func newRig(opts Options) *rig {
	r := &rig{c: &Connection{ID: 1, Transport: TransportRoCE}}
	opts.Observer = r
	r.e = newEngine(opts)
	r.e.Conns.conns = append(r.e.Conns.conns, r.c)
	return r
}

func (r *rig) Message(m *Message) {
	c := *m
	c.Packets, c.Data = slices.Clone(m.Packets), slices.Clone(m.Data)
	r.msgs = append(r.msgs, c)
}

func (r *rig) RDMAOp(op *RDMAOp) {
	c := *op
	c.Packets, c.Data = slices.Clone(op.Packets), slices.Clone(op.Data)
	r.ops = append(r.ops, c)
}

// pkt processes one packet: opcode, PSN, payload; mod adjusts the BTH.
func (r *rig) pkt(d Direction, op roce.OpCode, psn uint32, payload []byte, mod ...func(*roce.BTH)) *Packet {
	r.n++
	p := &Packet{Number: r.n, Timestamp: time.Unix(0, int64(r.n)*1000), Conn: r.c, Dir: d,
		Decoded: []gopacket.LayerType{roce.LayerTypeBTH}}
	p.BTH = roce.BTH{OpCode: op, PSN: psn & psnMask, Ext: op.ExtHeaders(), PayloadLen: len(payload)}
	p.BTH.Payload = payload
	for _, m := range mod {
		m(&p.BTH)
	}
	r.e.reassembleRoCE(p)
	return p
}

func aeth(syndrome uint8) func(*roce.BTH) {
	return func(h *roce.BTH) { h.AETH = roce.AETH{Syndrome: roce.Syndrome(syndrome)} }
}

func reth(va uint64, rkey, n uint32) func(*roce.BTH) {
	return func(h *roce.BTH) { h.RETH = roce.RETH{VA: va, RKey: rkey, DMALen: n} }
}

func fill(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

const c2s, s2c = DirClientToServer, DirServerToClient

func TestSendFirstMiddleLast(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 100, fill(256, 'a'))
	r.pkt(c2s, roce.OpRCSendMiddle, 101, fill(256, 'b'))
	r.pkt(c2s, roce.OpRCSendLastWithInvalidate, 102, fill(10, 'c'), func(h *roce.BTH) { h.IETH.RKey = 0x1234 })
	if len(r.msgs) != 1 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	m := r.msgs[0]
	want := append(append(fill(256, 'a'), fill(256, 'b')...), fill(10, 'c')...)
	if !bytes.Equal(m.Data, want) || m.Length != 522 || m.Truncated || !slices.Equal(m.Packets, []int{1, 2, 3}) {
		t.Errorf("message %d bytes, length %d, truncated %v, packets %v", len(m.Data), m.Length, m.Truncated, m.Packets)
	}
	if !m.Invalidate || m.InvalidatedSTag != 0x1234 || m.Dir != c2s {
		t.Errorf("invalidate %v 0x%x dir %v", m.Invalidate, m.InvalidatedSTag, m.Dir)
	}
}

func TestSendDuplicatesNotAppended(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 7, fill(64, 'a'))
	r.pkt(c2s, roce.OpRCSendFirst, 7, fill(64, 'x')) // retransmitted FIRST: PSN consumed
	r.pkt(c2s, roce.OpRCSendMiddle, 8, fill(64, 'b'))
	r.pkt(c2s, roce.OpRCSendMiddle, 8, fill(64, 'y'))
	r.pkt(c2s, roce.OpRCSendLast, 9, fill(5, 'c'))
	r.pkt(c2s, roce.OpRCSendOnly, 9, fill(5, 'z')) // a whole retransmitted message
	r.pkt(c2s, roce.OpRCSendOnly, 10, fill(3, 'd'))
	if len(r.msgs) != 2 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	if got := string(r.msgs[0].Data); got != string(fill(64, 'a'))+string(fill(64, 'b'))+"ccccc" {
		t.Errorf("first message %q", got)
	}
	if string(r.msgs[1].Data) != "ddd" || r.msgs[1].Packets[0] != 7 {
		t.Errorf("second message %q in %v", r.msgs[1].Data, r.msgs[1].Packets)
	}
	if st := r.e.Reassembly; st.Duplicates != 3 || st.Gaps != 0 || st.Messages != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendPSNWrap(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 0xfffffe, fill(128, 'a'))
	r.pkt(c2s, roce.OpRCSendMiddle, 0xffffff, fill(128, 'b'))
	r.pkt(c2s, roce.OpRCSendLast, 0, fill(1, 'c'))
	r.pkt(c2s, roce.OpRCSendOnly, 0xffffff, fill(1, 'x')) // behind across the wrap: duplicate
	r.pkt(c2s, roce.OpRCSendOnly, 1, fill(1, 'd'))
	if len(r.msgs) != 2 || len(r.msgs[0].Data) != 257 || string(r.msgs[1].Data) != "d" {
		t.Fatalf("messages %d, first %d bytes", len(r.msgs), len(r.msgs[0].Data))
	}
	if st := r.e.Reassembly; st.Duplicates != 1 || st.Gaps != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendGapHandedUpTruncated(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 50, fill(100, 'a'))
	// PSN 51 lost by the capture.
	r.pkt(c2s, roce.OpRCSendLast, 52, fill(20, 'c'))
	if len(r.msgs) != 0 {
		t.Fatalf("a message with a hole was handed up at once")
	}
	r.pkt(c2s, roce.OpRCSendOnly, 53, fill(4, 'd'))
	if len(r.msgs) != 0 {
		// PSN 51 may still be resent (go-back-N): the message waits, and
		// the one after it too, in PSN order.
		t.Fatalf("%d messages handed up before the hole was settled", len(r.msgs))
	}
	// The responder acknowledges PSN 52 without a NAK: it got 51, the
	// capture lost it; nothing will be resent.
	r.pkt(s2c, roce.OpRCAcknowledge, 52, nil, aeth(0x1f))
	if len(r.msgs) != 2 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	m := r.msgs[0]
	if !m.Truncated || !bytes.Equal(m.Data, fill(100, 'a')) || m.Length != 220 || !slices.Equal(m.Packets, []int{1, 2}) {
		t.Errorf("truncated %v, %d bytes, length %d, packets %v", m.Truncated, len(m.Data), m.Length, m.Packets)
	}
	if st := r.e.Reassembly; st.Gaps != 1 || st.MissingPSNs != 1 || st.Truncated != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendGapFilledByRetransmission(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 50, fill(100, 'a'))
	r.pkt(c2s, roce.OpRCSendLast, 52, fill(20, 'c'))
	r.pkt(c2s, roce.OpRCSendMiddle, 51, fill(100, 'b')) // go-back-N brings it
	r.pkt(c2s, roce.OpRCSendLast, 52, fill(20, 'x'))    // and repeats the rest
	if len(r.msgs) != 1 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	m := r.msgs[0]
	want := append(append(fill(100, 'a'), fill(100, 'b')...), fill(20, 'c')...)
	if m.Truncated || !bytes.Equal(m.Data, want) || !slices.Equal(m.Packets, []int{1, 2, 3}) {
		t.Errorf("truncated %v, %q, packets %v", m.Truncated, m.Data, m.Packets)
	}
	if st := r.e.Reassembly; st.Gaps != 1 || st.Duplicates != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendOrphansAndFinish(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendMiddle, 5, fill(64, 'a')) // the capture began mid-message
	r.pkt(c2s, roce.OpRCSendLast, 6, fill(4, 'b'))
	r.pkt(c2s, roce.OpRCSendFirst, 7, fill(64, 'c'))
	r.e.Finish() // the capture ends before SEND_LAST
	if st := r.e.Reassembly; st.Orphans != 2 || st.Messages != 1 || st.Truncated != 1 {
		t.Errorf("stats %+v", st)
	}
	if len(r.msgs) != 1 || !r.msgs[0].Truncated || !bytes.Equal(r.msgs[0].Data, fill(64, 'c')) || r.msgs[0].Length <= 64 {
		t.Errorf("messages %+v", r.msgs)
	}
}

func TestSendMaxMessageBytes(t *testing.T) {
	r := newRig(Options{MaxMessageBytes: 300})
	r.pkt(c2s, roce.OpRCSendFirst, 1, fill(256, 'a'))
	r.pkt(c2s, roce.OpRCSendMiddle, 2, fill(256, 'b'))
	r.pkt(c2s, roce.OpRCSendLast, 3, fill(256, 'c'))
	r.pkt(c2s, roce.OpRCSendOnly, 4, fill(400, 'd'))
	if len(r.msgs) != 2 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	for i, m := range r.msgs {
		if len(m.Data) != 300 || !m.Truncated {
			t.Errorf("message %d: %d bytes, truncated %v", i, len(m.Data), m.Truncated)
		}
	}
	if r.msgs[0].Length != 768 || r.msgs[1].Length != 400 {
		t.Errorf("lengths %d %d", r.msgs[0].Length, r.msgs[1].Length)
	}
	if st := r.e.Reassembly; st.TooLong != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestSendSnapLength(t *testing.T) {
	r := newRig(Options{})
	r.pkt(c2s, roce.OpRCSendFirst, 1, fill(256, 'a'))
	r.pkt(c2s, roce.OpRCSendLast, 2, fill(40, 'b'), func(h *roce.BTH) { h.Truncated, h.PayloadLen = true, 200 })
	if len(r.msgs) != 1 {
		t.Fatalf("%d messages", len(r.msgs))
	}
	m := r.msgs[0]
	if !m.Truncated || len(m.Data) != 296 || m.Length != 456 {
		t.Errorf("truncated %v, %d bytes, length %d", m.Truncated, len(m.Data), m.Length)
	}
}

func TestRDMAWrite(t *testing.T) {
	r := newRig(Options{})
	r.pkt(s2c, roce.OpRCRDMAWriteFirst, 10, fill(256, 'a'), reth(0x1000, 0xabc, 600))
	r.pkt(s2c, roce.OpRCRDMAWriteMiddle, 11, fill(256, 'b'))
	r.pkt(s2c, roce.OpRCRDMAWriteLast, 12, fill(88, 'c'))
	r.pkt(s2c, roce.OpRCRDMAWriteOnlyWithImmediate, 13, fill(8, 'd'), reth(0x2000, 0xdef, 8))
	if len(r.ops) != 2 {
		t.Fatalf("%d operations", len(r.ops))
	}
	w := r.ops[0]
	if w.Kind != RDMAWrite || w.STag != 0xabc || w.Offset != 0x1000 || w.Length != 600 || !w.Complete ||
		len(w.Data) != 600 || w.Data[300] != 'b' || !slices.Equal(w.Packets, []int{1, 2, 3}) || w.Dir != s2c {
		t.Errorf("write %+v", w)
	}
	if w2 := r.ops[1]; !w2.Complete || w2.STag != 0xdef || len(w2.Data) != 8 {
		t.Errorf("write only %+v", w2)
	}
}

func TestRDMAReads(t *testing.T) {
	r := newRig(Options{})
	// The server reads 2500 bytes and then 100 bytes of the client's
	// memory; PMTU 1024 (learned from the first response), so the first
	// request takes PSNs 200..202 and the second 203.
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 200, nil, reth(0x10000, 0x77, 2500))
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 203, nil, reth(0x20000, 0x78, 100))
	r.pkt(c2s, roce.OpRCRDMAReadResponseFirst, 200, fill(1024, 'a'))
	r.pkt(c2s, roce.OpRCRDMAReadResponseMiddle, 201, fill(1024, 'b'))
	r.pkt(c2s, roce.OpRCRDMAReadResponseMiddle, 201, fill(1024, 'x')) // repeated
	r.pkt(c2s, roce.OpRCRDMAReadResponseLast, 202, fill(452, 'c'))
	r.pkt(c2s, roce.OpRCRDMAReadResponseOnly, 203, fill(100, 'd'))
	if len(r.ops) != 2 {
		t.Fatalf("%d operations", len(r.ops))
	}
	a, b := r.ops[0], r.ops[1]
	if a.Kind != RDMARead || a.STag != 0x77 || !a.Complete || len(a.Data) != 2500 || a.Data[1024] != 'b' || a.Data[2499] != 'c' ||
		!slices.Equal(a.Packets, []int{1, 3, 4, 6}) || a.Dir != s2c {
		t.Errorf("first read %+v", a)
	}
	if !b.Complete || string(b.Data) != string(fill(100, 'd')) || !slices.Equal(b.Packets, []int{2, 7}) {
		t.Errorf("second read %+v", b)
	}
	// A request the capture missed leaves a PSN gap the next one reveals.
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 210, nil, reth(0x30000, 0x79, 1024))
	if st := r.e.Reassembly; st.Duplicates != 1 || st.Gaps != 1 || st.MissingPSNs != 6 || st.Reads != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestRDMAReadsGivenUp(t *testing.T) {
	r := newRig(Options{MaxOutstandingReads: 2})
	r.pkt(c2s, roce.OpRCSendFirst, 1, fill(512, 'p')) // teaches the PMTU
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 100, nil, reth(0x1000, 1, 512))
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 101, nil, reth(0x2000, 2, 512))
	r.pkt(s2c, roce.OpRCRDMAReadRequest, 102, nil, reth(0x3000, 3, 512)) // evicts the first
	// A response to a later Read does not give the second up: under
	// go-back-N the requester re-issues it (9.7.5.1.1).
	r.pkt(c2s, roce.OpRCRDMAReadResponseOnly, 102, fill(512, 'c'))
	r.pkt(c2s, roce.OpRCRDMAReadResponseOnly, 100, fill(512, 'a')) // no request any more
	if len(r.ops) != 2 {
		t.Fatalf("%d operations", len(r.ops))
	}
	r.e.Finish() // the end of the capture does
	if len(r.ops) != 3 {
		t.Fatalf("%d operations", len(r.ops))
	}
	if r.ops[0].STag != 1 || r.ops[0].Complete || r.ops[1].STag != 3 || !r.ops[1].Complete || r.ops[2].STag != 2 || r.ops[2].Complete {
		t.Errorf("operations %+v", r.ops)
	}
	if st := r.e.Reassembly; st.ReadsEvicted != 1 || st.OpsIncomplete != 2 || st.UnmatchedResponses != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestReassemblyRealCapturesClean: on the real RoCE captures every Send and
// RDMA operation is whole — no gap, orphan, truncation or cut.
func TestReassemblyRealCapturesClean(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "rxe-nfs41.pcap", "rxe-nfs42-small.pcap", "rxe-ib_send_bw.pcap",
		"rxe-ib_write_bw.pcap", "rxe-rping.pcap", "public/montybeatnik-rdma-roce-lab-test.pcap"} {
		obs := &countObserver{}
		e, _ := runCapture(t, name, Options{Observer: obs}, nil)
		st := e.Reassembly
		if st.Truncated+st.Orphans+st.Gaps+st.OpsIncomplete+st.UnmatchedResponses+st.ReadsEvicted+st.TooLong+st.OpDataCut != 0 {
			t.Errorf("%s: %+v", name, st)
		}
		if uint64(obs.msgs) != st.Messages || uint64(obs.ops) != st.Reads+st.Writes || obs.msgs+obs.ops == 0 {
			t.Errorf("%s: observer saw %d messages and %d operations, stats %+v", name, obs.msgs, obs.ops, st)
		}
		t.Logf("%s: %d Sends, %d Writes, %d Reads, %d duplicates", name, st.Messages, st.Writes, st.Reads, st.Duplicates)
	}
}
