//go:build unix

package outfile

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fdName reports whether name names one of this process's descriptors:
// /dev/stdout, /dev/stderr, /dev/stdin, /dev/fd/N, /proc/self/fd/N.
func fdName(name string) (int, bool) {
	switch name {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, p := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// dupFile is a new descriptor for fd, closed on exec.
func dupFile(fd int, name string) (*os.File, error) {
	syscall.ForkLock.RLock()
	nfd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// fstat is the identity of the file open as fd.
func fstat(fd int, name string) (fs.FileInfo, error) {
	f, err := dupFile(fd, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}
