package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// forEachOrdered hands results out in input order whatever order the work
// finishes in, never runs more than jobs at once, and stops handing out
// work after an emit error.
func TestForEachOrdered(t *testing.T) {
	for _, jobs := range []int{1, 2, 3, 8} {
		var running, most atomic.Int32
		var got []int
		err := forEachOrdered(40, jobs, func(i int) int {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			running.Add(-1)
			return i * i
		}, func(i, r int) error {
			if r != i*i {
				t.Errorf("jobs %d: result %d for %d", jobs, r, i)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int, 40)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(got, want) {
			t.Errorf("jobs %d: emitted %v", jobs, got)
		}
		if m := most.Load(); m > int32(jobs) {
			t.Errorf("jobs %d: %d ran at once", jobs, m)
		}
	}
	var started atomic.Int32
	stop := os.ErrClosed
	err := forEachOrdered(100, 2, func(i int) int { started.Add(1); return i }, func(i, _ int) error {
		if i == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("emit error: got %v", err)
	}
	// At most the window (2×jobs) past the failed one was handed out.
	if n := started.Load(); n > 3+1+4 {
		t.Errorf("%d started after an emit error at 3", n)
	}
}

// Directories are searched recursively for captures only, globs expanded,
// -r and arguments combined in the order given, duplicates read once.
func TestInputNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.pcap", "a.pcapng", "sub/c.pcap.gz", "sub/notes.txt", "d.cap", "sub/e.pcapng.zst", "sub/f.pcap.lz4", "sub/g.zst"} {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(n string) string { return filepath.Join(dir, n) }
	in := inputs{read: []string{j("d.cap")}, jobs: 2}
	got, err := in.names([]string{dir, j("*.pcap"), "-"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{j("d.cap"), j("a.pcapng"), j("b.pcap"), j("sub/c.pcap.gz"), j("sub/e.pcapng.zst"), j("sub/f.pcap.lz4"), "-"}
	if !slices.Equal(got, want) {
		t.Errorf("names:\n got %q\nwant %q", got, want)
	}
	for _, bad := range [][]string{{}, {j("*.nothing")}, {j("sub/notes.txt"), filepath.Join(dir, "empty*")}} {
		in := inputs{jobs: 1}
		if _, err := in.names(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := (&inputs{jobs: 0}).names([]string{dir}); err == nil {
		t.Error("--jobs 0 accepted")
	}
}

// A capture compressed by the zstd or lz4 tool (testdata/pcaps/compressed)
// gives the report of the uncompressed capture, in text and JSON, analyze
// and check, but for the file's name.
func TestCompressedCaptureReport(t *testing.T) {
	for _, c := range []struct{ compressed, plain string }{
		{"../../testdata/pcaps/compressed/rxe-rping.pcap.zst", rpingPcap},
		{"../../testdata/pcaps/compressed/siw-rping.pcap.lz4", "../../testdata/pcaps/siw-rping.pcap"},
	} {
		// --wide: the text not wrapped, so that the names' lengths move no line break.
		for _, args := range [][]string{{"analyze", "--wide"}, {"analyze", "--format", "json"}, {"check", "--wide"}, {"check", "--format", "json"}} {
			code, got, stderr := runCmd(t, append(slices.Clone(args), c.compressed)...)
			wcode, want, _ := runCmd(t, append(slices.Clone(args), c.plain)...)
			if code != wcode || stderr != "" {
				t.Fatalf("%s %v: exit %d (want %d), stderr %q", c.compressed, args, code, wcode, stderr)
			}
			if !strings.Contains(got, c.compressed) || strings.ReplaceAll(got, c.compressed, c.plain) != want {
				t.Errorf("%s %v: the report differs from %s's:\n%s\n----\n%s", c.compressed, args, c.plain, got, want)
			}
		}
	}
}

// analyze, transactions and exchanges take several captures: with --format json the
// output is an array whose elements are exactly the one-capture documents,
// in input order, whatever --jobs; check takes -r.
func TestSeveralCaptures(t *testing.T) {
	files := []string{nfs3Pcap, rpingPcap, "../../testdata/pcaps/siw-nfs3.pcap"}
	for _, cmd := range []string{"analyze", "transactions", "exchanges"} {
		var single []any
		for _, f := range files {
			code, out, errs := runCmd(t, cmd, "--format", "json", f)
			if code != 0 {
				t.Fatalf("%s %s: exit %d: %s", cmd, f, code, errs)
			}
			var doc any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			single = append(single, doc)
		}
		for _, jobs := range []string{"1", "3"} {
			args := append([]string{cmd, "--format", "json", "--jobs", jobs, "-r", files[0]}, files[1:]...)
			code, out, errs := runCmd(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			var many []any
			if err := json.Unmarshal([]byte(out), &many); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			if len(many) != len(single) {
				t.Fatalf("%v: %d documents", args, len(many))
			}
			for i := range many {
				a, _ := json.Marshal(many[i])
				b, _ := json.Marshal(single[i])
				if string(a) != string(b) {
					t.Errorf("%v: document %d differs from %s alone", args, i, files[i])
				}
			}
		}
	}
	// An unreadable capture among readable ones: exit 2, its place kept.
	code, out, _ := runCmd(t, "analyze", "--format", "json", rpingPcap, "/nonexistent.pcap")
	var many []map[string]any
	if err := json.Unmarshal([]byte(out), &many); err != nil || code != exitUsage || len(many) != 2 || many[1]["errors"] == nil {
		t.Errorf("unreadable among several: exit %d, %v, %v", code, err, many)
	}
	// check -r, as the README promises (rping carries no RPC-over-RDMA: the
	// gate allows it only with --allow-empty).
	if code, out, errs := runCmd(t, "check", "--allow-empty", "-r", rpingPcap); code != 0 || !strings.Contains(out, "passed") {
		t.Errorf("check -r: exit %d\n%s%s", code, out, errs)
	}
}
