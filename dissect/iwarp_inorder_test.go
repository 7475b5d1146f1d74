package dissect

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
)

// The in-order path (inOrder) frames a segment that starts at the next
// sequence number without gopacket's assembler, which catchUp brings up to
// date before it sees anything else of the direction. Every capture (and
// the siw captures re-segmented, reordered and duplicated) must give the
// same packets, FPDUs, Sends, RDMA operations and counters with the path
// on and off.

// iwInOrderLog runs frames through a new engine with the in-order path on
// or off and writes down everything the engine showed and handed up.
func iwInOrderLog(t *testing.T, frames []iwFrame, fast bool) (string, *iwarpEngine) {
	return iwInOrderLogOpts(t, frames, fast, Options{})
}

func iwInOrderLogOpts(t *testing.T, frames []iwFrame, fast bool, opts Options) (string, *iwarpEngine) {
	t.Helper()
	defer func(old bool) { iwarpFastPath = old }(iwarpFastPath)
	iwarpFastPath = fast
	var b strings.Builder
	obs := &iwObserver{
		onMsg: func(m *Message) {
			fmt.Fprintf(&b, "msg conn %d dir %d: %d %x pkts %v\n", m.Conn.ID, m.Dir, len(m.Data), m.Data, m.Packets)
		},
		onOp: func(op *RDMAOp) {
			fmt.Fprintf(&b, "op conn %d dir %d: %v %08x %x %d %v %x\n", op.Conn.ID, op.Dir, op.Kind, op.STag, op.Offset, op.Length, op.Complete, op.Data)
		},
	}
	opts.Observer = obs
	e := newEngine(opts)
	e.iw = newIWARPEngine(e)
	e.iw.fpduHook = func(c *Connection, d Direction, f *IWARPFPDU) {
		fmt.Fprintf(&b, "fpdu conn %d dir %d: %+v\n", c.ID, d, *f)
	}
	var p Packet
	for _, f := range frames {
		p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
		p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
		e.Process(&p, f.data)
		fmt.Fprintf(&b, "pkt %d: reqrep %v resync %v fpdus %+v\n", p.Number, p.IWARP.HasReqRep, p.IWARP.Resync, p.IWARP.FPDUs)
	}
	e.Finish()
	for _, c := range e.Conns.Connections() {
		fmt.Fprintf(&b, "conn %d %v %v", c.ID, c.State, c.Transport)
		if c.IWARP != nil {
			fmt.Fprintf(&b, " %+v", *c.IWARP)
		}
		b.WriteByte('\n')
	}
	return b.String(), e.iw
}

// iwFirstDiff returns the first line where two logs differ.
func iwFirstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(la), len(lb)); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n on: %s\noff: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(la), len(lb))
}

func TestIWARPInOrderPathAgrees(t *testing.T) {
	runs := map[string][]iwFrame{}
	for _, name := range append(append([]string{}, iwCaptures...),
		"lossy/siw-nfs3-lossy", "lossy/siw-ib_write_bw-lossy", "lossy/siw-ib_write_bw-reorder") {
		runs[name] = iwReadFrames(t, name+".pcap")
	}
	for _, name := range []string{"siw-rping", "siw-nfs3"} {
		frames := runs[name]
		e0, _ := iwRecordRun(t, frames)
		streams := iwStreams(t, frames, e0)
		for seed := int64(1); seed <= 2; seed++ {
			segs := iwResegment(rand.New(rand.NewSource(seed)), streams)
			runs[fmt.Sprintf("%s-reseg%d", name, seed)] = iwSegFrames(t, streams, segs)
		}
	}
	for name, frames := range runs {
		on, ie := iwInOrderLog(t, frames, true)
		off, ieOff := iwInOrderLog(t, frames, false)
		if on != off {
			t.Errorf("%s: the in-order path changes the output, %s", name, iwFirstDiff(on, off))
		}
		if ie == nil || ie.inOrderSegs == 0 || ieOff.inOrderSegs != 0 {
			t.Errorf("%s: in-order path not taken", name)
			continue
		}
		t.Logf("%s: %d of %d frames in order past the assembler, %d catch-ups", name, ie.inOrderSegs, len(frames), ie.catchUps)
		// A small buffer budget: partial FPDUs dropped, few pages for
		// the assembler.
		opts := Options{MaxBufferedBytes: 64 << 10}
		on, _ = iwInOrderLogOpts(t, frames, true, opts)
		off, _ = iwInOrderLogOpts(t, frames, false, opts)
		if on != off {
			t.Errorf("%s, budget %d: the in-order path changes the output, %s", name, opts.MaxBufferedBytes, iwFirstDiff(on, off))
		}
	}
}

