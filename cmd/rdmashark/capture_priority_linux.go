//go:build linux

package main

import "golang.org/x/sys/unix"

// lowerThreadPriority sets the calling thread's niceness (Linux: a
// thread's, with its tid); an error leaves it as it was.
func lowerThreadPriority(nice int) {
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), nice)
}
