package nfs_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/internal/capture"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

var nfsCaptures = []string{"rxe-nfs3", "rxe-nfs41", "rxe-nfs42-small", "siw-nfs3", "siw-nfs41", "siw-nfs42-small"}

// rpcMsg is one RPC message of a capture with what the transport said
// about it.
type rpcMsg struct {
	frame   int
	rpc     []byte // the whole RPC message
	hdr     oncrpc.Header
	reads   []uint32 // Read chunk positions (Calls)
	writes  []uint32 // segment count per Write chunk (Replies)
	written []uint64 // bytes written per Write chunk (Replies)
	readLen []uint64 // Read chunk lengths, parallel to reads
	long    bool     // rebuilt from a Reply chunk (RDMA_NOMSG)
	tcp     bool     // MOUNT over TCP
}

// callKey identifies a Call for matching its Reply.
type callKey struct{ prog, vers, proc uint32 }

// callsByXID pairs Replies with the Calls they answer.
type callsByXID map[uint32]callKey

// of is the Call h is or answers: a Call's own (remembered), the Call's
// for a Reply to one seen before; false for a Reply to an unseen Call.
func (c callsByXID) of(h *oncrpc.Header) (callKey, bool) {
	if h.MsgType == oncrpc.Call {
		k := callKey{uint32(h.Prog), h.Vers, h.Proc}
		c[h.XID] = k
		return k, true
	}
	k, ok := c[h.XID]
	return k, ok
}

// rdmaWrite is the payload of one RDMA Write packet (RoCE) with where it went.
type rdmaWrite struct {
	frame  int
	handle uint32
	va     uint64
	data   []byte
}

// roceWrites collects RDMA WRITE payloads of a RoCEv2 capture (IBTA
// 9.4.3: RETH on FIRST/ONLY, later packets continue at the next address).
func roceWrites(pkts []capture.Packet) []rdmaWrite {
	type qpKey [12]byte
	type cur struct {
		handle uint32
		va     uint64
	}
	state := map[qpKey]cur{}
	var out []rdmaWrite
	for _, pk := range pkts {
		b := pk.Data
		if len(b) < 14+20+8+12+4 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
			continue
		}
		ip := b[14:]
		ihl := int(ip[0]&0xf) * 4
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		if ip[9] != 17 || tot > len(ip) || ihl < 20 || tot < ihl+8 {
			continue
		}
		udp := ip[ihl:tot]
		if binary.BigEndian.Uint16(udp[2:]) != 4791 {
			continue
		}
		bth := udp[8:]
		if len(bth) < 16 {
			continue
		}
		op := bth[0]
		pad := int(bth[1]>>4) & 3
		var k qpKey
		copy(k[:4], ip[12:16])
		copy(k[4:8], ip[16:20])
		copy(k[9:12], bth[5:8])
		end := len(bth) - 4 - pad
		h := 12
		c := state[k]
		switch op {
		case 6, 10, 11: // RDMA WRITE FIRST / ONLY / ONLY with Immediate: RETH
			if end < h+16 {
				continue
			}
			c = cur{va: binary.BigEndian.Uint64(bth[h:]), handle: binary.BigEndian.Uint32(bth[h+8:])}
			h += 16
			if op == 11 {
				h += 4
			}
		case 7, 8: // MIDDLE, LAST
		case 9: // LAST with Immediate
			h += 4
		default:
			continue
		}
		if end < h {
			continue
		}
		data := bth[h:end]
		out = append(out, rdmaWrite{frame: pk.Frame, handle: c.handle, va: c.va, data: data})
		c.va += uint64(len(data))
		state[k] = c
	}
	return out
}

