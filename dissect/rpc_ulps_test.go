package dissect_test

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// rpcULPs is the ULP list the engine defaulted to before RPC-over-RDMA
// left it (issue 25): RPC-over-RDMA on nfsrdma's port, its bodies decoded
// by binding b (nil: none).
func rpcULPs(b rpcrdma.UpperLayerBinding) []dissect.ULP {
	return []dissect.ULP{rpcordma.New(b, rpcordma.NFSRDMAPort)}
}

// RPC-over-RDMA's presentation (fields, Info text, exchange key), which the
// tests read through dissect.Present, and its rules, registered as the
// command's list of plug-ins registers them (cmd/rdmashark/ulps.go).
func init() {
	check.Register(rpcordma.Rules()...)
	check.RegisterHooks(rpcordma.Hooks())
	fields.RegisterTable(rpcordma.FieldTable)
	fields.RegisterInfo(rpcordma.AppendInfo)
	fields.RegisterExchangeKey(rpcordma.Name, rpcordma.AppendKey)
}
