package rpcordma

import (
	"encoding/binary"

	"github.com/rdmashark/rdmashark/dissect"
)

// Attaching RDMA operations to the chunks they serve, and rebuilding RPC
// messages from the bytes they moved (RFC 8166 sections 3.4 and 3.5).
//
// Only the Requester exposes memory and only the Responder initiates RDMA
// (RFC 8166 section 3.4.1), so an operation requested in one direction
// serves a Call sent the other way: an RDMA Read pulls a Read (or v2 Call)
// chunk of such a Call, an RDMA Write fills one of its Write chunks or its
// Reply chunk. The segment is found by handle (R_Key / STag) and address
// range; among several outstanding Calls advertising the same handle, the
// latest wins.

func readKind(k ChunkKind) bool { return k == ChunkRead || k == ChunkCall }

// rpcRDMAOp attaches op to the segment it targets.
func (e *Engine) rpcRDMAOp(p *dissect.Packet, op *dissect.RDMAOp) {
	c := op.Conn
	op.Attach = dissect.OpAttachment{Reason: dissect.UnattachedNoULP}
	if c == nil {
		return
	}
	s := e.rpc()
	s.recycle(p)
	rc := s.conns[c]
	if rc == nil {
		return
	}
	rs := rpcStats(c)
	callDir := opposite(op.Dir)
	ref, ok := rc.mem.Find(op)
	if !ok {
		e.unattached(rc, rs, op)
		return
	}
	t, ci, si := ref.Owner, int(ref.I), int(ref.J)
	op.Attach = dissect.OpAttachment{Owner: t, I: ci, J: si}
	ch := &t.call.Chunks[ci]
	sg := &ch.Segments[si]
	sg.Ops = append(sg.Ops, AttachedOp{Kind: op.Kind, FirstPacket: dissect.FirstPacket(op.Packets), LastPacket: dissect.LastPacket(op.Packets),
		Offset: op.Offset, Length: op.Length, Complete: op.Complete})
	sg.Moved += uint64(op.Length)
	if op.Kind == dissect.RDMARead {
		t.ReadBytes += uint64(op.Length)
		rs.ReadBytes[callDir.Index()] += uint64(op.Length)
	} else {
		t.WriteBytes += uint64(op.Length)
		rs.WriteBytes[op.Dir.Index()] += uint64(op.Length)
	}
	if len(op.Data) > 0 {
		e.placeChunkData(t, ci, si, op)
	}
	if op.Kind == dissect.RDMARead && !t.callDone && t.readChunksFilled() {
		e.rebuildCall(p, t)
	}
}

// unattached records an operation that no outstanding Call explains.
func (e *Engine) unattached(rc *rpcConn, rs *RPCStats, op *dissect.RDMAOp) {
	a := rc.mem.Unattached(op)
	op.Attach = a
	reason := a.Reason.String()
	rs.UnattachedOps++
	e.RPC.Unattached++
	if len(e.RPC.UnattachedOps) < MaxUnattachedRecorded {
		e.RPC.UnattachedOps = append(e.RPC.UnattachedOps, UnattachedOp{Conn: op.Conn.ID, Kind: op.Kind, Dir: op.Dir,
			FirstPacket: dissect.FirstPacket(op.Packets), LastPacket: dissect.LastPacket(op.Packets),
			STag: op.STag, Offset: op.Offset, Length: op.Length, Reason: reason})
	}
}

// skipData marks a chunk whose data is not kept.
const skipData = ^uint64(0)

// placeChunkData copies what op moved into its chunk's buffer.
func (e *Engine) placeChunkData(t *Transaction, ci, si int, op *dissect.RDMAOp) {
	s := e.rpc()
	for len(t.chunkData) <= ci {
		t.chunkData = append(t.chunkData, nil)
		t.filled = append(t.filled, 0)
		t.clean = append(t.clean, 0)
	}
	if t.filled[ci] == skipData {
		return
	}
	ch := &t.call.Chunks[ci]
	b := t.chunkData[ci]
	if cap(b) == 0 {
		total := ch.Length()
		// Chunk data counts in the one buffer budget (budget.go) as well
		// as under MaxRebuildBytes: past either it is not kept.
		if total > uint64(s.maxMsg) || s.ctr.RebuildBytes+int(total) > s.maxRebuild || !e.budget().fits(int(total)) {
			s.ctr.RebuildSkipped++
			t.filled[ci] = skipData
			return
		}
		var reused bool
		b, reused = s.spare(int(total))
		b = b[:total]
		// What no packet filled reads as zeros, as in a new buffer: a
		// reused one is cleared as it is filled (below) and read
		// (chunkBytes), where it is not already written over - clearing
		// it whole here was 2% of analyze's instructions.
		t.clean[ci] = total
		if reused {
			t.clean[ci] = 0
		}
		t.chunkData[ci] = b
		s.held(cap(b))
		e.buf.grew(0, cap(b))
	}
	var segOff uint64
	for i := 0; i < si; i++ {
		segOff += uint64(ch.Segments[i].Length)
	}
	off := segOff + (op.Offset - ch.Segments[si].Offset)
	if c := t.clean[ci]; off > c && c < uint64(len(b)) {
		clear(b[c:min(off, uint64(len(b)))])
	}
	n := copy(b[off:], op.Data)
	t.filled[ci] += uint64(n)
	t.clean[ci] = max(t.clean[ci], off+uint64(n))
}

