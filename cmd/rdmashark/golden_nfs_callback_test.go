package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The NFSv4 callback captures: a delegation recalled over the RPC-over-RDMA
// backchannel, on RoCE and on iWARP (testdata/pcaps/README.md; the
// references come from testdata/tshark/gen-nfs-callback.sh).
var callbackCaptures = []string{"rxe-nfs-callback", "siw-nfs-callback"}

// TestTsharkFieldsNFSCallback compares every field of fields-nfs.txt with
// tshark's two-pass output on every packet of the callback captures, but
// for the documented known differences (on iWARP, the two READ replies of
// KD-RPC-WRITE-ROUNDUP), and requires that the callback fields were there
// to compare: two CB_COMPOUND Calls and their two Replies per capture,
// with their operations and statuses.
func TestTsharkFieldsNFSCallback(t *testing.T) {
	var paths []string
	for _, base := range callbackCaptures {
		paths = append(paths, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
	}
	var known []knownDifference
	for _, kd := range nfsKnownDifferences {
		if kd.id == "KD-RPC-WRITE-ROUNDUP" {
			known = append(known, kd)
		}
	}
	compared := goldenSuite{
		fields:   "fields-nfs.txt",
		suffix:   "nfs.tsv",
		captures: paths,
		context:  []string{"_ws.malformed", "frame.protocols"},
		known:    known,
	}.run(t)
	for f, n := range map[string]int{"nfs.cb_procedure": 8, "nfs.cb.operation": 8, "nfs.nfsstat4": 40, "nfs.opcode": 100} {
		if compared[f] < n {
			t.Errorf("%s: tshark has only %d values to compare, want %d or more", f, compared[f], n)
		}
	}
}

// TestTransactionsNamesCallback: every Call tshark decodes over RDMA in the
// callback captures (testdata/tshark/*-nfs-callback.nfs-calls.tsv) is a
// transaction with its XID, procedure and operations, the backchannel
// CB_COMPOUNDs included; and the table names them as forward COMPOUNDs are
// named, procedure then operations.
func TestTransactionsNamesCallback(t *testing.T) {
	for _, base := range callbackCaptures {
		t.Run(base, func(t *testing.T) { transactionNamesCallback(t, base) })
	}
}

func transactionNamesCallback(t *testing.T, base string) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".nfs-calls.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	doc := runTransactionsJSON(t, capture)
	byXID := map[string][]int{}
	answered := 0
	for i, x := range doc.Transactions {
		byXID[x.XID.String()] = append(byXID[x.XID.String()], i)
		if x.Reply != nil {
			answered++
		}
	}
	// The Replies tshark pairs with their Call (rpc.time, the last field of
	// fields-nfs.txt, is set on those): on siw-nfs-callback one NULL Call
	// (frame 138) got none before the client reconnected and sent it again.
	ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".nfs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	tsReplies := 0
	for _, l := range readLines(t, ref) {
		if v := strings.Split(l, "\t"); len(v) > 3 && v[len(v)-3] != "" {
			tsReplies++
		}
	}
	if answered != tsReplies || answered == 0 {
		t.Errorf("%d transactions with a Reply, tshark pairs %d Replies", answered, tsReplies)
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
	if code := run([]string{"transactions", "--wide", capture}, nil, &out, &errOut); code != 0 { // every column whole
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := strings.Count(out.String(), "CB_COMPOUND CB_SEQUENCE,CB_RECALL"); n != 2 {
		t.Errorf("the table names %d callbacks CB_COMPOUND CB_SEQUENCE,CB_RECALL, want 2:\n%s", n, out.String())
	}
}
