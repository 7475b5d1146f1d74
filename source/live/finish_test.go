package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// outcome is what an engine made of a capture: its RDMA operations and
// messages as the Observer heard them, its transactions, and the checks'
// findings.
type outcome struct {
	ops, msgs int
	txns      []string
	findings  []string
	packets   uint64
}

type recorder struct {
	*check.Runner
	out *outcome
}

func (r recorder) Message(m *dissect.Message) { r.out.msgs++; r.Runner.Message(m) }
func (r recorder) RDMAOp(op *dissect.RDMAOp)  { r.out.ops++; r.Runner.RDMAOp(op) }

// observed runs src through a fresh engine with the checks and returns
// what it made of it, and Run's error.
func observed(opts dissect.Options, run func(eng *dissect.Engine, each func(*dissect.Packet) error) error) (*outcome, error) {
	out := &outcome{}
	rn := check.NewRunner(check.Config{})
	opts.Observer = recorder{rn, out}
	txn := func(t *rpcordma.Transaction) {
		call, reply := 0, 0
		if t.Call != nil {
			call = t.Call.Packets[len(t.Call.Packets)-1]
		}
		if t.Reply != nil {
			reply = t.Reply.Packets[len(t.Reply.Packets)-1]
		}
		out.txns = append(out.txns, fmt.Sprintf("%08x %s call %d reply %d %s read %d write %d",
			t.XID, t.ProcedureName, call, reply, t.Outcome, t.ReadBytes, t.WriteBytes))
	}
	eng := dissect.NewEngine(rpcordma.With(opts, nfs.NewBinding(), txn))
	err := run(eng, func(p *dissect.Packet) error { rn.Packet(p); return nil })
	res := rn.Finish(eng.Conns.Connections())
	for _, f := range res.Findings {
		out.findings = append(out.findings, fmt.Sprintf("%s %v %s", f.Rule, f.Packets, f.Message))
	}
	out.packets = eng.Stats.Packets
	return out, err
}

func (o *outcome) diff(t *testing.T, what string, want *outcome) {
	t.Helper()
	if o.packets != want.packets || o.ops != want.ops || o.msgs != want.msgs {
		t.Errorf("%s: %d packets, %d RDMA operations, %d messages; analyze of the same packets: %d, %d, %d",
			what, o.packets, o.ops, o.msgs, want.packets, want.ops, want.msgs)
	}
	if !slices.Equal(o.txns, want.txns) {
		t.Errorf("%s: %d transactions, analyze of the same packets %d", what, len(o.txns), len(want.txns))
	}
	if !slices.Equal(o.findings, want.findings) {
		t.Errorf("%s: findings\n%q\nanalyze of the same packets\n%q", what, o.findings, want.findings)
	}
}

// TestStoppedCaptureFinishes: a live capture stopped after N frames — by
// its count (-c) or by a signal (Ctrl-C, the context) — and a file read
// stopped after N records (dissect -c, or its consumer giving up) hand on
// the RDMA operations, messages and transactions still in flight, as the
// engine does at the end of a file: each gives the same operations,
// transactions and findings as reading a file of just those N packets to
// its end. (Issue 11: live.Run did not call Engine.Finish, and lost 7 of 54
// operations and 4 of 32 transactions of the first 1,000 packets of
// rxe-nfs41.)
func TestStoppedCaptureFinishes(t *testing.T) {
	const n = 1000
	for _, name := range []string{"rxe-nfs41.pcap", "siw-nfs41.pcap", "rxe-nfs3.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(pcaps, name)
			frames := readCapture(t, file)
			if len(frames) <= n {
				t.Fatalf("%d frames", len(frames))
			}
			// The reference: a file holding only the first n frames, read
			// to its end.
			var img bytes.Buffer
			sv, err := NewSaver(&img, SaverInfo{Interface: "cut", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range frames[:n] {
				if err := sv.WritePacket(f.info, f.data); err != nil {
					t.Fatal(err)
				}
			}
			if err := sv.Close(nil); err != nil {
				t.Fatal(err)
			}
			want, err := observed(dissect.Options{}, func(eng *dissect.Engine, each func(*dissect.Packet) error) error {
				r, err := source.NewReader(bytes.NewReader(img.Bytes()), "cut.pcapng")
				if err != nil {
					return err
				}
				return eng.Run(r, each)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want.packets != n || want.ops == 0 || len(want.txns) == 0 {
				t.Fatalf("reference: %d packets, %d operations, %d transactions", want.packets, want.ops, len(want.txns))
			}
			// A file read stopped by a count.
			got, err := observed(dissect.Options{Count: n}, func(eng *dissect.Engine, each func(*dissect.Packet) error) error {
				r, err := source.Open(file)
				if err != nil {
					return err
				}
				defer r.Close()
				return eng.Run(r, each)
			})
			if err != nil {
				t.Fatal(err)
			}
			got.diff(t, "file read stopped at a count", want)
			// A file read whose consumer stops it.
			errStop := errors.New("stop")
			got, err = observed(dissect.Options{}, func(eng *dissect.Engine, each func(*dissect.Packet) error) error {
				r, err := source.Open(file)
				if err != nil {
					return err
				}
				defer r.Close()
				return eng.Run(r, func(p *dissect.Packet) error {
					if err := each(p); err != nil {
						return err
					}
					if p.Number == n {
						return errStop
					}
					return nil
				})
			})
			if !errors.Is(err, errStop) {
				t.Fatalf("file read stopped by its consumer: %v", err)
			}
			got.diff(t, "file read stopped by its consumer", want)
			// A live capture stopped by its count.
			var res Result
			got, err = observed(dissect.Options{}, func(eng *dissect.Engine, each func(*dissect.Packet) error) error {
				res, err = testRun(context.Background(), newFake(frames), eng, testConfig{Count: n, Each: each})
				return err
			})
			if err != nil || res.Stop != StopCount || res.Packets != n {
				t.Fatalf("live capture with a count: %+v, %v", res, err)
			}
			got.diff(t, "live capture stopped at its count", want)
			// A live capture stopped by a signal after n frames.
			got, err = observed(dissect.Options{}, func(eng *dissect.Engine, each func(*dissect.Packet) error) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				res, err = testRun(ctx, newFake(frames), eng, testConfig{Each: func(p *dissect.Packet) error {
					if p.Number == n {
						cancel() // as Ctrl-C
					}
					return each(p)
				}})
				return err
			})
			if err != nil || res.Stop != StopInterrupted || res.Packets != n {
				t.Fatalf("live capture interrupted: %+v, %v", res, err)
			}
			got.diff(t, "live capture interrupted", want)
		})
	}
}
