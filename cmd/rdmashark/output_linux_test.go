package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rdmashark/rdmashark/internal/mountnstest"
)

// pcapngMagic begins every pcapng file (its Section Header Block type).
var pcapngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

// runChildIO runs the command line args in a child process (TestMain's
// childEnv) with the given standard input (nil: none), its standard output
// and error a pipe each.
func runChildIO(t *testing.T, stdin *os.File, args ...string) (int, string, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(a))
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// TestOutputsOntoDevices (issue 29 points 1, 2): as root, every output
// flag pointed at /dev/null used to replace the device node with a regular
// file holding the output (the temporary file renamed onto it), and at a
// FIFO to replace the FIFO (its reader waited for ever). Now a device or a
// FIFO is written directly and stays what it was. In a private mount
// namespace on a tmpfs with a null device node of its own.
func TestOutputsOntoDevices(t *testing.T) {
	dir, inside := mountnstest.Tmpfs(t, "size=16m")
	if !inside {
		return
	}
	null := filepath.Join(dir, "null")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	isNull := func(t *testing.T) {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Stat(null, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
			t.Fatalf("%s is no longer the null device: mode %#o, rdev %#x, %d bytes", null, st.Mode, st.Rdev, st.Size)
		}
	}
	for _, args := range [][]string{
		{"check", "--allow-empty", "-o", null, rpingPcap},
		{"check", "--allow-empty", "--format", "json", "-o", null, rpingPcap},
		{"check", "--allow-empty", "--write-baseline", null, "-o", filepath.Join(dir, "r.txt"), rpingPcap},
		{"check", "--allow-empty", "--annotate", null, "-o", filepath.Join(dir, "r2.txt"), rpingPcap},
		{"report", "-o", null, rpingPcap},
		{"dissect", "-w", null, rpingPcap},
	} {
		code, out, errs := runCmd(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		isNull(t)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// A FIFO: its reader gets the output, and it stays a FIFO.
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []byte
	}{
		{[]string{"check", "--allow-empty", "-o", fifo, rpingPcap}, []byte("passed")},
		{[]string{"report", "-o", fifo, rpingPcap}, []byte("<html")},
		{[]string{"dissect", "-w", fifo, rpingPcap}, pcapngMagic},
		{[]string{"check", "--allow-empty", "-o", filepath.Join(dir, "r3.txt"), "--annotate", fifo, rpingPcap}, pcapngMagic},
	} {
		got := make(chan []byte, 1)
		go func() {
			f, err := os.Open(fifo) // waits for the writer
			if err != nil {
				got <- nil
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- b
		}()
		code, out, errs := runCmd(t, c.args...)
		// Should rdmashark not have opened the FIFO, let the reader go.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		b := <-got
		if code != 0 {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out, errs)
		}
		if !bytes.Contains(b, c.want) {
			t.Errorf("%v: the FIFO's reader got %d bytes without %q", c.args, len(b), c.want)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("%v: %s is no longer a FIFO: %v %v", c.args, fifo, fi.Mode(), err)
		}
	}
}

// TestOutputStandardStreams (issue 29 point 2): -o /dev/stdout and
// /dev/stderr failed (exit 2) when they were pipes; "-" now means standard
// output for every flag that takes an output file.
func TestOutputStandardStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args   []string
		stdout []byte // in standard output
		stderr []byte // in standard error
	}{
		{[]string{"check", "--allow-empty", "-o", "/dev/stdout", rpingPcap}, []byte("passed"), nil},
		{[]string{"check", "--allow-empty", "-o", "/dev/stderr", rpingPcap}, nil, []byte("passed")},
		{[]string{"check", "--allow-empty", "-o", "/dev/fd/1", rpingPcap}, []byte("passed"), nil},
		{[]string{"check", "--allow-empty", "-o", "-", rpingPcap}, []byte("passed"), nil},
		{[]string{"check", "--allow-empty", "--write-baseline", "-", "-o", filepath.Join(dir, "a.txt"), nfs3Pcap}, []byte(`"rule"`), nil},
		{[]string{"check", "--allow-empty", "--annotate", "-", "-o", filepath.Join(dir, "b.txt"), rpingPcap}, pcapngMagic, nil},
		{[]string{"report", "-o", "/dev/stdout", rpingPcap}, []byte("<html"), nil},
		{[]string{"dissect", "-w", "/dev/stdout", rpingPcap}, pcapngMagic, nil},
	} {
		code, out, errs := runChildIO(t, nil, c.args...)
		if code != 0 || !bytes.Contains([]byte(out), c.stdout) || !bytes.Contains([]byte(errs), c.stderr) {
			t.Errorf("%v: exit %d, want 0 and %q in stdout, %q in stderr\nstdout: %.300s\nstderr: %s", c.args, code, c.stdout, c.stderr, out, errs)
		}
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
	// Two outputs on standard output are refused before reading.
	for _, args := range [][]string{
		{"check", "--annotate", "-", rpingPcap},
		{"check", "--write-baseline", "-", rpingPcap},
		{"check", "-o", "-", "--annotate", "-", rpingPcap},
		{"check", "-o", "/dev/stdout", "--annotate", "-", rpingPcap},
		{"check", "--annotate", "/dev/fd/1", rpingPcap},
	} {
		if code, _, errs := runCmd(t, args...); code != 2 || !strings.Contains(errs, "both write to standard output") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

// TestOutputNotStandardInput (issue 29 point 4): -o in.pcap - < in.pcap
// replaced the capture being read: the same-file guard skipped standard
// input. It now compares the file standard input is.
func TestOutputNotStandardInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	orig, err := os.ReadFile(rpingPcap)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	other := filepath.Join(dir, "other.pcap")
	for _, args := range [][]string{
		{"check", "--allow-empty", "-o", in, "-"},
		{"check", "--allow-empty", "--write-baseline", in, "-o", filepath.Join(dir, "r.txt"), "-"},
		{"report", "-o", in, "-"},
		{"dissect", "-w", in, "-"},
		{"dissect", "-w", in, "-r", "-"},
	} {
		for _, name := range []string{in, other} {
			if err := os.WriteFile(name, orig, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Reading another file on standard input, in.pcap may be written
		// (the control: the guard looks at what standard input is).
		for _, stdin := range []string{in, other} {
			f, err := os.Open(stdin)
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runChildIO(t, f, args...)
			f.Close()
			got, _ := os.ReadFile(in)
			if stdin == in {
				if code != 2 || !strings.Contains(errs, "standard input") || !strings.Contains(errs, "refusing to overwrite") {
					t.Errorf("%v < in.pcap: exit %d, want 2 and a refusal\n%s%s", args, code, out, errs)
				}
				if !bytes.Equal(got, orig) {
					t.Fatalf("%v < in.pcap: the capture now holds %d bytes, not its %d", args, len(got), len(orig))
				}
			} else if code != 0 || bytes.Equal(got, orig) {
				t.Errorf("%v < other.pcap: exit %d, in.pcap rewritten: %v\n%s", args, code, !bytes.Equal(got, orig), errs)
			}
		}
	}
}

// TestAnnotateReadsTwiceOnlyFiles (issue 29 point 3): check --annotate on
// a FIFO hung on its second read of the capture (and ignored the first
// SIGTERM). An input that cannot be read twice is refused before anything
// is read; the second read stops at a signal and leaves no file.
func TestAnnotateReadsTwiceOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "capture.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	out := filepath.Join(dir, "annotated.pcapng")
	// Nothing writes to the FIFO: reading it would wait for ever.
	for _, in := range []string{fifo, "/dev/zero", "-"} {
		code, _, errs := runCmd(t, "check", "--annotate", out, in)
		if code != 2 || !strings.Contains(errs, "read twice") {
			t.Errorf("--annotate %s: exit %d, want 2 and a refusal: %s", in, code, errs)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd := &cobra.Command{}
	cmd.SetContext(ctx)
	if err := annotateCapture(cmd, rpingPcap, out, nil); err != errInterrupted {
		t.Errorf("annotating after a signal: %v, want errInterrupted", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an interrupted annotation left its file")
	}
	cmd.SetContext(context.Background())
	if err := annotateCapture(cmd, rpingPcap, out, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, pcapngMagic) {
		t.Errorf("the annotated capture is not pcapng: % x", b[:min(len(b), 8)])
	}
}

// TestExportDiskFull (issue 29 point 5): a full disk left 0-byte and
// truncated Parquet part files that broke a later read of the dataset.
// Each part is now written under a hidden temporary name and renamed when
// complete, and a capture whose export failed leaves none of its parts: the
// parts already in the directory stay, every *.parquet file there is
// whole (Parquet's magic at both ends), no temporary file is left. On a
// 192 KiB tmpfs in a mount namespace of its own.
func TestExportDiskFull(t *testing.T) {
	dir, inside := mountnstest.Tmpfs(t, "size=192k")
	if !inside {
		return
	}
	out := filepath.Join(dir, "x")
	if code, _, errs := runCmd(t, "export", "--packets", "-o", out, rpingPcap); code != 0 {
		t.Fatalf("exporting rping: exit %d %s", code, errs)
	}
	code, _, errs := runCmd(t, "export", "--packets", "-o", out, nfs3Pcap)
	if code != 2 || !strings.Contains(errs, "no space left on device") {
		t.Fatalf("exporting rxe-nfs3 on a full disk: exit %d, want 2 and ENOSPC: %s", code, errs)
	}
	parts := 0
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".tmp"):
			t.Errorf("temporary file left: %s", p)
		case strings.HasSuffix(p, ".parquet"):
			parts++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
				t.Errorf("%s: not a whole Parquet file (%d bytes)", p, len(b))
			}
			if strings.Contains(filepath.Base(p), "part-1") {
				t.Errorf("%s: a part of the failed export is left", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if parts == 0 {
		t.Error("the first export's parts are gone")
	}
}

// TestSignalWhileWaitingForFIFOReader (issue 29 point 3): an output FIFO
// nobody reads makes the output wait for its reader, as a shell's
// redirection does; SIGTERM then stopped nothing (the first signal only
// cancels the read, which was over). It now ends the wait: exit 2, saying
// so. The signal is sent once the child is seen waiting in the kernel's
// FIFO open (its wchan).
func TestSignalWhileWaitingForFIFOReader(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	for _, args := range [][]string{
		{"check", "--allow-empty", "-o"},
		{"dissect", "-w"},
	} {
		fifo := filepath.Join(t.TempDir(), "out.fifo")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		a, _ := json.Marshal(append(append([]string(nil), args...), fifo, rpingPcap))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(a))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if !waitInFIFOOpen(cmd.Process.Pid, exited) {
			cmd.Process.Kill()
			t.Fatalf("%v: the child never waited in the FIFO's open\n%s", args, stderr.String())
		}
		if err := cmd.Process.Signal(unix.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: no exit after SIGTERM while waiting for the FIFO's reader", args)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "waiting for a reader") {
			t.Errorf("%v: %v, want exit 2 and why\n%s", args, err, stderr.String())
		}
	}
}

// waitInFIFOOpen waits (up to 20 s) until a thread of process pid sleeps
// in the kernel's FIFO open; false if it exits or never does.
func waitInFIFOOpen(pid int, exited chan error) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return false
		default:
		}
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, w := range tasks {
			if b, _ := os.ReadFile(w); strings.Contains(string(b), "fifo_open") || strings.Contains(string(b), "wait_for_partner") {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
