package dissect

import "github.com/rdmashark/rdmashark/rpcrdma"

// The seam for the upper-layer protocols carried in RPC: the RPC-over-RDMA
// layer hands each RPC message whose body it holds to the engine's
// rpcrdma.UpperLayerBinding (Options.ULP; the NFS binding of RFC 8267 is
// rpcrdma/nfs.NewBinding, wired by the command) and keeps what it reports in
// RPCRecord.ULP — names for the summary and the transactions, the
// DDP-eligible items (which the checks read), and where a Reply's Write
// chunk data goes back (RFC 8166 section 3.4.6 leaves where to the
// Upper-Layer Binding). Without a binding no RPC body is decoded.

// ULPQuery is one RPC message body handed to the binding.
type ULPQuery = rpcrdma.ULBQuery

// ULPInfo is what the binding reports.
type ULPInfo = rpcrdma.ULBInfo

// ULPFunc makes a function an rpcrdma.UpperLayerBinding.
type ULPFunc func(q *ULPQuery, out *ULPInfo)

// Decode implements rpcrdma.UpperLayerBinding.
func (f ULPFunc) Decode(q *ULPQuery, out *ULPInfo) { f(q, out) }
