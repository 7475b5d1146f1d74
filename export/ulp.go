package export

import "github.com/rdmashark/rdmashark/dissect"

// ULP is an upper-layer protocol's part of the export (issue 25): the
// columns of the neutral tables (connections, rdma_ops, packets) that its
// own model fills. A plug-in's presentation registers one (Register) from
// the command's registration list; export imports no plug-in. Each
// function may be nil, and leaves a row alone when the connection,
// operation or packet is not its protocol's. Its own tables (RPC-over-
// RDMA's transactions) it writes through Capture.AddTransaction.
type ULP struct {
	// Connection fills dc's row of connections (rpcordma: rpc_version,
	// calls_forward … rdma_write_bytes).
	Connection func(dc *dissect.Connection, row *Connection)
	// RDMAOp fills op's row of rdma_ops (rpcordma: xid, chunk_kind).
	RDMAOp func(op *dissect.RDMAOp, row *RDMAOp)
	// Packet fills p's row of packets (rpcordma: xid).
	Packet func(p *dissect.Packet, row *Packet)
}

var ulps []ULP

// Register adds a ULP's part of the export; call it before any Capture
// is made (the command does, from init).
func Register(u ULP) { ulps = append(ulps, u) }

// AddTransaction writes one finished RPC transaction's row, as its
// plug-in built it (the Common columns are the Capture's).
func (c *Capture) AddTransaction(row *Transaction) {
	if c.err != nil {
		return
	}
	row.Common = c.common
	c.note(c.txns.add(*row))
}
