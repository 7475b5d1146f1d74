package dissect

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/layers/iwarp"
	"github.com/rdmashark/rdmashark/source"
)

// The iWARP engine on the real soft-iWARP captures: what it frames is
// compared with tshark 4.0's reference fields (testdata/tshark/*.iwarp.tsv,
// gen-iwarp.sh), and what it hands up with what the workload must have
// sent.

// iwFrame is one captured frame, copied out of the reader.
type iwFrame struct {
	num  int
	ci   gopacket.CaptureInfo
	link layers.LinkType
	data []byte
}

var iwFrameCache = map[string][]iwFrame{}

func iwReadFrames(t testing.TB, name string) []iwFrame {
	t.Helper()
	if f, ok := iwFrameCache[name]; ok {
		return f
	}
	r, err := source.Open(filepath.Join("..", "testdata", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []iwFrame
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, iwFrame{rec.Number, rec.CI, rec.LinkType, append([]byte(nil), rec.Data...)})
	}
	iwFrameCache[name] = out
	return out
}

// iwRun processes frames through a new engine, calling each (if not nil)
// with every packet, then finishes the input.
func iwRun(frames []iwFrame, opts Options, each func(p *Packet)) *Engine {
	e := newEngine(opts)
	var p Packet
	for _, f := range frames {
		p.Number = f.num
		p.Timestamp = f.ci.Timestamp
		p.RelTime = f.ci.Timestamp.Sub(frames[0].ci.Timestamp)
		p.CaptureLength = f.ci.CaptureLength
		p.Length = f.ci.Length
		p.LinkType = f.link
		e.Process(&p, f.data)
		if each != nil {
			each(&p)
		}
	}
	e.Finish()
	return e
}

var iwCaptures = []string{"siw-rping", "siw-rping-any-sll", "siw-ib_send_bw", "siw-ib_read_bw",
	"siw-nfs3", "siw-nfs41", "siw-nfs42-small"}

