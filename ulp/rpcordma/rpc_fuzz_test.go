package rpcordma

import (
	"slices"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// seedSends returns real RDMA Send payloads of the NFS captures, one of
// each transport header shape (rdma_proc and which chunk lists it carries).
func seedSends(t testing.TB) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	for _, name := range []string{"rxe-nfs3.pcap", "rxe-nfs41.pcap"} {
		runCapture(t, name, Options{Observer: observerFunc(func(m *dissect.Message) {
			var h rpcrdma.Message
			if h.DecodeFromBytes(m.Data) != nil {
				return
			}
			c := h.Chunks()
			key := string([]byte{byte(h.V1.Proc), byte(len(c.ReadList)), byte(len(c.WriteList)), byte(len(m.Packets))})
			if c.HasReplyChunk {
				key += "r"
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, slices.Clone(m.Data))
			}
		})}, nil)
	}
	return out
}

type observerFunc func(*dissect.Message)

func (f observerFunc) Message(m *dissect.Message) { f(m) }
func (f observerFunc) RDMAOp(*dissect.RDMAOp)     {}

// FuzzRPCMessage runs an arbitrary Send through the RPC-over-RDMA layer —
// as a Call, as a Reply to an outstanding Call with Read, Write and Reply
// chunks, sent With Invalidate — around RDMA operations with arbitrary
// data, and prints every field and the summary of every packet. Seeded with
// real Sends of the NFS captures.
func FuzzRPCMessage(f *testing.F) {
	for _, s := range seedSends(f) {
		f.Add(s, false, uint32(0x10), []byte("data"))
		f.Add(s, true, uint32(0x11), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, msg []byte, reply bool, stag uint32, data []byte) {
		r := newTxnRig(t, Options{MaxMessageBytes: 4096, MaxRebuildBytes: 1 << 16, MaxTransactions: 4})
		xid := uint32(0)
		if len(msg) >= 4 {
			xid = uint32(msg[0])<<24 | uint32(msg[1])<<16 | uint32(msg[2])<<8 | uint32(msg[3])
		}
		h := rpcrdma.Header{XID: xid, Credit: 8, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{
			ReadList:      []rpcrdma.ReadSegment{{Position: 28, Segment: seg(0x10, 64, 0x1000)}},
			WriteList:     []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x11, 64, 0x1000)}}},
			HasReplyChunk: true, ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x12, 256, 0x1000)}}}}
		var pkts []*dissect.Packet
		pkts = append(pkts, r.send(c2s, v1msg(t, h, rpcCall(t, xid, oncrpc.ProgNFS, 3, 6, []byte{0, 0, 0, 64})), 0))
		if len(data) > 256 {
			data = data[:256]
		}
		d := c2s
		if reply {
			d = s2c
		}
		if len(data) > 0 {
			pkts = append(pkts, r.write(s2c, stag, 0x1000, data), r.read(s2c, stag, 0x1000, data))
		}
		pkts = append(pkts, r.send(d, msg, 0), r.send(opposite(d), msg, stag))
		for _, p := range pkts {
			_ = summary(p)
			Present.All(p)
		}
		r.e.Finish()
		if rs := Stats(r.c); rs != nil && rs.Outstanding != 0 {
			t.Errorf("%d Calls outstanding after Finish", rs.Outstanding)
		}
		if r.e.RPC.RebuildBytes != 0 {
			t.Errorf("%d bytes of chunk data held after Finish", r.e.RPC.RebuildBytes)
		}
	})
}

// FuzzRoCEReassembly feeds an arbitrary sequence of IB transport packets —
// opcode, PSN step, direction, payload length, each from 4 input bytes — to
// the reassembly of one connection, and checks what comes out against the
// limits.
func FuzzRoCEReassembly(f *testing.F) {
	f.Add([]byte{0x00, 1, 0, 255, 0x01, 1, 0, 255, 0x02, 1, 0, 10})                // FIRST MIDDLE LAST
	f.Add([]byte{0x0c, 1, 1, 200, 0x0d, 0, 0, 255, 0x0f, 1, 0, 30, 0x10, 1, 0, 3}) // Read Request, responses
	f.Add([]byte{0x06, 1, 1, 255, 0x07, 3, 1, 255, 0x08, 0xff, 1, 1, 0x04, 1, 0, 9})
	f.Fuzz(func(t *testing.T, prog []byte) {
		const max = 1000
		r := newRig(Options{MaxMessageBytes: max, MaxOutstandingReads: 3})
		r.c.ServicePort = NFSRDMAPort
		ops := []roce.OpCode{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x16, 0x17}
		var psn [2]uint32
		for len(prog) >= 4 {
			op := ops[int(prog[0])%len(ops)]
			d := dissect.DirClientToServer
			if prog[2]&1 != 0 {
				d = dissect.DirServerToClient
			}
			psn[d.Index()] += uint32(int8(prog[1]))
			n := int(prog[3]) * 4
			r.pkt(d, op, psn[d.Index()], fill(n, prog[0]), reth(uint64(prog[1])<<8, uint32(prog[2]), uint32(n)*uint32(prog[1]&7)),
				func(h *roce.BTH) { h.Truncated = prog[2]&0x80 != 0 })
			prog = prog[4:]
		}
		r.e.Finish()
		for _, m := range r.msgs {
			if len(m.Data) > max || (m.Length < len(m.Data)) || len(m.Packets) == 0 {
				t.Errorf("message of %d bytes (length %d) in %v", len(m.Data), m.Length, m.Packets)
			}
		}
		for _, op := range r.ops {
			if len(op.Data) > max || len(op.Data) > int(op.Length) || (op.Complete && len(op.Data) != int(op.Length) && op.Length <= max) {
				t.Errorf("%s of %d bytes, length %d, complete %v", op.Kind, len(op.Data), op.Length, op.Complete)
			}
		}
		st := r.e.Reassembly
		if st.Messages != uint64(len(r.msgs)) || st.Reads+st.Writes != uint64(len(r.ops)) {
			t.Errorf("stats %+v, %d messages, %d ops", st, len(r.msgs), len(r.ops))
		}
	})
}
