package report

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// RPC-over-RDMA's rules, hooks and presentation, registered as the
// command's list of plug-ins registers them (cmd/rdmashark/ulps.go): the
// tests run its captures.
func init() {
	check.Register(rpcordma.Rules()...)
	check.RegisterHooks(rpcordma.Hooks())
	fields.RegisterTable(rpcordma.FieldTable)
	fields.RegisterInfo(rpcordma.AppendInfo)
	fields.RegisterExchangeKey(rpcordma.Name, rpcordma.AppendKey)
}
