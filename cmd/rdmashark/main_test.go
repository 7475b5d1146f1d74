package main

import (
	"encoding/json"
	"os"
	"testing"
)

// childEnv makes the test binary, run again, the rdmashark command whose
// arguments the variable holds (a JSON list): tests that send the process
// a signal run it in a child (interrupt_linux_test.go).
const childEnv = "RDMASHARK_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == captureChildArg {
		// capture runs this binary as its capture process
		// (capture_run.go; first: it inherits childEnv).
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if a := os.Getenv(childEnv); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
