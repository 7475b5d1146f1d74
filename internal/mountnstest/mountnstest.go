//go:build linux

// Package mountnstest runs a test in a private mount namespace with a
// tmpfs of its own: a file system the test may fill up (size=), make
// device nodes and FIFOs in, and throw away, without touching the host's.
//
// Tmpfs, called at the top of a test, runs that test again in a child
// process (the test binary, -test.run=^Name$) started in a new mount
// namespace, and in the child mounts a tmpfs and returns its directory:
//
//	func TestDiskFull(t *testing.T) {
//		dir, inside := mountnstest.Tmpfs(t, "size=64k")
//		if !inside {
//			return // the child ran the test; its result is this test's
//		}
//		... // the test itself, writing under dir
//	}
//
// It needs root (CAP_SYS_ADMIN). Without it the test is skipped, saying
// why; with RDMASHARK_MOUNTNS_TESTS=require in the environment it fails
// instead, so that CI (which runs as root) cannot skip silently. Only
// top-level tests may call it.
package mountnstest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// EnvRequire, set to "require", turns the skips into failures.
const EnvRequire = "RDMASHARK_MOUNTNS_TESTS"

// envChild names, in the child, the test it runs and the tmpfs options.
const envChild = "RDMASHARK_MOUNTNS_CHILD"

// Tmpfs returns, in the child, a directory with a fresh tmpfs mounted on
// it (options as mount -o takes them, e.g. "size=64k") and true. In the
// parent it runs the child, reports its failure as this test's, and
// returns false: the caller returns at once.
func Tmpfs(t *testing.T, options string) (string, bool) {
	t.Helper()
	want := t.Name() + " " + options
	if os.Getenv(envChild) == want {
		return mountTmpfs(t, options), true
	}
	if os.Geteuid() != 0 {
		msg := "needs root: the test runs in a mount namespace of its own, on a tmpfs (CAP_SYS_ADMIN)"
		if os.Getenv(EnvRequire) == "require" {
			t.Fatalf("%s (and %s=require)", msg, EnvRequire)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+want)
	// A new mount namespace; Go makes its mounts private (MS_REC|MS_PRIVATE
	// on /), so nothing mounted in it reaches the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("in a private mount namespace: %v\n%s", err, out)
	case strings.Contains(string(out), "--- SKIP: "+t.Name()) && os.Getenv(EnvRequire) == "require":
		t.Fatalf("skipped in the mount namespace (and %s=require)\n%s", EnvRequire, out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()) && !strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Fatalf("the test did not run in the mount namespace\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("in a private mount namespace:\n%s", out)
	}
	return "", false
}

func mountTmpfs(t *testing.T, options string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rdmashark-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, options); err != nil {
		os.Remove(dir)
		t.Fatalf("mount -t tmpfs -o %s: %v", options, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("umount %s: %v", dir, err)
		}
		os.Remove(dir)
	})
	return dir
}
