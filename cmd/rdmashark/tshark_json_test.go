package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bitFields are fields tshark's -T json prints shifted right by their bit
// mask's offset while its -T fields (which rdmashark's values equal, the
// golden tests) prints them unshifted: docs/tshark.md.
var bitFields = map[string]bool{
	"infiniband.cm.req.prim_flowlabel": true, "infiniband.cm.req.prim_pktrate": true, "iwarp_mpa.res": true,
	"infiniband_infiniband_cm_req_prim_flowlabel": true, "infiniband_infiniband_cm_req_prim_pktrate": true,
}

// tsharkDoc is one packet of tshark -T json.
type tsharkDoc struct {
	Index  string          `json:"_index"`
	Type   string          `json:"_type"`
	Score  json.RawMessage `json:"_score"`
	Source struct {
		Layers map[string]any `json:"layers"`
	} `json:"_source"`
}

// leaves collects every field name → value (strings, or arrays of strings)
// of a tshark JSON layer, whatever its nesting ("<field>_tree" objects).
func leaves(v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, x := range m {
		switch x := x.(type) {
		case map[string]any:
			leaves(x, out)
		case []any:
			if len(x) > 0 {
				if _, obj := x[0].(map[string]any); obj {
					for _, o := range x {
						leaves(o, out)
					}
					continue
				}
			}
			out[k] = x
		default:
			out[k] = x
		}
	}
}

// TestTsharkJSONShape: dissect -T json is tshark's -T json — an array of
// {"_index","_type","_score","_source":{"layers":...}}, so that
// `jq '.[]._source.layers'` scripts work — with every value rdmashark and
// tshark both have equal, as strings, wherever it sits in tshark's tree
// (testdata/tshark/*.json, made by gen-json.sh with --no-duplicate-keys).
func TestTsharkJSONShape(t *testing.T) {
	for _, c := range []struct {
		capture string
		count   string
	}{{"rxe-rping", "20"}, {"siw-rping-any-sll", "12"}} {
		ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", c.capture+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var want []tsharkDoc
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := run([]string{"-r", filepath.Join("..", "..", "testdata", "pcaps", c.capture+".pcap"),
			"-c", c.count, "-T", "json"}, nil, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.capture, code, errOut.String())
		}
		var got []tsharkDoc
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%s: -T json is not one JSON array: %v", c.capture, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d packets, tshark %d", c.capture, len(got), len(want))
		}
		compared, layersBoth := 0, 0
		for i := range got {
			g, w := got[i], want[i]
			if g.Index != w.Index || g.Type != w.Type || string(g.Score) != string(w.Score) {
				t.Errorf("%s packet %d: _index %q _type %q _score %s, tshark %q %q %s", c.capture, i+1,
					g.Index, g.Type, g.Score, w.Index, w.Type, w.Score)
			}
			for proto, gl := range g.Source.Layers {
				wl, ok := w.Source.Layers[proto]
				if !ok {
					continue
				}
				layersBoth++
				gv, wv := map[string]any{}, map[string]any{}
				leaves(gl, gv)
				leaves(wl, wv)
				for k, x := range gv {
					y, ok := wv[k]
					if !ok || bitFields[k] {
						continue
					}
					compared++
					xs, _ := json.Marshal(x)
					ys, _ := json.Marshal(y)
					if string(xs) != string(ys) {
						t.Errorf("%s packet %d: %s = %s, tshark %s", c.capture, i+1, k, xs, ys)
					}
				}
			}
			for _, proto := range []string{"frame", "eth", "sll", "arp", "ip", "icmp", "tcp", "udp", "infiniband"} {
				_, inT := w.Source.Layers[proto]
				_, inR := g.Source.Layers[proto]
				if inT && !inR {
					t.Errorf("%s packet %d: no layer %q, tshark has it", c.capture, i+1, proto)
				}
			}
		}
		if compared < 300 || layersBoth < 50 {
			t.Errorf("%s: only %d values in %d layers compared", c.capture, compared, layersBoth)
		}
		t.Logf("%s: %d values in %d layers equal tshark's", c.capture, compared, layersBoth)
	}
}

// TestTsharkEKShape: dissect -T ek is tshark's -T ek: an index line and a
// document line per packet, the document's layers keyed by protocol with
// fields named <protocol>_<field, . as _>, values as tshark writes them
// (testdata/tshark/rxe-rping.ek).
func TestTsharkEKShape(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", "rxe-rping.ek"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"dissect", "-r", filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap"),
		"-c", "20", "-T", "ek"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := func(b []byte) []map[string]any {
		var docs []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("not one JSON object a line: %v: %.80s", err, sc.Text())
			}
			docs = append(docs, m)
		}
		return docs
	}
	got, want := lines(out.Bytes()), lines(ref)
	if len(got) != len(want) || len(got) != 40 {
		t.Fatalf("%d lines, tshark %d", len(got), len(want))
	}
	compared := 0
	for i := range got {
		if i%2 == 0 {
			gs, _ := json.Marshal(got[i])
			ws, _ := json.Marshal(want[i])
			if string(gs) != string(ws) {
				t.Errorf("line %d: %s, tshark %s", i+1, gs, ws)
			}
			continue
		}
		if got[i]["timestamp"] != want[i]["timestamp"] {
			t.Errorf("line %d: timestamp %v, tshark %v", i+1, got[i]["timestamp"], want[i]["timestamp"])
		}
		gl, _ := got[i]["layers"].(map[string]any)
		wl, _ := want[i]["layers"].(map[string]any)
		for proto, gp := range gl {
			wp, ok := wl[proto].(map[string]any)
			if !ok {
				continue
			}
			for k, x := range gp.(map[string]any) {
				y, ok := wp[k]
				if !ok || bitFields[k] || strings.HasSuffix(k, "_time") { // frame.time: tshark's ek prints ISO 8601
					continue
				}
				compared++
				xs, _ := json.Marshal(x)
				ys, _ := json.Marshal(y)
				if string(xs) != string(ys) {
					t.Errorf("line %d: %s = %s, tshark %s", i+1, k, xs, ys)
				}
			}
		}
	}
	if compared < 200 {
		t.Errorf("only %d values compared", compared)
	}
	t.Logf("%d values equal tshark's", compared)
}
