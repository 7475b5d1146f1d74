package source

// Source is an input of records, the one shape every input of the engine
// takes: a capture file (*Reader) or a live capture (source/live.Records).
// dissect.Engine.Run is the only loop over a Source, so every input — a
// file read to its end, a live capture stopped by a count, a duration or a
// signal — ends the same way, with the engine's Finish.
type Source interface {
	// Next returns the next record: its number (from 1), timestamp and
	// lengths (Record.CI), link type and bytes, valid until the next call.
	// At the end of the input — the end of a file, or a live capture told
	// to stop — it returns io.EOF. A *Error that is not Final is a damaged
	// record the caller may skip and read on.
	Next() (Record, error)
}

var _ Source = (*Reader)(nil)
