// Package ulptest is the rig the upper-layer-protocol plug-ins' tests
// share (ulp/...): run a capture through the engine with a list of ULPs
// and the check runner, collecting the exchanges; and benchmark the
// engine with a plug-in over a capture. The ULPs are the caller's: a
// plug-in's tests may not import another plug-in (docs/architecture.md),
// so each names its own list.
package ulptest

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

// Pcaps is the folder of the project's captures (testdata/pcaps).
var Pcaps = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "pcaps")
}()

// Path returns name under Pcaps, or name itself when it is absolute.
func Path(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(Pcaps, name)
}

// Run analyses a capture (a path under testdata/pcaps, or absolute) with
// ulps registered, as the command does, with the rules registered in
// check, and returns the engine, a copy of every exchange and the checks'
// result.
func Run(t testing.TB, name string, ulps ...dissect.ULP) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	return RunWith(t, name, dissect.Options{ULPs: ulps})
}

// RunWith is Run with the engine's options (their ULPs, limits); the
// exchange callback and the observer are the rig's.
func RunWith(t testing.TB, name string, opts dissect.Options) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	r, err := source.Open(Path(name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var xs []dissect.Exchange
	ck := check.NewRunner(check.Config{})
	opts.Exchange = func(x *dissect.Exchange) { xs = append(xs, *x.Clone()) }
	opts.Observer = ck
	e := dissect.NewEngine(opts)
	if err := e.Run(r, func(p *dissect.Packet) error { ck.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	return e, xs, ck.Finish(e.Conns.Connections())
}

// Bench runs the engine with the ULPs ulps makes (new ones each pass: a
// ULP value may keep state of its engine) over a capture under
// testdata/pcaps, read once into memory, and fails unless each pass ends
// exchanges exchanges. It reports bytes, allocations and packets per
// pass: a plug-in adds no allocation per packet in steady state.
func Bench(b *testing.B, name string, exchanges int, ulps func() []dissect.ULP) {
	data, err := os.ReadFile(Path(name))
	if err != nil {
		b.Fatal(err)
	}
	var packets uint64
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := source.NewReader(bytes.NewReader(data), filepath.Base(name))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		e := dissect.NewEngine(dissect.Options{ULPs: ulps(), Exchange: func(*dissect.Exchange) { n++ }})
		if err := e.Run(r, nil); err != nil {
			b.Fatal(err)
		}
		if n != exchanges {
			b.Fatalf("%d exchanges, want %d", n, exchanges)
		}
		packets = e.Stats.Packets
	}
	b.ReportMetric(float64(packets), "packets/op")
}
