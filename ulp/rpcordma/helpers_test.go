package rpcordma

import (
	"bytes"
	"path/filepath"
	"slices"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// The tests of RPC-over-RDMA were the engine's own before it left package
// dissect (issue 25): Options and NewEngine keep their shape, making a
// dissect.Engine with this package's ULP registered.

// capturePath names a capture of testdata/pcaps.
func capturePath(name string) string {
	return filepath.Join("..", "..", "testdata", "pcaps", name)
}

// Options are the dissect.Options the tests set, and the RPC-over-RDMA
// ULP's own: its binding (ULP) and transaction callback (Transaction).
type Options struct {
	Observer                                           dissect.Observer
	MaxMessageBytes, MaxOutstandingReads               int
	MaxTransactions, MaxRebuildBytes, MaxBufferedBytes int
	ULP                                                rpcrdma.UpperLayerBinding
	Transaction                                        func(*Transaction)
}

// testEngine is a dissect.Engine with the RPC-over-RDMA ULP, whose state
// (st) and counters (RPC) the tests read.
type testEngine struct {
	*dissect.Engine
	st  *Engine
	RPC *RPCCounters
	obs *switchObserver
}

// switchObserver is the engine's Observer, forwarding to one the test may
// change (setObserver), and to its Transaction if it is a TxnObserver.
type switchObserver struct{ cur dissect.Observer }

func (o *switchObserver) Message(m *dissect.Message) {
	if o.cur != nil {
		o.cur.Message(m)
	}
}

func (o *switchObserver) RDMAOp(op *dissect.RDMAOp) {
	if o.cur != nil {
		o.cur.RDMAOp(op)
	}
}

func (o *switchObserver) Transaction(t *Transaction) {
	if x, ok := o.cur.(TxnObserver); ok {
		x.Transaction(t)
	}
}

// setObserver makes o the engine's Observer from now on.
func (e *testEngine) setObserver(o dissect.Observer) { e.obs.cur = o }

// NewEngine makes an engine whose one ULP is RPC-over-RDMA on nfsrdma's
// port, as cmd/rdmashark registers it.
func NewEngine(o Options) *testEngine {
	l := New(o.ULP, NFSRDMAPort)
	OnTransaction([]dissect.ULP{l}, o.Transaction)
	st := &l.(*rpcULP).e
	obs := &switchObserver{o.Observer}
	e := dissect.NewEngine(dissect.Options{Observer: obs, MaxMessageBytes: o.MaxMessageBytes,
		MaxOutstandingReads: o.MaxOutstandingReads, MaxTransactions: o.MaxTransactions,
		MaxRebuildBytes: o.MaxRebuildBytes, MaxBufferedBytes: o.MaxBufferedBytes, ULPs: []dissect.ULP{l}})
	return &testEngine{Engine: e, st: st, RPC: &st.RPC, obs: obs}
}

// rig feeds hand-built IB transport packets of one connection straight into
// the reassembly (dissect.Engine.Inject), and keeps copies of what comes
// out.
type rig struct {
	e    *testEngine
	c    *dissect.Connection
	n    int
	msgs []dissect.Message
	ops  []dissect.RDMAOp
}

func newRig(opts Options) *rig {
	r := &rig{c: &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE}}
	opts.Observer = r
	r.e = NewEngine(opts)
	return r
}

func (r *rig) Message(m *dissect.Message) {
	c := *m
	c.Packets, c.Data = slices.Clone(m.Packets), slices.Clone(m.Data)
	r.msgs = append(r.msgs, c)
}

func (r *rig) RDMAOp(op *dissect.RDMAOp) {
	c := *op
	c.Packets, c.Data = slices.Clone(op.Packets), slices.Clone(op.Data)
	r.ops = append(r.ops, c)
}

// pkt processes one packet: opcode, PSN, payload; mod adjusts the BTH.
func (r *rig) pkt(d dissect.Direction, op roce.OpCode, psn uint32, payload []byte, mod ...func(*roce.BTH)) *dissect.Packet {
	r.n++
	p := &dissect.Packet{Number: r.n, Timestamp: time.Unix(0, int64(r.n)*1000), Conn: r.c, Dir: d,
		Decoded: []gopacket.LayerType{roce.LayerTypeBTH}}
	p.BTH = roce.BTH{OpCode: op, PSN: psn & 0xffffff, Ext: op.ExtHeaders(), PayloadLen: len(payload)}
	p.BTH.Payload = payload
	for _, m := range mod {
		m(&p.BTH)
	}
	r.e.Inject(p)
	return p
}

func reth(va uint64, rkey, n uint32) func(*roce.BTH) {
	return func(h *roce.BTH) { h.RETH = roce.RETH{VA: va, RKey: rkey, DMALen: n} }
}

func fill(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

const c2s, s2c = dissect.DirClientToServer, dissect.DirServerToClient
