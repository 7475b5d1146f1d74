package outfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leftovers lists the temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.rdmashark-*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRefusesInputs: the destination may not be an input however it is
// named; the input keeps its bytes.
func TestRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	write(t, in, "capture bytes")
	hard := filepath.Join(dir, "hard.pcap")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.pcap")
	if err := os.Symlink("in.pcap", sym); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Symlink(".", sub); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ out, in string }{
		{in, in},
		{hard, in},                          // hard link
		{sym, in},                           // symbolic link to the input
		{in, sym},                           // the input named through a link
		{filepath.Join(sub, "in.pcap"), in}, // through a linked directory
		{filepath.Join(dir, ".", "in.pcap"), in},
	}
	for _, c := range cases {
		f, err := Create(c.out, "-", filepath.Join(dir, "absent"), c.in)
		if !errors.Is(err, ErrIsInput) {
			if f != nil {
				f.Abort()
			}
			t.Errorf("Create(%s) with input %s: %v, want ErrIsInput", c.out, c.in, err)
			continue
		}
		if !strings.Contains(err.Error(), c.out) {
			t.Errorf("the error does not name %s: %v", c.out, err)
		}
		if err := Write(c.out, []string{c.in}, func(w io.Writer) error { _, err := io.WriteString(w, "report"); return err }); !errors.Is(err, ErrIsInput) {
			t.Errorf("Write(%s): %v", c.out, err)
		}
	}
	if got := read(t, in); got != "capture bytes" {
		t.Errorf("the input now holds %q", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
	// A different file, even with the same content, is no input.
	other := filepath.Join(dir, "copy.pcap")
	write(t, other, "capture bytes")
	if err := Write(other, []string{in}, func(w io.Writer) error { _, err := io.WriteString(w, "report"); return err }); err != nil {
		t.Fatal(err)
	}
	if got := read(t, other); got != "report" {
		t.Errorf("%s holds %q", other, got)
	}
}

// TestCommitAbort: nothing under the name before Commit; Abort and a failed
// writer leave the old content and no temporary file.
func TestCommitAbort(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.txt")
	write(t, out, "old")
	f, err := Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "new report"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, out); got != "old" {
		t.Errorf("before Commit the destination holds %q", got)
	}
	if l := leftovers(t, dir); len(l) != 1 || filepath.Dir(l[0]) != dir {
		t.Errorf("temporary files while writing: %v (want one beside the destination)", l)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, out); got != "new report" {
		t.Errorf("after Commit the destination holds %q", got)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after Commit: %v", err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("Write after Commit succeeded")
	}

	f, err = Create(out)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "half")
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(out, nil, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Errorf("Write: %v, want the writer's error", err)
	}
	if got := read(t, out); got != "new report" {
		t.Errorf("after Abort the destination holds %q", got)
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}
	// A new file gets the mode os.Create gives (0666 less the umask), not
	// CreateTemp's 0600.
	fresh := filepath.Join(dir, "fresh.txt")
	if err := Write(fresh, nil, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref.txt")
	rf, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	rf.Close()
	a, _ := os.Stat(fresh)
	b, _ := os.Stat(ref)
	if a.Mode() != b.Mode() {
		t.Errorf("mode %v, os.Create gives %v", a.Mode(), b.Mode())
	}
}

// TestSymlinkDestination: writing through a link replaces its target and
// keeps the link.
func TestSymlinkDestination(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	write(t, target, "old")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, nil, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link: %v %v", link, fi.Mode(), err)
	}
	if got := read(t, target); got != "new" {
		t.Errorf("the target holds %q", got)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	missing := filepath.Join(dir, "no", "such", "dir", "out.txt")
	_, err := Create(missing)
	if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("a missing directory: %v (want the destination named, not the temporary file)", err)
	}
}

// helperEnv makes the test binary, run again, the killed writer of
// TestKilled.
const helperEnv = "OUTFILE_TEST_KILLED_WRITER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		killedWriter(name)
		return
	}
	os.Exit(m.Run())
}

// killedWriter writes 64 MiB to name, says "half" on standard output half
// way, and waits there to be killed.
func killedWriter(name string) {
	f, err := Create(name)
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(3)
	}
	chunk := bytes.Repeat([]byte("new report line\n"), 4096) // 64 KiB
	for i := range 1024 {
		if i == 512 {
			os.Stdout.WriteString("half\n")
			time.Sleep(time.Minute)
		}
		f.Write(chunk)
	}
	f.Commit()
}

// TestKilled kills (SIGKILL) a process half way through a large output:
// the destination keeps its old content, or stays absent, and no part of
// the new output appears under its name.
func TestKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	for _, existed := range []bool{true, false} {
		dir := t.TempDir()
		out := filepath.Join(dir, "report.txt")
		if existed {
			write(t, out, "old report\n")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+out)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || line != "half\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the writer did not get half way: %q %v\n%s", line, err, stderr.String())
		}
		// 32 MiB are written by now, into the temporary file.
		tmps := leftovers(t, dir)
		if len(tmps) != 1 {
			t.Fatalf("temporary files: %v", tmps)
		}
		if fi, err := os.Stat(tmps[0]); err != nil || fi.Size() != 32<<20 {
			t.Fatalf("temporary file: %v %v", fi, err)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the writer was not killed: %v", err)
		}
		if existed {
			if got := read(t, out); got != "old report\n" {
				t.Errorf("after the kill the destination holds %d bytes, not its old content", len(got))
			}
		} else if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after the kill the destination exists: %v", err)
		}
		// The only other file is the temporary one, under its own name.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if p := filepath.Join(dir, e.Name()); p != out && p != tmps[0] {
				t.Errorf("unexpected file %s", p)
			}
		}
	}
}
