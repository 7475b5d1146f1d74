package dissect

// RPCStats counts a connection's RPC-over-RDMA traffic.
// (Stub: filled in by the RPC-over-RDMA work.)
type RPCStats struct{}
