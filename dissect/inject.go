package dissect

import "slices"

// Inject hands p, an IB transport packet built by hand with its
// connection (p.Conn) and direction set and its BTH decoded, straight to
// the IB/RoCE reassembly and so to the ULP sessions, p.Conn joining the
// connection table first when new: for the tests of a ULP on the forms
// the real captures lack (ulp/rpcordma's rig). A capture goes through Run
// or Process.
func (e *Engine) Inject(p *Packet) {
	if c := p.Conn; c != nil && !slices.Contains(e.Conns.conns, c) {
		e.Conns.conns = append(e.Conns.conns, c)
	}
	e.reassembleRoCE(p)
}
