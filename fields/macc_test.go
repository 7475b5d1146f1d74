package fields

import (
	"os"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dfilter"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

// TestMACControlEqualsTshark: the macc.* fields of IEEE 802.3 MAC Control
// frames (PAUSE and PFC, testdata/macc/mac-control.pcap from gen.py) equal
// what tshark 4.0 prints for them (macc.tsv from gen.sh), frame by frame:
// issue 28's "PAUSE/PFC frames: counted by analyze but absent from
// dissect".
func TestMACControlEqualsTshark(t *testing.T) {
	data, err := os.ReadFile("testdata/macc/macc.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "#"):
		case names == nil:
			names = strings.Split(l, "\t")
		default:
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	r, err := source.Open("testdata/macc/mac-control.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e := dissect.NewEngine(dissect.Options{})
	n := 0
	if err := e.Run(r, func(p *dissect.Packet) error {
		if n >= len(rows) {
			t.Fatalf("frame %d: tshark has %d rows", p.Number, len(rows))
		}
		for i, name := range names {
			f, ok := Registry.Lookup(name)
			if !ok {
				t.Fatalf("%s: not a field", name)
			}
			var got []string
			f.Get(p, func(v Value) { got = append(got, f.Format(v)) })
			if g := strings.Join(got, ","); g != rows[n][i] {
				t.Errorf("frame %d %s: %q, tshark %q", p.Number, name, g, rows[n][i])
			}
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(rows) || n != 4 {
		t.Errorf("%d frames, tshark %d", n, len(rows))
	}
}

// TestPFCWord: "pfc", rdmashark's word for PFC frames (tshark has none),
// selects the MAC Control frames whose opcode is PFC's (0x0101, IEEE
// 802.1Qbb), as macc.opcode == 0x0101 does in tshark (macc.tsv).
func TestPFCWord(t *testing.T) {
	pfcF, err := dfilter.Compile("pfc", FilterRegistry(Registry))
	if err != nil {
		t.Fatal(err)
	}
	opF, err := dfilter.Compile("macc.opcode == 0x0101", FilterRegistry(Registry))
	if err != nil {
		t.Fatal(err)
	}
	r, err := source.Open("testdata/macc/mac-control.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	if err := dissect.NewEngine(dissect.Options{}).Run(r, func(p *dissect.Packet) error {
		if pfcF.Match(p) != opF.Match(p) {
			t.Errorf("frame %d: pfc %v, macc.opcode == 0x0101 %v", p.Number, pfcF.Match(p), opF.Match(p))
		}
		if pfcF.Match(p) {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no PFC frame")
	}
}
