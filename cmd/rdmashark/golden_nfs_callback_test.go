package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The NFSv4 callback capture: a delegation recalled over the RPC-over-RDMA
// backchannel (testdata/pcaps/README.md, rxe-nfs-callback.pcap; the
// references come from testdata/tshark/gen-nfs-callback.sh).
const callbackCapture = "rxe-nfs-callback"

// TestTsharkFieldsNFSCallback compares every field of fields-nfs.txt with
// tshark's two-pass output on every packet of the callback capture, and
// requires that the callback fields were there to compare: the two
// CB_COMPOUND Calls and their two Replies, with their operations and
// statuses.
func TestTsharkFieldsNFSCallback(t *testing.T) {
	compared := goldenSuite{
		fields:   "fields-nfs.txt",
		suffix:   "nfs.tsv",
		captures: []string{filepath.Join("..", "..", "testdata", "pcaps", callbackCapture+".pcap")},
		context:  []string{"_ws.malformed", "frame.protocols"},
	}.run(t)
	for f, n := range map[string]int{"nfs.cb_procedure": 4, "nfs.cb.operation": 4, "nfs.nfsstat4": 20, "nfs.opcode": 50} {
		if compared[f] < n {
			t.Errorf("%s: tshark has only %d values to compare, want %d or more", f, compared[f], n)
		}
	}
}

// TestTransactionsNamesCallback: every Call tshark decodes over RDMA in the
// callback capture (testdata/tshark/rxe-nfs-callback.nfs-calls.tsv) is a
// transaction with its XID, procedure and operations, the backchannel
// CB_COMPOUNDs included; and the table names them as forward COMPOUNDs are
// named, procedure then operations.
func TestTransactionsNamesCallback(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", callbackCapture+".pcap")
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", callbackCapture+".nfs-calls.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	doc := runTransactionsJSON(t, capture)
	byXID := map[string][]int{}
	for i, x := range doc.Transactions {
		byXID[x.XID.String()] = append(byXID[x.XID.String()], i)
		if x.Reply == nil {
			t.Errorf("xid %s: no reply", x.XID)
		}
	}
	calls := readLines(t, want)
	var cbOps []string
	for _, l := range calls {
		v := strings.Split(l, "\t")
		frame, xid, prog, proc, opList := v[0], v[1], v[2], v[3], v[4]
		if prog == "NFS CB" {
			// tshark's label for program 0x40000000 (RFC 8881 section
			// 18.36 leaves the number to the client; no RFC names it);
			// rdmashark's is NFS_CB.
			prog = "NFS_CB"
			cbOps = append(cbOps, opList)
		}
		ok := false
		var seen []string
		for _, i := range byXID[xid] {
			x := &doc.Transactions[i]
			got := strings.Join(x.Operations, ",")
			seen = append(seen, x.ProgramName+" "+x.ProcedureName+" "+got)
			if x.ProgramName == prog && x.ProcedureName == proc && got == opList {
				ok = true
				if prog == "NFS_CB" && x.Direction != "backchannel" {
					t.Errorf("frame %s xid %s: direction %q", frame, xid, x.Direction)
				}
			}
		}
		if !ok {
			t.Errorf("frame %s xid %s: tshark %s %s %s; rdmashark %q", frame, xid, prog, proc, opList, seen)
		}
	}
	if len(calls) != len(doc.Transactions) {
		t.Errorf("tshark decodes %d Calls, rdmashark has %d transactions", len(calls), len(doc.Transactions))
	}
	if len(cbOps) != 2 || cbOps[0] != "CB_SEQUENCE,CB_RECALL" || cbOps[1] != "CB_SEQUENCE,CB_RECALL" {
		t.Fatalf("tshark's reference has callbacks %q: not the capture's two recalls", cbOps)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"transactions", capture}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := strings.Count(out.String(), "CB_COMPOUND CB_SEQUENCE,CB_RECALL"); n != 2 {
		t.Errorf("the table names %d callbacks CB_COMPOUND CB_SEQUENCE,CB_RECALL, want 2:\n%s", n, out.String())
	}
}
