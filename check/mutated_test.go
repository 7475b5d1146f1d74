package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// The mutated captures (testdata/pcaps/mutated, made by
// `go run ./testdata/mutate`): each is a cut of a real capture with one fault
// planted. The test runs every rule on the base and on the mutated file and
// asserts that the rules with findings change by exactly what the manifest
// says the fault breaks (or, for faults that remove a deviation, repairs).

const mutatedDir = "../testdata/pcaps/mutated"

type manifestEntry struct {
	File, Base, Mutation, What string
	Source                     string
	Keep                       [][2]int
	Added, Removed             []string
}

func readManifest(t *testing.T) []manifestEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mutatedDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m []manifestEntry
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("empty manifest")
	}
	return m
}

// found returns the sorted IDs of the rules with findings.
func found(res *Result) []string {
	var ids []string
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Findings > 0 && !slices.Contains(ids, ch.Rule) {
				ids = append(ids, ch.Rule)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func TestMutated(t *testing.T) {
	m := readManifest(t)
	bases := map[string][]string{}
	for _, e := range m {
		if e.Mutation == "" {
			bases[e.Base] = found(runFile(t, filepath.Join(mutatedDir, e.File), Config{}))
		}
	}
	for _, e := range m {
		if e.Mutation == "" {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			base, ok := bases[e.Base]
			if !ok {
				t.Fatalf("base %s is not in the manifest", e.Base)
			}
			for _, r := range e.Added {
				if slices.Contains(base, r) {
					t.Errorf("the unmutated %s already shows %s", e.Base, r)
				}
			}
			for _, r := range e.Removed {
				if !slices.Contains(base, r) {
					t.Errorf("the unmutated %s does not show %s, which the fault should remove", e.Base, r)
				}
			}
			var want []string
			for _, r := range base {
				if !slices.Contains(e.Removed, r) {
					want = append(want, r)
				}
			}
			want = append(want, e.Added...)
			slices.Sort(want)
			res := runFile(t, filepath.Join(mutatedDir, e.File), Config{})
			if got := found(res); !slices.Equal(got, want) {
				t.Errorf("%s\nrules with findings: %v\nwant (base %v %+v %-v): %v", e.What, got, base, e.Added, e.Removed, want)
				for _, f := range res.Findings {
					if !slices.Contains(base, f.Rule) || slices.Contains(e.Added, f.Rule) {
						t.Logf("  %s %v: %s", f.Rule, f.Packets, f.Message)
					}
				}
			}
		})
	}
}

// TestMutatedBases checks the generator's repairs where they must change
// nothing: every base starts at a connection's CM exchange, so renumbering
// and ICRC fixing leave its packets byte for byte as the real capture has
// them.
func TestMutatedBases(t *testing.T) {
	for _, e := range readManifest(t) {
		if e.Mutation != "" {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			src := readFrames(t, filepath.Join("../testdata/pcaps", e.Source))
			got := readFrames(t, filepath.Join(mutatedDir, e.File))
			var want [][]byte
			for i, f := range src {
				for _, r := range e.Keep {
					if i+1 >= r[0] && i+1 <= r[1] {
						want = append(want, f)
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d packets, want %d", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("packet %d of the cut differs from the real capture's", i+1)
				}
			}
		})
	}
}

func readFrames(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		d, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, slices.Clone(d))
	}
	return out
}

// TestCoverage checks that every rule has a capture that breaks it and one
// on which it was evaluated and found nothing, among the real captures and
// the mutated ones. The rules listed in untested lack one of the two; the
// list is exact, so covering one means removing it here.
func TestCoverage(t *testing.T) {
	untested := map[string]string{
		"INV-USAGE":   "an informational report on every connection with Replies: it has nothing to pass",
		"MPA-CRC-BAD": "siw negotiates no MPA CRC; see TestMPAChecks for built FPDUs",
		// MPA-MARKERS, MPA-MARKER-BAD, RDMA-READ-UNPAIRED and
		// TCP-CHECKSUM-BAD: the Wireshark wiki's iWARP captures in
		// public/ break and pass them.
	}
	broken, passed := map[string]bool{}, map[string]bool{}
	note := func(res *Result) {
		for _, cr := range res.Connections {
			for _, ch := range cr.Checks {
				switch ch.Status {
				case StatusFound:
					broken[ch.Rule] = true
				case StatusPassed:
					passed[ch.Rule] = true
				}
			}
		}
	}
	for _, f := range realCaptures(t) {
		note(runFile(t, f, Config{}))
	}
	for _, e := range readManifest(t) {
		note(runFile(t, filepath.Join(mutatedDir, e.File), Config{}))
	}
	// RPC-over-RDMA version 2 has no implementation to capture from: the
	// independent corpus (testdata/v2corpus) breaks and passes its rules.
	for _, f := range []string{"rxe-nfs3-v2-valid.pcap", "rxe-nfs3-v2-forbidden.pcap"} {
		note(runFile(t, v2CorpusDir+f, Config{}))
	}
	for _, r := range Rules() {
		ok := broken[r.ID] && passed[r.ID]
		why, listed := untested[r.ID]
		switch {
		case ok && listed:
			t.Errorf("%s is covered now: remove it from the untested list (%s)", r.ID, why)
		case !ok && !listed:
			t.Errorf("%s: broken by some capture %v, passed on some capture %v", r.ID, broken[r.ID], passed[r.ID])
		}
	}
}
