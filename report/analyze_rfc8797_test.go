package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func analyzeFile(t *testing.T, name string) *Analysis {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil))
	if err := eng.Run(r, nil); err != nil {
		t.Fatal(err)
	}
	return NewAnalysis(name, eng.Snapshot())
}

// TestRFC8797ColumnsNotRPC: rping and perftest connections carry no
// RPC-over-RDMA (tshark finds no rpcordma in them) and their CM private
// data no RFC 8797 message, so the RFC 8797 columns say so instead of
// showing the defaults as if negotiated; NFS connections keep their
// negotiation (client R=1, server R=0, 4096/4096).
func TestRFC8797ColumnsNotRPC(t *testing.T) {
	for _, tc := range []struct {
		file string
		rpc  bool
		row  string
	}{
		{"rxe-rping.pcap", false, "not RPC-over-RDMA"},
		{"siw-rping.pcap", false, "not RPC-over-RDMA"},
		{"rxe-ib_write_bw.pcap", false, "not RPC-over-RDMA"},
		{"rxe-nfs3.pcap", true, "v1 R=1 send 4096 recv 4096 │ v1 R=0 send 4096 recv 4096 │ 4096"},
		{"siw-nfs3.pcap", true, "v1 R=1 send 4096 recv 4096 │ v1 R=0 send 4096 recv 4096 │ 4096"},
	} {
		a := analyzeFile(t, "../testdata/pcaps/"+tc.file)
		var buf bytes.Buffer
		if err := a.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		i := strings.Index(out, "Negotiated at connection set-up")
		if i < 0 {
			t.Fatalf("%s: no negotiation table\n%s", tc.file, out)
		}
		table := out[i:]
		if !strings.Contains(table, tc.row) || strings.Contains(table, "defaults") {
			t.Errorf("%s: negotiation table lacks %q or shows defaults\n%s", tc.file, tc.row, table)
		}
		for _, c := range a.Connections {
			if c.RPCOverRDMA != tc.rpc {
				t.Errorf("%s connection %d: rpc_over_rdma %v", tc.file, c.ID, c.RPCOverRDMA)
			}
		}
	}
}
