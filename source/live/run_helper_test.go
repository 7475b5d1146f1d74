package live

import (
	"context"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
)

// testConfig is RunConfig plus the engine's per-packet callback, as
// cmd/rdmashark's capture passes them.
type testConfig struct {
	Count     int
	Duration  time.Duration
	Save      *Saver
	Each      func(p *dissect.Packet) error
	Tick      func(now time.Time) error
	TickEvery time.Duration
}

// testRun is what cmd/rdmashark's capture does: the engine's own loop over
// the Records (Engine.Run, which ends with Finish), the stop reason
// StopError when the engine's loop failed.
func testRun(ctx context.Context, src Source, eng *dissect.Engine, c testConfig) (Result, error) {
	rs := NewRecords(ctx, src, RunConfig{Count: c.Count, Duration: c.Duration, Save: c.Save, Tick: c.Tick, TickEvery: c.TickEvery})
	defer rs.Close()
	err := eng.Run(rs, c.Each)
	res := rs.Result()
	if err != nil {
		res.Stop = StopError
	}
	return res, err
}
