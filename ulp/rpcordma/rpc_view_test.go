package rpcordma

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// viewSeen is what an Observer read of the engine's model at the time of
// the call (the records and transactions are reused afterwards).
type viewSeen struct {
	kind          RPCKind
	hasRec        bool
	txnXID        uint32
	hasTxn        bool
	callSide      bool // the transaction has its Call
	outstanding   int
	callUndecoded bool
	owner         uint32
	hasOwner      bool
}

type viewObserver struct {
	next   dissect.Observer
	msgs   []viewSeen
	ops    []dissect.OpAttachment // Txn replaced by nil once read; XID of it in opXID
	opXID  []uint32
	segLen []uint32
}

func (o *viewObserver) Message(m *dissect.Message) {
	v := viewSeen{}
	if r := Record(m); r != nil {
		v.hasRec, v.kind, v.outstanding, v.callUndecoded = true, r.Kind, r.Outstanding, r.CallUndecoded
		if r.Txn != nil {
			v.hasTxn, v.txnXID, v.callSide = true, r.Txn.XID, r.Txn.Call != nil
		}
		if r.InvalidatedOwner != nil {
			v.hasOwner, v.owner = true, r.InvalidatedOwner.XID
		}
	}
	o.msgs = append(o.msgs, v)
	o.next.Message(m)
}

func (o *viewObserver) RDMAOp(op *dissect.RDMAOp) {
	a := op.Attach
	x, l := uint32(0), uint32(0)
	if t := Txn(&a); t != nil {
		x = t.XID
		if sg := AttachedSegment(&a); sg != nil {
			l = sg.Length
		}
	}
	a.Owner = nil
	o.ops, o.opXID, o.segLen = append(o.ops, a), append(o.opXID, x), append(o.segLen, l)
	o.next.RDMAOp(op)
}

