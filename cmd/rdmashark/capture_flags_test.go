package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCaptureNoResolveFlag: `capture -ni IF`, as tcpdump and tshark users
// type it, is -n (no name resolution: rdmashark never resolves) and -i IF;
// with -d it prints the filter program without opening the interface.
func TestCaptureNoResolveFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"capture", "-ni", "lo", "-d"}, bytes.NewReader(nil), &out, &errb); rc != 0 {
		t.Fatalf("capture -ni lo -d: exit %d: %s", rc, errb.String())
	}
	if !strings.Contains(out.String(), "udp 4791") || !strings.Contains(out.String(), "(000)") {
		t.Errorf("capture -ni lo -d printed %q", out.String())
	}
}
