package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// TestAnalyzeSaysWhichFiguresGapsAffect: siw-nfs41 without packet 176 (16
// octets of the client's TCP stream, tshark: tcp.seq_raw 1282428778,
// tcp.len 16, the first octets of an FPDU) has analyze name, on that
// connection alone, the figures the missing octets bear on, in the text
// and the JSON (gaps_affect); the whole capture has none.
func TestAnalyzeSaysWhichFiguresGapsAffect(t *testing.T) {
	src := "../../testdata/pcaps/siw-nfs41.pcap"
	lt, frames := pcaptest.Read(t, src)
	var kept []pcaptest.Frame
	for _, f := range frames {
		if f.Num != 176 {
			kept = append(kept, f)
		}
	}
	thinned := pcaptest.Write(t, lt, kept)
	type conn struct {
		ID         int `json:"id"`
		GapsAffect []struct {
			Figures []string `json:"figures"`
			Note    string   `json:"note"`
		} `json:"gaps_affect"`
	}
	affected := func(path string) (map[int][]string, string) {
		var a struct {
			Connections []conn `json:"connections"`
		}
		if err := json.Unmarshal(runAnalyze(t, path, "json"), &a); err != nil {
			t.Fatal(err)
		}
		m := map[int][]string{}
		for _, c := range a.Connections {
			for _, g := range c.GapsAffect {
				m[c.ID] = append(m[c.ID], g.Figures...)
				if g.Note == "" {
					t.Errorf("%s connection %d: %v without a note", path, c.ID, g.Figures)
				}
			}
		}
		return m, string(runAnalyze(t, path, "table"))
	}
	if m, text := affected(src); len(m) != 0 || strings.Contains(text, "gaps affect") {
		t.Errorf("whole capture: %v", m)
	}
	m, text := affected(thinned)
	if len(m) != 1 || len(m[1]) == 0 {
		t.Fatalf("without packet 176: %v", m)
	}
	for _, want := range []string{"transport_health.bytes", "transport_health.ack_latency", "iwarp.sends", "rpc"} {
		if !strings.Contains(strings.Join(m[1], " "), want) {
			t.Errorf("gaps_affect lacks %s: %v", want, m[1])
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "gaps affect: bytes and throughput (count only what the capture holds, not the 16 TCP octets it lacks)") {
		t.Errorf("text:\n%s", text)
	}
}
