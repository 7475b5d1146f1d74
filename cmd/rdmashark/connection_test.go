package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

type connReport struct {
	Connections []struct {
		ID int `json:"id"`
	} `json:"connections"`
	Findings []struct {
		Rule       string `json:"rule"`
		Connection int    `json:"connection"`
		Packets    []int  `json:"packets"`
	} `json:"findings"`
}

// TestConnectionNarrows: analyze and check --connection N report connection
// N alone, and the reports of each connection together hold every finding
// of the whole report, each once.
func TestConnectionNarrows(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	get := func(args ...string) connReport {
		var out, errOut bytes.Buffer
		code := run(append(args, capture), nil, &out, &errOut)
		if code == exitUsage {
			t.Fatalf("%v: %s", args, errOut.String())
		}
		var r struct {
			connReport
			Files []connReport `json:"files"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if len(r.Files) == 1 {
			return r.Files[0]
		}
		return r.connReport
	}
	for _, cmd := range []string{"analyze", "check"} {
		all := get(cmd, "--format", "json")
		if len(all.Connections) < 2 {
			t.Fatalf("%s: %d connections", cmd, len(all.Connections))
		}
		count := map[string]int{}
		key := func(rule string, conn int, pkts []int) string {
			b, _ := json.Marshal([]any{rule, conn, pkts})
			return string(b)
		}
		for _, f := range all.Findings {
			count[key(f.Rule, f.Connection, f.Packets)]++
		}
		for _, c := range all.Connections {
			if c.ID == 0 {
				continue
			}
			one := get(cmd, "--format", "json", "--connection", itoa(c.ID))
			if len(one.Connections) != 1 || one.Connections[0].ID != c.ID {
				t.Errorf("%s --connection %d: connections %+v", cmd, c.ID, one.Connections)
			}
			for _, f := range one.Findings {
				if f.Connection != c.ID {
					t.Errorf("%s --connection %d: a finding of connection %d", cmd, c.ID, f.Connection)
				}
				count[key(f.Rule, f.Connection, f.Packets)]--
			}
		}
		for k, n := range count {
			var f []any
			json.Unmarshal([]byte(k), &f)
			if n != 0 && f[1].(float64) != 0 {
				t.Errorf("%s: finding %s: %d more in the whole report than in the connections'", cmd, k, n)
			}
		}
		var out, errOut bytes.Buffer
		if code := run([]string{cmd, "--connection", "99", capture}, nil, &out, &errOut); code != exitUsage {
			t.Errorf("%s --connection 99: exit %d", cmd, code)
		}
	}
}
