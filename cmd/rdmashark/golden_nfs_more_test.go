package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nfsMoreKnownDifferences are the documented ways rdmashark's NFS value
// fields differ from tshark 4.0's two-pass output on the NFS captures
// (testdata/KNOWN-DIFFERENCES.md, same IDs). Each must still occur.
var nfsMoreKnownDifferences = []knownDifference{
	{id: "KD-RPC-OVER-TCP", field: "*",
		applies: func(ts, ours string, row map[string]string) bool {
			// Portmap and MOUNT run over TCP before the RDMA mount.
			return ours == "" && ts != "" && overTCP(row)
		}},
	{id: "KD-NFS-CLOSE-STATEID", field: "*nfs.stateid.",
		applies: func(ts, ours string, row map[string]string) bool {
			// A CLOSE reply (operation 4) whose stateid tshark marks
			// deprecated: tshark prints nfs.stateid only.
			return ts == "" && ours != "" && containsOp(row["nfs.opcode"], "4") &&
				row["nfs.stateid"] == "ffffffff000000000000000000000000"
		}},
}

// TestTsharkFieldsNFSValues runs `rdmashark dissect -T fields` with every
// field of testdata/tshark/fields-nfs-more.txt (file handles and their
// hash, names, offsets, counts, stable_how, attributes, NFSv4 state) on the
// RoCE and iWARP NFS captures and requires tshark's (two-pass) value on
// every packet (testdata/tshark/gen-nfs-more.sh), but for the documented
// known differences.
func TestTsharkFieldsNFSValues(t *testing.T) {
	// nfs.atime, mtime and ctime are printed in local time; the
	// references were made with TZ=UTC.
	saved := time.Local
	time.Local = time.UTC
	defer func() { time.Local = saved }()
	compared := goldenSuite{
		fields:   "fields-nfs-more.txt",
		suffix:   "nfs-more.tsv",
		captures: rpcCapturePaths(),
		context:  []string{"_ws.malformed", "frame.protocols"},
		known:    nfsMoreKnownDifferences,
	}.run(t)
	// The comparison must have had something to compare.
	for f, min := range map[string]int{"nfs.fhandle": 500, "nfs.fh.hash": 500, "nfs.name": 10, "nfs.pathname.component": 10,
		"nfs.offset3": 20, "nfs.count3": 20, "nfs.write.stable": 5, "nfs.offset4": 20, "nfs.count4": 20, "nfs.stable_how4": 10,
		"nfs.fattr3.size": 500, "nfs.mtime": 500, "nfs.fattr4.size": 50, "nfs.nfstime4.seconds": 50, "nfs.stateid": 50,
		"nfs.stateid.hash": 50, "nfs.seqid": 200, "nfs.session_id4": 200, "nfs.slotid": 200} {
		if compared[f] < min {
			t.Errorf("%s: tshark has only %d values to compare, want at least %d", f, compared[f], min)
		}
	}
}

// TestTsharkFiltersNFSValues runs display filters on the NFS value fields
// (testdata/tshark/nfs-more-filters.tsv, made by gen-nfs-more.sh) and
// requires the frames `tshark -2 -Y` selects, but for frames of RPC over
// plain TCP (KD-RPC-OVER-TCP: MOUNT's file handle before the RDMA mount).
func TestTsharkFiltersNFSValues(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "tshark")
	b, err := os.ReadFile(filepath.Join(dir, "nfs-more-filters.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	protocols := map[string][]string{} // capture: frame.protocols by frame
	selected := 0
	for _, l := range readLines(t, b) {
		v := strings.Split(l, "\t")
		base, filter, want := v[0], v[1], v[2]
		if protocols[base] == nil {
			more, err := os.ReadFile(filepath.Join(dir, base+".nfs-more.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range readLines(t, more) {
				c := strings.Split(r, "\t")
				protocols[base] = append(protocols[base], c[len(c)-1])
			}
		}
		var out, errOut bytes.Buffer
		args := []string{"dissect", "-r", filepath.Join("..", "..", "testdata", "pcaps", base+".pcap"), "-Y", filter, "-T", "fields", "-e", "frame.number"}
		if code := run(args, nil, &out, &errOut); code != 0 {
			t.Errorf("%s %q: exit %d: %s", base, filter, code, errOut.String())
			continue
		}
		got := map[string]bool{}
		for _, f := range strings.Fields(out.String()) {
			got[f] = true
		}
		for _, f := range strings.Split(want, ",") {
			if f == "" {
				continue
			}
			selected++
			if got[f] {
				delete(got, f)
				continue
			}
			n, _ := strconv.Atoi(f)
			if overTCP(map[string]string{"frame.protocols": protocols[base][n-1]}) {
				continue // KD-RPC-OVER-TCP
			}
			t.Errorf("%s %q: tshark selects frame %s, rdmashark does not", base, filter, f)
		}
		for f := range got {
			t.Errorf("%s %q: rdmashark selects frame %s, tshark does not", base, filter, f)
		}
	}
	if selected < 1000 {
		t.Errorf("only %d frames selected", selected)
	}
}
