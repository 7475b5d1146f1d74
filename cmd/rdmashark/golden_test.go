package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var knownDifferences = []knownDifference{
	{id: "KD-CM-FLOWLABEL", field: "infiniband.cm.req.prim_flowlabel",
		applies: func(ts, ours string, _ map[string]string) bool {
			// tshark shows the word's bits 31..12 shifted right by 8 more:
			// our 20-bit value >> 8.
			return hexShiftedBy(ours, 8) == ts
		}},
	{id: "KD-CM-PKTRATE", field: "infiniband.cm.req.prim_pktrate",
		applies: func(ts, ours string, _ map[string]string) bool { return ts != ours }},
	{id: "KD-IETH-TWICE", field: "infiniband.ieth",
		applies: func(ts, ours string, _ map[string]string) bool { return ts == ours+","+ours }},
	{id: "KD-ICRC-MALFORMED", field: "infiniband.invariant.crc",
		applies: func(ts, ours string, row map[string]string) bool {
			return ts == "" && ours != "" && row["_ws.malformed"] != ""
		}},
}

// hexShiftedBy parses a 0x-prefixed hex value and prints it shifted right by
// n bits in tshark's FT_UINT32 form.
func hexShiftedBy(s string, n uint) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("0x%08x", v>>n)
}

// goldenCaptures are the captures gen.sh ran tshark on.
func goldenCaptures(t *testing.T) []string {
	return globCaptures(t, 10, "rxe-*.pcap", "public/montybeatnik-*.pcap", "public/srinivaskoritala-*.pcap")
}

// everyCapture is every real capture, the lossy and the mutated ones too.
func everyCapture(t *testing.T) []string {
	return globCaptures(t, 30, "*.pcap*", "lossy/*.pcap*", "mutated/*.pcap*")
}

// globCaptures lists the captures under testdata/pcaps that match the
// patterns, failing the test when fewer than min are found.
func globCaptures(t *testing.T, min int, patterns ...string) []string {
	t.Helper()
	var out []string
	for _, pat := range patterns {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < min {
		t.Fatalf("found only %d captures of %q", len(out), patterns)
	}
	return out
}

// TestTsharkFields runs `rdmashark dissect -T fields` with every field of
// testdata/tshark/fields.txt on every RoCE/IB capture and requires tshark's
// value on every packet, but for the documented known differences.
func TestTsharkFields(t *testing.T) {
	goldenSuite{
		fields:   "fields.txt",
		suffix:   "fields.tsv",
		captures: goldenCaptures(t),
		context:  []string{"_ws.malformed"},
		known:    knownDifferences,
	}.run(t)
}
