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

// Spilled is how many connections the capture's spill took.
func (c *Capture) Spilled() int { return c.spill.taken }