// TestRPCModelView: what the Observer reads of each message and operation
// — the message's kind, its transaction, the Calls outstanding, and each
// RDMA operation's attachment or the reason it has none — is what RFC 8166
// says of the traffic (the checks read nothing else).
func TestRPCModelView(t *testing.T) {
	r := newTxnRig(t, Options{})
	o := &viewObserver{next: r.rig}
	r.e.setObserver(o)
	nfs := oncrpc.ProgNFS
	// 1. A READ Call with a Write chunk (0x31, 4096 bytes at 0x1000).
	h1 := rpcrdma.Header{XID: 0x10, Credit: 8, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{
		WriteList: []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x31, 4096, 0x1000)}}}}}
	r.send(c2s, v1msg(t, h1, rpcCall(t, 0x10, nfs, 3, 6, nil)), 0)
	// 2. A Long Call marked RDMA_NOMSG whose position-zero Read chunk is
	// missing, from the client: a Call all the same (RFC 8167: the
	// client's Replies, on the backchannel, are Short), with a Reply chunk
	// (0x32).
	h2 := rpcrdma.Header{XID: 0x20, Credit: 8, Proc: rpcrdma.RDMANoMsg, ChunkLists: rpcrdma.ChunkLists{
		HasReplyChunk: true, ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x32, 1024, 0x2000)}}}}
	r.send(c2s, v1msg(t, h2, nil), 0)
	// 3. The server writes the READ data: attached to Call 0x10.
	r.write(s2c, 0x31, 0x1000, fill(100, 'r'))
	// 4. It answers 0x10 With Invalidate of 0x32, which is Call 0x20's.
	h1r := h1
	h1r.Credit = 2
	h1r.WriteList = []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x31, 100, 0x1000)}}}
	p4 := r.send(s2c, v1msg(t, h1r, rpcReply(t, 0x10, []byte{0, 0, 0, 0})), 0x32)
	// 5. It writes into 0x10's memory again: after the Reply.
	r.write(s2c, 0x31, 0x1000, fill(8, 'x'))
	// 6. A Call whose header is cut after its prefix (its chunk lists
	// unknown), then a Write no outstanding Call advertised.
	h3 := rpcrdma.Header{XID: 0x30, Credit: 8, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{
		WriteList: []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x33, 4096, 0x3000)}}}}}
	r.send(c2s, v1msg(t, h3, nil)[:24], 0)
	r.write(s2c, 0x77, 0x7000, fill(8, 'y'))
	// 7. Its Reply: the Call is the undecoded one.
	r.send(s2c, v1msg(t, rpcrdma.Header{XID: 0x30, Credit: 2, Proc: rpcrdma.RDMAMsg}, rpcReply(t, 0x30, []byte{0, 0, 0, 0})), 0)
	// 8. Now nothing is undecoded: a stray Write has no segment.
	r.write(s2c, 0x78, 0x8000, fill(8, 'z'))

	want := []viewSeen{
		{kind: RPCKindCall, hasRec: true, hasTxn: true, txnXID: 0x10, callSide: true, outstanding: 1},
		{kind: RPCKindCall, hasRec: true, hasTxn: true, txnXID: 0x20, callSide: true, outstanding: 2},
		{kind: RPCKindReply, hasRec: true, hasTxn: true, txnXID: 0x10, callSide: true, hasOwner: true, owner: 0x20},
		{kind: RPCKindUnknown, hasRec: true},
		{kind: RPCKindReply, hasRec: true, hasTxn: true, txnXID: 0x30, callUndecoded: true},
	}
	if len(o.msgs) != len(want) {
		t.Fatalf("%d messages: %+v", len(o.msgs), o.msgs)
	}
	for i := range want {
		if o.msgs[i] != want[i] {
			t.Errorf("message %d: %+v, want %+v", i+1, o.msgs[i], want[i])
		}
	}
	wantOps := []struct {
		reason dissect.UnattachedReason
		xid    uint32
		seg    uint32
	}{
		{dissect.Attached, 0x10, 4096},
		{dissect.UnattachedAfterResponse, 0, 0}, // no transaction: it is over (a.Key names it, below)
		{dissect.UnattachedRequestUnknown, 0, 0},
		{dissect.UnattachedNoRegion, 0, 0},
	}
	if len(o.ops) != len(wantOps) {
		t.Fatalf("%d operations: %+v", len(o.ops), o.ops)
	}
	for i, w := range wantOps {
		a := o.ops[i]
		if a.Reason != w.reason || o.opXID[i] != w.xid || o.segLen[i] != w.seg {
			t.Errorf("operation %d: %s of XID 0x%x (segment %d bytes), want %s of 0x%x (%d)", i+1, a.Reason, o.opXID[i], o.segLen[i], w.reason, w.xid, w.seg)
		}
	}
	if a := o.ops[1]; a.Key != 0x10 || a.ResponsePacket != p4.Number {
		t.Errorf("after-reply operation names XID 0x%x, Reply packet %d; want 0x10, %d", a.Key, a.ResponsePacket, p4.Number)
	}
	if u := r.e.RPC.UnattachedOps; len(u) != 3 || u[0].Reason != "after reply" || u[1].Reason != "call undecoded" || u[2].Reason != "no segment" || u[0].Dir != s2c {
		t.Errorf("unattached operations recorded: %+v", u)
	}
}

type txnCounter struct {
	dissect.Observer
	n []uint32
}

func (o *txnCounter) Transaction(t *Transaction) { o.n = append(o.n, t.XID) }

// TestTxnObserver: an Observer that is a TxnObserver hears each
// transaction once, as Options.Transaction does.
func TestTxnObserver(t *testing.T) {
	r := newTxnRig(t, Options{})
	o := &txnCounter{Observer: r.rig}
	r.e.setObserver(o)
	for _, xid := range []uint32{1, 2} {
		h := rpcrdma.Header{XID: xid, Credit: 8, Proc: rpcrdma.RDMAMsg}
		r.send(c2s, v1msg(t, h, rpcCall(t, xid, oncrpc.ProgNFS, 3, 0, nil)), 0)
	}
	r.send(s2c, v1msg(t, rpcrdma.Header{XID: 2, Credit: 8, Proc: rpcrdma.RDMAMsg}, rpcReply(t, 2, nil)), 0)
	r.e.Finish()
	if len(o.n) != 2 || o.n[0] != 2 || o.n[1] != 1 || len(r.txns) != 2 {
		t.Errorf("observer heard %v, Options.Transaction %d", o.n, len(r.txns))
	}
}
