package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryOneLinePerFPDU: dissect prints one summary line per FPDU when a
// TCP segment carries several (and per MPA Request/Reply beside FPDUs). The
// number of items per frame comes from tshark's references for the siw
// captures (iwarp_mpa.ulpdulength occurrences plus iwarp_mpa.rev).
func TestSummaryOneLinePerFPDU(t *testing.T) {
	fields := iwarpGoldenFields(t)
	col := map[string]int{}
	for i, f := range fields {
		col[f] = i
	}
	caps, err := filepath.Glob("../../testdata/pcaps/siw-*.pcap")
	if err != nil || len(caps) < 7 {
		t.Fatalf("siw captures: %v (%d)", err, len(caps))
	}
	multi := 0
	for _, capture := range caps {
		multi += checkSummaryLines(t, capture, col)
	}
	if multi < 10 {
		t.Fatalf("only %d frames with several FPDUs in the references", multi)
	}
}

// checkSummaryLines compares one capture's summary lines per frame with
// tshark's items per frame and returns how many frames had several.
func checkSummaryLines(t *testing.T, capture string, col map[string]int) int {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(capture), ".pcap")
	ref, err := os.ReadFile("../../testdata/tshark/" + base + ".iwarp.tsv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{} // frame number → lines
	multi := 0
	for _, row := range readLines(t, ref) {
		v := strings.Split(row, "\t")
		items := 0
		if u := v[col["iwarp_mpa.ulpdulength"]]; u != "" {
			items += strings.Count(u, ",") + 1
		}
		if v[col["iwarp_mpa.rev"]] != "" {
			items++
		}
		if items < 1 {
			items = 1
		}
		if items > 1 {
			multi++
		}
		want[v[col["frame.number"]]] = items
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", capture}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := map[string]int{}
	for _, l := range readLines(t, out.Bytes()) {
		got[strings.Fields(l)[0]]++
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames printed, tshark has %d", base, len(got), len(want))
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s frame %s: %d lines, tshark has %d FPDUs/MPA frames", base, n, got[n], w)
		}
	}
	return multi
}
