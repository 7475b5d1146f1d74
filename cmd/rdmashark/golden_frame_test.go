package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTsharkFrameFields compares frame.time, the VLAN fields and the
// columns tshark computes the same way with tshark's on every real and
// synthetic capture, in UTC as gen-frame.sh ran tshark.
func TestTsharkFrameFields(t *testing.T) {
	saved := time.Local
	time.Local = time.UTC
	defer func() { time.Local = saved }()
	var captures []string
	for _, pat := range []string{"rxe-*.pcap", "siw-*.pcap", "public/montybeatnik-*.pcap", "public/srinivaskoritala-*.pcap",
		"synthetic/*.pcap", "synthetic/*.pcapng"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range m {
			if filepath.Base(c) != "ib-native.pcap" { // tshark -T fields refuses DLT 247
				captures = append(captures, c)
			}
		}
	}
	compared := goldenSuite{fields: "fields-frame.txt", suffix: "frame.tsv", captures: captures,
		context: []string{"frame.protocols"},
		known: []knownDifference{{id: "KD-ERF-TIMESTAMP", field: "*_ws.col.Time",
			applies: func(ts, ours string, row map[string]string) bool {
				return strings.HasPrefix(row["frame.protocols"], "erf")
			}}, {
			id: "KD-ERF-TIMESTAMP", field: "frame.time",
			applies: func(ts, ours string, row map[string]string) bool {
				return strings.HasPrefix(row["frame.protocols"], "erf")
			}}, {
			id: "KD-COL-TIME-PRECISION", field: "_ws.col.Time",
			applies: func(ts, ours string, row map[string]string) bool { return ts == ours+"000" }}},
	}.run(t)
	for _, f := range []string{"frame.time", "vlan.priority", "vlan.dei", "_ws.col.Time", "_ws.col.Length"} {
		if compared[f] == 0 {
			t.Errorf("%s: no tshark value compared", f)
		}
	}
}
