package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptedFIFO (issue 13 point 5): Ctrl-C while rdmashark waits on a
// FIFO whose writer is still there. The report covers the packets read and
// says the input was interrupted — analyze in text and JSON, exit 0, as
// capture's Ctrl-C; check fails the gate (exit 2) unless
// --fail-on-damage=false, in every format.
func TestInterruptedFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	data, err := os.ReadFile(rpingPcap)
	if err != nil {
		t.Fatal(err)
	}
	offs := pcapRecords(t, data)
	const sent = 40 // whole records written before the signal
	part := data[:offs[sent]]

	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"analyze"}, 0, []string{"<FIFO>: 40 packets", "INCOMPLETE: reading was interrupted by a signal after 40 packets"}},
		{[]string{"analyze", "--format", "json"}, 0, []string{`"interrupted": true`, `"packets": 40`}},
		{[]string{"check", "--allow-empty"}, 2, []string{"INCOMPLETE: reading was interrupted", "1 file incomplete", "FAILED (incomplete input fails the gate: --fail-on-damage)"}},
		{[]string{"check", "--allow-empty", "--fail-on-damage=false"}, 0, []string{"INCOMPLETE: reading was interrupted", "passed (on incomplete input: --fail-on-damage=false)"}},
		{[]string{"check", "--allow-empty", "--format", "json"}, 2, []string{`"interrupted": true`, `"incomplete": 1`, `"failed": true`}},
		{[]string{"check", "--allow-empty", "--format", "junit"}, 2, []string{`<testcase name="read capture whole"`, `type="incomplete"`}},
		{[]string{"check", "--allow-empty", "--format", "sarif"}, 2, []string{`"executionSuccessful": false`, "incomplete input: reading was interrupted"}},
		{[]string{"transactions", "--wide"}, 0, []string{"reading stopped early: interrupted by a signal before the end of the input after 40 packets"}},
		{[]string{"exchanges"}, 0, []string{"reading stopped early: interrupted by a signal before the end of the input after 40 packets"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "capture.fifo")
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
			args, _ := json.Marshal(append(c.args, fifo))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+string(args))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// O_RDWR does not wait for the reader; the write end stays
			// open, so the reader waits for more, as on a live pipe.
			w, err := os.OpenFile(fifo, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Write(part); err != nil {
				t.Fatal(err)
			}
			// Wait (bounded) until the reader has taken every byte.
			deadline := time.Now().Add(20 * time.Second)
			for {
				n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD: bytes unread in the pipe
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the reader left %d bytes in the FIFO", n)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// The bytes left the pipe; give the child a moment to process
			// them and wait on the next read (the report must count all
			// 40 whichever comes first: the signal stops the read only).
			time.Sleep(100 * time.Millisecond)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				t.Fatalf("no exit after SIGINT\n%s", stderr.String())
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out := strings.ReplaceAll(stdout.String(), fifo, "<FIFO>")
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, c.code, out, stderr.String())
			}
			for _, s := range c.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s\nstderr: %s", s, out, stderr.String())
				}
			}
		})
	}
}