// TestIWARPFinishInOrder: what Finish hands up when several streams are
// still open does not depend on the order of gopacket's connection map
// (FlushAll): re-segmented siw-nfs3 under a 64 KiB budget ends with two
// connections holding RDMA operations, whose give-ups came in either
// order from run to run.
func TestIWARPFinishInOrder(t *testing.T) {
	frames := iwReadFrames(t, "siw-nfs3.pcap")
	e0, _ := iwRecordRun(t, frames)
	streams := iwStreams(t, frames, e0)
	segs := iwResegment(rand.New(rand.NewSource(1)), streams)
	frames = iwSegFrames(t, streams, segs)
	opts := Options{MaxBufferedBytes: 64 << 10}
	first, _ := iwInOrderLogOpts(t, frames, true, opts)
	for i := 1; i < 8; i++ {
		if again, _ := iwInOrderLogOpts(t, frames, true, opts); again != first {
			t.Fatalf("run %d differs from the first, %s", i, iwFirstDiff(again, first))
		}
	}
}

// TestIWARPInOrderReordered: one connection whose Sends are fed in order,
// and again with one segment held back behind the next (and a FIN at the
// end). The reordered run must take the in-order path before the hole, let
// the assembler hold the early segment, catch it up, and take the path
// again once the hole is filled; both runs must frame the same FPDUs and
// reassemble the same Sends.
func TestIWARPInOrderReordered(t *testing.T) {
	build := func(swap int) []iwFrame {
		c := newIWConn(t, 40010, 20049)
		c.send(0, mpaFrame(true, false, true, false, 1, nil))
		c.send(1, mpaFrame(false, false, true, false, 1, nil))
		var stream []byte
		for i := 0; i < 40; i++ {
			stream = append(stream, fpdus(false, true, c.seq[0]+uint32(len(stream)), 0,
				untaggedULPDU(iwarp.OpSend, true, 0, 0, uint32(i+1), 0, iwPattern(100+37*i, i)))...)
		}
		c.sendSplit(0, stream, 700)
		fin := c.frame(0, c.seq[0], nil)
		c.out = append(c.out, fin)
		if swap > 0 {
			c.out[swap], c.out[swap+1] = c.out[swap+1], c.out[swap]
		}
		return c.out
	}
	collect := func(frames []iwFrame) ([]string, []string, *iwarpEngine) {
		var msgs, fp []string
		e := newEngine(Options{Observer: &iwObserver{onMsg: func(m *Message) {
			msgs = append(msgs, fmt.Sprintf("%d %x", len(m.Data), m.Data))
		}}})
		e.iw = newIWARPEngine(e)
		e.iw.fpduHook = func(_ *Connection, _ Direction, f *IWARPFPDU) {
			fp = append(fp, fmt.Sprintf("%d %d %08x %v", f.Seq, f.ULPDULength, f.CRC, f.CRCBad()))
		}
		var p Packet
		for _, f := range frames {
			p.Number, p.Timestamp, p.LinkType = f.num, f.ci.Timestamp, f.link
			p.CaptureLength, p.Length = f.ci.CaptureLength, f.ci.Length
			e.Process(&p, f.data)
		}
		e.Finish()
		return msgs, fp, e.iw
	}
	wantMsgs, wantFP, ie0 := collect(build(0))
	// In order, only the FIN has the assembler catch up.
	if len(wantMsgs) != 40 || len(wantFP) != 40 || ie0.catchUps != 1 {
		t.Fatalf("in order: %d Sends, %d FPDUs, %d catch-ups", len(wantMsgs), len(wantFP), ie0.catchUps)
	}
	frames := build(0)
	for swap := 3; swap < len(frames)-3; swap += 7 {
		msgs, fp, ie := collect(build(swap))
		if strings.Join(msgs, "\n") != strings.Join(wantMsgs, "\n") || strings.Join(fp, "\n") != strings.Join(wantFP, "\n") {
			t.Errorf("segment %d held back: %d Sends, %d FPDUs differ from the in-order run's", swap, len(msgs), len(fp))
		}
		// Before the hole, after it: all but the two swapped segments.
		if ie.catchUps < 2 || ie.inOrderSegs < ie0.inOrderSegs-2 {
			t.Errorf("segment %d held back: %d segments in order (in-order run %d), %d catch-ups",
				swap, ie.inOrderSegs, ie0.inOrderSegs, ie.catchUps)
		}
	}
}