// iwarpWrites collects the tagged RDMA Write payloads of an iWARP capture:
// TCP port 20049 streams taken in order (retransmissions dropped), the MPA
// Request/Reply skipped (RFC 5044 section 7.1), then FPDUs (section 4:
// ULPDU_Length, ULPDU, pad to 4, CRC field); a tagged DDP segment
// (RFC 5041 section 4.2) with RDMAP opcode RDMA Write (RFC 5040 section
// 4.3) places its payload at TO in the buffer named by STag.
func iwarpWrites(pkts []capture.Packet) []rdmaWrite {
	type stream struct {
		next   uint32
		synced bool
		mpa    bool
		buf    []byte
	}
	streams := map[[12]byte]*stream{}
	var out []rdmaWrite
	for _, pk := range pkts {
		b := pk.Data
		if len(b) < 14+20+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
			continue
		}
		ip := b[14:]
		ihl := int(ip[0]&0xf) * 4
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		if ip[9] != 6 || tot > len(ip) || ihl < 20 || tot < ihl+20 {
			continue
		}
		tcp := ip[ihl:tot]
		sp, dp := binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
		if sp != 20049 && dp != 20049 {
			continue
		}
		doff := int(tcp[12]>>4) * 4
		if doff < 20 || doff > len(tcp) {
			continue
		}
		var k [12]byte
		copy(k[:8], ip[12:20])
		binary.BigEndian.PutUint16(k[8:], sp)
		binary.BigEndian.PutUint16(k[10:], dp)
		st := streams[k]
		if st == nil {
			st = &stream{}
			streams[k] = st
		}
		seq := binary.BigEndian.Uint32(tcp[4:])
		if tcp[13]&0x02 != 0 { // SYN
			*st = stream{next: seq + 1, synced: true}
			continue
		}
		data := tcp[doff:]
		if !st.synced || len(data) == 0 {
			continue
		}
		d := int32(st.next - seq)
		if d < 0 {
			st.synced = false
			continue
		}
		if int(d) >= len(data) {
			continue
		}
		data = data[d:]
		st.next += uint32(len(data))
		st.buf = append(st.buf, data...)
		for {
			u := st.buf
			if !st.mpa {
				if len(u) < 20 || len(u) < 20+int(binary.BigEndian.Uint16(u[18:])) {
					break
				}
				st.buf, st.mpa = u[20+int(binary.BigEndian.Uint16(u[18:])):], true
				continue
			}
			if len(u) < 2 {
				break
			}
			ulpdu := int(binary.BigEndian.Uint16(u))
			total := (2+ulpdu+3)&^3 + 4
			if len(u) < total {
				break
			}
			f := u[2 : 2+ulpdu]
			if len(f) >= 14 && f[0]&0x80 != 0 && f[1]&0x0f == 0 { // tagged, RDMA Write
				out = append(out, rdmaWrite{frame: pk.Frame, handle: binary.BigEndian.Uint32(f[2:]),
					va: binary.BigEndian.Uint64(f[6:]), data: f[14:]})
			}
			st.buf = u[total:]
		}
	}
	return out
}

// rebuild gathers the bytes of segs from the RDMA Writes before frame.
func rebuild(ws []rdmaWrite, frame int, segs []rpcrdma.Segment) ([]byte, bool) {
	var out []byte
	for _, s := range segs {
		buf := make([]byte, s.Length)
		have := make([]bool, s.Length)
		for _, w := range ws {
			if w.frame >= frame || w.handle != s.Handle {
				continue
			}
			for i := range w.data {
				a := w.va + uint64(i)
				if a >= s.Offset && a < s.Offset+uint64(s.Length) {
					buf[a-s.Offset] = w.data[i]
					have[a-s.Offset] = true
				}
			}
		}
		for _, h := range have {
			if !h {
				return nil, false
			}
		}
		out = append(out, buf...)
	}
	return out, true
}

