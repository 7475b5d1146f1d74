//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth reports whether f is a terminal and, when it is, its
// width in columns (0 when the terminal does not say).
func terminalWidth(f *os.File) (isTerminal bool, width int) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return false, 0
	}
	return true, int(ws.Col)
}
