package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
)

// rpcKnownDifferences are the documented ways rdmashark's RPC-over-RDMA and
// RPC fields differ from tshark 4.0's on the RoCE NFS captures
// (testdata/KNOWN-DIFFERENCES.md, same IDs). Each must still occur.
var rpcKnownDifferences = []knownDifference{
	{id: "KD-RPC-OVER-TCP", field: "*rpc.",
		applies: func(ts, ours string, row map[string]string) bool {
			// MOUNT and portmap run over TCP before the RDMA mount:
			// rdmashark decodes RPC only inside RPC-over-RDMA.
			return ours == "" && ts != "" && overTCP(row)
		}},
	{id: "KD-RPC-PROGVERSION-TWICE", field: "rpc.programversion",
		applies: func(ts, ours string, row map[string]string) bool {
			// The NFS, NFSACL (and portmap, MOUNT) dissectors add the
			// program version a second time; on the malformed READ replies
			// (KD-RPC-READ-REPLY-TWICE) that makes four.
			if ours == "" || overTCP(row) {
				return false
			}
			n := strings.Count(ts, ",") + 1
			return strings.Repeat(ours+",", n)[:len(ts)] == ts && (n == 2 || n == 4 && row["_ws.malformed"] != "")
		}},
	{id: "KD-RPC-READ-REPLY-TWICE", field: "*rpc.",
		applies: func(ts, ours string, row map[string]string) bool {
			// NFS READ replies whose data went by RDMA Write: tshark's
			// single pass runs the RPC dissector twice on the reduced
			// message and throws (rpcrdma/testdata/README.md).
			return row["_ws.malformed"] != "" && ours != "" && ts == ours+","+ours
		}},
}

// overTCP tells a frame of RPC over plain TCP (no RPC-over-RDMA in it) by
// tshark's frame.protocols.
func overTCP(row map[string]string) bool {
	p := row["frame.protocols"]
	return strings.Contains(p, ":rpc") && !strings.Contains(p, "rpcordma")
}

// rpcCaptures are the captures gen-rpc.sh ran tshark on: RoCE (rxe) and
// iWARP (siw).
var rpcCaptures = []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small", "siw-nfs3", "siw-nfs41", "siw-nfs42-small"}

// TestTsharkFieldsRPC runs `rdmashark dissect -T fields` with every field
// of testdata/tshark/fields-rpc.txt on the RoCE NFS captures and requires
// tshark's value on every packet, but for the documented known differences.
func TestTsharkFieldsRPC(t *testing.T) {
	compared := goldenSuite{
		fields:   "fields-rpc.txt",
		suffix:   "rpc.tsv",
		captures: rpcCapturePaths(),
		context:  []string{"_ws.malformed", "frame.protocols", "_ws.expert.message"},
		known:    rpcKnownDifferences,
	}.run(t)
	// The comparison must have had something to compare.
	for _, f := range []string{"rpcordma.xid", "rpcordma.rdma_handle", "rpcordma.position", "rpcordma.segment_count", "rpc.xid", "rpc.procedure"} {
		if compared[f] < 10 {
			t.Errorf("%s: tshark has only %d values to compare", f, compared[f])
		}
	}
}

// rpcCapturePaths are the paths of rpcCaptures.
func rpcCapturePaths() []string {
	var out []string
	for _, base := range rpcCaptures {
		out = append(out, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
	}
	return out
}

// TestTsharkRPCCallFrames compares the Call frame rdmashark names on each
// Reply (rpc.repframe) with tshark's two-pass output.
func TestTsharkRPCCallFrames(t *testing.T) {
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".rpc-repframe.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			onePass, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".rpc.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			tcpRPC := map[string]bool{}
			fields := listFile(t, "../../testdata/tshark/fields-rpc.txt")
			for _, l := range readLines(t, onePass) {
				v := strings.Split(l, "\t")
				if len(v) > len(fields)+1 && overTCP(map[string]string{"frame.protocols": v[len(fields)+1]}) {
					tcpRPC[v[0]] = true
				}
			}
			got := dissectFields(t, []string{"frame.number", "rpc.repframe"}, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
			ours := map[string]string{}
			for _, l := range readLines(t, got) {
				v := strings.Split(l, "\t")
				if v[1] != "" {
					ours[v[0]] = v[1]
				}
			}
			n := 0
			for _, l := range readLines(t, want) {
				v := strings.Split(l, "\t")
				if tcpRPC[v[0]] {
					continue
				}
				n++
				if ours[v[0]] != v[1] {
					t.Errorf("frame %s: tshark -2 says the Call is in %s, rdmashark %q", v[0], v[1], ours[v[0]])
				}
				delete(ours, v[0])
			}
			for f, c := range ours {
				t.Errorf("frame %s: rdmashark names Call frame %s, tshark -2 none", f, c)
			}
			if n < 100 {
				t.Errorf("only %d replies compared", n)
			}
		})
	}
}

