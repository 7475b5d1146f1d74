package iwarp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

// TestReassemblerAgainstTshark reassembles the untagged messages of every
// siw capture and compares the multi-segment ones of siw-ib_send_bw (65536
// octet Sends in 47 segments) with tshark's iwarp_rdma.send.* reassembly:
// the frame completing the message, MSN, length and the contributing frames.
func TestReassemblerAgainstTshark(t *testing.T) {
	type msg struct {
		qn, msn uint32
		length  int
		frames  string
	}
	got := map[int]msg{} // by completing frame
	for _, name := range siwCaptures {
		for _, h := range mpaStreams(t, name) {
			ra := NewReassembler(ReassemblerConfig{})
			fr := NewFramer(h.framerConfig())
			fr.Feed(h.bytes())
			for {
				fp, err := fr.Next()
				if err == ErrNeedMore {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var d DDP
				if err := d.DecodeFromBytes(fp.ULPDU, gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				if d.T {
					continue
				}
				end := h.frameOf(fp.Seq + uint32(len(fp.Raw)) - 1)
				m, err := ra.Add(&d, uint64(end))
				if err != nil {
					t.Fatal(err)
				}
				if m == nil {
					continue
				}
				if len(m.Refs) == 1 {
					continue
				}
				var frames []string
				for _, r := range m.Refs {
					frames = append(frames, strconv.FormatUint(r, 10))
				}
				if name == "siw-ib_send_bw" {
					got[end] = msg{m.QN, m.MSN, len(m.Data), strings.Join(frames, ",")}
				}
			}
			s := ra.Stats
			if s.TooLong+s.Evicted+s.Gaps+s.Duplicates != 0 || ra.InProgress() != 0 {
				t.Errorf("%s %s: %+v, %d in progress", name, h.dir, s, ra.InProgress())
			}
		}
	}
	rows := readTshark(t, "siw-ib_send_bw.sendreasm.tsv").rows
	if len(rows) != 20 || len(got) != len(rows) {
		t.Fatalf("%d multi-segment messages, tshark %d", len(got), len(rows))
	}
	for _, row := range rows {
		frame := atoi(t, row["frame.number"])
		m, ok := got[frame]
		if !ok {
			t.Errorf("frame %d: tshark completes a message there, the reassembler does not", frame)
			continue
		}
		if strconv.Itoa(int(m.msn)) != row["iwarp_ddp.msn"] || strconv.Itoa(int(m.qn)) != row["iwarp_ddp.qn"] ||
			strconv.Itoa(m.length) != row["iwarp_rdma.send.reassembled.length"] || m.frames != row["iwarp_rdma.send.fragment"] ||
			strconv.Itoa(strings.Count(m.frames, ",")+1) != row["iwarp_rdma.send.fragment.count"] {
			t.Errorf("frame %d: %+v, tshark %v", frame, m, row)
		}
	}
}

func seg(qn, msn, mo uint32, last bool, data string) *DDP {
	return &DDP{L: last, DV: 1, QN: qn, MSN: msn, MO: mo, Data: []byte(data)}
}

func TestReassemblerLimits(t *testing.T) {
	ra := NewReassembler(ReassemblerConfig{MaxMessageBytes: 10, MaxInProgress: 2})
	add := func(d *DDP, ref uint64) *Message {
		t.Helper()
		m, err := ra.Add(d, ref)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// Two interleaved messages on different queues complete in MO order.
	if add(seg(0, 1, 0, false, "ab"), 1) != nil || add(seg(1, 1, 0, false, "xy"), 2) != nil || add(seg(0, 1, 2, false, "cd"), 3) != nil {
		t.Fatal("early message")
	}
	m := add(seg(0, 1, 4, true, "e"), 4)
	if m == nil || string(m.Data) != "abcde" || m.QN != 0 || m.MSN != 1 || len(m.Refs) != 3 || m.Refs[2] != 4 {
		t.Fatalf("message %+v", m)
	}
	// A duplicate segment is ignored.
	if add(seg(1, 1, 0, false, "xy"), 5) != nil || ra.Stats.Duplicates != 1 {
		t.Fatalf("duplicate: %+v", ra.Stats)
	}
	// Too long: dropped at the segment that overflows, swallowed until L.
	add(seg(1, 1, 2, false, "123456789"), 6)
	if ra.Stats.TooLong != 1 || add(seg(1, 1, 11, true, "z"), 7) != nil || ra.InProgress() != 0 {
		t.Fatalf("too long: %+v, %d in progress", ra.Stats, ra.InProgress())
	}
	// A gap in MO drops the message.
	add(seg(0, 2, 0, false, "ab"), 8)
	if add(seg(0, 2, 5, true, "c"), 9) != nil || ra.Stats.Gaps != 1 {
		t.Fatalf("gap: %+v", ra.Stats)
	}
	// A message whose first segment is missing is a gap too.
	if add(seg(0, 3, 4, true, "c"), 10) != nil || ra.Stats.Gaps != 2 {
		t.Fatalf("missing start: %+v", ra.Stats)
	}
	// A third message in progress evicts the oldest.
	add(seg(0, 4, 0, false, "a"), 11)
	add(seg(0, 5, 0, false, "b"), 12)
	add(seg(0, 6, 0, false, "c"), 13)
	if ra.Stats.Evicted != 1 || ra.InProgress() != 2 {
		t.Fatalf("evict: %+v, %d in progress", ra.Stats, ra.InProgress())
	}
	if add(seg(0, 4, 1, true, "x"), 14) != nil { // MSN 4 was evicted: its tail is a gap
		t.Fatal("evicted message completed")
	}
	if m := add(seg(0, 6, 1, true, "d"), 15); m == nil || string(m.Data) != "cd" {
		t.Fatalf("after eviction: %+v", m)
	}
	// A single-segment message is returned as is; a tagged one refused.
	d := seg(0, 7, 0, true, "solo")
	if m := add(d, 16); m == nil || &m.Data[0] != &d.Data[0] || m.Refs[0] != 16 {
		t.Fatalf("single: %+v", m)
	}
	if _, err := ra.Add(&DDP{T: true}, 17); err != ErrTaggedSegment {
		t.Fatalf("tagged: %v", err)
	}
	// Oversized single-segment message.
	if add(seg(0, 8, 0, true, "01234567890"), 18) != nil || ra.Stats.TooLong != 2 {
		t.Fatalf("single too long: %+v", ra.Stats)
	}
}

func TestReassemblerZeroAlloc(t *testing.T) {
	ra := NewReassembler(ReassemblerConfig{MaxMessageBytes: 1 << 16})
	data := make([]byte, 1000)
	msn := uint32(0)
	run := func() {
		msn++
		for mo := uint32(0); mo < 8000; mo += 1000 {
			d := DDP{DV: 1, MSN: msn, MO: mo, L: mo == 7000, Data: data}
			if m, _ := ra.Add(&d, uint64(mo)); (m != nil) != d.L {
				t.Fatal("message not completed")
			}
		}
	}
	run()
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Fatalf("%v allocations per message", a)
	}
}

// TestReassemblerBudgetHooks: Buffered follows the buffers' capacity,
// DropLargest drops the message holding the most (its later segments are
// swallowed up to L without counting a gap), FreeSpare and Reset let go of
// buffers and messages.
func TestReassemblerBudgetHooks(t *testing.T) {
	ra := NewReassembler(ReassemblerConfig{MaxMessageBytes: 1 << 16, MaxInProgress: 4})
	if ra.Buffered() != 0 || ra.Largest() != 0 {
		t.Fatal("new reassembler holds buffers")
	}
	ra.Add(seg(0, 1, 0, false, "ab"), 1)
	ra.Add(seg(0, 2, 0, false, "0123456789"), 2)
	ra.Add(seg(0, 2, 10, false, "0123456789"), 3)
	big := ra.Largest()
	if big < 20 || ra.Buffered() < big+2 {
		t.Fatalf("largest %d, buffered %d", big, ra.Buffered())
	}
	ra.DropLargest()
	if ra.Stats.Cut != 1 || ra.Largest() >= big || ra.InProgress() != 2 {
		t.Fatalf("after DropLargest: %+v, largest %d, %d in progress", ra.Stats, ra.Largest(), ra.InProgress())
	}
	if m, _ := ra.Add(seg(0, 2, 20, true, "z"), 4); m != nil || ra.Stats.Gaps != 0 || ra.InProgress() != 1 {
		t.Fatalf("dropped message's last segment: %+v, %+v", m, ra.Stats)
	}
	if m, _ := ra.Add(seg(0, 1, 2, true, "c"), 5); m == nil || string(m.Data) != "abc" {
		t.Fatalf("other message: %+v", m)
	}
	ra.FreeSpare()
	if ra.Buffered() != 0 {
		t.Fatalf("after FreeSpare %d octets buffered", ra.Buffered())
	}
	ra.Add(seg(0, 3, 0, false, "abc"), 6)
	ra.Reset()
	if ra.InProgress() != 0 || ra.Stats != (ReassemblyStats{}) {
		t.Fatalf("after Reset: %d in progress, %+v", ra.InProgress(), ra.Stats)
	}
	if m, _ := ra.Add(seg(0, 3, 3, true, "d"), 7); m != nil {
		t.Fatal("a message in progress survived Reset")
	}
}
