package dissect

import "slices"

// Snapshot is what the engine knows at one moment, for the reports: its
// counters and its connections. Reports take a Snapshot, not the Engine:
// what they show is this model, whatever engine (file, live) built it.
type Snapshot struct {
	Stats      Stats
	Reassembly ReassemblyStats
	Ops        TransportCounters
	// ULPCounters are copies of the engine-wide counters of the ULPs that
	// keep some (ULPCounters: RPC-over-RDMA's), by name.
	ULPCounters map[string]any
	// Connections are the connections in the table, live and released,
	// in ID order (ConnTable.Connections).
	Connections []*Connection
	// ConnectionsDropped counts connections the full table could not
	// track; ConnectionsForgotten released summaries it let go.
	ConnectionsDropped, ConnectionsForgotten uint64
	// PacketsNotTracked counts the packets of the connections dropped;
	// ConnectionsDroppedAtLeast is set when ConnectionsDropped is a lower
	// bound (ConnTable.DroppedSaturated).
	PacketsNotTracked         uint64
	ConnectionsDroppedAtLeast bool
	// PFC counts the PAUSE and PFC frames; UD holds the Unreliable
	// Datagram flows and their health (health.go, udflows.go).
	PFC PFCStats
	UD  UDFlows
	// Warnings are the first MaxWarnings damaged records skipped.
	Warnings []error
}

// Snapshot returns what the engine knows now. The Connections are the
// engine's own (they go on changing while it runs); the counters are
// copies.
func (e *Engine) Snapshot() *Snapshot {
	s := &Snapshot{Stats: e.Stats, Reassembly: e.Reassembly, Ops: e.Ops, Connections: e.Conns.Connections(),
		ConnectionsDropped: e.Conns.Dropped, ConnectionsForgotten: e.Conns.Forgotten,
		PacketsNotTracked: e.Conns.DroppedPackets, ConnectionsDroppedAtLeast: e.Conns.DroppedSaturated, Warnings: slices.Clone(e.Warnings), PFC: e.PFC, UD: e.UD}
	for _, l := range e.opts.ULPs {
		if c, ok := l.(ULPCounters); ok {
			if s.ULPCounters == nil {
				s.ULPCounters = map[string]any{}
			}
			s.ULPCounters[l.Name()] = c.Counters()
		}
	}
	return s
}
