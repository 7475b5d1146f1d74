// Package rpcordma is RPC-over-RDMA (RFC 8166, RFC 8167 for the
// backchannel, draft-ietf-nfsv4-rpcrdma-version-two-07) as a plug-in of
// the engine's upper-layer-protocol seam (dissect/ulp.go): New makes its
// ULP, one per engine, which holds the engine-wide state (Engine: pools,
// the rebuild budget, RPCCounters); a session of it pairs the Calls and
// Replies of one connection into Transactions, attaches each RDMA Read
// and Write to the chunk segment it served, and rebuilds RPC messages
// from their chunks, handing the RPC bodies to an Upper-Layer Binding
// (rpcrdma/nfs for NFS, RFC 8267).
//
// Where its model is: Records (a packet's RPCRecords, in Packet.ULP),
// Record (a Message's, in Message.ULP), Stats (a connection's RPCStats,
// in Connection.ULPData), Txn and AttachedSegment (an RDMA operation's
// attachment), Counters (the engine-wide RPCCounters of a Snapshot),
// OnTransaction and TxnObserver (every transaction when it is over).
//
// The checks, fields, report, export and diff still read this model
// directly: they are the one exception to "nothing imports a plug-in but
// cmd" (internal/archtest, docs/architecture.md), until RPC-over-RDMA's
// rules, fields and tables register through the seam as NVMe's do.
package rpcordma
