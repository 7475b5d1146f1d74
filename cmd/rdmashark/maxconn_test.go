package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMaxConnectionsFlag: rxe-nfs3.pcap holds two NFS connections, the first
// closed (DREQ/DREP) before the second's CM REQ. With a table of one, the
// first one's summary is forgotten to make room and counted as such.
func TestMaxConnectionsFlag(t *testing.T) {
	for _, c := range []struct {
		max       string
		ids       []int
		forgotten int
	}{{"1", []int{2}, 1}, {"2", []int{1, 2}, 0}} {
		var out, errOut bytes.Buffer
		if code := run([]string{"analyze", "--format", "json", "--max-connections", c.max, "../../testdata/pcaps/rxe-nfs3.pcap"}, nil, &out, &errOut); code != 1 && code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		var doc struct {
			Connections []struct {
				ID int `json:"id"`
			} `json:"connections"`
			Forgotten int `json:"connections_forgotten"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var ids []int
		for _, cn := range doc.Connections {
			ids = append(ids, cn.ID)
		}
		if len(ids) != len(c.ids) || ids[0] != c.ids[0] || doc.Forgotten != c.forgotten {
			t.Errorf("--max-connections %s: connections %v, forgotten %d; want %v, %d", c.max, ids, doc.Forgotten, c.ids, c.forgotten)
		}
	}
}