// tsharkCalls counts, from tshark's one-pass reference, the RPC Calls over
// RDMA by "program/version/procedure", and the Replies (a Reply repeated
// with its XID — an RDMA retransmission, rxe-nfs3 frames 6525, 6939 and
// 7145 — counts once, as the transactions count it).
func tsharkCalls(t *testing.T, base string) (calls map[string]int, replies int) {
	t.Helper()
	fields := listFile(t, "../../testdata/tshark/fields-rpc.txt")
	col := map[string]int{}
	for i, f := range fields {
		col[f] = i
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".rpc.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	calls = map[string]int{}
	seen := map[string]bool{}
	for _, l := range readLines(t, data) {
		v := strings.Split(l, "\t")
		if overTCP(map[string]string{"frame.protocols": v[len(fields)+1]}) || v[col["rpc.msgtyp"]] == "" {
			continue // RPC over TCP, or no RPC
		}
		first := func(f string) string { return strings.Split(v[col[f]], ",")[0] }
		switch first("rpc.msgtyp") {
		case "0":
			calls[first("rpc.program")+"/"+first("rpc.programversion")+"/"+first("rpc.procedure")]++
		case "1":
			xid := first("rpc.xid")
			if !seen[xid] {
				replies++
			}
			seen[xid] = true
		}
	}
	return calls, replies
}

// TestTransactionsCommand runs `rdmashark transactions --format json` on the
// RoCE NFS captures: one transaction per Call tshark decodes, with the same
// program, version and procedure, every one answered; and the filters.
func TestTransactionsCommand(t *testing.T) {
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
			doc := runTransactionsJSON(t, capture)
			calls, replies := tsharkCalls(t, base)
			got := map[string]int{}
			for _, x := range doc.Transactions {
				if x.Program == nil || x.Reply == nil || x.Call == nil || x.Outcome != "replied" || x.LatencyUS == nil {
					t.Errorf("xid %s: incomplete transaction %+v", x.XID, x)
					continue
				}
				got[fmt.Sprintf("%d/%d/%d", *x.Program, *x.Version, *x.Procedure)]++
			}
			if !reflect.DeepEqual(got, calls) {
				t.Errorf("calls by program/version/procedure: rdmashark %v, tshark %v", got, calls)
			}
			if len(doc.Transactions) != replies {
				t.Errorf("%d transactions, tshark decodes %d Replies", len(doc.Transactions), replies)
			}
			if c := doc.Counters; c.UnattachedRDMAOps+c.RoCESendsTruncated+c.BadHeaders+c.RebuiltBad+c.RDMAOpsIncomplete != 0 || c.Rebuilt == 0 || c.RDMAWrites == 0 {
				t.Errorf("counters %+v", c)
			}
			// Filters: one XID; one connection; one procedure.
			x := doc.Transactions[len(doc.Transactions)/2]
			one := runTransactionsJSON(t, capture, "--xid", x.XID.String())
			if len(one.Transactions) < 1 || one.Transactions[0].XID != x.XID {
				t.Errorf("--xid %s: %d transactions", x.XID, len(one.Transactions))
			}
			byConn := runTransactionsJSON(t, capture, "--connection", "2")
			proc := runTransactionsJSON(t, capture, "--procedure", strconv.Itoa(int(*x.Procedure)))
			nConn, nProc := 0, 0
			for _, y := range doc.Transactions {
				if y.Connection == 2 {
					nConn++
				}
				if *y.Procedure == *x.Procedure {
					nProc++
				}
			}
			if len(byConn.Transactions) != nConn || nConn == 0 || len(proc.Transactions) != nProc {
				t.Errorf("--connection 2: %d of %d; --procedure %d: %d of %d",
					len(byConn.Transactions), nConn, *x.Procedure, len(proc.Transactions), nProc)
			}
		})
	}
}

func runTransactionsJSON(t *testing.T, capture string, flags ...string) *report.TransactionList {
	t.Helper()
	args := append([]string{"transactions", "--format", "json"}, flags...)
	args = append(args, capture)
	var out, errOut bytes.Buffer
	if code := run(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	var doc report.TransactionList
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// TestAnalyzeRPC checks the RPC-over-RDMA section of `analyze --format
// json` against tshark's counts of Calls and Replies.
func TestAnalyzeRPC(t *testing.T) {
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run([]string{"analyze", "--format", "json", filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")}, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			var a report.Analysis
			if err := json.Unmarshal(out.Bytes(), &a); err != nil {
				t.Fatal(err)
			}
			calls, replies := tsharkCalls(t, base)
			nCalls := 0
			for _, n := range calls {
				nCalls += n
			}
			var gotCalls, gotReplies uint64
			for _, c := range a.Connections {
				r := c.RPC
				if r == nil {
					continue
				}
				if r.Version != 1 || r.Problems() != "none" {
					t.Errorf("connection %d: version %d, problems: %s", c.ID, r.Version, r.Problems())
				}
				gotCalls += r.Calls.Forward + r.Calls.Backchannel
				gotReplies += r.Replies.Forward + r.Replies.Backchannel
				if r.Short.ClientToServer+r.Chunked.ClientToServer+r.Long.ClientToServer != r.Messages.ClientToServer {
					t.Errorf("connection %d: short+chunked+long != messages", c.ID)
				}
				if r.RepliesWithInvalidate+r.RepliesWithoutInvalidate != r.Replies.Forward+r.Replies.Backchannel {
					t.Errorf("connection %d: replies with and without invalidation do not add up", c.ID)
				}
			}
			if gotCalls != uint64(nCalls) || gotReplies != uint64(replies) {
				t.Errorf("analyze: %d calls, %d replies; tshark %d, %d", gotCalls, gotReplies, nCalls, replies)
			}
		})
	}
}
