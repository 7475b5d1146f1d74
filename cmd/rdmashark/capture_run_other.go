//go:build !linux

package main

import (
	"os"
	"syscall"
)

func childProcAttr() *syscall.SysProcAttr { return nil }

// readerProcessAvailable: live capture needs Linux; the in-process reader
// says so.
const readerProcessAvailable = false

func growPipe(w *os.File) {}

func mayCapture() bool { return false }
