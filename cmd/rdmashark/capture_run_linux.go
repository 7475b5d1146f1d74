//go:build linux

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// childProcAttr: the capture process gets SIGTERM when the analysing
// process dies (prctl PR_SET_PDEATHSIG), and stops as on Ctrl-C: its
// file ends whole.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// readerProcessAvailable: a capture process can run here.
const readerProcessAvailable = true

// framePipeSize is what the frame stream's pipe is grown to
// (F_SETPIPE_SZ), or to /proc/sys/fs/pipe-max-size when the kernel
// refuses: room for the analysis to fall behind by, beside the capture
// process's engine buffers, before frames go to the file only.
const framePipeSize = 8 << 20

// growPipe enlarges the pipe w writes into, as far as the kernel lets it.
func growPipe(w *os.File) {
	fd := int(w.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, framePipeSize); err == nil {
		return
	}
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		if n > 0 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, n)
		}
	}
}

// mayCapture reports whether this thread has CAP_NET_RAW in its effective
// set. A capture process of root's would get it back at exec even when it
// was dropped here: without it, the reader stays in this process, whose
// live.Open then says what is missing.
func mayCapture() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_NET_RAW) != 0
}
