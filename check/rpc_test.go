package check

import "github.com/rdmashark/rdmashark/dissect"

// RPCTest is RPC-over-RDMA as the internal tests run it: the plug-in
// (ulp/rpcordma) imports check, so they cannot import it;
// rpc_hook_test.go (package check_test, in the same test binary) fills
// this in, and registers its rules and hooks as the command's list of
// plug-ins does.
var RPCTest struct {
	// With returns o with RPC-over-RDMA, its bodies decoded by the NFS
	// binding, as the engine's ULP.
	With func(o dissect.Options) dissect.Options
}
