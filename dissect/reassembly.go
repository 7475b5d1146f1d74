package dissect

// reassembleRoCE reassembles IB/RoCE Sends in PSN order and follows RDMA
// Reads and Writes. (Stub: filled in by the RPC-over-RDMA work.)
func (e *Engine) reassembleRoCE(p *Packet) {}
