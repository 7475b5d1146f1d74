package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAnnotateTshark: tshark's reading of `check --annotate` on rxe-nfs3.pcap
// (testdata/tshark/annotate-rxe-nfs3.tsv, gen-annotate.sh) has every frame
// with its length, and at every packet of every finding check reports (JSON)
// a comment naming the finding's rule and message, and no other comment.
func TestAnnotateTshark(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", "rxe-nfs3.pcap")
	var js, errOut bytes.Buffer
	run([]string{"check", "--format", "json", capture}, nil, &js, &errOut)
	var rep struct {
		Files []struct {
			Findings []struct {
				Rule    string `json:"rule"`
				Message string `json:"message"`
				Packets []int  `json:"packets"`
			} `json:"findings"`
		} `json:"files"`
	}
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil || len(rep.Files) != 1 {
		t.Fatalf("check --format json: %v %s", err, errOut.String())
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "annotate-rxe-nfs3.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	comments := map[int][]string{}
	lens := map[int]string{}
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		cols := strings.Split(l, "\t")
		n, _ := strconv.Atoi(cols[0])
		if cols[1] != "" {
			comments[n] = strings.Split(cols[1], "^")
		}
		lens[n] = cols[2]
	}
	var lenOut bytes.Buffer
	run([]string{"dissect", "-T", "fields", "-e", "frame.number", "-e", "frame.len", capture}, nil, &lenOut, &errOut)
	frames := 0
	for _, l := range strings.Split(strings.TrimSpace(lenOut.String()), "\n") {
		num, ln, _ := strings.Cut(l, "\t")
		n, _ := strconv.Atoi(num)
		if lens[n] != ln {
			t.Errorf("frame %d: %q bytes in the annotated capture, %q in the original", n, lens[n], ln)
		}
		frames++
	}
	if frames != len(lens) || frames != 7245 {
		t.Errorf("%d frames in the original, %d annotated", frames, len(lens))
	}
	used := map[int]map[int]bool{}
	annotated := 0
	for _, f := range rep.Files[0].Findings {
		for _, p := range f.Packets {
			found := false
			for i, c := range comments[p] {
				if strings.Contains(c, " "+f.Rule+" ") && strings.Contains(c, f.Message) {
					found = true
					if used[p] == nil {
						used[p] = map[int]bool{}
					}
					used[p][i] = true
				}
			}
			if !found {
				t.Errorf("packet %d: no comment for %s %q; tshark read %q", p, f.Rule, f.Message, comments[p])
			}
			annotated++
		}
	}
	for p, cs := range comments {
		for i, c := range cs {
			if !used[p][i] {
				t.Errorf("packet %d: comment %q is no finding of check", p, c)
			}
		}
	}
	if annotated < 100 {
		t.Errorf("only %d finding packets", annotated)
	}
}

func TestAnnotateNeedsOneFile(t *testing.T) {
	capture := filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap")
	other := filepath.Join("..", "..", "testdata", "pcaps", "siw-rping.pcap")
	var out, errOut bytes.Buffer
	if code := run([]string{"check", "--annotate", filepath.Join(t.TempDir(), "x.pcapng"), capture, other}, nil, &out, &errOut); code != exitUsage {
		t.Errorf("two files: exit %d", code)
	}
}
