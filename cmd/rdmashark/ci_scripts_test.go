package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCIScripts: the CI-gate example's scripts (README "Use it as a CI
// gate") at least parse as POSIX shell. Running them needs rdma_rxe and the
// NFS/RDMA kernel modules, which the test machine does not have.
func TestCIScripts(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	scripts, _ := filepath.Glob("../../ci/*.sh")
	if len(scripts) < 2 {
		t.Fatalf("ci/ scripts missing: %v", scripts)
	}
	for _, s := range scripts {
		if out, err := exec.Command(sh, "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
	}
}
