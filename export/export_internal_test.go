package export

// Hooks for the external tests.

// SetSpill sets how many released connections stay in memory before the
// spill starts (negative: never) and whether it writes to a file; it
// returns a func that restores both.
func SetSpill(after int, toFile bool) (restore func()) {
	a, f := spillAfter, spillToFile
	spillAfter, spillToFile = after, toFile
	return func() { spillAfter, spillToFile = a, f }
}

// SetCompactAt sets the bytes of forgotten records past which the spill
// compacts its file; it returns a func that restores it.
func SetCompactAt(n int64) (restore func()) {
	c := compactAt
	compactAt = n
	return func() { compactAt = c }
}

// Spilled is how many connections the capture's spill took, and how many
// times it compacted its file.
func (c *Capture) Spilled() (taken, compactions int) { return c.spill.Stats() }