// messages returns the RPC messages of a capture that carry NFS, MOUNT or
// NFSACL: inline ones (RDMA_MSG), Long Replies rebuilt from the Reply
// chunk's RDMA Writes, MOUNT over TCP. skipped lists the frames of Long
// Replies not rebuilt.
func messages(t testing.TB, name string) (msgs []*rpcMsg, skipped map[int]bool) {
	t.Helper()
	pkts, err := capture.ReadPcap(filepath.Join("..", "..", "testdata", "pcaps", name+".pcap"))
	if err != nil {
		t.Fatal(err)
	}
	writes := append(roceWrites(pkts), iwarpWrites(pkts)...)
	skipped = map[int]bool{}
	var m rpcrdma.Message
	for _, s := range capture.Sends(pkts) {
		if err := m.DecodeFromBytes(s.Payload); err != nil || m.Vers != 1 {
			continue
		}
		h := &m.V1
		msg := &rpcMsg{frame: s.Frame}
		switch h.Proc {
		case rpcrdma.RDMAMsg:
			msg.rpc = m.RPCMessage()
		case rpcrdma.RDMANoMsg:
			if !h.HasReplyChunk {
				continue
			}
			b, ok := rebuild(writes, s.Frame, h.ReplyChunk.Segments)
			if !ok {
				skipped[s.Frame] = true
				continue
			}
			msg.rpc, msg.long = b, true
		default:
			continue
		}
		for _, c := range h.ReadChunks {
			msg.reads = append(msg.reads, c.Position)
			msg.readLen = append(msg.readLen, c.Length())
		}
		for _, w := range h.WriteList {
			msg.writes = append(msg.writes, uint32(len(w.Segments)))
			msg.written = append(msg.written, w.Length())
		}
		if err := msg.hdr.DecodeFromBytes(msg.rpc); err != nil {
			t.Errorf("%s frame %d: rpc: %v", name, s.Frame, err)
			continue
		}
		msgs = append(msgs, msg)
	}
	for _, seg := range capture.TCPPayloads(pkts) {
		p := seg.Payload
		if len(p) < 4+8 {
			continue
		}
		rm := binary.BigEndian.Uint32(p)
		if rm&0x80000000 == 0 || int(rm&0x7fffffff) != len(p)-4 {
			continue
		}
		msg := &rpcMsg{frame: seg.Frame, rpc: p[4:], tcp: true}
		if msg.hdr.DecodeFromBytes(msg.rpc) != nil {
			continue
		}
		msgs = append(msgs, msg)
	}
	return msgs, skipped
}

// tsharkRow is one line of testdata/*.nfs.tsv (see gen-tshark.sh).
type tsharkRow struct {
	xid, msgtyp, prog, vers, proc string
	opcodes, nfsstat4, status     []string
}

