package rpcordma

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// RPC-over-RDMA on hand-built messages: the forms the real captures lack
// (Long Calls, RDMA_ERROR, the backchannel, version 2) and the limits.

// txnRig is a rig on an nfsrdma connection that keeps the transactions.
type txnRig struct {
	*rig
	txns []*Transaction
	psn  [2]uint32
}

func newTxnRig(t *testing.T, opts Options) *txnRig {
	r := &txnRig{}
	if opts.ULP == nil {
		opts.ULP = nfs.NewBinding() // the command wires the NFS binding too
	}
	opts.Transaction = func(tx *Transaction) { r.txns = append(r.txns, tx.Clone()) }
	r.rig = newRig(opts)
	r.c.ServicePort = NFSRDMAPort
	return r
}

// send sends a whole message in one SEND_ONLY (with invalidate when inv != 0).
func (r *txnRig) send(d dissect.Direction, msg []byte, inv uint32) *dissect.Packet {
	op := roce.OpRCSendOnly
	if inv != 0 {
		op = roce.OpRCSendOnlyWithInvalidate
	}
	p := r.pkt(d, op, r.next(d, 1), msg, func(h *roce.BTH) { h.IETH.RKey = inv })
	return p
}

func (r *txnRig) next(d dissect.Direction, n uint32) uint32 {
	i := d.Index()
	psn := r.psn[i]
	r.psn[i] += n
	return psn
}

// write has the responder (direction d) RDMA Write data to (stag, va).
func (r *txnRig) write(d dissect.Direction, stag uint32, va uint64, data []byte) *dissect.Packet {
	return r.pkt(d, roce.OpRCRDMAWriteOnly, r.next(d, 1), data, reth(va, stag, uint32(len(data))))
}

// read has the responder (direction d) RDMA Read data (at most 256 bytes)
// from (stag, va); the requester answers.
func (r *txnRig) read(d dissect.Direction, stag uint32, va uint64, data []byte) *dissect.Packet {
	psn := r.next(d, 1)
	r.pkt(d, roce.OpRCRDMAReadRequest, psn, nil, reth(va, stag, uint32(len(data))))
	return r.pkt(opposite(d), roce.OpRCRDMAReadResponseOnly, psn, data)
}

func rpcCall(t *testing.T, xid uint32, prog oncrpc.Program, vers, proc uint32, args []byte) []byte {
	t.Helper()
	h := oncrpc.Header{XID: xid, MsgType: oncrpc.Call, RPCVers: 2, Prog: prog, Vers: vers, Proc: proc}
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, args...)
}

func rpcReply(t *testing.T, xid uint32, results []byte) []byte {
	t.Helper()
	h := oncrpc.Header{XID: xid, MsgType: oncrpc.Reply, ReplyStat: oncrpc.MsgAccepted, AcceptStat: oncrpc.Success}
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, results...)
}

func v1msg(t *testing.T, h rpcrdma.Header, rpc []byte) []byte {
	t.Helper()
	h.Vers = rpcrdma.Version1
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, rpc...)
}

func v2msg(t *testing.T, h rpcrdma.Header2, rpc []byte) []byte {
	t.Helper()
	h.Vers = rpcrdma.Version2
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, rpc...)
}

func seg(handle, length uint32, offset uint64) rpcrdma.Segment {
	return rpcrdma.Segment{Handle: handle, Length: length, Offset: offset}
}

