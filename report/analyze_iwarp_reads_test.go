package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestIWARPTableReads: analyze's iWARP table shows the Read Requests
// nothing answered and the Read Responses nothing asked for. The real
// siw-ib_read_bw capture with packet 47's Read Request header
// byte-swapped (check's TestReadUnpaired makes the same edit): tshark 4.0
// shows that request (Data Sink STag 0xa73b2000, TO 0x56094c1f6040)
// answered by packet 54 before the edit, so after it connection 2 has one
// unanswered request client to server and one unmatched response server
// to client; before it, none.
func TestIWARPTableReads(t *testing.T) {
	table := func(path string) string {
		r, err := source.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		e := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), nil))
		if err := e.Run(r, nil); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := NewAnalysis(path, e.Snapshot()).WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	row := func(out, id string) []string {
		var head []string
		for _, l := range strings.Split(out, "\n") {
			cells := strings.Split(l, "│")
			if len(cells) < 3 {
				continue
			}
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			if cells[1] == "ID" && strings.Contains(l, "Reads unanswered") {
				head = cells
			} else if head != nil && cells[1] == id {
				m := map[string]string{}
				for i := range cells {
					if i < len(head) {
						m[head[i]] = cells[i]
					}
				}
				return []string{m["Reads unanswered"], m["Read resp. unmatched"]}
			}
		}
		t.Fatalf("no iWARP row %s in\n%s", id, out)
		return nil
	}
	src := "../testdata/pcaps/siw-ib_read_bw.pcap"
	if got := row(table(src), "2"); got[0] != "0 / 0" || got[1] != "0 / 0" {
		t.Errorf("unedited: %q", got)
	}
	lt, frames := pcaptest.Read(t, src)
	pay, _, ok := pcaptest.TCPPayload(frames[46].Data)
	if !ok || len(pay) != 52 {
		t.Fatal("packet 47 is not the Read Request")
	}
	reth := pay[20:48]
	for _, f := range [][2]int{{0, 4}, {4, 12}, {12, 16}, {16, 20}, {20, 28}} {
		b := reth[f[0]:f[1]]
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	pcaptest.FixTCPChecksum(t, frames[46].Data)
	if got := row(table(pcaptest.Write(t, lt, frames)), "2"); got[0] != "1 / 0" || got[1] != "0 / 1" {
		t.Errorf("byte-swapped Read Request: %q, want [1 / 0, 0 / 1]", got)
	}
}