func tsharkNFS(t testing.TB, name string) map[int]tsharkRow {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".nfs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[int]tsharkRow{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		for len(c) < 10 {
			c = append(c, "")
		}
		n, err := strconv.Atoi(c[0])
		if err != nil {
			t.Fatalf("%s: bad line %q", name, sc.Text())
		}
		rows[n] = tsharkRow{xid: c[1], msgtyp: c[2], prog: c[3], vers: strings.Split(c[4], ",")[0], proc: c[5],
			opcodes: split(c[6]), nfsstat4: split(c[7]), status: split(c[8])}
	}
	return rows
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// TestCapturesAgainstTshark walks every NFS, MOUNT and NFSACL message of
// the six NFS-over-RDMA captures and compares program, version,
// procedure, the NFSv4 operation lists and the statuses with tshark -2;
// every body must be walked to its last byte, and the DDP-eligible items
// must sit where the chunks say.
func TestCapturesAgainstTshark(t *testing.T) {
	for _, name := range nfsCaptures {
		t.Run(name, func(t *testing.T) {
			msgs, skipped := messages(t, name)
			rows := tsharkNFS(t, name)
			calls := callsByXID{}
			var in nfs.Info
			seen := map[int]bool{}
			byXID := map[string][]int{}
			for f, r := range rows {
				byXID[r.xid+"/"+r.msgtyp] = append(byXID[r.xid+"/"+r.msgtyp], f)
			}
			var nOps, nItems, nReduced, nLong int
			for _, m := range msgs {
				h := &m.hdr
				call := h.MsgType == oncrpc.Call
				k, ok := calls.of(h)
				if !ok || !nfs.Known(k.prog) {
					continue
				}
				// tshark -2 shows a Call with Read chunks on the frame that
				// completes its RDMA Reads: match by XID and direction, the
				// first row at or after the Send.
				rf, row, ok := 0, tsharkRow{}, false
				for _, f := range byXID[fmt.Sprintf("0x%08x/%d", h.XID, h.MsgType)] {
					if f >= m.frame && !seen[f] && (!ok || f < rf) {
						rf, row, ok = f, rows[f], true
					}
				}
				if !ok {
					t.Errorf("frame %d: tshark has no NFS row for xid 0x%08x", m.frame, h.XID)
					continue
				}
				seen[rf] = true
				if m.long {
					nLong++
				}
				if !h.HasBody() {
					continue
				}
				body := h.Payload()
				red := &nfs.Reduction{HeaderLen: h.HeaderLen, ReadPositions: m.reads, WriteChunks: m.writes}
				err := in.Decode(k.prog, k.vers, k.proc, call, body, red)
				if err != nil {
					t.Errorf("frame %d: %v", m.frame, err)
					continue
				}
				if in.Len != len(body) {
					t.Errorf("frame %d: walked %d of %d body bytes", m.frame, in.Len, len(body))
				}
				// Program, version, procedure (tshark generates them for replies).
				if got := fmt.Sprintf("%d %d %d", k.prog, k.vers, k.proc); got != row.prog+" "+row.vers+" "+row.proc {
					t.Errorf("frame %d: prog/vers/proc %s, tshark %s %s %s", m.frame, got, row.prog, row.vers, row.proc)
				}
				if nfs.ProcName(k.prog, k.vers, k.proc) == "" {
					t.Errorf("frame %d: procedure %v has no name", m.frame, k)
				}
				var ops, st4 []string
				for _, op := range in.Ops {
					ops = append(ops, itoa(uint32(op.Code)))
					if op.Name() == "" || strings.Contains(op.Name(), "(") {
						t.Errorf("frame %d: op %d has no name", m.frame, op.Code)
					}
				}
				// tshark: nfs.cb_program of the CREATE_SESSION calls is 0x40000000.
				hasCS := false
				for _, op := range in.Ops {
					hasCS = hasCS || op.Code == nfs.OP_CREATE_SESSION
				}
				if call && hasCS != in.HasCBProgram || (hasCS && call && in.CBProgram != 0x40000000) {
					t.Errorf("frame %d: CREATE_SESSION %v, callback program %v 0x%x", m.frame, hasCS, in.HasCBProgram, in.CBProgram)
				}
				if in.IsCompound() {
					nOps += len(in.Ops)
					if !call {
						st4 = append(st4, itoa(in.Status))
						for _, op := range in.Ops {
							st4 = append(st4, itoa(uint32(op.Status)))
						}
					}
					if strings.Join(ops, ",") != strings.Join(row.opcodes, ",") {
						t.Errorf("frame %d: ops %v, tshark %v", m.frame, ops, row.opcodes)
					}
					// tshark's nfs.nfsstat4 also lists the rdattr_error
					// attributes of READDIR entries, after the READDIR status.
					tst := row.nfsstat4
					if len(tst) > len(st4) && in.Ops[len(in.Ops)-1].Code == nfs.OP_READDIR {
						tst = tst[:len(st4)]
					}
					if !call && strings.Join(st4, ",") != strings.Join(tst, ",") {
						t.Errorf("frame %d: statuses %v, tshark nfs.nfsstat4 %v", m.frame, st4, row.nfsstat4)
					}
				} else if !call && in.HasStatus && k.prog == uint32(nfs.ProgNFS) {
					if len(row.status) == 0 || row.status[0] != itoa(in.Status) {
						t.Errorf("frame %d: status %d, tshark nfs.status %v", m.frame, in.Status, row.status)
					}
				}
				nItems += len(in.Items)
				checkItems(t, m, &in, body)
				// Auto, told nothing about chunks, reaches the same verdicts
				// on these real messages.
				want := append([]nfs.Item(nil), in.Items...)
				var auto nfs.Info
				if err := auto.Decode(k.prog, k.vers, k.proc, call, body, &nfs.Reduction{Auto: true}); err != nil {
					t.Errorf("frame %d: auto: %v", m.frame, err)
				} else if fmt.Sprint(auto.Items) != fmt.Sprint(want) {
					t.Errorf("frame %d: auto items %+v, with chunks %+v", m.frame, auto.Items, want)
				}
				for _, it := range in.Items {
					if it.Reduced {
						nReduced++
					}
				}
			}
			missing := 0
			for f := range rows {
				if !seen[f] && !skipped[f] {
					missing++
					if missing < 5 {
						t.Errorf("tshark frame %d (%+v) not decoded", f, rows[f])
					}
				}
			}
			if missing > 0 {
				t.Errorf("%d tshark NFS frames not decoded", missing)
			}
			t.Logf("%d messages (%d long replies rebuilt, %d not rebuilt), %d NFSv4 ops, %d DDP-eligible items (%d reduced)",
				len(seen), nLong, len(skipped), nOps, nItems, nReduced)
			for f := range skipped {
				t.Logf("frame %d: Long Reply not rebuilt: the capture lacks some of its RDMA Write bytes", f)
			}
		})
	}
}

