package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/internal/outfile"
)

// Output files (issue 29 points 1, 2, 4). Every flag that names an output
// file takes "-" for standard output; any other name is written through
// internal/outfile: refused when it is one of the inputs (standard input
// included, "-"), written to a temporary file and renamed into place when
// it is a regular file or a new name, written directly when it is a
// device, a FIFO, a socket or a descriptor (/dev/stdout, /dev/fd/N).

// isStdout reports whether an output flag's value means standard output.
func isStdout(name string) bool { return name == "-" }

// toStdout reports whether an output flag's value names standard output:
// "-" or one of the names of descriptor 1.
func toStdout(name string) bool {
	switch name {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// checkOutput says up front (before reading anything) that name may not be
// written: it is one of inputs.
func checkOutput(name string, inputs ...string) error {
	if name == "" || isStdout(name) {
		return nil
	}
	return outfile.CheckNotInput(name, inputs...)
}

// writeOutput writes name through fn: standard output for "-" (or ""),
// else through internal/outfile.
func writeOutput(cmd *cobra.Command, name string, inputs []string, fn func(io.Writer) error) error {
	if name == "" || isStdout(name) {
		return fn(cmd.OutOrStdout())
	}
	release, err := waitFIFOReader(name)
	if err != nil {
		return err
	}
	defer release()
	return outfile.Write(name, inputs, fn)
}

// waitFIFOReader waits, when name is a FIFO, for a reader to open it —
// or for SIGINT or SIGTERM, which then end the wait with errInterrupted
// (issue 29 point 3: a signal always stops the process, even one that
// comes after the read, while the output waits for its reader). The FIFO
// stays open until release, so that the output's own open finds its
// reader there.
func waitFIFOReader(name string) (release func(), err error) {
	fi, err := os.Stat(name)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return func() {}, nil
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0) // waits for a reader
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, o.err
		}
		return func() { o.f.Close() }, nil
	case <-sigs:
		return nil, fmt.Errorf("%s: %w while waiting for a reader of the FIFO", printable(name), errInterrupted)
	}
}

// sameOutputs refuses two output flags ({flag, value}; "" is unset) that
// name one file, or both standard output.
func sameOutputs(outs [][2]string) error {
	for i, a := range outs {
		for _, b := range outs[i+1:] {
			if a[1] == "" || b[1] == "" {
				continue
			}
			same := filepath.Clean(a[1]) == filepath.Clean(b[1]) || (toStdout(a[1]) && toStdout(b[1]))
			if !same && !toStdout(a[1]) && !toStdout(b[1]) {
				fa, erra := os.Stat(a[1])
				fb, errb := os.Stat(b[1])
				same = erra == nil && errb == nil && os.SameFile(fa, fb) && fa.Mode().IsRegular()
			}
			if same {
				if toStdout(a[1]) {
					return usageErr("%s and %s both write to standard output", a[0], b[0])
				}
				return usageErr("%s and %s name the same file %s", a[0], b[0], a[1])
			}
		}
	}
	return nil
}

// printable is a name (a file's, a capture's) as text outputs print it:
// escaped as tshark escapes text (fields.Escape), so that a file name
// holding an escape sequence or a newline cannot reach the terminal raw.
func printable(name string) string { return fields.Escape(name) }

// openCaptureFile opens capture -w's file, written in place (it must be
// readable while the capture runs and keep every flushed packet when the
// capture is killed): "-" is standard output, /dev/stdout and the like
// the descriptor, a device or a FIFO as it is.
func openCaptureFile(name string) (*os.File, error) {
	if isStdout(name) {
		name = "/dev/stdout"
	}
	return outfile.OpenInPlace(name)
}

// errText is an error (or warning) as printed on standard error: each of
// its lines escaped (printable), since it may quote a file's name or bytes
// of the capture.
func errText(err any) string {
	var s string
	switch e := err.(type) {
	case error:
		s = e.Error()
	case string:
		s = e
	default:
		s = fmt.Sprint(e)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return strings.Join(lines, "\n")
}
