package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputNeverAnInput (issue 13 point 4): check -o X X and
// --write-baseline X X used to replace the capture with the report. Now
// they are refused (exit 2) and the capture keeps every byte, however the
// output names it.
func TestOutputNeverAnInput(t *testing.T) {
	orig, err := os.ReadFile(rpingPcap)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	if err := os.WriteFile(in, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pcap")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.pcap")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.json")
	if code, out, errs := runCmd(t, "check", "--allow-empty", "--write-baseline", base, in); code != 0 {
		t.Fatalf("writing a baseline: exit %d\n%s%s", code, out, errs)
	}
	baseBytes, _ := os.ReadFile(base)
	for _, args := range [][]string{
		{"check", "-o", in, in},
		{"check", "-o", link, in},
		{"check", "-o", hard, in},
		{"check", "-o", in, rpingPcap, link},
		{"check", "--write-baseline", in, in},
		{"check", "--write-baseline", hard, in},
		{"check", "--baseline", base, "-o", base, in},
		{"check", "--baseline", base, "--write-baseline", base, in},
	} {
		code, out, errs := runCmd(t, args...)
		if code != 2 || !strings.Contains(errs, "refusing to overwrite") {
			t.Errorf("%v: exit %d, want 2 and a refusal\n%s%s", args, code, out, errs)
		}
		if got, _ := os.ReadFile(in); !bytes.Equal(got, orig) {
			t.Fatalf("%v: the capture now holds %d bytes, not its %d", args, len(got), len(orig))
		}
		if got, _ := os.ReadFile(base); !bytes.Equal(got, baseBytes) {
			t.Fatalf("%v: the baseline changed", args)
		}
	}
	if code, _, errs := runCmd(t, "check", "-o", filepath.Join(dir, "r.txt"), "--write-baseline", filepath.Join(dir, "r.txt"), in); code != 2 || !strings.Contains(errs, "same file") {
		t.Errorf("-o and --write-baseline on one file: exit %d %s", code, errs)
	}
	// A report written elsewhere is whole, and no temporary file is left.
	rep := filepath.Join(dir, "report.txt")
	if code, _, errs := runCmd(t, "check", "--allow-empty", "-o", rep, in); code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(rep); !strings.Contains(string(b), "passed") {
		t.Errorf("report: %s", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
