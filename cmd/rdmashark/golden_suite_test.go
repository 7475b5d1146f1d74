package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// knownDifference is one documented way rdmashark's value of a field differs
// from tshark 4.0's. Each has an entry with the same ID in
// testdata/KNOWN-DIFFERENCES.md saying who is right and why, and each must
// still occur: a difference that no longer happens is a stale exception and
// fails the test.
type knownDifference struct {
	id string
	// field is the field the difference is about; "*" is every field and
	// "*prefix" every field with that prefix.
	field string
	// applies reports whether the pair of values is this difference; row
	// is tshark's whole row by field name (its context columns included,
	// and "_field", the field being compared).
	applies func(tshark, ours string, row map[string]string) bool
}

func (kd *knownDifference) covers(field string) bool {
	switch p, wild := strings.CutPrefix(kd.field, "*"); {
	case !wild:
		return kd.field == field
	case p == "":
		return true
	default:
		return strings.HasPrefix(field, p)
	}
}

// matchKnown returns the ID of the difference in kds that explains tshark's
// and our values of field, or "".
func matchKnown(kds []knownDifference, field, tshark, ours string, row map[string]string) string {
	row["_field"] = field
	for i := range kds {
		if kds[i].covers(field) && kds[i].applies(tshark, ours, row) {
			return kds[i].id
		}
	}
	return ""
}

// goldenSuite compares `rdmashark dissect -T fields` with tshark's stored
// output (testdata/tshark/gen*.sh) on every packet of some captures.
type goldenSuite struct {
	// fields names the file listing the fields, in testdata/tshark.
	fields string
	// suffix names each capture's reference: testdata/tshark/NAME.suffix.
	suffix   string
	captures []string // paths
	// context names tshark's extra columns after the fields (not
	// compared; known differences may look at them).
	context []string
	known   []knownDifference
	// visit, when set, sees every tshark value compared.
	visit func(field, tshark string)
}

// run compares and returns, per field, how many non-empty tshark values
// were compared. Known differences must each have occurred and be documented.
func (g goldenSuite) run(t *testing.T) map[string]int {
	t.Helper()
	fields := listFile(t, filepath.Join("..", "..", "testdata", "tshark", g.fields))
	hits := map[string]int{}
	compared := map[string]int{}
	for _, capture := range g.captures {
		base := strings.TrimSuffix(filepath.Base(capture), ".pcap")
		t.Run(base, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+"."+g.suffix))
			if err != nil {
				t.Fatal(err)
			}
			wl, gl := readLines(t, want), readLines(t, dissectFields(t, fields, capture))
			if len(wl) != len(gl) {
				t.Fatalf("tshark printed %d packets, rdmashark %d", len(wl), len(gl))
			}
			failures := 0
			for i := range wl {
				wv := strings.Split(wl[i], "\t")
				gv := strings.Split(gl[i], "\t")
				if len(wv) != len(fields)+len(g.context) || len(gv) != len(fields) {
					t.Fatalf("packet %d: %d tshark columns, %d ours, %d fields + %d context", i+1, len(wv), len(gv), len(fields), len(g.context))
				}
				row := map[string]string{}
				for k, c := range g.context {
					row[c] = wv[len(fields)+k]
				}
				for k, f := range fields {
					row[f] = wv[k]
				}
				for k, f := range fields {
					if wv[k] != "" {
						compared[f]++
					}
					if g.visit != nil {
						g.visit(f, wv[k])
					}
					if wv[k] == gv[k] {
						continue
					}
					if id := matchKnown(g.known, f, wv[k], gv[k], row); id != "" {
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
	checkKnownDocumented(t, g.known, hits)
	return compared
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

// listFile reads a list of names, one per line, # comments and blanks
// skipped.
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

// dissectFields runs `rdmashark dissect -T fields` with fields on capture.
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

func readLines(t *testing.T, b []byte) []string {
	t.Helper()
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
