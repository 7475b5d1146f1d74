package check_test

import (
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestTransactionsAgree runs every real, public, lossy and mutated capture
// once and compares what `transactions` reports — the engine's finished
// transactions (Options.Transaction) and its unattached RDMA operations
// (RPCCounters.UnattachedOps) — with what `check` reports of the same
// traffic: the Calls, Replies and RDMA_ERRORs it counted, the Replies With
// Invalidate, and the RDMA operations its RDMA-* rules found unadvertised,
// used after the Reply, or could not judge. Issue 11: the two used to
// decode and match on their own and disagreed (write-chunk-count-50: one
// unattached Write for transactions, "not evaluated" for check).
func TestTransactionsAgree(t *testing.T) {
	var files []string
	for _, pat := range []string{"*.pcap", "public/*.pcap", "lossy/*.pcap", "mutated/*.pcap"} {
		m, err := filepath.Glob(filepath.Join("../testdata/pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 50 {
		t.Fatalf("only %d captures found", len(files))
	}
	checkedSome := 0
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			r, err := source.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// What the transactions command counts.
			var calls, replies, errs, withInv int
			txn := func(x *rpcordma.Transaction) {
				if x.Call != nil {
					calls++
				}
				if sd := x.Reply; sd != nil {
					switch {
					case sd.Vers == rpcrdma.Version1 && rpcrdma.MsgType(sd.Proc) == rpcrdma.RDMAError,
						sd.Vers == rpcrdma.Version2 && rpcrdma.HType(sd.Proc) == rpcrdma.HTypeError:
						errs++
					default:
						replies++
						if sd.Invalidate {
							withInv++
						}
					}
				}
			}
			run := check.NewRunner(check.Config{MaxFindings: 1 << 20, MaxTotal: 1 << 20})
			eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), txn))
			if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
				t.Fatal(err)
			}
			res := run.Finish(eng.Conns.Connections())
			ctr := rpcordma.Counters(eng.Snapshot())
			if ctr.Unattached > uint64(len(ctr.UnattachedOps)) {
				t.Skipf("%d unattached operations, %d recorded", ctr.Unattached, len(ctr.UnattachedOps))
			}
			// The engine's unattached operations by what check must say of
			// them: the responder's (server-to-client requests) are
			// unadvertised, after the Reply, or not judged for an
			// undecoded Call or a capture that started mid-connection.
			var noSeg, after, unknown int
			for _, u := range ctr.UnattachedOps {
				if u.Dir != dissect.DirServerToClient {
					continue
				}
				switch u.Reason {
				case dissect.UnattachedNoRegion.String():
					noSeg++
				case dissect.UnattachedAfterResponse.String():
					after++
				case dissect.UnattachedRequestUnknown.String():
					unknown++
				default:
					t.Errorf("unattached reason %q", u.Reason)
				}
			}
			var ck struct{ calls, replies, errs, withInv, unadv, unadvSkipped, after int }
			for _, cr := range res.Connections {
				if cr.Chunks != nil {
					ck.calls += cr.Chunks.Calls
					ck.replies += cr.Chunks.Replies
					ck.errs += cr.Chunks.Errors
				}
				if cr.Usage != nil {
					ck.withInv += cr.Usage.RepliesWithInvalidate
				}
				for _, ch := range cr.Checks {
					switch ch.Rule {
					case "RDMA-READ-UNADVERTISED", "RDMA-WRITE-UNADVERTISED":
						ck.unadv += ch.Findings
						ck.unadvSkipped += ch.NotEvaluated
					case "RDMA-AFTER-REPLY":
						ck.after += ch.Findings
					}
				}
			}
			if ck.calls != calls || ck.replies != replies || ck.errs != errs {
				t.Errorf("check counts %d Calls, %d Replies, %d RDMA_ERRORs; transactions %d, %d, %d",
					ck.calls, ck.replies, ck.errs, calls, replies, errs)
			}
			if ck.withInv != withInv {
				t.Errorf("check counts %d Replies With Invalidate, transactions %d", ck.withInv, withInv)
			}
			if ck.unadv+ck.unadvSkipped != noSeg+unknown {
				t.Errorf("check: %d unadvertised RDMA operations and %d not evaluated; transactions: %d with no segment, %d whose Call did not decode",
					ck.unadv, ck.unadvSkipped, noSeg, unknown)
			}
			if ck.after != after {
				t.Errorf("check: %d RDMA-AFTER-REPLY findings; transactions: %d operations after the Reply", ck.after, after)
			}
			if calls > 0 {
				checkedSome++
			}
		})
	}
	if checkedSome < 20 {
		t.Errorf("only %d captures had transactions", checkedSome)
	}
}

// TestAgreesWithEngine compares what the runner classified on its own
// (Calls, Replies, RDMA_ERRORs, Replies With Invalidate) with the
// RPC-over-RDMA layer of the engine (rpcordma.RPCStats), which pairs them
// by XID independently.
func TestAgreesWithEngine(t *testing.T) {
	for _, f := range realCaptureFiles(t) {
		r, err := source.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		run := check.NewRunner(check.Config{})
		eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), nil))
		if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
			t.Fatal(err)
		}
		r.Close()
		res := run.Finish(eng.Conns.Connections())
		for _, cr := range res.Connections {
			dc := cr.Connection()
			if dc == nil || rpcordma.Stats(dc) == nil || cr.Chunks == nil {
				if cr.RPC {
					t.Errorf("%s connection %d: RPC-over-RDMA for the checks, not for the engine", filepath.Base(f), cr.ID)
				}
				continue
			}
			s := rpcordma.Stats(dc)
			calls, replies := s.Calls[0]+s.Calls[1], s.Replies[0]+s.Replies[1]
			if uint64(cr.Chunks.Calls) != calls || uint64(cr.Chunks.Replies) != replies ||
				uint64(cr.Usage.RepliesWithInvalidate) != s.RepliesWithInvalidate {
				t.Errorf("%s connection %d: checks count %d Calls, %d Replies, %d With Invalidate; engine %d, %d, %d",
					filepath.Base(f), cr.ID, cr.Chunks.Calls, cr.Chunks.Replies, cr.Usage.RepliesWithInvalidate, calls, replies, s.RepliesWithInvalidate)
			}
		}
	}
}

// realCaptureFiles are the real and public captures (capture_test.go's
// realCaptures).
func realCaptureFiles(t *testing.T) []string {
	t.Helper()
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
