package report

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// encoderJSON is what writeJSONStream must write: json.Encoder's output.
func encoderJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func streamedJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := writeJSONStream(&b, v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sameJSON(t *testing.T, what string, v any) {
	t.Helper()
	want, got := encoderJSON(t, v), streamedJSON(t, v)
	if got != want {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: streamed JSON differs from encoding/json at byte %d:\n got  %q\n want %q", what, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
	}
}

type jsInner struct {
	A  int               `json:"a"`
	B  string            `json:"b,omitempty"`
	M  map[string]int    `json:"m"`
	P  *float64          `json:"p,omitempty"`
	S  dissect.ConnState `json:"state"`
	L  []jsInner         `json:"list,omitempty"`
	E  []int             `json:"empty"`
	N  []string          `json:"nil"`
	X  any               `json:"any"`
	Bs []byte            `json:"bytes"`
	Mp map[int][]jsInner `json:"map_of_lists,omitempty"`
}

type jsEmbedded struct {
	jsInner
	Z int `json:"z"`
}

// TestJSONStreamMatchesEncoder: on hand-made values covering what
// encoding/json does with structs (names, omitempty, "-"), slices (nil,
// empty, nested), maps, pointers, interfaces, byte slices, text marshalers,
// floats and "<&>", and on every document rdmashark writes from real
// captures, the streamed output is encoding/json's byte for byte.
func TestJSONStreamMatchesEncoder(t *testing.T) {
	f := 1.5
	v := struct {
		Name   string     `json:"name"`
		Skip   int        `json:"-"`
		Inner  jsInner    `json:"inner"`
		Ptr    *jsInner   `json:"ptr"`
		NilPtr *jsInner   `json:"nil_ptr"`
		List   []jsInner  `json:"list"`
		Emb    jsEmbedded `json:"emb"`
		Big    float64    `json:"big"`
		unexp  int
		NoTag  bool
	}{
		Name:  "a <b> & c \u2028",
		Inner: jsInner{A: 1, M: map[string]int{"z": 1, "a": 2}, P: &f, S: dissect.StateEstablished, E: []int{}, X: []any{1, "x", nil}, Bs: []byte("hi")},
		Ptr:   &jsInner{L: []jsInner{{A: 2}, {A: 3, L: []jsInner{{}}}}, Mp: map[int][]jsInner{1: {{A: 4}}}},
		List:  []jsInner{{A: 5}, {B: "x"}},
		Emb:   jsEmbedded{jsInner{A: 6}, 7},
		Big:   math.MaxFloat64,
		unexp: 1,
	}
	sameJSON(t, "hand-made", v)
	sameJSON(t, "hand-made pointer", &v)
	sameJSON(t, "empty slice", []int{})
	// The scalars written without json.Encoder, at their edges.
	h32, h64 := Hex32(0xbeef), Hex64(1<<63|5)
	tiny, huge, neg := 1e-7, 1e21, -123.456e-3
	scalars := struct {
		S     []string   `json:"s"`
		F     []float64  `json:"f"`
		F32   float32    `json:"f32"`
		PF    []*float64 `json:"pf"`
		I     []int64    `json:"i"`
		U8    uint8      `json:"u8"`
		U     []uint64   `json:"u"`
		B     []bool     `json:"b"`
		H     []Hex32    `json:"h"`
		PH    []*Hex32   `json:"ph"`
		H64   *Hex64     `json:"h64"`
		State []dissect.ConnState
		Empty string  `json:"empty,omitempty"`
		Zero  float64 `json:"zero,omitempty"`
	}{
		S:     []string{"", "plain <&>", "quote\"", "back\\slash", "tab\t nl\n cr\r \b \f \x01 \x7f", "µs ×", "\u2028\u2029", "bad \xff utf-8"},
		F:     []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, math.SmallestNonzeroFloat64, -math.MaxFloat64},
		F32:   0.1,
		PF:    []*float64{nil, &tiny, &huge, &neg},
		I:     []int64{0, -1, math.MinInt64, math.MaxInt64},
		U8:    255,
		U:     []uint64{0, math.MaxUint64},
		B:     []bool{true, false},
		H:     []Hex32{0, 0xffffffff, 0x1234},
		PH:    []*Hex32{nil, &h32},
		H64:   &h64,
		State: []dissect.ConnState{dissect.StateEstablished, dissect.ConnState(200)},
	}
	sameJSON(t, "scalars", scalars)
	sameJSON(t, "scalars in a struct with ,string", struct {
		X struct {
			Quoted int `json:"quoted,string"`
		} `json:"x"`
	}{})

	rep := sampleReport(t)
	rep.FailOnDamage = true
	rep.Files[0].Interrupted = true
	sameJSON(t, "check report", rep)
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-rping.pcap", "siw-nfs41.pcap"} {
		r, err := source.Open("../testdata/pcaps/" + name)
		if err != nil {
			t.Fatal(err)
		}
		run := check.NewRunner(check.Config{})
		list := NewTransactionList(name, 0, TxnFilter{})
		eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), list.addTxn))
		if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
			t.Fatal(err)
		}
		r.Close()
		a := NewAnalysis(name, eng.Snapshot())
		a.AddChecks(run.Finish(eng.Conns.Connections()))
		sameJSON(t, name+" analysis", a)
		list.SetCounters(eng.Snapshot())
		list.Sort()
		sameJSON(t, name+" transactions", list)
	}
}
