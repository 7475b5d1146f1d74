package check_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"io"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// fuzzLinkTypes is what each frame's first byte selects (modulo its length).
var fuzzLinkTypes = []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2, 247, 197}

// checkFuzzSeeds turns the mutated captures — real NFS/RDMA traffic cut
// short with one fault planted in each — into fuzz inputs: frames as
// [link-type index][length, 2 octets][frame], at most maxFrames of each.
func checkFuzzSeeds(t testing.TB, maxFrames int) [][]byte {
	t.Helper()
	files, err := filepath.Glob("../testdata/pcaps/mutated/*.pcap")
	if err != nil || len(files) < 10 {
		t.Fatalf("mutated captures: %v (%d)", err, len(files))
	}
	var seeds [][]byte
	for _, file := range files {
		r, err := source.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		var in []byte
		for n := 0; n < maxFrames; n++ {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			sel := -1
			for i, lt := range fuzzLinkTypes {
				if lt == rec.LinkType {
					sel = i
				}
			}
			if sel < 0 || len(rec.Data) > 0xffff {
				continue
			}
			in = append(in, byte(sel), byte(len(rec.Data)>>8), byte(len(rec.Data)))
			in = append(in, rec.Data...)
		}
		r.Close()
		seeds = append(seeds, in)
	}
	return seeds
}

// FuzzCheck runs every conformance rule over arbitrary frame sequences,
// seeded with the mutated real captures, and renders every report format:
// no input may make a rule, the runner or a report panic, and the counts
// must add up.
func FuzzCheck(f *testing.F) {
	for _, s := range checkFuzzSeeds(f, 400) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		runner := check.NewRunner(check.Config{})
		eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: runner, MaxConnections: 16}, nfs.NewBinding(), nil))
		n := 0
		for len(in) >= 3 {
			lt := fuzzLinkTypes[int(in[0])%len(fuzzLinkTypes)]
			l := min(int(binary.BigEndian.Uint16(in[1:3])), len(in)-3)
			data := in[3 : 3+l]
			in = in[3+l:]
			n++
			p := &dissect.Packet{Number: n, LinkType: lt, CaptureLength: len(data), Length: len(data)}
			eng.Process(p, data)
			runner.Packet(p)
		}
		eng.Finish()
		res := runner.Finish(eng.Conns.Connections())
		kept := 0
		for _, c := range res.Connections {
			for _, ch := range c.Checks {
				kept += ch.Findings
			}
		}
		if len(res.Findings) > kept+res.Omitted {
			t.Fatalf("%d findings listed, %d counted per check (+%d omitted)", len(res.Findings), kept, res.Omitted)
		}
		for _, fd := range res.Findings {
			if _, ok := check.Lookup(fd.Rule); !ok {
				t.Fatalf("finding of unknown rule %q", fd.Rule)
			}
			for _, pk := range fd.Packets {
				if pk < 1 || pk > n {
					t.Fatalf("finding %s names packet %d of %d", fd.Rule, pk, n)
				}
			}
		}
		rep := &report.CheckReport{FailOn: check.Error, Rules: check.Rules()}
		rep.Add(report.NewCheckFile("fuzz.pcap", eng.Snapshot(), res, nil))
		var b bytes.Buffer
		for _, w := range []func(io.Writer) error{rep.WriteJSON, rep.WriteJUnit, rep.WriteSARIF,
			func(w io.Writer) error { return rep.WriteText(w, report.TextOptions{Verbose: true}) }} {
			b.Reset()
			if err := w(&b); err != nil {
				t.Fatal(err)
			}
		}
	})
}
