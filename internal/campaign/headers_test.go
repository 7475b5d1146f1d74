package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMutationsReachTheOutput: hostile text written into rxe-nfs3's
// strings with the CRCs recomputed reaches the dissection (the AUTH_SYS
// machine name changes, no packet is dropped as a bad CRC), and header
// edits keep every frame's CRC valid.
func TestMutationsReachTheOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs rdmashark")
	}
	orig, err := os.ReadFile("../../testdata/pcaps/rxe-nfs3.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rdmashark")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rdmashark").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(b []byte, args ...string) string {
		name := filepath.Join(dir, "in.pcap")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, append(args, name)...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out)
	}
	names := []string{"dissect", "-T", "fields", "-e", "rpc.auth.machinename", "-e", "rdmashark.icrc.status"}
	before := run(orig, names...)
	rng := rand.New(rand.NewPCG(1, 2))
	changed := false
	for range 20 {
		b := bytes.Clone(orig)
		if hostileStrings(rng, b) == "" {
			t.Fatal("no string found in rxe-nfs3")
		}
		after := run(b, names...)
		if strings.Count(after, "\n") != strings.Count(before, "\n") {
			t.Fatalf("%d lines, want %d", strings.Count(after, "\n"), strings.Count(before, "\n"))
		}
		if strings.Count(after, "bad") != strings.Count(before, "bad") {
			t.Fatalf("a recomputed ICRC is bad:\n%s", after)
		}
		if strings.Contains(after, `\x`) || strings.Contains(after, `\u`) || strings.Contains(after, `\n`) {
			changed = true
		}
	}
	if !changed {
		t.Error("20 hostile mutations never reached an AUTH_SYS machine name")
	}
	if editHeaders(rng, bytes.Clone(orig)) == "" {
		t.Error("no header edited in rxe-nfs3")
	}
}
