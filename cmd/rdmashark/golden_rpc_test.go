package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rpcKnownDifferences are the documented ways rdmashark's RPC-over-RDMA and
// RPC fields differ from tshark 4.0's on the RoCE NFS captures
// (testdata/KNOWN-DIFFERENCES.md, same IDs). Each must still occur.
var rpcKnownDifferences = []knownDifference{
	{id: "KD-RPC-OVER-TCP", field: "*rpc.",
		applies: func(ts, ours string, row map[string]string) bool {
			// MOUNT and portmap run over TCP before the RDMA mount:
			// rdmashark decodes RPC only inside RPC-over-RDMA.
			return ours == "" && ts != "" && row["tcp.srcport"] != ""
		}},
	{id: "KD-RPC-PROGVERSION-TWICE", field: "rpc.programversion",
		applies: func(ts, ours string, row map[string]string) bool {
			// The NFS, NFSACL (and portmap, MOUNT) dissectors add the
			// program version a second time; on the malformed READ replies
			// (KD-RPC-READ-REPLY-TWICE) that makes four.
			if ours == "" || row["tcp.srcport"] != "" {
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

// rpcCaptures are the captures gen-rpc.sh ran tshark on.
var rpcCaptures = []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small"}

// TestTsharkFieldsRPC runs `rdmashark dissect -T fields` with every field
// of testdata/tshark/fields-rpc.txt on the RoCE NFS captures and requires
// tshark's value on every packet, but for the documented known differences.
func TestTsharkFieldsRPC(t *testing.T) {
	fields := listFile(t, "../../testdata/tshark/fields-rpc.txt")
	const context = 3 // _ws.malformed, tcp.srcport, _ws.expert.message
	hits := map[string]int{}
	compared := map[string]int{}
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".rpc.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			got := dissectFields(t, fields, filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"))
			wl, gl := readLines(t, want), readLines(t, got)
			if len(wl) != len(gl) {
				t.Fatalf("tshark printed %d packets, rdmashark %d", len(wl), len(gl))
			}
			failures := 0
			for i := range wl {
				wv := strings.Split(wl[i], "\t")
				gv := strings.Split(gl[i], "\t")
				if len(wv) != len(fields)+context || len(gv) != len(fields) {
					t.Fatalf("packet %d: %d tshark columns, %d ours, %d fields", i+1, len(wv), len(gv), len(fields))
				}
				row := map[string]string{"_ws.malformed": wv[len(fields)], "tcp.srcport": wv[len(fields)+1]}
				for k, f := range fields {
					row[f] = wv[k]
				}
				for k, f := range fields {
					if wv[k] != "" {
						compared[f]++
					}
					if wv[k] == gv[k] {
						continue
					}
					if id := matchRPCKnown(f, wv[k], gv[k], row); id != "" {
						hits[id]++
						continue
					}
					failures++
					if failures <= 25 {
						t.Errorf("packet %d %s: tshark %q, rdmashark %q", i+1, f, wv[k], gv[k])
					}
				}
			}
			if failures > 25 {
				t.Errorf("... %d differences in all", failures)
			}
		})
	}
	// The comparison must have had something to compare.
	for _, f := range []string{"rpcordma.xid", "rpcordma.rdma_handle", "rpcordma.position", "rpcordma.segment_count", "rpc.xid", "rpc.procedure"} {
		if compared[f] < 10 {
			t.Errorf("%s: tshark has only %d values to compare", f, compared[f])
		}
	}
	checkKnownDocumented(t, rpcKnownDifferences, hits)
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
			overTCP := map[string]bool{}
			fields := listFile(t, "../../testdata/tshark/fields-rpc.txt")
			for _, l := range readLines(t, onePass) {
				v := strings.Split(l, "\t")
				if len(v) > len(fields)+1 && v[len(fields)+1] != "" {
					overTCP[v[0]] = true
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
				if overTCP[v[0]] {
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

func listFile(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func dissectFields(t *testing.T, fields []string, capture string) []byte {
	t.Helper()
	args := []string{"dissect", "-T", "fields"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	args = append(args, capture)
	var out, errOut bytes.Buffer
	if code := run(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	return out.Bytes()
}

// matchRPCKnown is matchKnown for rpcKnownDifferences; a rule whose field
// starts with "*" applies to every field with that prefix.
func matchRPCKnown(field, tshark, ours string, row map[string]string) string {
	for _, kd := range rpcKnownDifferences {
		ok := kd.field == field
		if p, wild := strings.CutPrefix(kd.field, "*"); wild {
			ok = strings.HasPrefix(field, p)
		}
		if ok && kd.applies(tshark, ours, row) {
			return kd.id
		}
	}
	return ""
}

// checkKnownDocumented requires every known difference to have occurred and
// to have its section in testdata/KNOWN-DIFFERENCES.md.
func checkKnownDocumented(t *testing.T, kds []knownDifference, hits map[string]int) {
	t.Helper()
	doc, err := os.ReadFile("../../testdata/KNOWN-DIFFERENCES.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, kd := range kds {
		if hits[kd.id] == 0 {
			t.Errorf("known difference %s (%s) never occurred: remove it", kd.id, kd.field)
		}
		if !regexp.MustCompile(`(?m)^#+ .*\b` + regexp.QuoteMeta(kd.id) + `\b`).Match(doc) {
			t.Errorf("known difference %s is not documented in testdata/KNOWN-DIFFERENCES.md", kd.id)
		}
		t.Logf("%s: %d values", kd.id, hits[kd.id])
	}
}
