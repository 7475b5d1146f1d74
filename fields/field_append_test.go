package fields

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestAppendFormatIsFormat: for every value of every registered field on
// every packet of a RoCE, an iWARP and an SLL2 capture (and a few values
// made up at the edges: zero, all ones, empty bytes, no address),
// AppendFormat appends exactly what Format returns, and AppendDisplay what
// Display returns (-V's form, with the value's meaning), after what the
// buffer already held.
func TestAppendFormatIsFormat(t *testing.T) {
	check := func(where string, f *Field, v Value) {
		want := f.Format(v)
		got := f.AppendFormat([]byte("x|"), v)
		if !bytes.HasPrefix(got, []byte("x|")) || string(got[2:]) != want {
			t.Fatalf("%s %s (%v): AppendFormat %q, Format %q", where, f.Name, f.Type, got, want)
		}
		want = f.Display(v)
		got = f.AppendDisplay([]byte("x|"), v)
		if !bytes.HasPrefix(got, []byte("x|")) || string(got[2:]) != want {
			t.Fatalf("%s %s (%v): AppendDisplay %q, Display %q", where, f.Name, f.Type, got, want)
		}
	}
	edge := []Value{{}, {U: ^uint64(0)}, {U: 1e9 - 1}, {U: 12345678901}, {B: []byte{}}, {B: []byte{0, 0xab, 0xff}}, {S: "s"},
		{Text: "meaning"}, {U: 7, Text: "meaning"}, {S: "s", Text: "t"}}
	for _, f := range Registry.All() {
		for _, v := range edge {
			check("edge", f, v)
		}
	}
	n := 0
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs41.pcap", "rxe-rping-any-sll2.pcap"} {
		e := dissect.NewEngine(dissect.Options{})
		var p dissect.Packet
		for _, r := range loadRecords(t, name) {
			p.Number, p.Timestamp, p.LinkType = r.num, r.ts, r.lt
			p.CaptureLength, p.Length = len(r.data), r.length
			e.Process(&p, r.data)
			for _, f := range Registry.All() {
				if f.Get == nil {
					continue
				}
				f.Get(&p, func(v Value) { check(name, f, v); n++ })
			}
		}
	}
	if n < 100000 {
		t.Errorf("only %d values compared", n)
	}
}

// TestAppendHex: appendHex is fmt's %0*x for every width tshark and the
// summary lines use, and beyond.
func TestAppendHex(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0x10, 0xabc, 0xffffffff, 1 << 32, 1<<63 | 0xf00, ^uint64(0)} {
		for _, d := range []int{0, 1, 2, 4, 6, 8, 16, 18} {
			if got, want := string(appendHex([]byte("x"), v, d)), "x"+fmt.Sprintf("%0*x", d, v); got != want {
				t.Errorf("appendHex(%#x, %d) = %q, want %q", v, d, got, want)
			}
		}
	}
}
