package dissect

import (
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// heldNow adds up the capacity of every buffer the budget counts, to check
// the engine's running total against.
func heldNow(e *Engine) int {
	n := 0
	for _, rc := range e.rxs.conns {
		for d := range rc.dir {
			s := &rc.dir[d]
			for _, pt := range s.msgs {
				n += cap(pt.data)
			}
			for _, pt := range s.spareM {
				n += cap(pt.data)
			}
			for _, ro := range s.reads {
				n += cap(ro.data) + ReadCost // its record (issue 29)
			}
			for _, ro := range s.spare {
				n += cap(ro.data)
			}
		}
	}
	if e.iw != nil {
		for _, st := range e.iw.order {
			for h := range st.half {
				for _, op := range st.half[h].writes {
					n += cap(op.data)
				}
				for _, op := range st.half[h].reads {
					n += cap(op.data) + ReadCost
				}
			}
		}
		for _, op := range e.iw.freeOps {
			n += cap(op.data)
		}
		for _, st := range e.iw.order {
			for h := range st.half {
				if ra := st.half[h].reasm; ra != nil {
					n += ra.Buffered()
				}
			}
		}
		for _, ra := range e.iw.freeReasm {
			n += ra.Buffered()
		}
		// The MPA framers' buffers (issue 13), live and pooled.
		for _, st := range e.iw.order {
			for h := range st.half {
				if f := st.half[h].framer; f != nil {
					n += f.Held()
				}
			}
		}
		for _, f := range e.iw.freeFramers {
			n += f.Held()
		}
	}
	// Data the ULPs hold to rebuild messages (RPC's chunk data, issue
	// 13), and each open exchange's ExchangeCost (issue 29).
	for _, l := range e.opts.ULPs {
		if h, ok := l.(ULPRetainer); ok {
			_, open, rebuild := h.Retained()
			n += open*ExchangeCost + rebuild
		}
	}
	return n
}

type msgCounter struct {
	msgs, truncated int
	bytes           int
}

func (o *msgCounter) Message(m *Message) {
	o.msgs++
	o.bytes += len(m.Data)
	if m.Truncated {
		o.truncated++
	}
}
func (o *msgCounter) RDMAOp(*RDMAOp) {}

// TestBufferBudget: 64 connections (no CM, each its own server QPN) each
// start a Send of 4 KiB packets that never ends — SEND_FIRST and two
// SEND_MIDDLEs, ~24 KiB of buffer each (the buffer doubles as it grows),
// 1.5 MiB in all — under a 128 KiB budget. After every packet the buffers
// hold at most the budget (and exactly what the engine's total says);
// the Sends cut for it are handed up truncated and counted.
func TestBufferBudget(t *testing.T) {
	const conns, unit, budget = 64, 4096, 128 << 10
	s := &synth.Sequence{Start: time.Unix(1700000000, 0), Step: time.Millisecond}
	cl, sv := synth.Client(), synth.Server()
	payload := make([]byte, unit)
	for i := range payload {
		payload[i] = byte(i)
	}
	for k := 0; k < 3; k++ {
		op := roce.OpRCSendMiddle
		if k == 0 {
			op = roce.OpRCSendFirst
		}
		for c := uint32(0); c < conns; c++ {
			s.Packet(cl, sv, synth.Send(op, 0x100+c, 0x1000+uint32(k)), payload)
		}
	}
	frames := synthFrames(t, s)
	obs := &msgCounter{}
	e := newEngine(Options{MaxBufferedBytes: budget, Observer: obs})
	most := 0
	relRun(e, frames, func(p *Packet) {
		held := e.Retained().BufferedBytes
		if got := heldNow(e); got != held {
			t.Fatalf("packet %d: buffers hold %d bytes, the engine counts %d", p.Number, got, held)
		}
		if held > budget {
			t.Fatalf("packet %d: %d bytes buffered, budget %d", p.Number, held, budget)
		}
		most = max(most, held)
	})
	if e.Conns.Live() != conns {
		t.Fatalf("%d connections, want %d", e.Conns.Live(), conns)
	}
	st := e.Reassembly
	if st.BudgetCuts == 0 {
		t.Fatal("no Send was cut for the budget")
	}
	if st.MaxBufferedHeld > budget || st.MaxBufferedHeld != most {
		t.Errorf("MaxBufferedHeld %d, most seen %d, budget %d", st.MaxBufferedHeld, most, budget)
	}
	// Every Send is handed up once, truncated: the cut ones when cut, the
	// rest at the end; a cut Send's later MIDDLEs are orphans.
	if obs.msgs != conns || obs.truncated != conns {
		t.Errorf("%d Sends handed up (%d truncated), want %d, all truncated", obs.msgs, obs.truncated, conns)
	}
	if st.Orphans == 0 {
		t.Error("no MIDDLE packet of a cut Send counted as an orphan")
	}
	t.Logf("cuts %d, orphans %d, most held %d", st.BudgetCuts, st.Orphans, most)

	// The same stream without the budget's pressure: nothing cut, every
	// Send whole up to its third packet.
	obs = &msgCounter{}
	e = newEngine(Options{Observer: obs})
	relRun(e, frames, nil)
	if e.Reassembly.BudgetCuts != 0 || e.Reassembly.Orphans != 0 || obs.bytes != conns*3*unit {
		t.Errorf("default budget: %d cuts, %d orphans, %d bytes handed up (want %d)",
			e.Reassembly.BudgetCuts, e.Reassembly.Orphans, obs.bytes, conns*3*unit)
	}
	if e.Reassembly.MaxBufferedHeld <= budget {
		t.Errorf("default budget: at most %d bytes held: the test does not press the small budget", e.Reassembly.MaxBufferedHeld)
	}
}

// TestBufferBudgetCaptures runs the real captures — RoCE Sends, Writes and
// Reads (perftest, NFS), iWARP Writes and Reads (siw) — under a budget of
// 64 KiB: the engine's total always equals what its buffers hold and stays
// within the budget; under the default budget nothing is cut.
func TestBufferBudgetCaptures(t *testing.T) {
	for _, name := range []string{"rxe-ib_write_bw.pcap", "rxe-nfs3.pcap", "siw-ib_read_bw.pcap", "siw-nfs3.pcap", "rxe-nfs42-small.pcap"} {
		t.Run(name, func(t *testing.T) {
			for _, budget := range []int{64 << 10, 0} {
				r, err := source.Open(capturePath(name))
				if err != nil {
					t.Fatal(err)
				}
				e := newEngine(Options{MaxBufferedBytes: budget})
				err = e.Run(r, func(p *Packet) error {
					held := e.Retained().BufferedBytes
					if got := heldNow(e); got != held {
						t.Fatalf("packet %d: buffers hold %d bytes, the engine counts %d", p.Number, got, held)
					}
					if budget > 0 && held > budget {
						t.Fatalf("packet %d: %d bytes buffered, budget %d", p.Number, held, budget)
					}
					return nil
				})
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got := heldNow(e); got != e.Retained().BufferedBytes {
					t.Fatalf("after Finish: buffers hold %d bytes, the engine counts %d", got, e.Retained().BufferedBytes)
				}
				t.Logf("budget %d: cuts %d, most held %d", budget, e.Reassembly.BudgetCuts, e.Reassembly.MaxBufferedHeld)
				if budget == 0 && e.Reassembly.BudgetCuts != 0 {
					t.Errorf("default budget cut %d items", e.Reassembly.BudgetCuts)
				}
			}
		})
	}
}

// TestBufferBudgetIWARP: 32 iWARP connections each leave a Send (three
// 1000-octet untagged segments of MSN 1, no L) and an RDMA Write (two
// 1000-octet tagged segments, no L) in progress, some 8 KB of buffers
// each, under a 16 KiB budget: the total stays within it and equal to what
// the buffers hold, Sends are dropped (the reassemblers' Cut) and Writes
// handed up incomplete for it; the default budget cuts nothing.
func TestBufferBudgetIWARP(t *testing.T) {
	const conns, budget = 32, 16 << 10
	var each [][]iwFrame
	chunk := make([]byte, 1000)
	for i := range conns {
		c := newIWConn(t, uint16(41000+i), 20049)
		c.send(0, mpaFrame(true, false, false, false, 1, nil))
		c.send(1, mpaFrame(false, false, false, false, 1, nil))
		for k := range 3 {
			c.send(0, fpdus(false, false, c.seq[0], c.seq[0], untaggedULPDU(iwarp.OpSend, false, 0, 0, 1, uint32(k*1000), chunk)))
		}
		for k := range 2 {
			c.send(0, fpdus(false, false, c.seq[0], c.seq[0], taggedULPDU(iwarp.OpRDMAWrite, false, 0x1234, uint64(k*1000), chunk)))
		}
		each = append(each, c.out)
	}
	// Interleaved: every connection's n-th segment before anyone's n+1-th.
	var frames []iwFrame
	t0 := time.Unix(1700000000, 0)
	for k := range each[0] {
		for _, fs := range each {
			f := fs[k]
			f.num = len(frames) + 1
			f.ci.Timestamp = t0.Add(time.Duration(f.num) * time.Millisecond)
			frames = append(frames, f)
		}
	}
	for _, max := range []int{budget, 0} {
		e := newEngine(Options{MaxBufferedBytes: max})
		ops := &opCounter{}
		e.opts.Observer = ops
		relRun(e, frames, func(p *Packet) {
			held := e.Retained().BufferedBytes
			if got := heldNow(e); got != held {
				t.Fatalf("packet %d: buffers hold %d bytes, the engine counts %d", p.Number, got, held)
			}
			if max > 0 && held > max {
				t.Fatalf("packet %d: %d bytes buffered, budget %d", p.Number, held, max)
			}
		})
		cut := uint64(0)
		for _, c := range e.Conns.Connections() {
			cut += c.IWARP.Dir[0].Reassembly.Cut
		}
		t.Logf("budget %d: cuts %d (Sends dropped %d), Writes handed up incomplete %d, most held %d",
			max, e.Reassembly.BudgetCuts, cut, ops.incomplete, e.Reassembly.MaxBufferedHeld)
		if max == 0 {
			if e.Reassembly.BudgetCuts != 0 || cut != 0 || e.Reassembly.MaxBufferedHeld <= budget {
				t.Errorf("default budget: %d cuts, %d Sends dropped, %d held at most", e.Reassembly.BudgetCuts, cut, e.Reassembly.MaxBufferedHeld)
			}
			continue
		}
		// The cuts that were not Sends were Writes, handed up incomplete
		// when cut (all 32 are at the end anyway).
		if cut == 0 || e.Reassembly.BudgetCuts <= cut || ops.incomplete <= conns {
			t.Errorf("%d cuts: %d Sends dropped, %d Writes handed up incomplete", e.Reassembly.BudgetCuts, cut, ops.incomplete)
		}
	}
}

// opCounter counts the RDMA operations handed up incomplete.
type opCounter struct{ incomplete int }

func (o *opCounter) Message(*Message) {}
func (o *opCounter) RDMAOp(op *RDMAOp) {
	if !op.Complete {
		o.incomplete++
	}
}

// TestBufferBudgetOutstandingReads: 256 QPs each send 40 RDMA Read
// Requests no response answers — 10,240 outstanding Reads, each a record
// of ~220 bytes (issue 29: a million of them took 291–335 MiB outside any
// limit) — under a 64 KiB budget. Each counts ReadCost while it waits, so
// at most budget/ReadCost of them are held at once: a new one that does not
// fit gives up its own direction's oldest (ReadsEvicted), and the engine's
// total always equals what its buffers and records hold.
func TestBufferBudgetOutstandingReads(t *testing.T) {
	const qps, reads, budget = 256, 40, 64 << 10
	s := &synth.Sequence{Start: time.Unix(1700000000, 0), Step: time.Microsecond}
	cl, sv := synth.Client(), synth.Server()
	for k := uint32(0); k < reads; k++ {
		for q := uint32(0); q < qps; q++ {
			s.Packet(cl, sv, synth.ReadRequest(0x100+q, 0x1000+k, 0x10000+uint64(k)<<12, 0x77, 4096), nil)
		}
	}
	frames := synthFrames(t, s)
	e := NewEngine(Options{MaxBufferedBytes: budget})
	most := 0
	relRun(e, frames, func(p *Packet) {
		held := e.Retained().BufferedBytes
		if got := heldNow(e); got != held {
			t.Fatalf("packet %d: buffers and records hold %d bytes, the engine counts %d", p.Number, got, held)
		}
		if held > budget {
			t.Fatalf("packet %d: %d bytes held, budget %d", p.Number, held, budget)
		}
		n := 0
		for _, rc := range e.rxs.conns {
			for d := range rc.dir {
				n += len(rc.dir[d].reads)
			}
		}
		most = max(most, n)
	})
	if most > budget/ReadCost {
		t.Errorf("%d Read Requests outstanding at once; the budget holds %d", most, budget/ReadCost)
	}
	if most < qps {
		t.Errorf("at most %d Read Requests outstanding: the test does not press the budget", most)
	}
	if e.Reassembly.ReadsEvicted == 0 {
		t.Error("no Read Request given up for the budget")
	}
	t.Logf("most outstanding %d, evicted %d", most, e.Reassembly.ReadsEvicted)
}
