package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
)

// TestSARIFStreamMatchesEncoder: WriteSARIF makes each finding's result as
// it writes it. Its bytes are json.Encoder's (SetIndent("", "  "),
// SetEscapeHTML(false)) of the whole log with every result made first, as
// WriteSARIF wrote it before it streamed — for the sample report (real,
// mutated and lossy captures, an unreadable file, caveats), with a gate
// that fails (its results follow the findings'), and with no results.
func TestSARIFStreamMatchesEncoder(t *testing.T) {
	type run struct {
		Tool        sarifTool         `json:"tool"`
		Invocations []sarifInvocation `json:"invocations"`
		Artifacts   []sarifArtifact   `json:"artifacts"`
		Results     []sarifResult     `json:"results"`
	}
	type log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}
	withGate := sampleReport(t)
	withGate.Judge(GateOptions{MinConnections: 100, MinInlineThreshold: 1 << 20})
	empty := &CheckReport{Version: "test"}
	for name, rep := range map[string]*CheckReport{"sample": sampleReport(t), "gate": withGate, "empty": empty} {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			if err := rep.WriteSARIF(&got); err != nil {
				t.Fatal(err)
			}
			// The same log, its results made whole: decode what was
			// written into the document types, make the findings'
			// results again, and encode it all at once.
			var doc struct {
				Schema  string `json:"$schema"`
				Version string `json:"version"`
				Runs    []struct {
					Tool        sarifTool         `json:"tool"`
					Invocations []sarifInvocation `json:"invocations"`
					Artifacts   []sarifArtifact   `json:"artifacts"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(got.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			r := doc.Runs[0]
			want := log{Schema: doc.Schema, Version: doc.Version, Runs: []run{{Tool: r.Tool, Invocations: r.Invocations, Artifacts: r.Artifacts, Results: []sarifResult{}}}}
			index := map[string]int{}
			for i, ru := range r.Tool.Driver.Rules {
				if _, ok := index[ru.ID]; !ok {
					index[ru.ID] = i
				}
			}
			for fi := range rep.Files {
				rep.fileResults(fi, index, func(res *sarifResult) { want.Runs[0].Results = append(want.Runs[0].Results, *res) })
			}
			findings := len(want.Runs[0].Results)
			var gate run
			var gl struct {
				Runs []struct {
					Results []sarifResult `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(got.Bytes(), &gl); err != nil {
				t.Fatal(err)
			}
			gate.Results = gl.Runs[0].Results[findings:]
			want.Runs[0].Results = append(want.Runs[0].Results, gate.Results...)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), buf.Bytes()) {
				t.Errorf("streamed SARIF (%d bytes) differs from the encoded log (%d bytes)", got.Len(), buf.Len())
			}
			switch name {
			case "sample":
				if findings < 100 {
					t.Errorf("%d results: the sample report should have many", findings)
				}
			case "gate":
				if len(gate.Results) == 0 {
					t.Errorf("no gate results after the findings'")
				}
			case "empty":
				if findings != 0 || !bytes.Contains(got.Bytes(), []byte(`"results": []`)) {
					t.Errorf("no findings: want \"results\": [], got %d", findings)
				}
			}
		})
	}
}

// TestSARIFPacketsSuffice: locating only the packets SARIFPackets names
// gives the same SARIF as locating every packet of every finding: a
// finding of 150 packets, one of 17, one of 2 and one of none, with the
// file's records all found. It fails when SARIFPackets leaves out a
// packet a related location needs (tried with one fewer).
func TestSARIFPacketsSuffice(t *testing.T) {
	pkts := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 10 + 3*i
		}
		return out
	}
	fs := []check.Finding{
		{Rule: "CHUNK-UNNEEDED", Severity: check.Info, Connection: 1, Packets: pkts(150), Message: "m"},
		{Rule: "PSN-GAP", Severity: check.Info, Connection: 1, Packets: pkts(17), Message: "m"},
		{Rule: "INV-USAGE", Severity: check.Info, Connection: 1, Packets: pkts(2), Message: "m"},
		{Rule: "INV-USAGE", Severity: check.Info, Connection: 1, Message: "m"},
	}
	write := func(some bool) string {
		f := CheckFile{File: "x.pcap", Findings: fs, Records: map[int]RecordSpan{},
			Connections: []CheckConnection{{ID: 1, Transport: "roce", Checks: []check.CheckResult{}, name: "connection 1"}}}
		for i := range fs {
			ps := fs[i].Packets
			if some {
				ps = SARIFPackets(&fs[i])
			}
			for _, p := range ps {
				f.Records[p] = RecordSpan{Offset: int64(p) * 64, Length: 60}
			}
		}
		var r CheckReport
		r.Add(f)
		var b bytes.Buffer
		if err := r.WriteSARIF(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	all, some := write(false), write(true)
	if all != some {
		t.Fatal("SARIF differs when only SARIFPackets are located")
	}
	if n := strings.Count(all, `"byteOffset"`); n != 1+16+1+16+1+1 {
		t.Fatalf("%d regions: the test's findings do not have the related locations they should", n)
	}
}