func TestRPCLongCallAndError(t *testing.T) {
	r := newTxnRig(t, Options{})
	// A Long Call (RFC 8166 section 3.5.3): RDMA_NOMSG, the whole Call in
	// a position-zero Read chunk of two segments.
	call := rpcCall(t, 0x1111, oncrpc.ProgNFS, 3, 7, fill(40, 'w'))
	h := rpcrdma.Header{XID: 0x1111, Credit: 32, Proc: rpcrdma.RDMANoMsg}
	h.ReadList = []rpcrdma.ReadSegment{{Position: 0, Segment: seg(0x21, 50, 0x9000)}, {Position: 0, Segment: seg(0x22, uint32(len(call)-50), 0xa000)}}
	p := r.send(c2s, v1msg(t, h, nil), 0)
	if len(Records(p)) != 1 || !Records(p)[0].HasHeader || Records(p)[0].HasRPC {
		t.Fatalf("Long Call Send: records %+v", Records(p))
	}
	r.read(s2c, 0x21, 0x9000, call[:50])
	p = r.read(s2c, 0x22, 0xa000, call[50:])
	if len(Records(p)) != 1 {
		t.Fatalf("the last Read Response completes the Call: %d records", len(Records(p)))
	}
	rec := &Records(p)[0]
	if !rec.HasRPC || !rec.Rebuilt || rec.Source != ChunkRead || rec.RPCErr != nil || rec.RPC.Proc != 7 || !bytes.Equal(rec.Message, call) {
		t.Errorf("rebuilt Call: %+v", rec)
	}
	if !strings.Contains(summary(p), "NFS V3 Call WRITE (rebuilt from the read chunk") {
		t.Errorf("summary %q", summary(p))
	}
	// The server cannot process it: RDMA_ERROR ERR_CHUNK (section 4.5).
	p = r.send(s2c, v1msg(t, rpcrdma.Header{XID: 0x1111, Credit: 16, Proc: rpcrdma.RDMAError, Err: rpcrdma.ErrChunk}, nil), 0)
	if len(r.txns) != 1 {
		t.Fatalf("%d transactions", len(r.txns))
	}
	tx := r.txns[0]
	if tx.Outcome != TxnReplied || tx.Reply.ProcName() != "RDMA_ERROR" || !tx.Call.Rebuilt || tx.ReadBytes != uint64(len(call)) ||
		tx.Procedure != 7 || tx.Call.Credits != 32 || tx.Reply.Credits != 16 || tx.Direction != RPCForward {
		t.Errorf("transaction %+v call %+v reply %+v", tx, tx.Call, tx.Reply)
	}
	rs := Stats(r.c)
	if rs.Errors[1] != 1 || rs.Long[0] != 1 || rs.ReadBytes[0] != uint64(len(call)) || rs.Calls[0] != 1 || rs.Rebuilt != 1 {
		t.Errorf("stats %+v", rs)
	}
	if !strings.Contains(summary(p), "RDMA_ERROR") || !strings.Contains(summary(p), "ERR_CHUNK") {
		t.Errorf("summary %q", summary(p))
	}
}

func TestRPCBackchannelAndInvalidate(t *testing.T) {
	r := newTxnRig(t, Options{})
	// Forward: a Call with a Reply chunk, answered by a Long Reply sent
	// With Invalidate of the chunk's handle.
	reply := rpcReply(t, 0x2222, fill(300, 'r'))
	h := rpcrdma.Header{XID: 0x2222, Credit: 8, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true,
		ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x31, 4096, 0x5000)}}}}
	r.send(c2s, v1msg(t, h, rpcCall(t, 0x2222, oncrpc.ProgNFS, 4, 1, nil)), 0)
	r.write(s2c, 0x31, 0x5000, reply[:200])
	r.write(s2c, 0x31, 0x5000+200, reply[200:])
	h = rpcrdma.Header{XID: 0x2222, Credit: 8, Proc: rpcrdma.RDMANoMsg, ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true,
		ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x31, uint32(len(reply)), 0x5000)}}}}
	p := r.send(s2c, v1msg(t, h, nil), 0x31)
	if rec := &Records(p)[0]; !rec.HasRPC || rec.Source != ChunkReply || !bytes.Equal(rec.Message, reply) || rec.Program != uint32(oncrpc.ProgNFS) {
		t.Errorf("Long Reply record %+v", rec)
	}
	// Backchannel (RFC 8167): the server calls the client's callback
	// program, the client replies.
	r.send(s2c, v1msg(t, rpcrdma.Header{XID: 0x3333, Credit: 1, Proc: rpcrdma.RDMAMsg}, rpcCall(t, 0x3333, oncrpc.ProgNFSCallback, 1, 1, nil)), 0)
	p = r.send(c2s, v1msg(t, rpcrdma.Header{XID: 0x3333, Credit: 1, Proc: rpcrdma.RDMAMsg}, rpcReply(t, 0x3333, nil)), 0)
	if rec := &Records(p)[0]; !rec.Backchannel || !rec.Reply || rec.Program != uint32(oncrpc.ProgNFSCallback) {
		t.Errorf("backchannel Reply record %+v", rec)
	}
	if len(r.txns) != 2 {
		t.Fatalf("%d transactions", len(r.txns))
	}
	fw, bc := r.txns[0], r.txns[1]
	if fw.Direction != RPCForward || !fw.Reply.Invalidate || fw.Reply.InvalidatedSTag != 0x31 || fw.WriteBytes != uint64(len(reply)) || !fw.Reply.Rebuilt {
		t.Errorf("forward %+v reply %+v", fw, fw.Reply)
	}
	if bc.Direction != RPCBackchannel || bc.Program != uint32(oncrpc.ProgNFSCallback) || bc.Outcome != TxnReplied {
		t.Errorf("backchannel %+v", bc)
	}
	rs := Stats(r.c)
	if rs.Calls != [2]uint64{1, 1} || rs.Replies != [2]uint64{1, 1} || rs.RepliesWithInvalidate != 1 || rs.RepliesWithoutInvalidate != 1 {
		t.Errorf("stats %+v", rs)
	}
}

