// Package outfile writes the files rdmashark produces (reports, baselines,
// saved or annotated captures) so that a run can never destroy its input
// and never leaves half a file under the name the user asked for.
//
// Every output goes through Create (or the Write shortcut):
//
//   - Create refuses a destination that is one of the run's inputs: the same
//     file by os.SameFile, however it is reached (the same path, a symbolic
//     link to it, a hard link, a path through a linked directory). The
//     error is ErrIsInput, wrapped with both names.
//   - The bytes go to a temporary file in the destination's directory
//     (".NAME.rdmashark-RANDOM.tmp", created with O_EXCL and mode 0666
//     before the umask, as os.Create would).
//   - Commit flushes the temporary file to disk (fsync), closes it and
//     renames it onto the destination, which therefore holds either its old
//     content or the whole new file, never a mix; then it syncs the
//     directory so that the rename itself survives a crash.
//   - Abort (or Close without Commit) closes and removes the temporary
//     file; the destination is untouched.
//   - A destination that is a symbolic link is resolved first: the file the
//     link points to is replaced and the link stays a link.
//
// A process killed outright (SIGKILL, power loss) cannot remove its
// temporary file: the destination keeps its old content (or stays absent)
// and a ".NAME.rdmashark-*.tmp" file may be left beside it.
//
// Use:
//
//	f, err := outfile.Create(out, inputs...)
//	if err != nil { return err }
//	defer f.Close()            // removes the temporary file unless committed
//	if err := writeReport(f); err != nil { return err }
//	return f.Commit()
//
// or, for an output written in one go, outfile.Write(out, inputs, writeReport).
// An input named "-" is this process's standard input: the check compares
// the file it is (cmd < in.pcap). Inputs that do not exist are ignored by
// the check. A destination of "-" is not special here: callers that let
// "-" mean standard output handle it before calling Create.
//
// Only a regular file (or a new name) is written through a temporary file
// and renamed into place. A destination that exists and is anything else —
// a character device (/dev/null, a terminal), a FIFO, a socket — is opened
// and written directly, as a shell's redirection would: renaming onto it
// would replace the node itself (as root, /dev/null would become a regular
// file holding the report) and a FIFO's reader would wait for ever. So are
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: the descriptor
// itself is written (a duplicate of it), whatever it is — a pipe, a socket,
// a bash process substitution >(cmd), a file opened for appending. The
// input check applies to regular files only: writing to a device or a pipe
// destroys nothing.
//
// Not for a file that must be readable while it grows (capture -w, whose
// every flushed packet must survive a kill): that one is written in place,
// after CheckNotInput.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrIsInput is the error of a destination that is one of the inputs.
var ErrIsInput = errors.New("is an input of this run: refusing to overwrite it")

// File is an output being written. It is an io.Writer; nothing appears
// under the destination's name until Commit.
type File struct {
	name   string // destination as given, for errors
	dst    string // destination with symbolic links resolved
	tmp    string // "" when written directly (not a regular file)
	f      *os.File
	done   bool
	direct bool
}

// stdinStat is the identity of this process's standard input, the input
// named "-".
var stdinStat = func() (fs.FileInfo, error) { return os.Stdin.Stat() }

// statOut is the file name would write to: the descriptor's file for the
// names of a descriptor, else os.Stat's.
func statOut(name string) (fs.FileInfo, error) {
	if fd, ok := fdName(name); ok {
		return fstat(fd, name)
	}
	return os.Stat(name)
}

// CheckNotInput returns an error wrapping ErrIsInput when name is the same
// file as one of inputs ("-": standard input). A name that does not exist
// yet is no input, nor is a destination that is not a regular file.
func CheckNotInput(name string, inputs ...string) error {
	out, err := statOut(name)
	if err != nil || !out.Mode().IsRegular() {
		return nil // absent (or unreadable: Create will say so), or a device, FIFO, socket
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		var fi fs.FileInfo
		if in == "-" {
			fi, err = stdinStat()
			in = "standard input"
		} else {
			fi, err = os.Stat(in)
		}
		if err != nil {
			continue
		}
		if os.SameFile(out, fi) {
			if in == name {
				return fmt.Errorf("%s: %w", name, ErrIsInput)
			}
			return fmt.Errorf("%s: the same file as %s, which %w", name, in, ErrIsInput)
		}
	}
	return nil
}

