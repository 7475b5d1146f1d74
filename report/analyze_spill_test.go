package report

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// compactions counts the spills' compactions in the tests
// (analyzeChecked, checkFileSeen).
var compactions int

// spiller is a ConnSpill or a CheckSpill.
type spiller interface {
	dissect.ConnForgetter
	SetRunner(*check.Runner)
}

// runChecked reads name through an engine with a check runner, and the
// spill s after the runner unless it is nil (or a nil spill), as analyze
// and check do; the error is what stopped the reading.
func runChecked(t testing.TB, name string, opts dissect.Options, cfg check.Config, s spiller) (*dissect.Engine, *check.Runner, error) {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if s != nil && reflect.ValueOf(s).IsNil() {
		s = nil // a nil *ConnSpill or *CheckSpill: no spill
	}
	if s != nil {
		cfg.Next = s
	}
	run := check.NewRunner(cfg)
	if s != nil {
		s.SetRunner(run)
	}
	opts.Observer = run
	eng := dissect.NewEngine(rpcordma.With(opts, nil, nil))
	err = eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil })
	return eng, run, err
}

// analyzeChecked reads name as `rdmashark analyze` does, with every check,
// through a ConnSpill when spill is set, and returns the table and the
// JSON, and how many connections the spill took.
func analyzeChecked(t *testing.T, name string, opts dissect.Options, cfg check.Config, spill bool) (table, js string, spilled int) {
	t.Helper()
	var s *ConnSpill
	if spill {
		s = NewConnSpill()
		defer s.Close()
	}
	eng, run, err := runChecked(t, name, opts, cfg, s)
	var a *Analysis
	if s != nil {
		a = s.Analysis(name, eng.Snapshot())
		spilled = s.Len()
		_, c := s.Stats()
		compactions += c
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

// bundledCaptures lists the captures under testdata/pcaps (real, lossy,
// mutated, synthetic).
func bundledCaptures(t *testing.T) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(filepath.Join("..", "testdata", "pcaps"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".pcap") || strings.HasSuffix(p, ".pcapng")) {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// spillCopies writes captures of many connections that close: three
// times an NFS capture (rxe-nfs3, siw-nfs3: connections with findings)
// followed by 20 copies of an rping capture of the same link (a connection
// without), as bench/run.sh builds its large files, each copy's
// connections new ones. A closed connection is released only after 16
// more closes (dissect/release.go): the rping connections release the
// NFS ones before the end, so the spill takes connections with findings.
func spillCopies(t testing.TB) []string {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
			t.Fatalf("%s: not a little-endian pcap file", name)
		}
		return b
	}
	var out []string
	for _, pair := range [][2]string{{"rxe-nfs3.pcap", "rxe-rping.pcap"}, {"siw-nfs3.pcap", "siw-rping.pcap"}} {
		nfs, rping := read(pair[0]), read(pair[1])
		if binary.LittleEndian.Uint32(nfs[20:]) != binary.LittleEndian.Uint32(rping[20:]) {
			t.Fatalf("%s and %s: not the same link type", pair[0], pair[1])
		}
		c := append([]byte(nil), nfs[:24]...)
		for range 3 {
			c = append(c, nfs[24:]...)
			c = append(c, bytes.Repeat(rping[24:], 20)...)
		}
		path := filepath.Join(t.TempDir(), "mixed-"+pair[0])
		if err := os.WriteFile(path, c, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, path)
	}
	return out
}

// spillVariants are the engine's and the runner's options the spill is
// tested with: the defaults; the connection table bound at 3 and at 20, so
// that connections are forgotten, spilled or not, with the findings kept
// bounded at 10 and 30 in all (the forgotten ones' findings leave that
// count); and a 1 s idle timeout.
var spillVariants = []struct {
	name string
	opts dissect.Options
	cfg  check.Config
}{
	{"default", dissect.Options{}, check.Config{}},
	{"max-connections-3", dissect.Options{MaxConnections: 3}, check.Config{MaxTotal: 10}},
	{"max-connections-20", dissect.Options{MaxConnections: 20}, check.Config{MaxTotal: 30}},
	{"idle-1s", dissect.Options{IdleTimeout: time.Second}, check.Config{}},
}

// spillTestFiles returns the bundled captures and those of many
// connections (spillCopies), and makes the spill compact at every
// forgotten connection for the test; the spill's settings come back after
// it.
func spillTestFiles(t *testing.T) []string {
	t.Helper()
	files := bundledCaptures(t)
	if len(files) < 20 {
		t.Fatalf("only %d captures found", len(files))
	}
	after, toFile, at := spillConnsAfter, spillToFile, compactAt
	t.Cleanup(func() { spillConnsAfter, spillToFile, compactAt = after, toFile, at })
	compactAt = 1
	compactions = 0
	return append(files, spillCopies(t)...)
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
	files := spillTestFiles(t)
	variants := spillVariants
	took := 0
	for _, v := range variants {
		for _, f := range files {
			wantT, wantJ, _ := analyzeChecked(t, f, v.opts, v.cfg, false)
			for _, mode := range []struct {
				after  int
				toFile bool
			}{{0, true}, {1, false}} {
				spillConnsAfter, spillToFile = mode.after, mode.toFile
				gotT, gotJ, n := analyzeChecked(t, f, v.opts, v.cfg, true)
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
	if took < 50 || compactions < 10 {
		t.Fatalf("the spill took %d connections in all and compacted %d times: the comparison proves little", took, compactions)
	}
	t.Logf("%d connections spilled in all, %d compactions", took, compactions)
}

// checkFileOf reads name as `rdmashark check` does, through a CheckSpill
// when spill is set, and returns the file's part of the report and how
// many connections the spill took.
func checkFileOf(t *testing.T, name string, opts dissect.Options, cfg check.Config, known *check.Baseline, spill bool) (CheckFile, int) {
	return checkFileSeen(t, name, opts, cfg, known, nil, spill)
}

// checkFileSeen is checkFileOf that also records the file's findings in
// seen (check --write-baseline) unless it is nil.
func checkFileSeen(t *testing.T, name string, opts dissect.Options, cfg check.Config, known, seen *check.Baseline, spill bool) (CheckFile, int) {
	t.Helper()
	var s *CheckSpill
	if spill {
		s = NewCheckSpill(known, seen != nil)
	}
	eng, run, err := runChecked(t, name, opts, cfg, s)
	res := run.Finish(eng.Conns.Connections())
	res.NoteLoss(0, eng.Stats.Skipped)
	res.NoteLoss(3, 0) // a caveat on every connection, spilled or not
	if seen != nil {
		// As check --write-baseline does, before the baseline applied.
		if s != nil {
			if err := s.RecordBaseline(seen); err != nil {
				t.Fatal(err)
			}
		}
		seen.Add(res)
	}
	if known != nil {
		known.Apply(res) // as check does, to what it holds at the end
	}
	if s != nil {
		_, c := s.Stats()
		compactions += c
		return s.CheckFile(name, eng.Snapshot(), res, err), s.Len()
	}
	return NewCheckFile(name, eng.Snapshot(), res, err), 0
}

// checkOutputs writes a report of files in every format, judged by a gate
// with every assertion.
func checkOutputs(t *testing.T, files []CheckFile) map[string]string {
	t.Helper()
	yes := true
	rep := &CheckReport{FailOn: check.Warning, FailOnDamage: true, Version: "test"}
	for _, f := range files {
		// Records for SARIF's regions: every finding's packets, as
		// check finds them in the file (any span will do here).
		f.Records = map[int]RecordSpan{}
		if err := f.EachFinding(func(fd *check.Finding) error {
			for _, p := range fd.Packets {
				f.Records[p] = RecordSpan{Offset: int64(p) * 100, Length: p}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		rep.Add(f)
	}
	rep.Judge(GateOptions{MinConnections: 5, MinTransactions: 10, ExpectRemoteInvalidation: &yes, MinInlineThreshold: 8192})
	out := map[string]string{}
	for _, w := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"text", func(b *bytes.Buffer) error { return rep.WriteText(b, TextOptions{}) }},
		{"text -v", func(b *bytes.Buffer) error { return rep.WriteText(b, TextOptions{Verbose: true}) }},
		{"json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
		{"sarif", func(b *bytes.Buffer) error { return rep.WriteSARIF(b) }},
		{"junit", func(b *bytes.Buffer) error { return rep.WriteJUnit(b) }},
	} {
		var b bytes.Buffer
		if err := w.write(&b); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		out[w.name] = b.String()
	}
	return out
}

// TestCheckSpillMatches: check with the connections released during the
// read taken out of memory writes the same text (plain and verbose), JSON,
// SARIF and JUnit, with the same gate verdicts, byte for byte, as with
// every connection kept: every capture alone, and all of them in one
// report, with the spill from the first and from the second released
// connection, to a file and in memory, with the connection table bound at
// 3 and 20 and a 1 s idle timeout, with and without a baseline applied;
// and the baseline check --write-baseline writes of them all is the same.
func TestCheckSpillMatches(t *testing.T) {
	files := spillTestFiles(t)
	// A baseline of every other kind of finding the captures have, so
	// that some findings are suppressed and some are not.
	known := spillBaseline(t, files)
	took, suppressed := 0, 0
	for _, v := range spillVariants {
		var allWant, allGot []CheckFile
		for _, mode := range []struct {
			after  int
			toFile bool
			known  *check.Baseline
		}{{0, true, nil}, {1, false, nil}, {0, true, known}} {
			spillConnsAfter, spillToFile = mode.after, mode.toFile
			known := mode.known
			allWant, allGot = allWant[:0], allGot[:0]
			// check --write-baseline of all the captures, spilled or
			// not: the same baseline.
			var seenWant, seenGot check.Baseline
			for _, f := range files {
				want, _ := checkFileSeen(t, f, v.opts, v.cfg, known, &seenWant, false)
				got, n := checkFileSeen(t, f, v.opts, v.cfg, known, &seenGot, true)
				took += n
				if n > 0 {
					suppressed += got.spill.suppressed
				}
				allWant, allGot = append(allWant, want), append(allGot, got)
				w, g := checkOutputs(t, []CheckFile{want}), checkOutputs(t, []CheckFile{got})
				for k := range w {
					if w[k] != g[k] {
						t.Errorf("%s %s (after %d, file %v): %s differs with the spill\n--- got\n%s\n--- want\n%s", v.name, f, mode.after, mode.toFile, k, g[k], w[k])
					}
				}
			}
			w, g := checkOutputs(t, allWant), checkOutputs(t, allGot)
			for k := range w {
				if w[k] != g[k] {
					t.Errorf("%s, all captures (after %d, file %v): %s differs with the spill", v.name, mode.after, mode.toFile, k)
				}
			}
			var bw, bg bytes.Buffer
			if err := seenWant.Write(&bw); err != nil {
				t.Fatal(err)
			}
			if err := seenGot.Write(&bg); err != nil {
				t.Fatal(err)
			}
			if bw.String() != bg.String() {
				t.Errorf("%s (after %d, file %v, baseline %v): the baseline written differs with the spill\n--- got\n%s\n--- want\n%s", v.name, mode.after, mode.toFile, known != nil, bg.String(), bw.String())
			}
			if len(seenWant.Entries) < 5 {
				t.Fatalf("the baseline written has %d entries: the comparison proves little", len(seenWant.Entries))
			}
			(&CheckReport{Files: allGot}).Close()
		}
	}
	if took < 50 || suppressed < 50 || compactions < 10 {
		t.Fatalf("the spill took %d connections in all, the baseline suppressed %d of their findings, %d compactions: the comparison proves little", took, suppressed, compactions)
	}
	t.Logf("%d connections spilled in all, %d of their findings suppressed by the baseline", took, suppressed)
}

// spillBaseline is a baseline of every other kind of finding the captures
// have (check --write-baseline on them, one entry in two kept).
func spillBaseline(t *testing.T, files []string) *check.Baseline {
	t.Helper()
	var all check.Baseline
	for _, f := range files {
		eng, run, _ := runChecked(t, f, dissect.Options{}, check.Config{}, nil)
		all.Add(run.Finish(eng.Conns.Connections()))
	}
	known := &check.Baseline{Format: check.BaselineFormat}
	for i, e := range all.Entries {
		if i%2 == 0 {
			known.Entries = append(known.Entries, e)
		}
	}
	return known
}

// TestJUnitStreamMatchesEncoder: WriteJUnit, which writes one test case at
// a time after counting them, writes what xml.Encoder writes of the whole
// document built first (as WriteJUnit did before), and every count in it
// is that of the cases written: every capture in one
// report, with and without a failing gate, its connections spilled or
// not, unreadable and incomplete files included. It fails when a suite's
// count or an attribute is off, or the indentation of the streamed
// elements differs.
func TestJUnitStreamMatchesEncoder(t *testing.T) {
	files := bundledCaptures(t)
	defer func(after int) { spillConnsAfter = after }(spillConnsAfter)
	spillConnsAfter = 0
	var cfs []CheckFile
	for i, f := range append(files, spillCopies(t)...) {
		cf, _ := checkFileOf(t, f, dissect.Options{}, check.Config{}, nil, i%2 == 0)
		cfs = append(cfs, cf)
	}
	cfs = append(cfs, CheckFile{File: "missing.pcap", Error: "open missing.pcap: no such file"},
		CheckFile{File: "cut.pcap", Interrupted: true, SkippedRecords: 2, Connections: []CheckConnection{}})
	for _, gate := range []GateOptions{{}, {MinConnections: 100000, AllowEmpty: true}} {
		for _, damage := range []bool{true, false} {
			rep := &CheckReport{FailOn: check.Warning, FailOnDamage: damage}
			for _, f := range cfs {
				rep.Add(f)
			}
			rep.Judge(gate)
			var got bytes.Buffer
			if err := rep.WriteJUnit(&got); err != nil {
				t.Fatal(err)
			}
			doc := junitSuites{Name: "rdmashark check", Time: "0"}
			for i := range rep.Files {
				f := &rep.Files[i]
				s := junitSuite{Name: artifactName(f.File), Time: "0", File: artifactName(f.File)}
				if err := rep.fileCases(f, s.Name, func(tc *junitCase) error {
					s.Cases = append(s.Cases, *tc)
					return s.count(tc)
				}); err != nil {
					t.Fatal(err)
				}
				doc.Tests += s.Tests
				doc.Failures += s.Failures
				doc.Errors += s.Errors
				doc.Suites = append(doc.Suites, s)
			}
			if gs, ok := rep.junitGate(); ok {
				doc.Tests += gs.Tests
				doc.Failures += gs.Failures
				doc.Suites = append(doc.Suites, gs)
			}
			var want bytes.Buffer
			want.WriteString(xml.Header)
			enc := xml.NewEncoder(&want)
			enc.Indent("", "  ")
			if err := enc.Encode(doc); err != nil {
				t.Fatal(err)
			}
			want.WriteString("\n")
			if got.String() != want.String() {
				t.Fatalf("gate %+v, fail on damage %v: streamed JUnit differs from the encoded document (%d and %d bytes)", gate, damage, got.Len(), want.Len())
			}
			// The counts, read back from what was written: each suite's
			// its cases', the document's its suites'.
			var back junitSuites
			if err := xml.Unmarshal(got.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			tests, failures, errs := 0, 0, 0
			for _, s := range back.Suites {
				var n junitSuite
				for _, tc := range s.Cases {
					n.Tests++
					if tc.Failure != nil {
						n.Failures++
					}
					if tc.Skipped != nil {
						n.Skipped++
					}
					if tc.Error != nil {
						n.Errors++
					}
				}
				if n.Tests != s.Tests || n.Failures != s.Failures || n.Skipped != s.Skipped || n.Errors != s.Errors {
					t.Fatalf("suite %s says %d tests, %d failures, %d skipped, %d errors; its cases are %d, %d, %d, %d",
						s.Name, s.Tests, s.Failures, s.Skipped, s.Errors, n.Tests, n.Failures, n.Skipped, n.Errors)
				}
				tests, failures, errs = tests+s.Tests, failures+s.Failures, errs+s.Errors
			}
			if tests != back.Tests || failures != back.Failures || errs != back.Errors {
				t.Fatalf("testsuites says %d tests, %d failures, %d errors; its suites add up to %d, %d, %d",
					back.Tests, back.Failures, back.Errors, tests, failures, errs)
			}
			if !strings.Contains(got.String(), "<skipped") || !strings.Contains(got.String(), "<failure") || !strings.Contains(got.String(), "<error") {
				t.Fatal("the report lacks skipped, failed or erroneous cases: the comparison proves little")
			}
		}
	}
	(&CheckReport{Files: cfs}).Close()
}

// TestSpillWithoutTempDir: where no temporary file can be made (TMPDIR
// names no directory), the spilled connections and the tables' rows stay
// in memory, encoded, and analyze and check write what they write with a
// temporary file.
func TestSpillWithoutTempDir(t *testing.T) {
	files := spillCopies(t) // made before TMPDIR goes
	defer func(after, rows int) { spillConnsAfter, rowSpillAt = after, rows }(spillConnsAfter, rowSpillAt)
	spillConnsAfter = 0
	for _, f := range files {
		wantT, wantJ, _ := analyzeChecked(t, f, dissect.Options{}, check.Config{}, false)
		wantC, _ := checkFileOf(t, f, dissect.Options{}, check.Config{}, nil, false)
		want := checkOutputs(t, []CheckFile{wantC})
		t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
		rowSpillAt = 1
		gotT, gotJ, n := analyzeChecked(t, f, dissect.Options{}, check.Config{}, true)
		if n == 0 {
			t.Fatalf("%s: nothing spilled", f)
		}
		if gotT != wantT || gotJ != wantJ {
			t.Errorf("%s: analyze differs without a temporary directory", f)
		}
		gotC, _ := checkFileOf(t, f, dissect.Options{}, check.Config{}, nil, true)
		if !gotC.spill.InMemory() {
			t.Fatalf("%s: the check spill did not fall back to memory", f)
		}
		got := checkOutputs(t, []CheckFile{gotC})
		for k := range want {
			if got[k] != want[k] {
				t.Errorf("%s: check %s differs without a temporary directory", f, k)
			}
		}
		rowSpillAt = 256 << 10
		os.Unsetenv("TMPDIR")
	}
}

// TestSpillNarrow: analyze and check --connection ID with the spill told
// to read back that connection only (Only) write what they write with
// every connection kept and the result narrowed, and find the same
// connections there or not: on the captures of many connections, for
// connections spilled, still in memory, of the first and the last copy,
// and one that is not there.
func TestSpillNarrow(t *testing.T) {
	defer func(after int) { spillConnsAfter = after }(spillConnsAfter)
	spillConnsAfter = 0
	for _, f := range spillCopies(t) {
		for _, id := range []int{1, 2, 23, 45, 66, 67} {
			// analyze
			eng, run, err := runChecked(t, f, dissect.Options{}, check.Config{}, nil)
			want := NewAnalysis(f, eng.Snapshot())
			want.AddChecks(run.Finish(eng.Conns.Connections()))
			wantFound := want.Narrow(id)
			s := NewConnSpill()
			s.Only(id)
			eng, run, err2 := runChecked(t, f, dissect.Options{}, check.Config{}, s)
			if err != nil || err2 != nil {
				t.Fatal(err, err2)
			}
			got := s.Analysis(f, eng.Snapshot())
			got.AddChecks(run.Finish(eng.Conns.Connections()))
			if found := got.Narrow(id); found != wantFound {
				t.Fatalf("%s connection %d: found %v with the spill, %v without", f, id, found, wantFound)
			}
			var wt, gt, wj, gj bytes.Buffer
			want.WriteTable(&wt)
			got.WriteTable(&gt)
			want.WriteJSON(&wj)
			got.WriteJSON(&gj)
			if wt.String() != gt.String() || wj.String() != gj.String() {
				t.Errorf("%s: analyze --connection %d differs with the spill\n--- got\n%s\n--- want\n%s", f, id, gt.String(), wt.String())
			}
			s.Close()
			if id == 23 && s.Spill.Len() != 1 {
				t.Fatalf("%s: connection 23 was not spilled (%d read back): the test proves little", f, s.Spill.Len())
			}
			// check
			eng, run, _ = runChecked(t, f, dissect.Options{}, check.Config{}, nil)
			res := run.Finish(eng.Conns.Connections())
			wantFound = res.Narrow(id)
			wantC := NewCheckFile(f, eng.Snapshot(), res, nil)
			cs := NewCheckSpill(nil, false)
			cs.Only(id)
			eng, run, _ = runChecked(t, f, dissect.Options{}, check.Config{}, cs)
			res = run.Finish(eng.Conns.Connections())
			found := res.Narrow(id) || cs.Len() > 0
			if found != wantFound {
				t.Fatalf("%s connection %d: check found %v with the spill, %v without", f, id, found, wantFound)
			}
			gotC := cs.CheckFile(f, eng.Snapshot(), res, nil)
			w, g := checkOutputs(t, []CheckFile{wantC}), checkOutputs(t, []CheckFile{gotC})
			for k := range w {
				if w[k] != g[k] {
					t.Errorf("%s: check --connection %d %s differs with the spill", f, id, k)
				}
			}
			cs.Close()
		}
	}
}

// BenchmarkAnalyzeSpill: analyze of a capture of 66 connections (NFS and
// rping copies) with every connection kept to the end and with the
// connections spilled from the first one released (to a temporary file,
// read back for the table and the JSON): what the spill costs in time and
// allocations per capture.
//
//	go test ./report -run '^$' -bench BenchmarkAnalyzeSpill -benchmem
func BenchmarkAnalyzeSpill(b *testing.B) {
	files := spillCopies(b)
	defer func(after int) { spillConnsAfter = after }(spillConnsAfter)
	spillConnsAfter = 0
	for _, spill := range []bool{false, true} {
		name := "kept"
		if spill {
			name = "spilled"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				for _, f := range files {
					analyzeBench(b, f, spill)
				}
			}
		})
	}
}

func analyzeBench(b *testing.B, name string, spill bool) {
	var s *ConnSpill
	if spill {
		s = NewConnSpill()
		defer s.Close()
	}
	eng, run, _ := runChecked(b, name, dissect.Options{}, check.Config{}, s)
	var a *Analysis
	if s != nil {
		a = s.Analysis(name, eng.Snapshot())
	} else {
		a = NewAnalysis(name, eng.Snapshot())
	}
	a.AddChecks(run.Finish(eng.Conns.Connections()))
	if err := a.WriteTable(io.Discard); err != nil {
		b.Fatal(err)
	}
	if err := a.WriteJSON(io.Discard); err != nil {
		b.Fatal(err)
	}
}

// TestSpillDiskFull: when writing the spill's file or a table's rows
// fails partway (a full disk), what was written comes back to memory and
// the spill goes on there: analyze and check write what they write with
// everything kept, at the default connection table and at 20 (forgotten
// connections, compacted at every forget), rather than fail; the disk
// filling at 3 KB and at 30 KB. It fails when the record that did not fit
// is lost, or a table's rows written before (both tried).
func TestSpillDiskFull(t *testing.T) {
	defer func(after, rows int, full, at int64) {
		spillConnsAfter, rowSpillAt, spillDiskFull, compactAt = after, rows, full, at
	}(spillConnsAfter, rowSpillAt, spillDiskFull, compactAt)
	spillConnsAfter, compactAt = 0, 1
	moved := 0
	for _, f := range spillCopies(t) {
		for _, opts := range []dissect.Options{{}, {MaxConnections: 20}} {
			for _, full := range []int64{3 << 10, 30 << 10} {
				spillDiskFull, rowSpillAt = 0, 256<<10
				wantT, wantJ, _ := analyzeChecked(t, f, opts, check.Config{}, false)
				wantC, _ := checkFileOf(t, f, opts, check.Config{}, nil, false)
				want := checkOutputs(t, []CheckFile{wantC})
				spillDiskFull, rowSpillAt = full, 1000
				gotT, gotJ, _ := analyzeChecked(t, f, opts, check.Config{}, true)
				if gotT != wantT || gotJ != wantJ {
					t.Errorf("%s %+v: analyze differs when the disk fills", f, opts)
				}
				gotC, _ := checkFileOf(t, f, opts, check.Config{}, nil, true)
				if gotC.spill.InMemory() && gotC.spill.Len() > 0 {
					moved++
				}
				got := checkOutputs(t, []CheckFile{gotC})
				for k := range want {
					if got[k] != want[k] {
						t.Errorf("%s %+v: check %s differs when the disk fills", f, opts, k)
					}
				}
				gotC.spill.Close()
			}
		}
	}
	if moved == 0 {
		t.Fatal("no spill moved to memory: the test proves little")
	}
}
