package dissect

// IWARPInfo is what an iWARP connection's MPA exchange negotiated.
// (Stub: filled in by the iWARP work.)
type IWARPInfo struct{}

// trackIWARP follows iWARP over TCP: stream reassembly, MPA Request/Reply
// and FPDU framing, DDP and RDMAP. (Stub: filled in by the iWARP work.)
func (e *Engine) trackIWARP(p *Packet) {}
