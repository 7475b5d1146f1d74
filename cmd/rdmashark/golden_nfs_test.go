package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nfsKnownDifferences are the documented ways rdmashark's NFS fields (and
// rpc.time) differ from tshark 4.0's two-pass output on the NFS captures
// (testdata/KNOWN-DIFFERENCES.md, same IDs). Each must still occur. A rule
// whose field is "*" applies to every field.
var nfsKnownDifferences = []knownDifference{
	{id: "KD-RPC-OVER-TCP", field: "*",
		applies: func(ts, ours string, row map[string]string) bool {
			// Portmap and MOUNT run over TCP before the RDMA mount.
			return ours == "" && ts != "" && overTCP(row)
		}},
	{id: "KD-NFS-RDATTR-ERROR", field: "*nfs.",
		applies: func(ts, ours string, row map[string]string) bool {
			// READDIR results: tshark also lists each entry's
			// rdattr_error attribute as a status; rdmashark lists the
			// COMPOUND's status and each operation's.
			if row["_field"] != "nfs.status" && row["_field"] != "nfs.nfsstat4" {
				return false
			}
			if !containsOp(row["nfs.opcode"], "26") || ours == "" || !strings.HasPrefix(ts, ours+",") {
				return false
			}
			for _, v := range strings.Split(ts[len(ours)+1:], ",") {
				if v == "" {
					return false
				}
			}
			return true
		}},
	{id: "KD-RPC-WRITE-ROUNDUP", field: "nfs.main_opcode",
		applies: func(ts, ours string, row map[string]string) bool {
			// A READ reply rebuilt without the Write chunk's XDR
			// roundup: tshark's NFS dissector throws after the last
			// operation, before it names the main one.
			return ts == "" && ours != "" && row["_ws.malformed"] != "" && containsOp(row["nfs.opcode"], "25")
		}},
}

func containsOp(list, op string) bool {
	for _, v := range strings.Split(list, ",") {
		if v == op {
			return true
		}
	}
	return false
}

// TestTsharkFieldsNFS runs `rdmashark dissect -T fields` with every field
// of testdata/tshark/fields-nfs.txt on the RoCE and iWARP NFS captures and
// requires tshark's (two-pass) value on every packet, but for the
// documented known differences.
func TestTsharkFieldsNFS(t *testing.T) {
	compared := goldenSuite{
		fields:   "fields-nfs.txt",
		suffix:   "nfs.tsv",
		captures: rpcCapturePaths(),
		context:  []string{"_ws.malformed", "frame.protocols"},
		known:    nfsKnownDifferences,
	}.run(t)
	// The comparison must have had something to compare: NFSv3 and v4,
	// NFSACL, statuses and times.
	for _, f := range []string{"nfs.procedure_v3", "nfs.procedure_v4", "nfs.main_opcode", "nfs.opcode", "nfs.status",
		"nfs.status3", "nfs.nfsstat4", "nfsacl.procedure_v3", "rpc.time"} {
		if compared[f] < 100 {
			t.Errorf("%s: tshark has only %d values to compare", f, compared[f])
		}
	}
}

// TestTransactionsNames runs `rdmashark transactions --format json` on the
// six NFS captures and requires, for every RPC Call tshark decodes over
// RDMA (testdata/tshark/*.nfs-calls.tsv, from tshark's -V tree), a
// transaction with its XID whose program, procedure and COMPOUND
// operations have tshark's names; and, every Call of these captures being
// answered, no transaction with "reply": null.
func TestTransactionsNames(t *testing.T) {
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			capture := filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
			var out, errOut bytes.Buffer
			if code := run([]string{"transactions", "--format", "json", capture}, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if bytes.Contains(out.Bytes(), []byte(`"reply": null`)) || !bytes.Contains(out.Bytes(), []byte(`"reply": {`)) {
				t.Errorf(`a Call without its Reply ("reply": null), or no Reply at all`)
			}
			doc := runTransactionsJSON(t, capture)
			byXID := map[string][]int{}
			for i, x := range doc.Transactions {
				byXID[x.XID.String()] = append(byXID[x.XID.String()], i)
				if x.Reply == nil {
					t.Errorf("xid %s: no reply", x.XID)
				}
			}
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".nfs-calls.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			calls := readLines(t, want)
			ops := 0
			for _, l := range calls {
				v := strings.Split(l, "\t")
				frame, xid, prog, proc, opList := v[0], v[1], v[2], v[3], v[4]
				ok := false
				var seen []string
				for _, i := range byXID[xid] {
					x := &doc.Transactions[i]
					got := strings.Join(x.Operations, ",")
					seen = append(seen, x.ProgramName+" "+x.ProcedureName+" "+got)
					if x.ProgramName == prog && x.ProcedureName == proc && got == opList {
						ok = true
					}
				}
				if !ok {
					t.Errorf("frame %s xid %s: tshark %s %s %s; rdmashark %q", frame, xid, prog, proc, opList, seen)
				}
				if opList != "" {
					ops++
				}
			}
			if len(calls) != len(doc.Transactions) {
				t.Errorf("tshark decodes %d Calls, rdmashark has %d transactions", len(calls), len(doc.Transactions))
			}
			if len(calls) < 100 || strings.Contains(base, "nfs4") && ops < 100 {
				t.Errorf("only %d Calls, %d COMPOUNDs compared", len(calls), ops)
			}
		})
	}
}
