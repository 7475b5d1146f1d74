//go:build !unix

package main

import "os"

// terminalWidth: no terminal is recognised on this system; the width
// comes from COLUMNS or the default.
func terminalWidth(*os.File) (isTerminal bool, width int) { return false, 0 }
