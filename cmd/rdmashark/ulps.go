package main

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
)

// newULPs is the tool's one registration list of upper-layer protocols
// (dissect/ulp.go): the engine asks them, in this order, which one each
// connection carries. Each call makes fresh values, one set per engine.
// Their ports make the iWARP hint ports and live capture's default
// filter. Adding a protocol is one line here (docs/architecture.md, "How
// to add an upper-layer protocol").
func newULPs() []dissect.ULP {
	return []dissect.ULP{
		// RPC-over-RDMA (RFC 8166, RFC 8167, the version 2 draft), its RPC
		// bodies decoded by the NFS binding (RFC 8267) on nfsrdma's port.
		dissect.RPCOverRDMA(nfs.NewBinding(), nfs.RDMAPort),
	}
}
