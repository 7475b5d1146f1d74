package check

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/source"
)

// Tests of the runner on a long stream (issue 6): connections the engine
// releases get their end-of-connection rules when it does, and the runner
// keeps only their results.

// runStream checks n repetitions of a real capture (internal/longstream:
// every repetition new connections) with the engine's options opts; each,
// when set, sees the runner after every packet.
func runStream(t *testing.T, name string, n int, opts dissect.Options, each func(r *Runner)) (*Result, *dissect.Engine) {
	t.Helper()
	c, err := longstream.Load(filepath.Join("..", "testdata", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := source.NewReader(c.Reader(n), name)
	if err != nil {
		t.Fatal(err)
	}
	run := NewRunner(Config{})
	opts.Observer = run
	eng := dissect.NewEngine(RPCTest.With(opts))
	if err := eng.Run(r, func(p *dissect.Packet) error {
		run.Packet(p)
		if each != nil {
			each(run)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return run.Finish(eng.Conns.Connections()), eng
}

// checksOf renders a connection's check results without its ID.
func checksOf(cr *ConnResult) string {
	s := fmt.Sprint(cr.Transport, cr.State, cr.RPC, cr.Usage != nil)
	if u := cr.Usage; u != nil {
		s += fmt.Sprint(u.Negotiated != nil && *u.Negotiated, u.Replies, u.RepliesWithInvalidate, *cr.Chunks)
	}
	for _, ch := range cr.Checks {
		s += fmt.Sprintf(" %s:%v:%d:%d:%d:%v:%s", ch.Rule, ch.Status, ch.Checked, ch.Findings, ch.Omitted, ch.Worst, ch.Reason)
	}
	return s
}

// TestRunnerOnLongStream: 20 repetitions of each NFS capture make 40
// connections, of which the engine releases 24 before the end (ConnectionDone:
// past the grace window of 16). Every repetition's connections get exactly
// the capture's check results, and while the stream runs the runner holds
// per-connection state for at most the live connections and the grace
// window — not for every connection seen.
func TestRunnerOnLongStream(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		t.Run(name, func(t *testing.T) {
			one := runFile(t, filepath.Join("..", "testdata", "pcaps", name), Config{})
			var want []string
			for _, cr := range one.Connections {
				if cr.ID != 0 {
					want = append(want, checksOf(cr))
				}
			}
			const n = 20
			most := 0
			res, eng := runStream(t, name, n, dissect.Options{}, func(r *Runner) { most = max(most, len(r.conns)) })
			var got []*ConnResult
			for _, cr := range res.Connections {
				if cr.ID != 0 {
					got = append(got, cr)
				}
			}
			if len(got) != n*len(want) || len(want) != 2 {
				t.Fatalf("%d connections checked, want %d×%d", len(got), n, len(want))
			}
			for i, cr := range got {
				if cr.ID != i+1 {
					t.Fatalf("result %d is connection %d: not in ID order", i, cr.ID)
				}
				if s := checksOf(cr); s != want[i%len(want)] {
					t.Fatalf("connection %d:\n got %s\nwant %s", cr.ID, s, want[i%len(want)])
				}
			}
			released := 0
			for _, c := range eng.Conns.Connections() {
				if c.Released() {
					released++
				}
			}
			if released != n*len(want)-16 {
				t.Errorf("%d connections released, want %d", released, n*len(want)-16)
			}
			if most > 16+2 {
				t.Errorf("the runner held state for %d connections at once", most)
			}
			if one.Count(Error) == 0 || res.Count(Error) != n*one.Count(Error) {
				t.Errorf("errors: %d in the stream, %d in one capture", res.Count(Error), one.Count(Error))
			}
		})
	}
}

// TestRunnerForgets: with room for 8 connections in the engine's table the
// oldest summaries are forgotten and their results with them; their checks
// are added up, so the verdict (Count) is the same as when every result is
// kept, and the kept results are the last 8 connections.
func TestRunnerForgets(t *testing.T) {
	const n = 10
	all, _ := runStream(t, "rxe-nfs3.pcap", n, dissect.Options{}, nil)
	few, eng := runStream(t, "rxe-nfs3.pcap", n, dissect.Options{MaxConnections: 8}, nil)
	if eng.Conns.Forgotten != 2*n-8 || few.ForgottenConnections != 2*n-8 || eng.Conns.Dropped != 0 {
		t.Fatalf("forgotten %d (runner %d), dropped %d", eng.Conns.Forgotten, few.ForgottenConnections, eng.Conns.Dropped)
	}
	var ids []int
	for _, cr := range few.Connections {
		ids = append(ids, cr.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint([]int{13, 14, 15, 16, 17, 18, 19, 20}) {
		t.Errorf("kept results of connections %v", ids)
	}
	for _, sev := range []Severity{Info, Warning, Error} {
		if a, f := all.Count(sev), few.Count(sev); a != f || a == 0 {
			t.Errorf("%v and above: %d findings with every result, %d with forgotten ones", sev, a, f)
		}
	}
	if len(few.Findings) >= len(all.Findings) {
		t.Errorf("%d findings listed, as many as with every result (%d)", len(few.Findings), len(all.Findings))
	}
}
