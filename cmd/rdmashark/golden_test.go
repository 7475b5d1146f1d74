package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// knownDifference is one documented way rdmashark's value of a field differs
// from tshark 4.0's. Each has an entry with the same ID in
// testdata/KNOWN-DIFFERENCES.md saying who is right and why, and each must
// still occur: a difference that no longer happens is a stale exception and
// fails the test.
type knownDifference struct {
	id    string
	field string
	// applies reports whether the pair of values is this difference; row
	// is tshark's whole row, by field name, for context.
	applies func(tshark, ours string, row map[string]string) bool
}

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
	var out []string
	for _, pat := range []string{"rxe-*.pcap", "public/montybeatnik-*.pcap", "public/srinivaskoritala-*.pcap"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d golden captures", len(out))
	}
	return out
}

func goldenFields(t *testing.T) []string {
	data, err := os.ReadFile("../../testdata/tshark/fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			fields = append(fields, l)
		}
	}
	return fields
}

func readLines(t *testing.T, b []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestTsharkFields runs `rdmashark dissect -T fields` with every field of
// testdata/tshark/fields.txt on every RoCE/IB capture and requires tshark's
// value on every packet, but for the documented known differences.
func TestTsharkFields(t *testing.T) {
	fields := goldenFields(t)
	hits := map[string]int{}
	for _, capture := range goldenCaptures(t) {
		base := strings.TrimSuffix(filepath.Base(capture), ".pcap")
		t.Run(base, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".fields.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"dissect", "-T", "fields"}
			for _, f := range fields {
				args = append(args, "-e", f)
			}
			args = append(args, capture)
			var out, errOut bytes.Buffer
			if code := run(args, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			wl, gl := readLines(t, want), readLines(t, out.Bytes())
			if len(wl) != len(gl) {
				t.Fatalf("tshark printed %d packets, rdmashark %d", len(wl), len(gl))
			}
			failures := 0
			for i := range wl {
				wv := strings.Split(wl[i], "\t")
				gv := strings.Split(gl[i], "\t")
				// tshark's last column is _ws.malformed, context only.
				if len(wv) != len(fields)+1 || len(gv) != len(fields) {
					t.Fatalf("packet %d: %d tshark columns, %d ours, %d fields", i+1, len(wv), len(gv), len(fields))
				}
				row := map[string]string{"_ws.malformed": wv[len(fields)]}
				for k, f := range fields {
					row[f] = wv[k]
				}
				for k, f := range fields {
					if wv[k] == gv[k] {
						continue
					}
					if id := matchKnown(f, wv[k], gv[k], row); id != "" {
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
	doc, err := os.ReadFile("../../testdata/KNOWN-DIFFERENCES.md")
	if err != nil && len(knownDifferences) > 0 {
		t.Fatal(err)
	}
	for _, kd := range knownDifferences {
		if hits[kd.id] == 0 {
			t.Errorf("known difference %s (%s) never occurred: remove it", kd.id, kd.field)
		}
		if !regexp.MustCompile(`(?m)^#+ .*\b` + regexp.QuoteMeta(kd.id) + `\b`).Match(doc) {
			t.Errorf("known difference %s is not documented in testdata/KNOWN-DIFFERENCES.md", kd.id)
		}
		t.Logf("%s: %d values", kd.id, hits[kd.id])
	}
}

func matchKnown(field, tshark, ours string, row map[string]string) string {
	for _, kd := range knownDifferences {
		if kd.field == field && kd.applies(tshark, ours, row) {
			return kd.id
		}
	}
	return ""
}
