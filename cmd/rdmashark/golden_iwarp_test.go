package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// iwarpKnownDifferences are the documented ways rdmashark's iWARP fields
// differ from tshark 4.0's (testdata/KNOWN-DIFFERENCES.md, same IDs). As for
// RoCE, each must still occur.
var iwarpKnownDifferences = []knownDifference{
	{id: "KD-MPA-RES-ENHANCED", field: "iwarp_mpa.res",
		applies: func(ts, ours string, row map[string]string) bool {
			// tshark 4.0 counts the enhanced-connection flag (0x10) in
			// Res; rdmashark shows it as iwarp_mpa.enhanced_flag and Res
			// without it. Only on MPA revision 2 frames.
			return row["iwarp_mpa.rev"] == "2" && ts == "0x10" && ours == "0x00"
		}},
}

func iwarpGoldenFields(t *testing.T) []string {
	data, err := os.ReadFile("../../testdata/tshark/fields-iwarp.txt")
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

// TestTsharkFieldsIWARP runs `rdmashark dissect -T fields` with every field
// of testdata/tshark/fields-iwarp.txt on every siw capture and requires
// tshark 4.0's value on every packet, but for the documented known
// differences. tshark frames MPA over its TCP reassembly and shows each FPDU
// in the frame that completes it, as rdmashark does, so the FPDUs of a frame
// compare one to one (several FPDUs in a frame: comma-separated in order).
func TestTsharkFieldsIWARP(t *testing.T) {
	fields := iwarpGoldenFields(t)
	caps, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", "siw-*.pcap"))
	if err != nil || len(caps) < 7 {
		t.Fatalf("siw captures: %v (%d)", err, len(caps))
	}
	hits := map[string]int{}
	fpdus, reqreps := 0, 0
	for _, capture := range caps {
		base := strings.TrimSuffix(filepath.Base(capture), ".pcap")
		t.Run(base, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".iwarp.tsv"))
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
				// tshark's last two columns (_ws.malformed,
				// _ws.expert.message) are context only.
				if len(wv) != len(fields)+2 || len(gv) != len(fields) {
					t.Fatalf("packet %d: %d tshark columns, %d ours, %d fields", i+1, len(wv), len(gv), len(fields))
				}
				row := map[string]string{"_ws.malformed": wv[len(fields)], "_ws.expert.message": wv[len(fields)+1]}
				for k, f := range fields {
					row[f] = wv[k]
				}
				for k, f := range fields {
					if f == "iwarp_mpa.ulpdulength" && wv[k] != "" {
						fpdus += strings.Count(wv[k], ",") + 1
					}
					if f == "iwarp_mpa.rev" && wv[k] != "" {
						reqreps++
					}
					if wv[k] == gv[k] {
						continue
					}
					if id := matchIWARPKnown(f, wv[k], gv[k], row); id != "" {
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
	// Every siw capture has MPA set-up and FPDUs of every kind: an empty
	// comparison would prove nothing.
	if fpdus < 10000 || reqreps < 30 {
		t.Errorf("only %d FPDUs and %d MPA Requests/Replies compared", fpdus, reqreps)
	}
	t.Logf("%d FPDUs and %d MPA Requests/Replies compared with tshark", fpdus, reqreps)
	doc, err := os.ReadFile("../../testdata/KNOWN-DIFFERENCES.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, kd := range iwarpKnownDifferences {
		if hits[kd.id] == 0 {
			t.Errorf("known difference %s (%s) never occurred: remove it", kd.id, kd.field)
		}
		if !regexp.MustCompile(`(?m)^#+ .*\b` + regexp.QuoteMeta(kd.id) + `\b`).Match(doc) {
			t.Errorf("known difference %s is not documented in testdata/KNOWN-DIFFERENCES.md", kd.id)
		}
		t.Logf("%s: %d values", kd.id, hits[kd.id])
	}
}

func matchIWARPKnown(field, tshark, ours string, row map[string]string) string {
	for _, kd := range iwarpKnownDifferences {
		if kd.field == field && kd.applies(tshark, ours, row) {
			return kd.id
		}
	}
	return ""
}
