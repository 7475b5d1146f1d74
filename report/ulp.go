package report

import "github.com/rdmashark/rdmashark/dissect"

// ULP is an upper-layer protocol's part of the text and JSON reports
// (issue 25) that its plug-in's own model fills: report imports no
// plug-in. A plug-in's presentation registers one (RegisterULP) from the
// command's registration list, as RPC-over-RDMA's (ulp/rpcordma/present)
// does. Every function may be nil, and answers only for its own
// protocol's connections, exchanges and counters. (A ULP whose session
// keeps a dissect.Connection.ULPData needs none of this for its analyze
// section: report writes that under the ULP's name, and its ULPTable row.)
type ULP struct {
	// Name is the plug-in's name (dissect.Connection.ULP).
	Name string
	// RFC8797: the ULP negotiates by RFC 8797's private data, so
	// analyze's RFC 8797 table and its defaults (1024-octet inline
	// thresholds, no remote invalidation) apply to its connections.
	RFC8797 bool
	// Connection fills the ULP's sections of dc's analyze entry (rpcordma:
	// Connection.RPC); own is true when they present dc.ULPData, which is
	// then not written again under the ULP's name.
	Connection func(dc *dissect.Connection, out *Connection) (own bool)
	// Counters fills the ULP's engine-wide counters of analyze's
	// "engine" (rpcordma: EngineCounters.RPC) and of the transactions
	// document's "counters".
	Counters    func(e *dissect.Snapshot, out *EngineCounters)
	TxnCounters func(e *dissect.Snapshot, out *TxnCounters)
	// Transactions counts dc's requests answered by their response, for
	// the gate's evidence and --min-transactions.
	Transactions func(dc *dissect.Connection) (n uint64, ok bool)
	// SRT names an exchange in stats' service response times beyond its
	// ULP and name: its program ("NFS v3"), procedure number and, for a
	// request of several operations, the main one (an NFSv4 COMPOUND's).
	SRT func(x *dissect.Exchange) (s SRTName, ok bool)
	// ConvertTransaction converts one of the ULP's transactions (as its
	// plug-in hands them out) to the transactions document's form; ok
	// false when t is not the ULP's.
	ConvertTransaction func(t any) (out Transaction, ok bool)
}

// SRTName is what ULP.SRT says of an exchange.
type SRTName struct {
	Program   string // "NFS v4"
	Procedure uint32
	// Operation is the main operation of a request of several, "" when
	// none.
	Operation string
}

var ulps []ULP

// RegisterULP adds a ULP's part of the reports; call it before any report
// is made (the command does, from init).
func RegisterULP(u ULP) { ulps = append(ulps, u) }

// rfc8797ULP tells whether the ULP named name negotiates by RFC 8797.
func rfc8797ULP(name string) bool {
	for i := range ulps {
		if ulps[i].Name == name && ulps[i].RFC8797 {
			return true
		}
	}
	return false
}

// ulpConnection fills the registered ULPs' sections of out; own as
// ULP.Connection.
func ulpConnection(dc *dissect.Connection, out *Connection) (own bool) {
	for i := range ulps {
		if f := ulps[i].Connection; f != nil && f(dc, out) {
			own = true
		}
	}
	return own
}

// ulpTransactions counts dc's answered requests (ULP.Transactions).
func ulpTransactions(dc *dissect.Connection) uint64 {
	for i := range ulps {
		if f := ulps[i].Transactions; f != nil {
			if n, ok := f(dc); ok {
				return n
			}
		}
	}
	return 0
}

// ulpSRT names x for the SRT tables (ULP.SRT).
func ulpSRT(x *dissect.Exchange) (SRTName, bool) {
	for i := range ulps {
		if f := ulps[i].SRT; f != nil {
			if n, ok := f(x); ok {
				return n, true
			}
		}
	}
	return SRTName{}, false
}

// TxnHead is what a TxnFilter reads of a transaction, filled by its
// plug-in's presentation before it converts the transaction (only the
// transactions kept are converted).
type TxnHead struct {
	Connection int
	XID        uint32
	// HasProgram: the Call's RPC header was decoded; Procedure its
	// procedure number.
	HasProgram    bool
	Procedure     uint32
	ProcedureName string
	Operations    []string
}
