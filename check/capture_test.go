package check

import (
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
)

// runFile checks one capture with cfg, the way `rdmashark check` does.
func runFile(t testing.TB, name string, cfg Config) *Result {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := NewRunner(cfg)
	eng := dissect.NewEngine(dissect.Options{Observer: run, ULP: nfs.NewBinding()})
	if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return run.Finish(eng.Conns.Connections())
}

func realCaptures(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"../testdata/pcaps/*.pcap", "../testdata/pcaps/public/*.pcap"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no captures found")
	}
	return out
}

// TestRealCaptures runs every rule on the kernel's captures. What it
// expects was checked outside rdmashark:
//   - every NFS capture: the server's CM REP / MPA Reply private data has
//     R=0 (tshark -x of the REP; analyze shows it), yet the server sends
//     Replies With Invalidate: tshark counts the SEND_*_WITH_INVALIDATE
//     packets (infiniband.bth.opcode 22/23) of the rxe captures — 14, 24,
//     747 — and the Send with Invalidate FPDUs (iwarp_rdma.opcode 0x04) of
//     the siw captures — 19, 35, 747. Each is an INV-NOT-NEGOTIATED error.
//   - rxe-nfs3.pcap: the server sent PSNs 1891992, 1892095 and 1892146
//     twice (frames 6524/6525 and the like; tshark shows both copies):
//     three PSN-GAP retransmission warnings.
//   - nothing else at warning or above.
func TestRealCaptures(t *testing.T) {
	want := map[string]struct {
		rules []string // rules with warnings or errors
		swi   int      // Replies sent With Invalidate
	}{
		"rxe-nfs3.pcap":        {[]string{"INV-NOT-NEGOTIATED", "PSN-GAP"}, 14},
		"rxe-nfs41.pcap":       {[]string{"INV-NOT-NEGOTIATED"}, 24},
		"rxe-nfs42-small.pcap": {[]string{"INV-NOT-NEGOTIATED"}, 747},
		"siw-nfs3.pcap":        {[]string{"INV-NOT-NEGOTIATED"}, 19},
		"siw-nfs41.pcap":       {[]string{"INV-NOT-NEGOTIATED"}, 35},
		"siw-nfs42-small.pcap": {[]string{"INV-NOT-NEGOTIATED"}, 747},
	}
	for _, f := range realCaptures(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			res := runFile(t, f, Config{})
			var got []string
			count := map[string]int{}
			swi := 0
			for _, cr := range res.Connections {
				for _, ch := range cr.Checks {
					count[ch.Rule] += ch.Findings
					if ch.Findings > 0 && ch.Worst >= Warning && !slices.Contains(got, ch.Rule) {
						got = append(got, ch.Rule)
					}
				}
				if cr.Usage != nil {
					swi += cr.Usage.RepliesWithInvalidate
				}
			}
			slices.Sort(got)
			w := want[name]
			if !slices.Equal(got, w.rules) {
				t.Errorf("rules with warnings or errors: got %v, want %v", got, w.rules)
			}
			if swi != w.swi || count["INV-NOT-NEGOTIATED"] != w.swi {
				t.Errorf("Replies With Invalidate: %d counted, %d INV-NOT-NEGOTIATED findings, want %d", swi, count["INV-NOT-NEGOTIATED"], w.swi)
			}
			if name == "rxe-nfs3.pcap" && count["PSN-GAP"] != 3 {
				t.Errorf("PSN-GAP: %d findings, want 3 retransmissions", count["PSN-GAP"])
			}
		})
	}
}

// TestAgreesWithEngine compares what the runner classified on its own
// (Calls, Replies, RDMA_ERRORs, Replies With Invalidate) with the
// RPC-over-RDMA layer of the engine (dissect.RPCStats), which pairs them
// by XID independently.
func TestAgreesWithEngine(t *testing.T) {
	for _, f := range realCaptures(t) {
		r, err := source.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		run := NewRunner(Config{})
		eng := dissect.NewEngine(dissect.Options{Observer: run, ULP: nfs.NewBinding()})
		if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
			t.Fatal(err)
		}
		r.Close()
		res := run.Finish(eng.Conns.Connections())
		for _, cr := range res.Connections {
			dc := cr.Connection()
			if dc == nil || dc.RPC == nil || cr.Chunks == nil {
				if cr.RPC {
					t.Errorf("%s connection %d: RPC-over-RDMA for the checks, not for the engine", filepath.Base(f), cr.ID)
				}
				continue
			}
			s := dc.RPC
			calls, replies := s.Calls[0]+s.Calls[1], s.Replies[0]+s.Replies[1]
			if uint64(cr.Chunks.Calls) != calls || uint64(cr.Chunks.Replies) != replies ||
				uint64(cr.Usage.RepliesWithInvalidate) != s.RepliesWithInvalidate {
				t.Errorf("%s connection %d: checks count %d Calls, %d Replies, %d With Invalidate; engine %d, %d, %d",
					filepath.Base(f), cr.ID, cr.Chunks.Calls, cr.Chunks.Replies, cr.Usage.RepliesWithInvalidate, calls, replies, s.RepliesWithInvalidate)
			}
		}
	}
}
