package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
)

func runAnalyze(t *testing.T, capture, format string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run([]string{"analyze", "--format", format, capture}, nil, &out, &errOut); code != 0 {
		t.Fatalf("analyze %s: exit %d: %s", capture, code, errOut.String())
	}
	return out.Bytes()
}

// TestAnalyzeEngineCounters checks the engine-wide counters of `analyze`
// ("engine" in the JSON, a line in the table when not zero) on the real NFS
// captures against tshark's counts and the transactions command, and on
// cuts of rxe-nfs3 with one planted fault each (testdata/pcaps/mutated).
func TestAnalyzeEngineCounters(t *testing.T) {
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
			var a report.Analysis
			if err := json.Unmarshal(runAnalyze(t, capture, "json"), &a); err != nil {
				t.Fatal(err)
			}
			if a.Engine == nil {
				t.Fatal(`no "engine" object`)
			}
			calls, replies := tsharkCalls(t, base)
			nCalls := 0
			for _, n := range calls {
				nCalls += n
			}
			r, re := &a.Engine.RPC, &a.Engine.Reassembly
			if r.Calls != uint64(nCalls) || r.Transactions != uint64(replies) {
				t.Errorf("engine: %d calls, %d transactions; tshark %d calls, %d replies", r.Calls, r.Transactions, nCalls, replies)
			}
			if r.BadHeaders+r.UnattachedRDMAOps+r.RebuiltBad+r.CallsWithoutReply+r.RepliesWithoutCall != 0 ||
				len(r.Unattached) != 0 || r.Rebuilt == 0 {
				t.Errorf("engine rpc counters %+v", r)
			}
			// The RoCE captures: three retransmitted SEND_ONLYs in
			// rxe-nfs3 (frames 6525, 6939, 7145), which tshark decodes
			// as Replies whose XID it has seen; none elsewhere.
			wantDup := uint64(0)
			if base == "rxe-nfs3" {
				wantDup = 3
			}
			if r.RetransmittedSends != wantDup || (strings.HasPrefix(base, "rxe") && re.DuplicatePackets != wantDup) {
				t.Errorf("retransmitted Sends %d, duplicate packets %d; want %d", r.RetransmittedSends, re.DuplicatePackets, wantDup)
			}
			if strings.HasPrefix(base, "rxe") && (re.Sends != r.Sends || re.RDMAWrites != r.RDMAWrites || re.RDMAReads != r.RDMAReads) {
				t.Errorf("RoCE reassembly %+v and RPC layer %+v disagree on what was handed up", re, r)
			}
			// transactions --format json reports the same engine.
			c := runTransactionsJSON(t, capture).Counters
			if c.Sends != r.Sends || c.RDMAWrites != r.RDMAWrites || c.Rebuilt != r.Rebuilt ||
				c.Retransmissions != r.RetransmittedSends || c.RoCEDuplicates != re.DuplicatePackets {
				t.Errorf("transactions counters %+v, analyze %+v %+v", c, r, re)
			}
			table := string(runAnalyze(t, capture, "table"))
			if got := strings.Contains(table, "RPC-over-RDMA: 3 retransmitted Sends"); got != (wantDup == 3) {
				t.Errorf("table line for the retransmissions: %v\n%s", got, table)
			}
		})
	}
	for _, tc := range []struct {
		file  string
		line  string // the table's line
		check func(e *report.EngineCounters) bool
	}{
		{"rxe-nfs3-conn2.pcap", "", func(e *report.EngineCounters) bool {
			return e.RPC.Calls > 0 && e.RPC.Calls == e.RPC.Transactions
		}},
		{"rxe-nfs3-conn2--write-outside-segment.pcap", "RPC-over-RDMA: 1 RDMA operation unattached (no segment: 1)",
			func(e *report.EngineCounters) bool {
				u := e.RPC.Unattached
				return e.RPC.UnattachedRDMAOps == 1 && len(u) == 1 && u[0].Kind == "RDMA Write" && u[0].Reason == "no segment" &&
					e.RPC.UnattachedByReason["no segment"] == 1
			}},
		{"rxe-nfs3-conn2--write-after-reply.pcap", "RPC-over-RDMA: 1 RDMA operation unattached (after reply: 1)",
			func(e *report.EngineCounters) bool {
				u := e.RPC.Unattached
				return len(u) == 1 && u[0].Kind == "RDMA Write" && u[0].Reason == "after reply"
			}},
		{"rxe-nfs3-conn2--drop-reply.pcap", "Reassembly (IB/RoCE): 1 PSN gap (1 PSN missing)",
			func(e *report.EngineCounters) bool {
				return e.Reassembly.PSNGaps == 1 && e.Reassembly.MissingPSNs == 1 && e.RPC.CallsWithoutReply == 1
			}},
		{"rxe-nfs3-conn2--reply-chunk-disc-2.pcap", "RPC-over-RDMA: 1 bad header, 1 Reply without Call",
			func(e *report.EngineCounters) bool { return e.RPC.BadHeaders == 1 && e.RPC.RepliesWithoutCall == 1 }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "pcaps", "mutated", tc.file)
			var a report.Analysis
			if err := json.Unmarshal(runAnalyze(t, capture, "json"), &a); err != nil {
				t.Fatal(err)
			}
			if a.Engine == nil || !tc.check(a.Engine) {
				t.Errorf("engine counters %+v", a.Engine)
			}
			table := string(runAnalyze(t, capture, "table"))
			hasLines := strings.Contains(table, "Reassembly (IB/RoCE):") || strings.Contains(table, "RPC-over-RDMA: ")
			if tc.line == "" && hasLines || tc.line != "" && !strings.Contains(table, tc.line+"\n") {
				t.Errorf("table: want line %q\n%s", tc.line, table)
			}
		})
	}
}
