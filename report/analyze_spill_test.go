package report

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

// analyzeChecked reads name as `rdmashark analyze` does, with every check,
// through a ConnSpill when spill is set, and returns the table and the
// JSON, and how many connections the spill took.
func analyzeChecked(t *testing.T, name string, opts dissect.Options, spill bool) (table, js string, spilled int) {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s *ConnSpill
	if spill {
		s = NewConnSpill()
		defer s.Close()
	}
	cfg := check.Config{}
	if s != nil {
		cfg.Next = s
	}
	run := check.NewRunner(cfg)
	if s != nil {
		s.SetRunner(run)
	}
	opts.Observer = run
	eng := dissect.NewEngine(opts)
	err = eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil })
	var a *Analysis
	if s != nil {
		a = s.Analysis(name, eng.Snapshot())
		spilled = s.Len()
	} else {
		a = NewAnalysis(name, eng.Snapshot())
	}
	res := run.Finish(eng.Conns.Connections())
	res.NoteLoss(0, eng.Stats.Skipped)
	res.NoteLoss(3, 0) // a caveat on every connection, spilled or not
	a.AddChecks(res)
	if err != nil {
		a.Errors = append(a.Errors, err.Error())
	}
	var tb, jb bytes.Buffer
	if err := a.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteJSON(&jb); err != nil {
		t.Fatal(err)
	}
	return tb.String(), jb.String(), spilled
}

// TestConnSpillMatches: analyze with the connections released during the
// read taken out of memory as they go (written to a temporary file, or
// kept encoded when there is none, from the first or from the second
// released connection) writes the same table and JSON, byte for byte, as
// with every connection kept, on every capture; with the connection table
// bound low (connections forgotten, spilled or not) and connections
// released by the idle timeout too. It fails when the spill takes nothing
// anywhere (the comparison would prove nothing) or when a spilled
// connection's document differs in any way after its trip (a field lost,
// nil and empty confused, the caveats of every connection not added back).
func TestConnSpillMatches(t *testing.T) {
	var files []string
	filepath.WalkDir(filepath.Join("..", "testdata", "pcaps"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 20 {
		t.Fatalf("only %d captures found", len(files))
	}
	defer func(after int, toFile bool) { spillConnsAfter, spillToFile = after, toFile }(spillConnsAfter, spillToFile)
	variants := []struct {
		name string
		opts dissect.Options
	}{
		{"default", dissect.Options{}},
		{"max-connections-3", dissect.Options{MaxConnections: 3}},
		{"idle-1s", dissect.Options{IdleTimeout: time.Second}},
	}
	took := 0
	for _, v := range variants {
		for _, f := range files {
			wantT, wantJ, _ := analyzeChecked(t, f, v.opts, false)
			for _, mode := range []struct {
				after  int
				toFile bool
			}{{0, true}, {1, false}} {
				spillConnsAfter, spillToFile = mode.after, mode.toFile
				gotT, gotJ, n := analyzeChecked(t, f, v.opts, true)
				took += n
				if gotT != wantT {
					t.Errorf("%s %s (after %d, file %v): table differs with the spill\n--- got\n%s\n--- want\n%s", v.name, f, mode.after, mode.toFile, gotT, wantT)
				}
				if gotJ != wantJ {
					t.Errorf("%s %s (after %d, file %v): JSON differs with the spill", v.name, f, mode.after, mode.toFile)
				}
			}
		}
	}
	if took < 50 {
		t.Fatalf("the spill took %d connections in all: the comparison proves little", took)
	}
	t.Logf("%d connections spilled in all", took)
}