func TestRPCVersion2(t *testing.T) {
	r := newTxnRig(t, Options{})
	// RDMA2_CONNPROP and RDMA2_GRANT are control messages.
	r.send(c2s, v2msg(t, rpcrdma.Header2{HType: rpcrdma.HTypeConnPropFinal, Props: []rpcrdma.Property{{Which: rpcrdma.PropMaxSendSize, Data: []byte{0, 0, 16, 0}}}}, nil), 0)
	r.send(s2c, v2msg(t, rpcrdma.Header2{HType: rpcrdma.HTypeGrant, Credit: 64}, nil), 0)
	// A Call in two Sends: RDMA2_CALL_MIDDLE then RDMA2_CALL_INLINE.
	call := rpcCall(t, 0x4444, oncrpc.ProgNFS, 4, 1, fill(100, 'c'))
	r.send(c2s, v2msg(t, rpcrdma.Header2{XID: 0x4444, HType: rpcrdma.HTypeCallMiddle, Remaining: uint32(len(call) - 60)}, call[:60]), 0)
	p := r.send(c2s, v2msg(t, rpcrdma.Header2{XID: 0x4444, HType: rpcrdma.HTypeCallInline, InvHandle: 0x51}, call[60:]), 0)
	if rec := &Records(p)[0]; !rec.HasRPC || rec.RPCErr != nil || rec.RPC.Proc != 1 || !bytes.Equal(rec.Message, call) {
		t.Errorf("continued Call record %+v", rec)
	}
	// An external Reply: RDMA2_REPLY_EXTERNAL, the Reply in the Reply chunk
	// the Call provisioned... here a Call with its own Reply chunk first.
	reply := rpcReply(t, 0x5555, fill(64, 'r'))
	r.send(c2s, v2msg(t, rpcrdma.Header2{XID: 0x5555, HType: rpcrdma.HTypeCallInline, ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true,
		ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x61, 1024, 0x7000)}}}}, rpcCall(t, 0x5555, oncrpc.ProgNFS, 4, 1, nil)), 0)
	r.send(s2c, v2msg(t, rpcrdma.Header2{XID: 0x4444, HType: rpcrdma.HTypeReplyInline}, rpcReply(t, 0x4444, nil)), 0)
	r.write(s2c, 0x61, 0x7000, reply)
	p = r.send(s2c, v2msg(t, rpcrdma.Header2{XID: 0x5555, HType: rpcrdma.HTypeReplyExternal, ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true,
		ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x61, uint32(len(reply)), 0x7000)}}}}, nil), 0)
	if rec := &Records(p)[0]; !rec.HasRPC || rec.Source != ChunkReply || !bytes.Equal(rec.Message, reply) {
		t.Errorf("external Reply record %+v", rec)
	}
	// A Call pulled from its Call chunk (RDMA2_CALL_EXTERNAL).
	ext := rpcCall(t, 0x6666, oncrpc.ProgNFS, 4, 1, fill(20, 'e'))
	r.send(c2s, v2msg(t, rpcrdma.Header2{XID: 0x6666, HType: rpcrdma.HTypeCallExternal,
		CallList: []rpcrdma.ReadSegment{{Segment: seg(0x71, uint32(len(ext)), 0x8000)}}}, nil), 0)
	p = r.read(s2c, 0x71, 0x8000, ext)
	if rec := &Records(p)[0]; !rec.Rebuilt || rec.Source != ChunkCall || !bytes.Equal(rec.Message, ext) {
		t.Errorf("external Call record %+v", rec)
	}
	r.send(s2c, v2msg(t, rpcrdma.Header2{XID: 0x6666, HType: rpcrdma.HTypeError, Err: rpcrdma.Err2System}, nil), 0)
	if len(r.txns) != 3 {
		t.Fatalf("%d transactions", len(r.txns))
	}
	for _, tx := range r.txns {
		if tx.Outcome != TxnReplied || tx.Call.Vers != 2 || !tx.HasProgram {
			t.Errorf("xid 0x%x: %+v", tx.XID, tx)
		}
	}
	if got := r.txns[0].Call.ProcName(); got != "RDMA2_CALL_INLINE" || len(r.txns[0].Call.Packets) != 2 {
		t.Errorf("continued Call: %s in %v", got, r.txns[0].Call.Packets)
	}
	rs := Stats(r.c)
	if rs.Version != 2 || rs.Control != [2]uint64{1, 1} || rs.Errors[1] != 1 || rs.Long != [2]uint64{1, 1} || rs.BadHeaders != [2]uint64{} {
		t.Errorf("stats %+v", rs)
	}
}

