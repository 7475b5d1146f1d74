package html_test

import "github.com/rdmashark/rdmashark/ulp/rpcordma/present"

// RPC-over-RDMA's part of report (its "rpc" sections, the conversion of
// its transactions the HTML report builds on) is registered by its
// presentation, as the command registers it (cmd/rdmashark/ulps.go).
func init() { present.Register() }
