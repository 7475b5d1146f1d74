//go:build !pipestats

package dissect

import "time"

// pipeStat measures the pipeline's goroutines in a build with -tags
// pipestats (pipestats_on.go); here it does nothing.
type pipeStat struct{}

func newPipeStat(string) *pipeStat         { return nil }
func (*pipeStat) waitStart() (t time.Time) { return }
func (*pipeStat) waitEnd(time.Time)        {}
func (*pipeStat) batch(int, int)           {}
func (*pipeStat) end()                     {}