func TestRPCUnattachedAndLimits(t *testing.T) {
	r := newTxnRig(t, Options{MaxTransactions: 2})
	msg := func(xid uint32, rc bool) []byte {
		h := rpcrdma.Header{XID: xid, Credit: 4, Proc: rpcrdma.RDMAMsg}
		if rc {
			h.HasReplyChunk = true
			h.ReplyChunk.Segments = []rpcrdma.Segment{seg(0x80+xid, 512, uint64(xid)<<12)}
		}
		return v1msg(t, h, rpcCall(t, xid, oncrpc.ProgNFS, 3, 1, nil))
	}
	r.send(c2s, msg(1, true), 0)
	r.send(c2s, msg(2, false), 0)
	r.send(c2s, msg(2, false), 0) // the same XID again: the first is superseded
	r.send(c2s, msg(3, false), 0) // a third outstanding Call: the oldest is evicted
	r.write(s2c, 0x99, 0x1000, fill(8, 'x'))
	r.write(s2c, 0x81, 1<<12, fill(8, 'y')) // to xid 1's Reply chunk, after it was given up
	r.send(s2c, v1msg(t, rpcrdma.Header{XID: 9, Proc: rpcrdma.RDMAMsg}, rpcReply(t, 9, nil)), 0)
	r.e.Finish()
	var outcomes []string
	for _, tx := range r.txns {
		outcomes = append(outcomes, tx.Outcome.String())
	}
	if got := strings.Join(outcomes, " "); got != "superseded evicted reply-without-call no-reply no-reply" {
		t.Errorf("outcomes %s", got)
	}
	u := r.e.RPC.UnattachedOps
	if r.e.RPC.Unattached != 2 || len(u) != 2 || u[0].Reason != "no segment" || u[1].Reason != "after reply" || u[1].STag != 0x81 {
		t.Errorf("unattached %+v", u)
	}
	rs := Stats(r.c)
	if rs.Evicted != 1 || rs.CallsWithoutReply != 4 || rs.RepliesWithoutCall != 1 || rs.Outstanding != 0 || rs.UnattachedOps != 2 {
		t.Errorf("stats %+v", rs)
	}
}

func TestRPCBadHeadersAndOtherTraffic(t *testing.T) {
	r := newTxnRig(t, Options{})
	p := r.send(c2s, []byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}, 0) // RDMA_MSG, Read list cut
	if len(Records(p)) != 1 || Records(p)[0].HeaderErr == nil || !Records(p)[0].PrefixOK {
		t.Fatalf("records %+v", Records(p))
	}
	if !strings.Contains(summary(p), "bad header") || Stats(r.c).BadHeaders[0] != 1 || Stats(r.c).FirstBadHeader == "" {
		t.Errorf("summary %q, stats %+v", summary(p), Stats(r.c))
	}
	// A connection of something else (perftest): no port, no private data.
	o := newRig(Options{})
	for i := 0; i < dissect.MaxProbes+2; i++ {
		p := o.pkt(c2s, roce.OpRCSendOnly, uint32(i), fill(64, byte(i)))
		if len(Records(p)) != 0 {
			t.Fatalf("packet %d: records on a non-RPC connection", i)
		}
	}
	if Stats(o.c) != nil || o.e.Ops.Unclaimed != dissect.MaxProbes+2 || o.c.ULP != "" {
		t.Errorf("stats %+v, ulp %q", o.e.Ops, o.c.ULP)
	}
	// Without the port, a header followed by a matching RPC message makes
	// the connection RPC-over-RDMA.
	q := newRig(Options{})
	p = q.pkt(c2s, roce.OpRCSendOnly, 0, v1msg(t, rpcrdma.Header{XID: 7, Proc: rpcrdma.RDMAMsg}, rpcCall(t, 7, oncrpc.ProgNFS, 3, 0, nil)))
	if len(Records(p)) != 1 || !Records(p)[0].HasRPC {
		t.Errorf("records %+v", Records(p))
	}
}

