package dissect

// trackIWARP follows iWARP over TCP: stream reassembly, MPA Request/Reply
// and FPDU framing, DDP and RDMAP. (Stub: filled in by the iWARP work.)
func (e *Engine) trackIWARP(p *Packet) {}
