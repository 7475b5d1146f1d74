package check_test

import (
	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// RPC-over-RDMA's rules and hooks, registered as the command's list of
// plug-ins registers them (cmd/rdmashark/ulps.go), and its engine for the
// internal tests (check.RPCTest).
func init() {
	check.Register(rpcordma.Rules()...)
	check.RegisterHooks(rpcordma.Hooks())
	check.RPCTest.With = func(o dissect.Options) dissect.Options {
		return rpcordma.With(o, nfs.NewBinding(), nil)
	}
}
