package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filterDifference is one documented way filters select other frames than
// tshark 4.0: where rdmashark does not decode something tshark does, tshark
// selects frames rdmashark does not, all of them among the frames the
// difference's own filter selects (and rdmashark never selects more). Each
// has an entry with the same ID in testdata/KNOWN-DIFFERENCES.md.
type filterDifference struct {
	id string
	// within selects (in rdmashark) every frame the difference may concern.
	within string
}

var filterDifferences = []filterDifference{
	// RPC over plain TCP (portmap, MOUNT, NFS before the RDMA mount) is
	// not decoded: only RPC-over-RDMA is; the NFS/RDMA port is 20049.
	{id: "KD-RPC-OVER-TCP", within: "tcp && !(tcp.port == 20049)"},
}

// TestTsharkFilters runs every display filter of testdata/tshark/filters.txt
// with `rdmashark dissect -Y` on the captures of gen-filter.sh and requires
// exactly the frames `tshark -2 -Y` selected (filters.tsv), but for the
// documented differences.
func TestTsharkFilters(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "filters.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var filters []string
	for _, l := range listFile(t, filepath.Join("..", "..", "testdata", "tshark", "filters.txt")) {
		if !strings.HasPrefix(l, "@") {
			filters = append(filters, l)
		}
	}
	if len(filters) < 50 {
		t.Fatalf("only %d filters", len(filters))
	}
	seen := map[string]bool{}
	selected, hits := 0, map[string]int{}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("filters.tsv: bad line %q", line)
		}
		capture, filter, want := cols[0], cols[1], cols[2]
		seen[filter] = true
		args := []string{"dissect", "-Y", filter, "-T", "fields", "-e", "frame.number",
			filepath.Join("..", "..", "testdata", "pcaps", capture)}
		var out, errOut bytes.Buffer
		code := run(args, nil, &out, &errOut)
		got := strings.Join(strings.Fields(out.String()), ",")
		if code == exitUsage && strings.Contains(errOut.String(), "-Y:") {
			got = "ERROR"
		} else if code != 0 {
			t.Errorf("%s: -Y %q: exit %d: %s", capture, filter, code, errOut.String())
			continue
		}
		if want != "ERROR" && want != "" {
			selected++
		}
		if got == want {
			continue
		}
		onlyT, onlyR := setDiff(want, got), setDiff(got, want)
		known := ""
		if onlyR == "" && want != "ERROR" && got != "ERROR" {
			for _, d := range filterDifferences {
				if setDiff(onlyT, selectFrames(t, capture, d.within)) == "" {
					known = d.id
					break
				}
			}
		}
		if known != "" {
			hits[known]++
			continue
		}
		t.Errorf("%s: -Y %q: only tshark: %s; only rdmashark: %s", capture, filter, abbrev(onlyT), abbrev(onlyR))
	}
	for _, f := range filters {
		if !seen[f] {
			t.Errorf("filter %q has no tshark reference: run testdata/tshark/gen-filter.sh", f)
		}
	}
	if selected < 100 {
		t.Errorf("only %d (capture, filter) pairs select any frame", selected)
	}
	kds := make([]knownDifference, 0, len(filterDifferences))
	for _, d := range filterDifferences {
		kds = append(kds, knownDifference{id: d.id, field: d.within})
	}
	checkKnownDocumented(t, kds, hits)
}

// selectFrames returns the frames filter selects in capture, comma-separated.
func selectFrames(t *testing.T, capture, filter string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	args := []string{"dissect", "-Y", filter, "-T", "fields", "-e", "frame.number",
		filepath.Join("..", "..", "testdata", "pcaps", capture)}
	if code := run(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("%s: -Y %q: exit %d: %s", capture, filter, code, errOut.String())
	}
	return strings.Join(strings.Fields(out.String()), ",")
}

func abbrev(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// setDiff lists the comma-separated items of a that are not in b.
func setDiff(a, b string) string {
	in := map[string]bool{}
	for _, x := range strings.Split(b, ",") {
		in[x] = true
	}
	var out []string
	for _, x := range strings.Split(a, ",") {
		if x != "" && !in[x] {
			out = append(out, x)
		}
	}
	return strings.Join(out, ",")
}