// chunkBytes returns Call chunk ci's buffer, what no packet filled cleared.
func (t *Transaction) chunkBytes(ci int) []byte {
	return t.chunkPrefix(ci, uint64(len(t.chunkData[ci])))
}

// chunkPrefix returns Call chunk ci's buffer with its first n bytes (at
// most all) clean: what no packet filled there cleared. The bytes after
// them may hold an earlier message's.
func (t *Transaction) chunkPrefix(ci int, n uint64) []byte {
	b := t.chunkData[ci]
	n = min(n, uint64(len(b)))
	if c := t.clean[ci]; c < n {
		clear(b[c:n])
		t.clean[ci] = n
	}
	return b
}

// readChunksFilled tells whether every Read and Call chunk of the Call has
// all its bytes.
func (t *Transaction) readChunksFilled() bool {
	any := false
	for ci := range t.call.Chunks {
		ch := &t.call.Chunks[ci]
		if !readKind(ch.Kind) {
			continue
		}
		any = true
		if ci >= len(t.filled) || t.filled[ci] == skipData || t.filled[ci] < ch.Length() {
			return false
		}
	}
	return any
}

var zeros [4]byte

// rebuildCall puts a Call together from its inline part and its Read
// chunks: a position-zero chunk (or a version 2 Call chunk) is the whole
// Call; other chunks are reinserted at their positions in the unreduced
// Payload stream, each followed by the XDR roundup the sender left out
// (RFC 8166 section 3.4.5, draft-07 "Read Chunks" and "XDR Roundup").
func (e *Engine) rebuildCall(p *dissect.Packet, t *Transaction) {
	s := e.rpc()
	t.callDone = true
	var msg []byte
	src := ChunkRead
	for ci := range t.call.Chunks {
		ch := &t.call.Chunks[ci]
		if readKind(ch.Kind) && ch.Position == 0 {
			msg = t.chunkBytes(ci)
			if ch.Kind == ChunkCall {
				src = ChunkCall
			}
			break
		}
	}
	if msg == nil {
		var total int
		for ci := range t.call.Chunks {
			if ch := &t.call.Chunks[ci]; ch.Kind == ChunkRead {
				total += int(ch.Length()) + 3
			}
		}
		out := s.buf(len(t.callRPC) + total)
		inline := t.callRPC
		from, inserted := 0, 0
		for ci := range t.call.Chunks {
			ch := &t.call.Chunks[ci]
			if ch.Kind != ChunkRead {
				continue
			}
			at := int(ch.Position) - inserted
			if at < from || at > len(inline) {
				// A position outside the inline part: not rebuildable.
				s.release(out)
				rpcStats(t.Conn).RebuildIncomplete++
				return
			}
			out = append(out, inline[from:at]...)
			from = at
			data := t.chunkBytes(ci)
			out = append(out, data...)
			pad := (4 - len(data)%4) % 4
			out = append(out, zeros[:pad]...)
			inserted += len(data) + pad
		}
		out = append(out, inline[from:]...)
		s.release(t.rebuilt)
		t.rebuilt = out
		msg = out
	}
	rec := s.record(p)
	rec.Dir, rec.XID, rec.Backchannel = t.callDir, t.XID, t.Direction == RPCBackchannel
	e.decodeWhole(p, rec, t, msg, false, src)
}

// gatherChunk returns the bytes written into the Call's chunk of kind k
// (the Reply chunk), as long as the Reply says was written, when the
// capture holds them all.
func (e *Engine) gatherChunk(t *Transaction, k ChunkKind) ([]byte, bool) {
	if t.Call == nil {
		return nil, false
	}
	ci := -1
	for i := range t.call.Chunks {
		if t.call.Chunks[i].Kind == k {
			ci = i
		}
	}
	var written *Chunk
	for i := range t.reply.Chunks {
		if t.reply.Chunks[i].Kind == k {
			written = &t.reply.Chunks[i]
		}
	}
	if ci < 0 || written == nil || ci >= len(t.chunkData) || t.filled[ci] == skipData {
		return nil, false
	}
	return e.writtenData(t, ci, written)
}

