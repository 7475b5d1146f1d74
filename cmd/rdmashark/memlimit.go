package main

import (
	"math"
	"os"
	"runtime/debug"
)

// The Go runtime's soft memory limit is set from --max-buffered (issue 13
// point 2): without it the collector lets the heap grow to about twice what
// is live (GOGC=100), so a 256 MiB budget peaked at 450-530 MB of RSS.
// With it, the collector works harder as the heap nears
//
//	--max-buffered + memOverheadFixed + memPerConnection × --max-connections
//
// the budget plus what the budget does not count: the program, the read
// buffer, decoder state and pools (memOverheadFixed), and the connection
// table's entries and closed connections' summaries with their check
// results (memPerConnection each; docs/streaming.md has the measurements).
// A GOMEMLIMIT set in the environment is left as the user set it.
const (
	memOverheadFixed = 32 << 20
	memPerConnection = 12 << 10
	// memRSSMargin is what the resident set holds beyond the runtime's
	// accounting (the binary's text and data pages, thread stacks of the
	// OS): the peak RSS docs/streaming.md states is the limit plus this.
	memRSSMargin = 16 << 20
)

// setMemoryLimit sets the runtime's soft memory limit for a budget and a
// connection table, and returns it (0 when GOMEMLIMIT decides).
func setMemoryLimit(budget int64, maxConnections int) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit := budget + memOverheadFixed + memPerConnection*int64(maxConnections)
	if limit < 0 || budget > math.MaxInt64/4 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}
