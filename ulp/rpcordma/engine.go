package rpcordma

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Engine is RPC-over-RDMA's state for one dissect.Engine, held by its ULP
// value (New): the transactions of every connection, the pools of
// transactions and buffers, the chunk data held to rebuild messages
// against MaxRebuildBytes, the per-packet records and the engine-wide
// counters. What it needs of the dissect engine comes from the Env the
// sessions are lent (lend): the buffer budget, the limits, the Observer
// and the exchange observers.
type Engine struct {
	opts options
	// RPC counts the RPC-over-RDMA layer engine-wide (Counters).
	RPC  RPCCounters
	rpcs rpcState
	// budgetView is the engine's buffer budget (dissect.Env.Budget); buf
	// the same, as the rebuild code accounts in it.
	budgetView *dissect.Budget
	buf        bufView
	exch       dissect.Exchange
	// exchangeObs is false: Env.Exchange is set only when somebody hears
	// exchanges (opts.Exchange).
	exchangeObs bool
	// want is what the Upper-Layer Binding is asked for beyond names and
	// items (setWant): the values when a field that shows them is read,
	// the object when somebody hears transactions or exchanges.
	want    rpcrdma.ULBWant
	wantVal bool // the values: the engine's Env.Fields reads a field of theirs
}

// options are the engine's limits and observers, from the Env (lend) and
// the ULP's own (New, OnTransaction).
type options struct {
	MaxTransactions, MaxRebuildBytes, MaxMessageBytes int
	// ULP is the Upper-Layer Binding that decodes RPC bodies (nil: none).
	ULP rpcrdma.UpperLayerBinding
	// Transaction hears every transaction once it is over (OnTransaction).
	Transaction func(*Transaction)
	// Observer is the engine's: a TxnObserver hears the transactions too.
	Observer dissect.Observer
	// Exchange hears RPC's neutral view of every transaction over.
	Exchange func(*dissect.Exchange)
}

// lend takes what the engine lends the sessions, once: every session of
// one engine gets the same Env.
func (e *Engine) lend(env *dissect.Env) {
	if e.budgetView != nil {
		return
	}
	e.budgetView, e.buf = env.Budget, bufView{env.Budget}
	e.opts.MaxTransactions, e.opts.MaxRebuildBytes, e.opts.MaxMessageBytes = env.MaxExchanges, env.MaxRebuildBytes, env.MaxMessageBytes
	e.opts.Observer, e.opts.Exchange = env.Observer, env.Exchange
	e.wantVal = readsValues(env.Fields)
	e.setWant()
}

// setWant works out what the binding is asked for (ULBQuery.Want). The
// NFS values (file handles, offsets, names, attributes...) are read only
// by the nfs.* fields, and the object (a Call's handle and name, a
// Reply's handle) only by a transaction's or an exchange's consumers —
// transactions, exchanges, export, report —: analyze and check, which
// read neither, do not pay for decoding and copying them.
func (e *Engine) setWant() {
	e.want = 0
	if e.wantVal {
		e.want |= rpcrdma.WantValues
	}
	_, txnObs := e.opts.Observer.(TxnObserver)
	if e.opts.Transaction != nil || txnObs || e.opts.Exchange != nil || e.exchangeObs {
		e.want |= rpcrdma.WantObject
	}
}

// budget is the engine's buffer budget.
func (e *Engine) budget() bufView { return e.buf }

// endExchange hands x to the engine's exchange observers.
func (e *Engine) endExchange(x *dissect.Exchange) { e.opts.Exchange(x) }

// bufView is the buffer budget as the rebuild code accounts in it.
type bufView struct{ b *dissect.Budget }

func (v bufView) fits(n int) bool   { return v.b.Fits(n) }
func (v bufView) grew(old, new int) { v.b.Grew(old, new) }

// recordSet holds the records of the packet being processed (Records):
// the Sends it ended, and the RPC messages rebuilt from chunk data it
// delivered. Usually none or one; an iWARP segment can complete several.
// It is in the packet's dissect.Packet.ULP from its first record on.
type recordSet struct {
	packet int
	recs   []RPCRecord
}

// Records returns the RPC-over-RDMA messages p completed, valid until the
// next packet.
func Records(p *dissect.Packet) []RPCRecord {
	for _, x := range p.ULP {
		if rs, ok := x.(*recordSet); ok {
			return rs.recs
		}
	}
	return nil
}

// Record returns what the RPC-over-RDMA layer made of m (the transport
// header, the message's kind and its transaction; rpc_view.go), nil when
// m's connection does not carry RPC-over-RDMA. Valid only during the
// Observer call.
func Record(m *dissect.Message) *RPCRecord {
	r, _ := m.ULP.(*RPCRecord)
	return r
}

// Stats returns c's RPC-over-RDMA statistics, nil until a message of it
// was seen.
func Stats(c *dissect.Connection) *RPCStats {
	rs, _ := c.ULPData.(*RPCStats)
	return rs
}

// DropWithDetail lets dissect.Connection.DropDetail drop the statistics
// with the rest of a released connection's detail.
func (rs *RPCStats) DropWithDetail() {}

// Counters returns the engine-wide RPC-over-RDMA counters of a snapshot
// (zero when its engine had no RPC-over-RDMA ULP).
func Counters(s *dissect.Snapshot) RPCCounters {
	c, _ := s.ULPCounters[Name].(RPCCounters)
	return c
}

// Txn returns the transaction whose Call advertised the segment the
// operation served, nil when it served none (or another ULP's request).
func Txn(a *dissect.OpAttachment) *Transaction {
	t, _ := a.Owner.(*Transaction)
	return t
}

// With returns opts as dissect.NewEngine took them before RPC-over-RDMA
// left the engine, for programs and tests that want it alone: when
// opts.ULPs is nil, RPC-over-RDMA on nfsrdma's port is its one ULP, its
// RPC bodies decoded by binding (nil: none); the RPC-over-RDMA ULP among
// opts.ULPs hears its transactions by txn (nil: none).
func With(opts dissect.Options, binding rpcrdma.UpperLayerBinding, txn func(*Transaction)) dissect.Options {
	if opts.ULPs == nil {
		opts.ULPs = []dissect.ULP{New(binding, NFSRDMAPort)}
	}
	if txn != nil {
		OnTransaction(opts.ULPs, txn)
	}
	return opts
}

// SetRecords makes recs the RPC-over-RDMA records of p, a packet built by
// hand (for tests of what reads them: fields, the summary line).
func SetRecords(p *dissect.Packet, recs []RPCRecord) {
	p.ULP = append(p.ULP, &recordSet{packet: p.Number, recs: recs})
}
