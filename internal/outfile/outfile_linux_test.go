package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmashark/rdmashark/internal/mountnstest"
)

// TestDeviceAndFIFOWrittenDirectly (issue 29 points 1, 2): a character
// device and a FIFO are opened and written, never replaced by a renamed
// temporary file; a disk that fills up leaves no temporary file and the
// destination untouched; a whole-writes file ends with its last whole
// write. On a tmpfs of 64 KiB in a mount namespace of its own.
func TestDeviceAndFIFOWrittenDirectly(t *testing.T) {
	dir, inside := mountnstest.Tmpfs(t, "size=64k")
	if !inside {
		return
	}
	null := filepath.Join(dir, "null")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	// A symbolic link to the device is followed; the link stays a link.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(null, link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{null, link} {
		if err := Write(name, nil, func(w io.Writer) error { _, err := w.Write(bytes.Repeat([]byte("x"), 1000)); return err }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var st unix.Stat_t
		if err := unix.Stat(null, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
			t.Fatalf("writing %s: the device node is now mode %#o rdev %#x (%v)", name, st.Mode, st.Rdev, err)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link is no longer a link: %v %v", fi.Mode(), err)
	}
	// A device is no input to protect: writing /dev/null while reading it.
	if err := CheckNotInput(null, null); err != nil {
		t.Errorf("a device refused as an input: %v", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR does not wait for a writer and keeps the FIFO open.
	r, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(fifo, nil, func(w io.Writer) error { _, err := w.Write([]byte("report\n")); return err }); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "report\n" {
		t.Errorf("the FIFO's reader got %q", buf[:n])
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v (%v)", fi.Mode(), err)
	}

	// Disk full: the temporary file is removed, the old content stays.
	out := filepath.Join(dir, "report.txt")
	write(t, out, "old\n")
	err = Write(out, nil, func(w io.Writer) error { _, err := w.Write(make([]byte, 128<<10)); return err })
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("writing 128 KiB on a 64 KiB tmpfs: %v, want ENOSPC", err)
	}
	if got := read(t, out); got != "old\n" {
		t.Errorf("after a full disk the destination holds %d bytes", len(got))
	}
	if l := leftovers(t, dir); len(l) != 0 {
		t.Errorf("temporary files left: %v", l)
	}

	// WholeWrites: a write the disk cannot hold is cut off again.
	f, err := OpenInPlace(filepath.Join(dir, "capture.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ww := NewWholeWrites(f)
	block := bytes.Repeat([]byte("b"), 10<<10)
	whole := 0
	for range 20 {
		n, err := ww.Write(block)
		if err != nil {
			if n != 0 {
				t.Errorf("a failed write reports %d bytes written", n)
			}
			break
		}
		whole += n
	}
	if whole == 0 || whole >= 20*len(block) {
		t.Fatalf("%d bytes written before the disk was full: the test did not fill it", whole)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(whole) {
		t.Errorf("the file holds %d bytes, want the %d of its whole writes", fi.Size(), whole)
	}
}

// TestStandardInputIsAnInput (issue 29 point 4): "-" among the inputs is
// the file standard input is.
func TestStandardInputIsAnInput(t *testing.T) {
	dir := t.TempDir()
	in, other := filepath.Join(dir, "in.pcap"), filepath.Join(dir, "other.pcap")
	write(t, in, "capture")
	write(t, other, "other")
	defer func(f func() (fs.FileInfo, error)) { stdinStat = f }(stdinStat)
	stdinStat = func() (fs.FileInfo, error) { return os.Stat(in) }
	if err := CheckNotInput(in, "-"); !errors.Is(err, ErrIsInput) {
		t.Errorf("in.pcap < in.pcap: %v, want ErrIsInput", err)
	}
	if _, err := Create(in, "-"); !errors.Is(err, ErrIsInput) {
		t.Errorf("Create: %v, want ErrIsInput", err)
	}
	if err := CheckNotInput(other, "-"); err != nil {
		t.Errorf("other.pcap while reading in.pcap: %v", err)
	}
}