// iwTshark reads a capture's tshark reference: one map of field values
// per frame.
func iwTshark(t testing.TB, name string) []map[string]string {
	t.Helper()
	fl, err := os.ReadFile(filepath.Join("..", "testdata", "tshark", "fields-iwarp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, l := range strings.Split(string(fl), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			fields = append(fields, l)
		}
	}
	f, err := os.Open(filepath.Join("..", "testdata", "tshark", name+".iwarp.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		row := map[string]string{}
		for i, name := range fields {
			if i < len(cols) {
				row[name] = cols[i]
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func iwSplit(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TestIWARPCapturesAgainstTshark runs every siw capture through the engine
// and checks each connection's record against tshark's view of the same
// frames: as many FPDUs in each direction; as many Sends, Sends with
// Invalidate, RDMA Writes and RDMA Read Requests (their last segments); no
// lost sync, gap, CRC error or incomplete operation in captures that have
// none.
func TestIWARPCapturesAgainstTshark(t *testing.T) {
	total := 0
	for _, name := range iwCaptures {
		t.Run(name, func(t *testing.T) {
			rows := iwTshark(t, name)
			type dirKey struct{ src, dst string }
			type counts struct{ fpdus, sends, invs, writes, reads int }
			want := map[dirKey]*counts{}
			for _, r := range rows {
				ops := iwSplit(r["iwarp_rdma.opcode"])
				if len(ops) == 0 {
					continue
				}
				k := dirKey{r["tcp.srcport"], r["tcp.dstport"]}
				c := want[k]
				if c == nil {
					c = &counts{}
					want[k] = c
				}
				last := iwSplit(r["iwarp_ddp.last_flag"])
				c.fpdus += len(iwSplit(r["iwarp_mpa.ulpdulength"]))
				for i, op := range ops {
					if last[i] != "1" {
						continue
					}
					switch op {
					case "0x03", "0x05":
						c.sends++
					case "0x04", "0x06":
						c.sends++
						c.invs++
					case "0x00":
						c.writes++
					case "0x01":
						c.reads++
					}
				}
			}
			invs := [2]int{}
			obs := &iwObserver{onMsg: func(m *Message) {
				if m.Invalidate {
					invs[m.Dir.Index()]++
				}
			}}
			e := iwRun(iwReadFrames(t, name+".pcap"), Options{Observer: obs}, nil)
			got := 0
			for _, c := range e.Conns.Connections() {
				if c.Transport != TransportIWARP {
					continue
				}
				in := c.IWARP
				if !in.Negotiated || in.MidStream || c.State != StateClosed {
					t.Errorf("connection %d: negotiated %v, mid-stream %v, state %v", c.ID, in.Negotiated, in.MidStream, c.State)
				}
				for d := 0; d < 2; d++ {
					k := dirKey{itoa(uint64(c.Client.Port)), itoa(uint64(c.Server.Port))}
					if d == 1 {
						k = dirKey{k.dst, k.src}
					}
					w := want[k]
					if w == nil {
						w = &counts{}
					}
					ctr := &in.Dir[d]
					if int(ctr.FPDUs) != w.fpdus || int(ctr.Messages) != w.sends || int(ctr.Writes) != w.writes || int(ctr.Reads) != w.reads {
						t.Errorf("connection %d dir %d: FPDUs %d Sends %d Writes %d Reads %d; tshark %d %d %d %d",
							c.ID, d, ctr.FPDUs, ctr.Messages, ctr.Writes, ctr.Reads, w.fpdus, w.sends, w.writes, w.reads)
					}
					if invs[d] != 0 && w.invs == 0 {
						t.Errorf("connection %d dir %d: Sends with Invalidate where tshark has none", c.ID, d)
					}
					if ctr.LostSync+ctr.Resyncs+ctr.GapOctets+ctr.Discarded+ctr.CRCErrors+ctr.Malformed+ctr.OpsIncomplete+ctr.UnmatchedResponses != 0 {
						t.Errorf("connection %d dir %d: unexpected trouble %+v", c.ID, d, *ctr)
					}
					if r := ctr.Reassembly; r.TooLong+r.Evicted+r.Gaps+r.Duplicates != 0 {
						t.Errorf("connection %d dir %d: Send reassembly lost messages: %+v", c.ID, d, r)
					}
					got += int(ctr.FPDUs)
					delete(want, k)
				}
			}
			for k, w := range want {
				t.Errorf("tshark has %d FPDUs %s→%s on no connection of ours", w.fpdus, k.src, k.dst)
			}
			total += got
		})
	}
	// layers/iwarp frames the same 12829 FPDUs (its TestTsharkFPDUs).
	if total != 12829 {
		t.Errorf("%d FPDUs in the siw captures, want 12829", total)
	}
}

// iwObserver collects what the engine hands up.
type iwObserver struct {
	onMsg func(m *Message)
	onOp  func(op *RDMAOp)
}

func (o *iwObserver) Message(m *Message) {
	if o.onMsg != nil {
		o.onMsg(m)
	}
}

func (o *iwObserver) RDMAOp(op *RDMAOp) {
	if o.onOp != nil {
		o.onOp(op)
	}
}

// TestIWARPRpingOperations checks the RDMA operations of siw-rping against
// what rping's protocol says they must be. The rping client (192.0.2.2)
// advertises a buffer in each Send: struct rping_rdma_info { __be64 buf;
// __be32 rkey; __be32 size; } (16 octets, rdma-core librdmacm/examples/
// rping.c). The server first RDMA Reads the advertised source buffer (the
// Read Request names it as Data Source STag/TO: our RDMAOp.STag/Offset),
// then, after the client's next Send, RDMA Writes the same data into the
// advertised sink buffer. So every operation must name exactly the buffer
// of the client's latest Send, be complete, and each Write must carry the
// data of the Read before it.
func TestIWARPRpingOperations(t *testing.T) {
	for _, name := range []string{"siw-rping.pcap", "siw-rping-any-sll.pcap"} {
		var adv struct {
			buf        uint64
			rkey, size uint32
			ok         bool
		}
		var lastRead []byte
		reads, writes := 0, 0
		obs := &iwObserver{
			onMsg: func(m *Message) {
				if m.Dir == DirClientToServer {
					if len(m.Data) != 16 {
						t.Fatalf("%s: client Send of %d octets, rping sends 16", name, len(m.Data))
					}
					adv.buf = binary.BigEndian.Uint64(m.Data)
					adv.rkey = binary.BigEndian.Uint32(m.Data[8:])
					adv.size = binary.BigEndian.Uint32(m.Data[12:])
					adv.ok = true
				}
			},
			onOp: func(op *RDMAOp) {
				if !adv.ok {
					t.Fatalf("%s: %v before any advertisement", name, op.Kind)
				}
				if op.Dir != DirServerToClient || op.STag != adv.rkey || op.Offset != adv.buf || op.Length != adv.size {
					t.Errorf("%s: %v dir %v STag 0x%08x TO 0x%x len %d; advertised 0x%08x 0x%x %d",
						name, op.Kind, op.Dir, op.STag, op.Offset, op.Length, adv.rkey, adv.buf, adv.size)
				}
				if !op.Complete || len(op.Data) != int(op.Length) || len(op.Packets) < 1 {
					t.Errorf("%s: %v complete %v, %d data octets, packets %v", name, op.Kind, op.Complete, len(op.Data), op.Packets)
				}
				switch op.Kind {
				case RDMARead:
					reads++
					lastRead = append(lastRead[:0], op.Data...)
					if len(op.Packets) != 2 {
						t.Errorf("%s: Read in packets %v, want request and response", name, op.Packets)
					}
				case RDMAWrite:
					writes++
					if string(op.Data) != string(lastRead) {
						t.Errorf("%s: Write data differs from the Read before it", name)
					}
				}
				adv.ok = false
			},
		}
		iwRun(iwReadFrames(t, name), Options{Observer: obs}, nil)
		// rping -C 5: five iterations of one Read and one Write.
		if reads != 5 || writes != 5 {
			t.Errorf("%s: %d Reads, %d Writes, want 5 and 5", name, reads, writes)
		}
	}
}

// TestIWARPPacketView checks what siw-rping.pcap's packets show: the MPA
// Request/Reply (frames 19 and 21, bytes in the comments from tshark -x)
// and one FPDU per data segment, and the summary lines.
func TestIWARPPacketView(t *testing.T) {
	infos := map[int]string{}
	var req, rep IWARPPacket
	iwRun(iwReadFrames(t, "siw-rping.pcap"), Options{}, func(p *Packet) {
		infos[p.Number] = summary(p)
		switch p.Number {
		case 19:
			req = p.IWARP
			req.ReqRep.PrivateData = append([]byte(nil), p.IWARP.ReqRep.PrivateData...)
		case 21:
			rep = p.IWARP
			rep.ReqRep.PrivateData = append([]byte(nil), p.IWARP.ReqRep.PrivateData...)
		}
	})
	// Frame 19: "MPA ID Req Frame" 10 02 00 04 | 00 01 00 01: Enhanced
	// flag, Rev 2, PD_Length 4, IRD 1, ORD 1 (RFC 6581 section 5).
	if !req.HasReqRep || !req.ReqRep.IsRequest() || req.ReqRep.Rev != 2 || !req.ReqRep.Enhanced ||
		req.ReqRep.EnhancedData.IRD != 1 || req.ReqRep.EnhancedData.ORD != 1 || len(req.FPDUs) != 0 {
		t.Errorf("frame 19: %+v", req.ReqRep)
	}
	if !rep.HasReqRep || !rep.ReqRep.IsReply() || rep.ReqRep.R {
		t.Errorf("frame 21: %+v", rep.ReqRep)
	}
	for n, want := range map[int]string{
		19: "MPA Request Rev=2 IRD=1 ORD=1 PD=4",
		21: "MPA Reply Rev=2 IRD=1 ORD=1 PD=4",
		23: "Send MSN=1 Len=16",
		25: "RDMA Read Request MSN=1 SrcSTag=0x2e6dc100 SrcTO=0x55b0aef3be60 Len=100 SinkSTag=0x19b72500 SinkTO=0x56139be307c0",
		26: "RDMA Read Response STag=0x19b72500 TO=0x56139be307c0 Len=100",
		29: "RDMA Write STag=0xbda31700 TO=0x55b0aef397c0 Len=100",
		// tshark -r siw-rping.pcap's Info column of the pure ACK.
		20: "7174 → 45552 [ACK] Seq=1 Ack=25 Win=65152 Len=0 TSval=1232230833 TSecr=3562517005",
	} {
		if infos[n] != want {
			t.Errorf("frame %d: %q, want %q", n, infos[n], want)
		}
	}
}

// TestIWARPSeveralFPDUsPerSegment: siw-ib_read_bw.pcap frame 52 carries
// eleven RDMA Read Requests (tshark: ulpdulength 46 eleven times); the
// packet shows eleven FPDUs, and the summary one item each.
func TestIWARPSeveralFPDUsPerSegment(t *testing.T) {
	var n int
	var info string
	iwRun(iwReadFrames(t, "siw-ib_read_bw.pcap"), Options{}, func(p *Packet) {
		if p.Number == 52 {
			n = len(p.IWARP.FPDUs)
			for _, f := range p.IWARP.FPDUs {
				if f.ULPDULength != 46 || f.RDMAP.Opcode != iwarp.OpRDMAReadRequest {
					t.Errorf("frame 52: FPDU %d octets, %v", f.ULPDULength, f.RDMAP.Opcode)
				}
			}
			info = summary(p)
		}
	})
	if n != 11 || strings.Count(info, "RDMA Read Request") != 11 {
		t.Errorf("frame 52: %d FPDUs, info %q", n, info)
	}
}

// iwShown returns, per frame number, the ULPDU lengths of the FPDUs the
// packet shows, as tshark prints them.
func iwShown(p *Packet) string {
	var b []string
	for _, f := range p.IWARP.FPDUs {
		b = append(b, itoa(uint64(f.ULPDULength)))
	}
	return strings.Join(b, ",")
}

// TestIWARPMidStream: captures cut after the MPA exchange. The connection
// is picked up at the first segment that starts with an FPDU — on the
// nfsrdma port 20049 (siw-nfs3) by one plausible header, on perftest's port
// 18515 (siw-ib_send_bw) by a segment that is whole, well-formed FPDUs —
// and from there every frame shows the FPDUs tshark shows on the whole
// capture.
func TestIWARPMidStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		from int // first frame kept
	}{{"siw-nfs3", 300}, {"siw-ib_send_bw", 125}} {
		frames := iwReadFrames(t, tc.name+".pcap")[tc.from-1:]
		rows := iwTshark(t, tc.name)
		started := map[[2]uint16]bool{}
		matched, missed := 0, 0
		e := iwRun(frames, Options{}, func(p *Packet) {
			row := rows[p.Number-1]
			want, got := row["iwarp_mpa.ulpdulength"], iwShown(p)
			k := [2]uint16{uint16(p.TCP.SrcPort), uint16(p.TCP.DstPort)}
			if got != "" {
				started[k] = true
			}
			switch {
			case want == got:
				if got != "" {
					matched++
				}
			case !started[k] && got == "":
				missed++ // before the direction was picked up
			default:
				t.Errorf("%s frame %d: FPDUs %q, tshark %q", tc.name, p.Number, got, want)
			}
		})
		var c *Connection
		for _, x := range e.Conns.Connections() {
			if x.Transport == TransportIWARP && x.IWARP.Dir[0].FPDUs+x.IWARP.Dir[1].FPDUs > 0 {
				c = x
				break
			}
		}
		if c == nil || c.State != StateNoSetup || !c.IWARP.MidStream || c.IWARP.Negotiated || c.PrivateData[0].Seen {
			t.Fatalf("%s: connection %+v", tc.name, c)
		}
		for d := range c.IWARP.Dir {
			if x := c.IWARP.Dir[d]; x.LostSync != 0 || x.Resyncs > 1 || x.CRCErrors != 0 || x.Malformed != 0 {
				t.Errorf("%s dir %d: %+v", tc.name, d, x)
			}
		}
		t.Logf("%s from frame %d: %d frames' FPDUs equal to tshark's, %d frames before pick-up", tc.name, tc.from, matched, missed)
		if matched < 100 || missed > 5 {
			t.Errorf("%s: %d frames matched, %d missed", tc.name, matched, missed)
		}
	}
}

// TestIWARPSegmentNotCaptured drops one server segment of siw-nfs3 (frame
// 1619: an RDMA Write FPDU of 1442 octets in a segment of its own). The
// client's acknowledgement says it was received: the hole is skipped
// (1448 missing octets), framing loses sync once and picks up at the next
// segment, the Write that lost a segment is handed up incomplete, and
// every other FPDU and Send is still decoded.
func TestIWARPSegmentNotCaptured(t *testing.T) {
	all := iwReadFrames(t, "siw-nfs3.pcap")
	frames := append(append([]iwFrame(nil), all[:1618]...), all[1619:]...)
	rows := iwTshark(t, "siw-nfs3")
	wantSends, wantOps := 0, 0
	iwRun(all, Options{Observer: &iwObserver{onMsg: func(*Message) { wantSends++ }, onOp: func(*RDMAOp) { wantOps++ }}}, nil)
	var incomplete []string
	sends, ops := 0, 0
	obs := &iwObserver{
		onMsg: func(*Message) { sends++ },
		onOp: func(op *RDMAOp) {
			ops++
			if !op.Complete {
				incomplete = append(incomplete, fmt.Sprintf("%v %v packets %v", op.Kind, op.Dir, op.Packets))
			}
		},
	}
	differ := 0
	e := iwRun(frames, Options{Observer: obs}, func(p *Packet) {
		if got, want := iwShown(p), rows[p.Number-1]["iwarp_mpa.ulpdulength"]; got != want && got != "" {
			t.Errorf("frame %d shows FPDUs %q, tshark %q", p.Number, got, want)
		} else if got != want {
			differ++
		}
	})
	c := e.Conns.Connections()[0]
	x := c.IWARP.Dir[1]
	if x.GapOctets != 1448 || x.LostSync != 1 || x.Resyncs != 1 || x.FPDUs != 261-1 {
		t.Errorf("server direction: %+v", x)
	}
	// The Write that lost its segment is the only incomplete operation;
	// every Send is still there.
	if len(incomplete) != 1 || !strings.HasPrefix(incomplete[0], "RDMA Write server-to-client") || sends != wantSends || ops != wantOps {
		t.Errorf("incomplete operations %q; %d Sends, want %d; %d operations, want %d", incomplete, sends, wantSends, ops, wantOps)
	}
	// The frames between the hole and the acknowledgement that closes it
	// show nothing: their FPDUs are decoded when it comes.
	t.Logf("%d frames show no FPDU where tshark shows one (frame 1619 itself is gone)", differ)
	if differ > 10 {
		t.Errorf("%d frames without their FPDUs", differ)
	}
}