// iwFuzzFrames turns a FuzzIWARPStream input into frames.
func iwFuzzFrames(in []byte) []iwFrame {
	var out []iwFrame
	next := [2]uint32{1000, 500000}
	t0 := time.Unix(1700000000, 0)
	for n := 1; len(in) >= 5; n++ {
		ctl, off, l := in[0], int16(binary.BigEndian.Uint16(in[1:])), int(binary.BigEndian.Uint16(in[3:]))
		in = in[5:]
		l = min(l, len(in))
		payload := in[:l]
		in = in[l:]
		d := int(ctl & 1)
		var flags byte
		if ctl&0x10 == 0 {
			flags |= 0x10 // ACK
		}
		if ctl&2 != 0 {
			flags |= 0x01
		}
		if ctl&4 != 0 {
			flags |= 0x04
		}
		if ctl&8 != 0 {
			flags |= 0x02
		}
		data := iwFuzzFrame(d, next[d]+uint32(int32(off)), next[1-d], flags, payload)
		if off == 0 {
			next[d] += uint32(l)
		}
		out = append(out, iwFrame{num: n, link: layers.LinkTypeEthernet, data: data,
			ci: gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(n) * time.Millisecond), CaptureLength: len(data), Length: len(data)}})
	}
	return out
}

// FuzzIWARPInOrder: any segments of one connection (FuzzIWARPStream's
// input) give the same output with the in-order path on and off.
func FuzzIWARPInOrder(f *testing.F) {
	for _, s := range iwFuzzSeeds(f) {
		f.Add(s)
	}
	// siw-rping with segments held back behind the next of their
	// direction (which comes again after them), and a FIN.
	var segs []iwFuzzSeg
	for in := iwFuzzSeeds(f)[0]; len(in) >= 5; {
		l := int(binary.BigEndian.Uint16(in[3:]))
		segs = append(segs, iwFuzzSeg{ctl: in[0], payload: in[5 : 5+l]})
		in = in[5+l:]
	}
	var held []iwFuzzSeg
	for i := 0; i < len(segs); i++ {
		g := segs[i]
		if i%5 == 3 {
			for j := i + 1; j < len(segs); j++ {
				if segs[j].ctl == g.ctl {
					ahead := segs[j]
					ahead.off = int16(len(g.payload))
					held = append(held, ahead)
					break
				}
			}
		}
		held = append(held, g)
	}
	held = append(held, iwFuzzSeg{ctl: 2}, iwFuzzSeg{ctl: 3})
	f.Add(iwFuzzEncode(held))
	f.Fuzz(func(t *testing.T, in []byte) {
		frames := iwFuzzFrames(in)
		on, _ := iwInOrderLog(t, frames, true)
		off, _ := iwInOrderLog(t, frames, false)
		if on != off {
			t.Fatalf("the in-order path changes the output, %s", iwFirstDiff(on, off))
		}
	})
}