// Create checks that name is none of inputs and opens a temporary file
// beside it. Write to the File, then Commit it; Close without Commit
// discards it.
func Create(name string, inputs ...string) (*File, error) {
	if name == "" {
		return nil, errors.New("no output file name")
	}
	if err := CheckNotInput(name, inputs...); err != nil {
		return nil, err
	}
	if f, err := openDirect(name); f != nil || err != nil {
		return f, err
	}
	dst := name
	if fi, err := os.Lstat(name); err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			if dst, err = filepath.EvalSymlinks(name); err != nil {
				return nil, err
			}
			if fi, err = os.Stat(dst); err != nil {
				return nil, err
			}
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("%s: is a directory", name)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir, base := filepath.Split(dst)
	var suffix [6]byte
	for range 100 {
		if _, err := rand.Read(suffix[:]); err != nil {
			return nil, err
		}
		tmp := filepath.Join(dir, "."+base+".rdmashark-"+hex.EncodeToString(suffix[:])+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// Say it about the file the user named, not the temporary one.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, &fs.PathError{Op: "create", Path: name, Err: pe.Err}
			}
			return nil, err
		}
		return &File{name: name, dst: dst, tmp: tmp, f: f}, nil
	}
	return nil, fmt.Errorf("%s: no free temporary file name in %s", name, dir)
}

// openDirect opens name for writing in place when it is not to be
// replaced: a descriptor's name (dup'ed) or an existing file that is not a
// regular file (nor a directory). It returns nil, nil for the others.
func openDirect(name string) (*File, error) {
	if fd, ok := fdName(name); ok {
		f, err := dupFile(fd, name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &File{name: name, dst: name, f: f, direct: true}, nil
	}
	fi, err := os.Stat(name)
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return nil, nil
	}
	// A FIFO's open waits for its reader, as a shell's redirection does.
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	return &File{name: name, dst: name, f: f, direct: true}, nil
}

// Name is the destination as given to Create.
func (f *File) Name() string { return f.name }

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("%s: %w", f.name, os.ErrClosed)
	}
	return f.f.Write(p)
}

// Commit syncs and closes the temporary file and renames it onto the
// destination. After a failed Commit the temporary file is gone and the
// destination untouched.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: %w", f.name, os.ErrClosed)
	}
	f.done = true
	if f.direct {
		// Nothing to rename; a pipe or a device has nothing to sync.
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
		return nil
	}
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp, f.dst)
	}
	if err != nil {
		os.Remove(f.tmp)
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	// The rename is durable once the directory is; a directory that
	// cannot be synced (some file systems) does not undo the write.
	if d, err := os.Open(filepath.Dir(f.dst)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort discards the temporary file; the destination is untouched. It is
// a no-op after Commit or Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.f.Close()
	if f.direct {
		return err // what was written is gone already
	}
	if rerr := os.Remove(f.tmp); err == nil {
		err = rerr
	}
	return err
}

// Close is Abort: deferred after Create, it cleans up every path that did
// not reach Commit.
func (f *File) Close() error { return f.Abort() }

// Write creates name (refusing any of inputs), writes it through fn and
// commits it; if fn fails the destination is untouched.
func Write(name string, inputs []string, fn func(io.Writer) error) error {
	f, err := Create(name, inputs...)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f); err != nil {
		return err
	}
	return f.Commit()
}

// OpenInPlace opens name to be written in place, from its start, by a
// writer that must keep every byte it wrote (capture -w): a regular file
// is created or truncated, a device, FIFO or socket opened as it is, a
// descriptor's name (/dev/stdout, /dev/fd/N) duplicated. Wrap the file in
// NewWholeWrites so that a full disk does not leave part of a write at its
// end.
func OpenInPlace(name string) (*os.File, error) {
	if fd, ok := fdName(name); ok {
		f, err := dupFile(fd, name)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return f, nil
	}
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}