// TestRPCULPSeam: the ULP decoder names the procedure and its operations
// and says where the Write chunk data goes back.
func TestRPCULPSeam(t *testing.T) {
	var queries []ULPQuery
	ulp := func(q *ULPQuery, out *ULPInfo) {
		queries = append(queries, ULPQuery{Reply: q.Reply, Program: q.Program, Procedure: q.Procedure, Reduced: q.Reduced,
			WriteChunks: append([]uint32(nil), q.WriteChunks...), Body: append([]byte(nil), q.Body...)})
		out.Protocol, out.Procedure = "NFS", "COMPOUND"
		out.Operations = append(out.Operations, "SEQUENCE", "PUTFH", "READ")
		if q.Reply {
			out.WriteChunkOffsets = append(out.WriteChunkOffsets, 8) // after the first two words
		}
	}
	r := newTxnRig(t, Options{ULP: ULPFunc(ulp)})
	h := rpcrdma.Header{XID: 0x77, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{
		WriteList: []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x91, 4096, 0x6000)}}}}}
	r.send(c2s, v1msg(t, h, rpcCall(t, 0x77, oncrpc.ProgNFS, 4, 1, nil)), 0)
	data := fill(6, 'd')
	r.write(s2c, 0x91, 0x6000, data)
	results := []byte{0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 1} // status, length 6, then a later item
	h.WriteList[0].Segments[0].Length = 6
	p := r.send(s2c, v1msg(t, h, rpcReply(t, 0x77, results)), 0)
	rec := &Records(p)[0]
	rebuilt := append(rpcReply(t, 0x77, nil), 0, 0, 0, 0, 0, 0, 0, 6, 'd', 'd', 'd', 'd', 'd', 'd', 0, 0, 0, 0, 0, 1)
	if !rec.Rebuilt || rec.Source != ChunkWrite || !bytes.Equal(rec.Message, rebuilt) {
		t.Errorf("rebuilt Reply %x, want %x", rec.Message, rebuilt)
	}
	if len(queries) != 2 || !queries[1].Reply || !queries[1].Reduced || len(queries[1].WriteChunks) != 1 || queries[1].WriteChunks[0] != 6 ||
		!bytes.Equal(queries[1].Body, results) || queries[0].Procedure != 1 {
		t.Errorf("queries %+v", queries)
	}
	tx := r.txns[0]
	if tx.ProcedureName != "COMPOUND" || strings.Join(tx.Operations, ",") != "SEQUENCE,PUTFH,READ" || !tx.Reply.Rebuilt {
		t.Errorf("transaction %+v", tx)
	}
	if !strings.Contains(summary(p), "NFS V4 Reply COMPOUND SEQUENCE,PUTFH,READ") {
		t.Errorf("summary %q", summary(p))
	}
}

// TestRPCEvictsTheOldestOpenCall: past MaxTransactions the Call open
// longest goes, whatever was answered between (the order queue skips
// answered and reused Transactions), and an open Call counts ExchangeCost
// in the buffer budget while it is open (issue 29).
func TestRPCEvictsTheOldestOpenCall(t *testing.T) {
	r := newTxnRig(t, Options{MaxTransactions: 3})
	call := func(xid uint32) []byte {
		return v1msg(t, rpcrdma.Header{XID: xid, Credit: 4, Proc: rpcrdma.RDMAMsg}, rpcCall(t, xid, oncrpc.ProgNFS, 3, 1, nil))
	}
	reply := func(xid uint32) []byte {
		return v1msg(t, rpcrdma.Header{XID: xid, Credit: 4, Proc: rpcrdma.RDMAMsg}, rpcReply(t, xid, nil))
	}
	for _, x := range []uint32{1, 2, 3} {
		r.send(c2s, call(x), 0)
	}
	if held := r.e.Retained().BufferedBytes; held != 3*dissect.ExchangeCost {
		t.Errorf("3 open Calls hold %d bytes of the budget, want %d", held, 3*dissect.ExchangeCost)
	}
	r.send(s2c, reply(1), 0) // 1 answered: 2 is now the oldest
	r.send(c2s, call(4), 0)  // 2, 3, 4 open
	r.send(c2s, call(5), 0)  // evicts 2 (the Transaction of 1 may be reused for 4 or 5)
	r.send(s2c, reply(4), 0)
	r.send(c2s, call(6), 0) // 3, 5, 6: evicts nothing
	r.send(c2s, call(7), 0) // evicts 3
	var evicted []uint32
	for _, tx := range r.txns {
		if tx.Outcome == TxnEvicted {
			evicted = append(evicted, tx.XID)
		}
	}
	if len(evicted) != 2 || evicted[0] != 2 || evicted[1] != 3 {
		t.Errorf("evicted %v, want [2 3]", evicted)
	}
	r.e.Finish()
	if held := r.e.Retained().BufferedBytes; held != 0 {
		t.Errorf("%d bytes still held after the end", held)
	}
}