// writtenData concatenates, segment by segment, the bytes the Reply says
// were written into Call chunk ci.
func (e *Engine) writtenData(t *Transaction, ci int, written *Chunk) ([]byte, bool) {
	s := e.rpc()
	ch := &t.call.Chunks[ci]
	total := written.Length()
	if ci >= len(t.chunkData) || t.filled[ci] == skipData || t.filled[ci] < total {
		return nil, false
	}
	// Only the written part of each segment is read: clear no further
	// than the last (a READ's Write chunk is mostly larger than the data).
	var end, off uint64
	for i := range ch.Segments {
		if i < len(written.Segments) {
			if w := min(uint64(written.Segments[i].Length), uint64(ch.Segments[i].Length)); w > 0 {
				end = off + w
			}
		}
		off += uint64(ch.Segments[i].Length)
	}
	data := t.chunkPrefix(ci, end)
	out := s.buf(int(total))
	off = 0
	for i := range ch.Segments {
		if i < len(written.Segments) {
			w := uint64(written.Segments[i].Length)
			if w > uint64(ch.Segments[i].Length) {
				w = uint64(ch.Segments[i].Length)
			}
			out = append(out, data[off:off+w]...)
		}
		off += uint64(ch.Segments[i].Length)
	}
	s.release(t.rebuilt)
	t.rebuilt = out
	return out, true
}

// rebuildReduced puts the results a Reply moved by Write chunks back into
// its reduced inline message: where each belongs the ULP decoder says (RFC
// 8267 for NFS); without one, a single Write chunk whose written length is
// the message's last XDR word (the opaque length of a READ result at the
// end of the Reply, as NFSv3 READ and NFSv4 COMPOUNDs ending in READ have
// it) goes at the end.
func (e *Engine) rebuildReduced(rec *RPCRecord, rs *RPCStats, t *Transaction, inline []byte) {
	s := e.rpc()
	if t.Call == nil {
		return
	}
	body := len(inline) - len(rec.RPC.Payload())
	type ins struct {
		at   int
		data []byte
	}
	var parts [8]ins
	n, wi := 0, 0
	defer func() {
		for _, pt := range parts[:n] {
			s.release(pt.data)
		}
	}()
	callW := 0
	for ri := range t.reply.Chunks {
		wc := &t.reply.Chunks[ri]
		if wc.Kind != ChunkWrite {
			continue
		}
		// The Reply's Nth Write chunk echoes the Call's Nth (RFC 8166
		// section 3.4.6).
		ci := -1
		for k, seen := 0, 0; k < len(t.call.Chunks); k++ {
			if t.call.Chunks[k].Kind == ChunkWrite {
				if seen == callW {
					ci = k
					break
				}
				seen++
			}
		}
		callW++
		idx := wi
		wi++
		if wc.Length() == 0 {
			continue
		}
		if ci < 0 || n == len(parts) {
			rs.RebuildIncomplete++
			return
		}
		data, ok := e.writtenData(t, ci, wc)
		if !ok {
			rs.RebuildIncomplete++
			return
		}
		// writtenData parks its result in t.rebuilt; keep it apart.
		t.rebuilt = nil
		at := -1
		if offs := rec.ULP.WriteChunkOffsets; idx < len(offs) {
			at = body + offs[idx]
		} else if len(inline) >= 4 && binary.BigEndian.Uint32(inline[len(inline)-4:]) == uint32(len(data)) {
			at = len(inline)
		}
		if at < body || at > len(inline) || (n > 0 && at < parts[n-1].at) {
			s.release(data)
			rs.RebuildIncomplete++
			return
		}
		parts[n] = ins{at, data}
		n++
	}
	if n == 0 {
		return
	}
	total := len(inline)
	for _, pt := range parts[:n] {
		total += len(pt.data) + 3
	}
	out := s.buf(total)
	from := 0
	for _, pt := range parts[:n] {
		out = append(out, inline[from:pt.at]...)
		out = append(out, pt.data...)
		out = append(out, zeros[:(4-len(pt.data)%4)%4]...)
		from = pt.at
	}
	out = append(out, inline[from:]...)
	s.release(t.rebuilt)
	t.rebuilt = out
	t.reply.Rebuilt = true
	t.reply.RPCBytes = len(out)
	rec.Rebuilt, rec.Source, rec.RPCLength, rec.Message = true, ChunkWrite, len(out), out
	e.RPC.Rebuilt++
	rs.Rebuilt++
	if err := s.check.DecodeFromBytes(out); err != nil || s.check.XID != t.XID {
		e.RPC.RebuiltBad++
	}
}