// checkItems checks each DDP-eligible item against the transport header
// (which this package never reads): a reduced argument starts at its Read
// chunk's position and is as long as that chunk's data; a reduced result
// is as long as the bytes the server wrote into its Write chunk; an inline
// item's length is within the body. And the procedures that have a
// DDP-eligible item produce one.
func checkItems(t *testing.T, m *rpcMsg, in *nfs.Info, body []byte) {
	t.Helper()
	ri := 0
	for _, it := range in.Items {
		if it.End() > len(body) {
			t.Errorf("frame %d: %v ends at %d past the body (%d)", m.frame, it.Kind, it.End(), len(body))
		}
		if it.Kind.IsResult() {
			if it.Reduced {
				if ri >= len(m.written) {
					t.Errorf("frame %d: %v reduced without a Write chunk", m.frame, it.Kind)
				} else if m.written[ri] != uint64(it.Length) {
					t.Errorf("frame %d: %v length %d, Write chunk %d carried %d bytes", m.frame, it.Kind, it.Length, ri, m.written[ri])
				}
			}
			ri++
			continue
		}
		if it.Reduced {
			pos := uint32(it.Offset + m.hdr.HeaderLen)
			found := false
			for i, p := range m.reads {
				if p == pos {
					found = true
					if l := m.readLen[i]; l != uint64(it.Length) && l != uint64((it.Length+3)&^3) {
						t.Errorf("frame %d: %v length %d, Read chunk at %d carries %d", m.frame, it.Kind, it.Length, p, l)
					}
				}
			}
			if !found {
				t.Errorf("frame %d: reduced %v at position %d has no Read chunk", m.frame, it.Kind, pos)
			}
		}
	}
	// Every Read chunk (but a Long Call's) must have been matched to an item.
	for _, p := range m.reads {
		if p == 0 {
			continue
		}
		ok := false
		for _, it := range in.Items {
			if it.Reduced && uint32(it.Offset+m.hdr.HeaderLen) == p {
				ok = true
			}
		}
		if !ok {
			t.Errorf("frame %d: Read chunk at position %d matches no DDP-eligible argument", m.frame, p)
		}
	}
	// A Write chunk with segments must have been used by a result item.
	used := 0
	for _, it := range in.Items {
		if it.Kind.IsResult() {
			used++
		}
	}
	if !m.hdr.HasBody() || m.hdr.MsgType != oncrpc.Reply {
		return
	}
	for i, n := range m.writes {
		if n > 0 && i >= used && (in.Stat4() == 0 && in.Stat3() == 0) {
			t.Errorf("frame %d: Write chunk %d has no DDP-eligible result", m.frame, i)
		}
	}
}
