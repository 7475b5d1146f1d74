package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
)

// captureDocument is how capture wrote its JSON before it streamed it: the
// analyze document with the capture's facts beside it, through
// json.Encoder.
type captureDocument struct {
	*report.Analysis
	Capture captureInfo `json:"capture"`
}

// TestCaptureJSONMatchesEncoder: capture's streamed document is, byte for
// byte, what json.Encoder writes (without HTML escaping, as analyze's JSON)
// of the analysis with the capture's facts embedded beside it — on the
// analyses of real captures, with their checks, and with facts whose
// strings need escaping.
func TestCaptureJSONMatchesEncoder(t *testing.T) {
	info := captureInfo{Interface: "veth<0>", Filter: `udp port 4791 and "x"`, SnapLen: 262144, Packets: 77,
		KernelPackets: 78, KernelDrops: 1, Seconds: 1.5, Stop: "count reached", Written: "a&b.pcapng"}
	// Analysed as capture does, the released connections taken by the
	// spill (spilled: from the first one on), or as before.
	spilledConns := 0
	// Twenty copies of rping one after the other: a connection closed is
	// released during the read once 16 more have closed (graceConns), as
	// capture releases them; the spill takes those.
	rping, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	copies := filepath.Join(t.TempDir(), "rping-x20.pcap")
	if err := os.WriteFile(copies, append(slices.Clone(rping), bytes.Repeat(rping[24:], 19)...), 0o644); err != nil {
		t.Fatal(err)
	}
	analysis := func(f string, spilled bool) *report.Analysis {
		if !filepath.IsAbs(f) {
			f = filepath.Join("..", "..", "testdata", "pcaps", f)
		}
		r, err := source.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var opts dissect.Options
		var spill *report.ConnSpill
		if spilled {
			spill = report.NewConnSpill()
			opts.Observer = spill
		}
		checks, each := withChecks(check.Config{}, &opts, nil)
		if spilled {
			spill.SetRunner(checks)
		}
		eng := dissect.NewEngine(opts)
		if err := eng.Run(r, each); err != nil {
			t.Fatal(err)
		}
		name := "live:" + filepath.Base(f)
		a := report.NewAnalysis(name, eng.Snapshot())
		if spilled {
			spilledConns += spill.Len()
			a = spill.Analysis(name, eng.Snapshot())
			t.Cleanup(func() { a.Close() })
		}
		a.AddChecks(checks.Finish(eng.Conns.Connections()))
		return a
	}
	defer report.SpillConnsAfter(report.SpillConnsAfter(0))
	for _, f := range []string{"rxe-rping.pcap", "siw-nfs3.pcap", "rxe-nfs3.pcap", "rxe-ib_send_bw.pcap", copies} {
		a := analysis(f, false)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(captureDocument{Analysis: a, Capture: info}); err != nil {
			t.Fatal(err)
		}
		for _, spilled := range []bool{false, true} {
			var got bytes.Buffer
			if err := analysis(f, spilled).WriteJSONWith(&got, "capture", info); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s (spilled %v): WriteJSONWith writes\n%s\njson.Encoder\n%s", f, spilled, tailOf(got.String()), tailOf(want.String()))
			}
		}
	}
	if spilledConns == 0 {
		t.Fatal("no connection was spilled: the spilled documents were not tested")
	}
}

func tailOf(s string) string { return s[max(0, len(s)-600):] }
