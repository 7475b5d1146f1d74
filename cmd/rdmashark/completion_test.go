package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/fields"
)

// complete runs cobra's hidden __complete command as the shell scripts do
// and returns the offered values (descriptions cut off).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d %s", args, code, errs)
	}
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") {
			continue
		}
		vals = append(vals, strings.SplitN(l, "\t", 2)[0])
	}
	return vals
}

func TestCompletion(t *testing.T) {
	// -e: every field starting with the prefix, as the field table has them.
	var want []string
	for _, f := range fields.Registry.Sorted() {
		if strings.HasPrefix(f.Name, "infiniband.reth.") {
			want = append(want, f.Name)
		}
	}
	if got := complete(t, "dissect", "-e", "infiniband.reth."); len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("-e infiniband.reth.: %v, want %v", got, want)
	}
	if got := complete(t, "check", "--format", ""); strings.Join(got, " ") != "text json junit sarif" {
		t.Errorf("check --format: %v", got)
	}
	// -T: every output type dissect takes, each accepted by dissect.
	if got := complete(t, "dissect", "-T", ""); strings.Join(got, " ") != "text json ek jsonl fields" {
		t.Errorf("dissect -T: %v", got)
	} else {
		for _, ty := range got {
			args := []string{"dissect", "-T", ty, "-c", "1", rpingPcap}
			if ty == "fields" {
				args = append(args, "-e", "frame.number")
			}
			if code, _, stderr := runCmd(t, args...); code != 0 {
				t.Errorf("dissect -T %s: exit %d, %s", ty, code, stderr)
			}
		}
	}
	if got := complete(t, "check", "--fail-on", ""); strings.Join(got, " ") != "info warning error" {
		t.Errorf("--fail-on: %v", got)
	}
	// Rule IDs, after a comma too; every INV- rule of the table.
	var inv []string
	for _, r := range check.Rules() {
		if strings.HasPrefix(r.ID, "INV-") {
			inv = append(inv, "PSN-GAP,"+r.ID)
		}
	}
	if got := complete(t, "check", "--disable", "PSN-GAP,inv-"); len(inv) == 0 || strings.Join(got, " ") != strings.Join(inv, " ") {
		t.Errorf("--disable PSN-GAP,inv-: %v, want %v", got, inv)
	}
	if got := complete(t, "rules", "INV-NOT"); strings.Join(got, " ") != "INV-NOT-NEGOTIATED" {
		t.Errorf("rules INV-NOT: %v", got)
	}
	// capture -i: the interfaces here (lo at least) and the RDMA devices
	// of a fake sysfs.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "class/infiniband/rxe7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "class/infiniband/rxe7/parent"), []byte("nosuchnetdev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := complete(t, "capture", "--sysfs", root, "-i", "")
	if !strings.Contains(" "+strings.Join(got, " ")+" ", " lo ") || !strings.Contains(strings.Join(got, " "), "rxe7") {
		t.Errorf("capture -i: %v", got)
	}
}
