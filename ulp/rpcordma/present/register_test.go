package present

import (
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/diff"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// The test binary registers the presentation once, as the command does.
func init() { Register() }

// profile reads a capture through an engine with a diff.Collector.
func profile(t *testing.T, name string) (*diff.Profile, *dissect.Engine) {
	t.Helper()
	r, err := source.Open("../../../testdata/pcaps/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Wired as the diff command wires it (cmd/rdmashark/diff.go): the
	// checks' runner in front of the Collector.
	col := diff.NewCollector(name)
	run := check.NewRunner(check.Config{Next: col})
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run, Exchange: col.Exchange}, nfs.NewBinding(), nil))
	if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return col.Packet(p) }); err != nil {
		t.Fatal(err)
	}
	return col.Profile(eng.Conns.Connections(), nil, eng.Stats.Packets), eng
}

func metric(ms []diff.Metric, name string) (float64, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// TestDiffRegistration: diff imports no plug-in, so RPC-over-RDMA's
// figures reach a profile only through diff.Register. On rxe-nfs3, the
// READ exchanges' Calls with a Write chunk are 19 (tshark: 19 Calls match
// rpc.msgtyp == 0 && rpcordma.writes_count > 0, all nfs.procedure_v3 6),
// and each connection's RPC-over-RDMA Calls are analyze's (report's
// registration) forward Calls.
func TestDiffRegistration(t *testing.T) {
	p, eng := profile(t, "rxe-nfs3.pcap")
	var read bool
	for _, x := range p.Exchanges {
		if x.ULP == rpcordma.Name && x.Name == "READ" {
			read = true
			if v, _ := metric(x.Metrics, "call write chunk"); v != 19 {
				n, _ := metric(x.Metrics, "count")
				t.Errorf("READ: %v Calls with a Write chunk, tshark 19 (count %v)", v, n)
			}
		}
	}
	if !read {
		t.Fatalf("no READ exchanges: %+v", p.Exchanges)
	}
	a := report.NewAnalysis("rxe-nfs3.pcap", eng.Snapshot())
	if len(p.Connections) != 2 || len(a.Connections) != 2 {
		t.Fatalf("%d profiled connections, %d analysed, want 2", len(p.Connections), len(a.Connections))
	}
	for _, c := range p.Connections {
		v, ok := metric(c.Behaviour, "c2s RPC-over-RDMA Calls")
		var want uint64
		for _, ac := range a.Connections {
			if ac.ID == c.ID && ac.RPC != nil {
				want = ac.RPC.Calls.Forward
			}
		}
		if !ok || want == 0 || uint64(v) != want {
			t.Errorf("connection %d: %v c2s Calls (%v), analyze %d", c.ID, v, ok, want)
		}
	}
	// NFSv4.1: a COMPOUND is counted under its operations.
	p, _ = profile(t, "rxe-nfs41.pcap")
	var compound bool
	for _, x := range p.Exchanges {
		compound = compound || strings.HasPrefix(x.Name, "COMPOUND SEQUENCE,")
	}
	if !compound {
		t.Errorf("no COMPOUND named by its operations: %+v", p.Exchanges)
	}
}
