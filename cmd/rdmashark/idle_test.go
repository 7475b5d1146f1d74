package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestIdleTimeoutFlag: every command reading a capture takes
// --idle-timeout and --max-buffered. analyze of rxe-nfs3.pcap (33 s of
// capture) releases no connection idle by default (10 minutes), and with
// 1 ms releases connections idle between their own packets — and says so.
func TestIdleTimeoutFlag(t *testing.T) {
	const file = "../../testdata/pcaps/rxe-nfs3.pcap"
	for _, args := range [][]string{{"dissect", "-r", file}, {"transactions", file}, {"check", file}, {"analyze", file}} {
		var out, errOut bytes.Buffer
		args = append(args, "--idle-timeout", "1s", "--max-buffered", "1048576")
		if code := run(args, nil, &out, &errOut); code == exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errOut.String())
		}
	}
	idle := func(flags ...string) (n int) {
		var out, errOut bytes.Buffer
		args := append([]string{"analyze", "--format", "json", file}, flags...)
		if code := run(args, nil, &out, &errOut); code == exitUsage {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		var doc struct {
			Connections []struct {
				Idle bool `json:"idle"`
			} `json:"connections"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		for _, c := range doc.Connections {
			if c.Idle {
				n++
			}
		}
		return n
	}
	if n := idle(); n != 0 {
		t.Errorf("default --idle-timeout: %d connections idle in a 33 s capture", n)
	}
	if n := idle("--idle-timeout", "1ms"); n == 0 {
		t.Error("--idle-timeout 1ms: no connection idle")
	}
}
