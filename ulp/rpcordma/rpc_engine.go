package rpcordma

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// recentTxns is how many finished transactions a connection remembers.
const recentTxns = 32

// txnKey is the direction the Call went (its Index()) and the XID, in one
// word: the map of outstanding Calls is looked up for every RPC message,
// and a uint64 key hashes on the map's fast path (a two-field struct went
// through the generic hash, ~2% of analyze's CPU profile).
type txnKey uint64

func newTxnKey(dir uint8, xid uint32) txnKey { return txnKey(uint64(dir)<<32 | uint64(xid)) }

func (k txnKey) dir() uint8 { return uint8(k >> 32) }

// recentTxn remembers a finished transaction: replies and operations that
// come after it are named, not lost.
type recentTxn struct {
	key                         txnKey
	hasProgram                  bool
	program, version, procedure uint32
	callPacket                  int
	callTime                    time.Time
}

type rpcConn struct {
	out map[txnKey]*Transaction
	// mem indexes the segments of the outstanding Calls (memory.go). Its
	// unknown requests are the XIDs of the last messages whose transport
	// header did not decode and that answer no outstanding Call: Calls
	// whose chunk lists are unknown, until a Reply with their XID comes
	// the other way.
	mem    dissect.Memory[*Transaction]
	recent [recentTxns]recentTxn
	nrec   int
	// order holds the Calls in the order they opened, from head on, for
	// eviction (oldest); entries of Calls over since are skipped and
	// dropped as the front reaches them, or compacted away.
	order []orderRef
	head  int
}

// orderRef is an open Call in rpcConn.order: the Transaction and the seq
// it had then (a Transaction is reused for a later Call).
type orderRef struct {
	t   *Transaction
	seq uint64
}

// live reports whether the Call r names is still open on rc.
func (rc *rpcConn) live(r orderRef) bool {
	t := r.t
	return t.seq == r.seq && t.Call != nil && rc.out[newTxnKey(uint8(t.callDir.Index()), t.XID)] == t
}

// opened records a Call just opened.
func (rc *rpcConn) opened(t *Transaction) {
	for rc.head < len(rc.order) && !rc.live(rc.order[rc.head]) {
		rc.order[rc.head] = orderRef{}
		rc.head++
	}
	if n := len(rc.order) - rc.head; n > 2*len(rc.out)+16 || rc.head > len(rc.order)/2 && rc.head > 16 {
		// Compact: keep the live entries, in order.
		out := rc.order[:0]
		for _, r := range rc.order[rc.head:] {
			if rc.live(r) {
				out = append(out, r)
			}
		}
		clear(rc.order[len(out):])
		rc.order, rc.head = out, 0
	}
	rc.order = append(rc.order, orderRef{t, t.seq})
}

// oldest returns the Call open longest (rc.out is not empty).
func (rc *rpcConn) oldest() *Transaction {
	for rc.head < len(rc.order) {
		r := rc.order[rc.head]
		if rc.live(r) {
			return r.t
		}
		rc.order[rc.head] = orderRef{}
		rc.head++
	}
	// Not reached while every open Call is in order; stay correct anyway.
	var oldest *Transaction
	for _, t := range rc.out {
		if oldest == nil || t.seq < oldest.seq {
			oldest = t
		}
	}
	return oldest
}

type rpcState struct {
	conns      map[*dissect.Connection]*rpcConn
	maxTxn     int
	maxRebuild int
	maxMsg     int
	ulp        rpcrdma.UpperLayerBinding
	free       []*Transaction
	bufs       [][]byte
	spareLarge int // bytes of the spares in bufs larger than rpcSpareBufMax
	pendTxn    []*Transaction
	pendBuf    [][]byte
	lastPacket int
	seq        uint64
	scratch    RPCRecord
	query      ULPQuery
	check      oncrpc.Header
	ctr        *RPCCounters
	recs       recordSet // the current packet's records (Records)
}

func (e *Engine) rpc() *rpcState {
	s := &e.rpcs
	if s.conns == nil {
		s.conns = map[*dissect.Connection]*rpcConn{}
		s.ctr = &e.RPC
		// NewEngine filled the defaults (Env).
		s.maxTxn, s.maxRebuild, s.maxMsg = e.opts.MaxTransactions, e.opts.MaxRebuildBytes, e.opts.MaxMessageBytes
		s.ulp = e.opts.ULP
	}
	return s
}

// recycle returns the buffers and transactions finished on an earlier
// packet to the pools: what a packet's records point to stays intact until
// the next packet.
func (s *rpcState) recycle(p *dissect.Packet) {
	if p == nil || p.Number == s.lastPacket {
		return
	}
	s.lastPacket = p.Number
	// Loops, not append(s.free, s.pendTxn...) and clear: for the one or no
	// transaction of most packets, typedslicecopy and memclrHasPointers
	// with their write barriers cost more than the work.
	for i, t := range s.pendTxn {
		s.free = append(s.free, t)
		s.pendTxn[i] = nil
	}
	s.pendTxn = s.pendTxn[:0]
	for i, b := range s.pendBuf {
		// Small buffers are kept for reuse (no allocation per message);
		// large ones go back to the runtime, so that the spares stay
		// within 64 x 64 KiB (docs/streaming.md, fixed overhead).
		// Large ones (chunk data, rebuilt messages) are kept too within
		// rpcSpareLargeMax bytes: made anew for every NFS READ or WRITE,
		// they were 92% of analyze's allocated bytes.
		switch {
		case len(s.bufs) >= 64:
		case cap(b) <= rpcSpareBufMax:
			s.bufs = append(s.bufs, b[:0])
		case s.spareLarge+cap(b) <= rpcSpareLargeMax:
			s.spareLarge += cap(b)
			s.bufs = append(s.bufs, b[:0])
		}
		s.pendBuf[i] = nil
	}
	s.pendBuf = s.pendBuf[:0]
}

// rpcSpareBufMax is the largest buffer the RPC layer keeps for reuse.
const rpcSpareBufMax = 64 << 10

// rpcSpareLargeMax bounds the bytes of the larger spare buffers.
const rpcSpareLargeMax = 4 << 20

// buf returns an empty buffer with room for n bytes.
// A small request never takes a large spare.
func (s *rpcState) buf(n int) []byte {
	b, _ := s.spare(n)
	return b
}

// spare is buf, saying whether the buffer is a spare (its bytes those of
// an earlier message) rather than new (zeroed).
func (s *rpcState) spare(n int) ([]byte, bool) {
	best := -1
	for i, b := range s.bufs {
		if cap(b) >= n && (best < 0 || cap(b) < cap(s.bufs[best])) &&
			(n <= rpcSpareBufMax) == (cap(b) <= rpcSpareBufMax) {
			best = i
		}
	}
	if best < 0 {
		return make([]byte, 0, n), false
	}
	b := s.bufs[best]
	s.bufs[best] = s.bufs[len(s.bufs)-1]
	s.bufs = s.bufs[:len(s.bufs)-1]
	if cap(b) > rpcSpareBufMax {
		s.spareLarge -= cap(b)
	}
	return b[:0], true
}

func (s *rpcState) release(b []byte) {
	if cap(b) > 0 {
		s.pendBuf = append(s.pendBuf, b)
	}
}

func (s *rpcState) record(p *dissect.Packet) *RPCRecord {
	if p == nil {
		r := &s.scratch
		hdr, rpc, ulp := r.Header, r.RPC, r.ULP
		*r = RPCRecord{Header: hdr, RPC: rpc, ULP: ulp}
		r.ULP.Reset()
		return r
	}
	return s.recs.newRecord(p)
}

func (s *rpcState) conn(c *dissect.Connection) *rpcConn {
	rc := s.conns[c]
	if rc == nil {
		rc = &rpcConn{out: map[txnKey]*Transaction{}}
		s.conns[c] = rc
	}
	return rc
}

// msgKind is what a transport header conveys.
type msgKind uint8

const (
	kindUnknown msgKind = iota // an RPC message whose header did not say
	kindCall
	kindReply
	kindError   // RDMA_ERROR / RDMA2_ERROR: answers the Call with its XID
	kindControl // RDMA_DONE, RDMA2_GRANT, RDMA2_CONNPROP_*
)

func (k msgKind) public() RPCKind {
	switch k {
	case kindCall:
		return RPCKindCall
	case kindReply:
		return RPCKindReply
	case kindError:
		return RPCKindError
	case kindControl:
		return RPCKindControl
	}
	return RPCKindUnknown
}

// hdrView is a transport header of either version, reduced to what the
// transaction logic needs.
type hdrView struct {
	xid, vers, credit, proc uint32
	invHandle               uint32 // v2 rdma_inv_handle
	chunks                  *rpcrdma.ChunkLists
	callList                []rpcrdma.ReadSegment // v2 Call chunk
	rpc                     []byte                // the RPC message (part) in the Send
	kind                    msgKind
	long                    bool // RDMA_NOMSG, RDMA2_*_EXTERNAL
	middle                  bool // RDMA2_*_MIDDLE: more of the message follows
}

func viewOf(h *rpcrdma.Message) hdrView {
	v := hdrView{xid: h.XID(), vers: h.Vers, credit: h.Credit(), chunks: h.Chunks(), rpc: h.RPCMessage()}
	if h.Vers == rpcrdma.Version2 {
		v.proc = uint32(h.V2.HType)
		switch t := h.V2.HType; {
		case t == rpcrdma.HTypeError:
			v.kind = kindError
		case t.IsControl():
			v.kind = kindControl
		case t.IsCall():
			v.kind = kindCall
		case t.IsReply():
			v.kind = kindReply
		}
		v.invHandle = h.V2.InvHandle
		switch h.V2.HType {
		case rpcrdma.HTypeCallExternal:
			v.long, v.callList = true, h.V2.CallList
		case rpcrdma.HTypeReplyExternal:
			v.long = true
		case rpcrdma.HTypeCallMiddle, rpcrdma.HTypeReplyMiddle:
			v.middle = true
		}
		return v
	}
	v.proc = uint32(h.V1.Proc)
	switch h.V1.Proc {
	case rpcrdma.RDMAMsg, rpcrdma.RDMAMsgp:
		// The RPC header says.
	case rpcrdma.RDMANoMsg:
		v.long = true
		v.kind = kindReply
		for _, rc := range v.chunks.ReadChunks {
			if rc.Position == 0 {
				v.kind = kindCall // a Long Call: the Call is in the position-zero Read chunk
			}
		}
	case rpcrdma.RDMAError:
		v.kind = kindError
	default:
		v.kind = kindControl
	}
	return v
}

// plausible tells whether a header that decoded on a connection not known
// to carry RPC-over-RDMA looks like one.
func plausible(v *hdrView, rpcOK bool, rpc *oncrpc.Header) bool {
	switch v.kind {
	case kindError, kindCall, kindReply, kindUnknown:
	default:
		return false
	}
	if len(v.rpc) > 0 || (!v.long && v.kind != kindError) {
		return rpcOK && rpc.XID == v.xid
	}
	if v.long {
		return v.chunks.SegmentCount()+len(v.callList) > 0
	}
	return true
}

func opposite(d dissect.Direction) dissect.Direction {
	if d == dissect.DirServerToClient {
		return dissect.DirClientToServer
	}
	return dissect.DirServerToClient
}

func rpcStats(c *dissect.Connection) *RPCStats {
	if rs, ok := c.ULPData.(*RPCStats); ok {
		return rs
	}
	rs := &RPCStats{}
	c.ULPData = rs
	return rs
}

// rpcMessage decodes the transport header of a reassembled Send and moves
// the connection's transactions on.
func (e *Engine) rpcMessage(p *dissect.Packet, m *dissect.Message) {
	c := m.Conn
	s := e.rpc()
	s.recycle(p)
	rc := s.conn(c)
	rec := s.record(p)
	rec.Dir, rec.HasHeader, rec.Length, rec.Truncated = m.Dir, true, m.Length, m.Truncated
	rec.Invalidate, rec.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
	rec.Send, rec.SendPackets = m.Data, len(m.Packets)
	herr := rec.Header.DecodeFromBytes(m.Data)
	common, cerr := rpcrdma.ParseCommon(m.Data)
	rec.PrefixOK, rec.Common = cerr == nil, common
	rec.XID = common.XID
	var v hdrView
	rpcOK := false
	if herr == nil {
		v = viewOf(&rec.Header)
		if len(v.rpc) > 0 {
			rec.RPCErr = rec.RPC.DecodeFromBytes(v.rpc)
			rpcOK = rec.RPCErr == nil
		}
	}
	rec.inlineRPC = herr == nil && len(v.rpc) > 0
	m.ULP = rec
	d := m.Dir.Index()
	rs := rpcStats(c)
	rs.Messages[d]++
	rs.SendBytes[d] += uint64(m.Length)
	e.RPC.Messages++
	if rec.PrefixOK {
		vi := 0
		if common.Vers == rpcrdma.Version1 || common.Vers == rpcrdma.Version2 {
			vi = int(common.Vers)
			switch {
			case rs.Version == 0:
				rs.Version = common.Vers
			case rs.versRefused && common.Vers != rs.Version && herr == nil && common.Type != uint32(rpcrdma.RDMAError):
				// The first message after an ERR_VERS in another version:
				// the fallback.
				rs.Version, rs.versRefused = common.Vers, false
			}
			if herr == nil && isErrVers(&rec.Header) {
				rs.versRefused = true
			}
		}
		rs.Versions[vi]++
	}
	if herr != nil {
		rec.HeaderErr = herr
		rs.BadHeaders[d]++
		e.RPC.BadHeaders++
		if rs.FirstBadHeader == "" {
			rs.FirstBadHeader = fmt.Sprintf("packet %d: %v", dissect.LastPacket(m.Packets), herr)
		}
		if rec.PrefixOK && rc.out[newTxnKey(uint8(1-d), common.XID)] == nil {
			// Not the answer to a Call we hold: a Call whose chunk lists
			// are unknown, as far as its RDMA operations can tell.
			rc.mem.Unknown(m.Dir, uint64(common.XID))
		}
		return
	}
	if v.long && v.vers == rpcrdma.Version1 && v.kind == kindReply && m.Dir == dissect.DirClientToServer {
		// An RDMA_NOMSG without a position-zero Read chunk, from the
		// client: a Long Call that lacks its chunk (CHUNK-LONG-CALL says
		// so), not a Reply — backchannel messages, the client's Replies,
		// are always Short (RFC 8167 section 4; RFC 8267 section 5.5.2).
		v.kind = kindCall
	}
	if v.kind == kindUnknown {
		// An RDMA_MSG whose RPC header did not decode: its msg_type word
		// when there is one (RFC 5531 section 9), else a Reply if a Call
		// with its XID waits on the other side, else a Call.
		v.kind = kindCall
		if rc.out[newTxnKey(uint8(1-d), v.xid)] != nil {
			v.kind = kindReply
		}
		if len(v.rpc) >= 8 {
			switch oncrpc.MsgType(binary.BigEndian.Uint32(v.rpc[4:])) {
			case oncrpc.Call:
				v.kind = kindCall
			case oncrpc.Reply:
				v.kind = kindReply
			}
		}
	}
	if rpcOK && !v.long && v.vers != rpcrdma.Version2 { // v2: the htype says (a later piece starts mid-message)
		if rec.RPC.MsgType == oncrpc.Call {
			v.kind = kindCall
		} else {
			v.kind = kindReply
		}
	}
	rec.XID = v.xid
	rec.Kind = v.kind.public()
	if v.vers == rpcrdma.Version2 {
		rs.V2Sent[d]++
		rs.CreditLimits[d] = v.credit
		rs.MaxCreditLimits[d] = max(rs.MaxCreditLimits[d], v.credit)
		rs.noteV2(d, &rec.Header.V2, dissect.LastPacket(m.Packets))
	}
	switch {
	case v.kind == kindControl:
		rs.Control[d]++
		return
	case v.long:
		rs.Long[d]++
	case len(v.chunks.ReadList) > 0 || len(v.chunks.WriteList) > 0:
		rs.Chunked[d]++
	default:
		rs.Short[d]++
	}
	switch v.kind {
	case kindCall:
		e.rpcCall(p, rec, rc, rs, m, &v, rpcOK)
	case kindReply, kindError:
		e.rpcReply(p, rec, rc, rs, m, &v, rpcOK)
	}
}

// newTxn takes a transaction from the pool.
func (s *rpcState) newTxn() *Transaction {
	var t *Transaction
	if n := len(s.free); n > 0 {
		t, s.free = s.free[n-1], s.free[:n-1]
	} else {
		t = &Transaction{}
	}
	s.seq++
	t.reset(s.seq)
	return t
}

// reset clears t for a new Call numbered seq, keeping its slices' storage.
// It assigns field by field: a composite literal copied over t (with its
// write barriers) was ~390 instructions a Call. TestTxnResetClearsEveryField
// fails when a field added to Transaction or RPCSide is not cleared here.
func (t *Transaction) reset(seq uint64) {
	t.XID, t.Conn, t.Direction = 0, nil, 0
	t.HasProgram, t.Program, t.Version, t.Procedure = false, 0, 0, 0
	t.ProcedureName, t.Operations = "", t.Operations[:0]
	t.HasFH, t.FHHash, t.Name = false, 0, t.Name[:0]
	t.ReplyHasFH, t.ReplyFHHash = false, 0
	t.Call, t.Reply = nil, nil
	t.ReadBytes, t.WriteBytes, t.Latency, t.Outcome = 0, 0, 0, 0
	t.call.reset()
	t.reply.reset()
	t.callDir, t.callRPC, t.chunkData, t.filled = 0, nil, t.chunkData[:0], t.filled[:0]
	t.clean, t.rebuilt, t.replyParts, t.callDone, t.seq = t.clean[:0], nil, nil, false, seq
}

// reset clears sd, keeping its slices' storage.
func (sd *RPCSide) reset() {
	sd.Packets, sd.Time, sd.Vers, sd.Proc, sd.Credits = sd.Packets[:0], time.Time{}, 0, 0, 0
	sd.InvHandle, sd.Chunks, sd.InlineBytes, sd.RPCBytes, sd.Rebuilt = 0, sd.Chunks[:0], 0, 0, false
	sd.RPCPacket, sd.RPCTime, sd.Invalidate, sd.InvalidatedSTag = 0, time.Time{}, false, 0
	sd.HasStatus, sd.ReplyStat, sd.AcceptStat = false, 0, 0
}

// fill records a Send's transport header in one side of a transaction.
func (sd *RPCSide) fill(m *dissect.Message, v *hdrView, hdrLen int) {
	sd.Packets = append(sd.Packets[:0], m.Packets...)
	sd.Time = m.Time
	sd.Vers, sd.Proc, sd.Credits, sd.InvHandle = v.vers, v.proc, v.credit, v.invHandle
	sd.Invalidate, sd.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
	sd.InlineBytes = len(v.rpc)
	if len(v.rpc) == 0 && !v.long && m.Length > hdrLen {
		sd.InlineBytes = m.Length - hdrLen
	}
	sd.Chunks = sd.Chunks[:0]
	sd.addChunks(v)
}

// addChunks records the chunk lists of a transport header.
func (sd *RPCSide) addChunks(v *hdrView) {
	if len(v.callList) > 0 {
		ch := sd.addChunk(ChunkCall, 0)
		for _, rs := range v.callList {
			ch.addSegment(rs.Segment, rs.Position)
		}
	}
	for _, rcnk := range v.chunks.ReadChunks {
		ch := sd.addChunk(ChunkRead, rcnk.Position)
		for _, sg := range rcnk.Segments {
			ch.addSegment(sg, rcnk.Position)
		}
	}
	for _, wc := range v.chunks.WriteList {
		ch := sd.addChunk(ChunkWrite, 0)
		for _, sg := range wc.Segments {
			ch.addSegment(sg, 0)
		}
	}
	if v.chunks.HasReplyChunk {
		ch := sd.addChunk(ChunkReply, 0)
		for _, sg := range v.chunks.ReplyChunk.Segments {
			ch.addSegment(sg, 0)
		}
	}
}

func (sd *RPCSide) addChunk(k ChunkKind, pos uint32) *Chunk {
	n := len(sd.Chunks)
	if n < cap(sd.Chunks) {
		sd.Chunks = sd.Chunks[:n+1]
	} else {
		sd.Chunks = append(sd.Chunks, Chunk{})
	}
	ch := &sd.Chunks[n]
	ch.Kind, ch.Position, ch.Segments = k, pos, ch.Segments[:0]
	return ch
}

func (ch *Chunk) addSegment(sg rpcrdma.Segment, pos uint32) {
	n := len(ch.Segments)
	if n < cap(ch.Segments) {
		ch.Segments = ch.Segments[:n+1]
	} else {
		ch.Segments = append(ch.Segments, Segment{})
	}
	// Field by field, as Transaction.reset (a test checks every field).
	seg := &ch.Segments[n]
	seg.Handle, seg.Length, seg.Offset, seg.Position = sg.Handle, sg.Length, sg.Offset, pos
	seg.Ops, seg.Moved = seg.Ops[:0], 0
}

// rpcCall opens a transaction for a Call.
func (e *Engine) rpcCall(p *dissect.Packet, rec *RPCRecord, rc *rpcConn, rs *RPCStats, m *dissect.Message, v *hdrView, rpcOK bool) {
	s := e.rpc()
	d := m.Dir.Index()
	key := newTxnKey(uint8(d), v.xid)
	rec.Backchannel = m.Dir == dissect.DirServerToClient
	if old := rc.out[key]; old != nil {
		if old.callContinues() && v.vers == rpcrdma.Version2 {
			// The next part of a version 2 Call split over several Sends.
			rec.Txn, rec.Outstanding, rec.Continued = old, rs.OutstandingCalls[d], true
			e.continueCall(p, rec, rc, old, m, v)
			return
		}
		e.finishTxn(old, TxnSuperseded)
	}
	for len(rc.out) > 0 && (len(rc.out) >= s.maxTxn || !e.budgetView.ExchangeFits()) {
		// Past the connection's bound, or the buffer budget (an open
		// exchange counts ExchangeCost in it): the oldest Call is given
		// up.
		e.finishTxn(rc.oldest(), TxnEvicted)
	}
	t := s.newTxn()
	t.XID, t.Conn, t.callDir = v.xid, m.Conn, m.Dir
	t.Direction = RPCForward
	if m.Dir == dissect.DirServerToClient {
		t.Direction = RPCBackchannel
	}
	t.Call = &t.call
	t.call.fill(m, v, rec.Header.HeaderLen())
	rc.out[key] = t
	rc.opened(t)
	e.budgetView.Opened()
	rs.OutstandingCalls[d]++
	rec.Txn, rec.Outstanding = t, rs.OutstandingCalls[d]
	rc.register(t)
	rs.Outstanding++
	rs.Calls[d]++
	e.RPC.Calls++
	if v.vers == rpcrdma.Version1 {
		rs.CreditsRequested[d] = v.credit
		if v.credit > rs.MaxCreditsRequested[d] {
			rs.MaxCreditsRequested[d] = v.credit
		}
	}
	if rpcOK && rec.RPC.MsgType == oncrpc.Call {
		t.setProgram(&rec.RPC)
	}
	needsChunks := false
	for i := range t.call.Chunks {
		if k := t.call.Chunks[i].Kind; k == ChunkRead || k == ChunkCall {
			needsChunks = true
		}
	}
	switch {
	case v.middle:
		// A version 2 Call continued in later Sends: keep the part.
		t.callRPC = append(s.bufFor(t.callRPC, len(v.rpc)), v.rpc...)
		t.call.InlineBytes = len(v.rpc)
	case needsChunks:
		// Part of the Call moves by RDMA Read: it is decoded when the
		// Responder has pulled the chunks (rpcRDMAOp). Keep the inline part.
		if len(v.rpc) > 0 {
			t.callRPC = append(s.bufFor(t.callRPC, len(v.rpc)), v.rpc...)
		}
		rec.ReducedRPC = rpcOK
		if rpcOK {
			// Name what the inline part shows; the whole Call is decoded
			// again once rebuilt.
			e.ulpDecode(rec, t, rec.RPC.Payload(), false)
		}
	case len(v.rpc) > 0:
		rec.HasRPC = true
		rec.RPCLength = len(v.rpc)
		rec.Message = v.rpc
		t.call.RPCBytes = len(v.rpc)
		t.call.RPCPacket = dissect.LastPacket(m.Packets)
		t.call.RPCTime = m.Time
		if rpcOK {
			e.ulpDecode(rec, t, rec.RPC.Payload(), false)
		}
	}
}

func (t *Transaction) callContinues() bool {
	return t.Call != nil && t.call.Vers == rpcrdma.Version2 && rpcrdma.HType(t.call.Proc) == rpcrdma.HTypeCallMiddle
}

// continueCall appends the next part of a version 2 Call (draft-07
// "Message Continuation").
func (e *Engine) continueCall(p *dissect.Packet, rec *RPCRecord, rc *rpcConn, t *Transaction, m *dissect.Message, v *hdrView) {
	s := e.rpc()
	t.call.Packets = append(t.call.Packets, m.Packets...)
	t.call.Proc = v.proc
	t.call.Time = m.Time
	t.call.InlineBytes += len(v.rpc)
	if len(t.callRPC)+len(v.rpc) <= s.maxMsg {
		t.callRPC = append(s.bufFor(t.callRPC, len(t.callRPC)+len(v.rpc)), v.rpc...)
	}
	if v.middle {
		return
	}
	// The last piece (RDMA2_CALL_INLINE) carries the Call's
	// rdma_inv_handle and chunk lists; RDMA2_CALL_MIDDLE has neither.
	t.call.InvHandle = v.invHandle
	if v.chunks.SegmentCount() > 0 {
		rc.unregister(t)
		t.call.addChunks(v)
		rc.register(t)
	}
	// The last part: the Call is whole unless chunks still follow.
	for i := range t.call.Chunks {
		if k := t.call.Chunks[i].Kind; k == ChunkRead || k == ChunkCall {
			return
		}
	}
	e.decodeWhole(p, rec, t, t.callRPC, false, 0)
}

// bufFor makes b a pool buffer with room for n bytes, keeping its content.
func (s *rpcState) bufFor(b []byte, n int) []byte {
	if cap(b) >= n {
		return b
	}
	nb := s.buf(2 * n)
	nb = append(nb, b...)
	s.release(b)
	return nb
}

func (t *Transaction) setProgram(h *oncrpc.Header) {
	t.HasProgram = true
	t.Program, t.Version, t.Procedure = uint32(h.Prog), h.Vers, h.Proc
}

// ulpDecode hands an RPC body to the ULP decoder, recording what it says in
// rec and, for a Call, in t.
func (e *Engine) ulpDecode(rec *RPCRecord, t *Transaction, body []byte, reply bool) {
	s := e.rpc()
	if s.ulp == nil || t == nil || !t.HasProgram {
		return
	}
	q := &s.query
	q.Reset() // field by field: a composite literal of the query cost ~60 instructions a message
	q.Reply, q.Program, q.Version, q.Procedure, q.Known = reply, t.Program, t.Version, t.Procedure, true
	q.Body, q.Want = body, e.want
	if !reply && !t.callDone {
		for i := range t.call.Chunks {
			if ch := &t.call.Chunks[i]; ch.Kind == ChunkRead && ch.Position > 0 {
				q.Reduced = true
				q.ReadPositions = append(q.ReadPositions, ch.Position)
			}
		}
		if q.Reduced {
			q.HeaderLen = len(t.callRPC) - len(body)
		}
	}
	if reply && t.Reply != nil {
		for i := range t.reply.Chunks {
			if ch := &t.reply.Chunks[i]; ch.Kind == ChunkWrite {
				q.Reduced = true
				q.WriteChunks = append(q.WriteChunks, uint32(ch.Length()))
			}
		}
	}
	s.ulp.Decode(q, &rec.ULP)
	if !reply {
		t.ProcedureName = rec.ULP.Procedure
		t.Operations = append(t.Operations[:0], rec.ULP.Operations...)
		t.HasFH, t.FHHash = rec.ULP.Object.HasFH, rec.ULP.Object.FHHash
		if e.want&rpcrdma.WantObject != 0 {
			t.Name = append(t.Name[:0], rec.ULP.ObjectName()...)
		}
	} else {
		if t.ProcedureName == "" {
			t.ProcedureName = rec.ULP.Procedure
		}
		t.ReplyHasFH, t.ReplyFHHash = rec.ULP.Object.HasFH, rec.ULP.Object.FHHash
	}
}

// rpcReply pairs a Reply (or an RDMA_ERROR) with its Call and ends the
// transaction.
func (e *Engine) rpcReply(p *dissect.Packet, rec *RPCRecord, rc *rpcConn, rs *RPCStats, m *dissect.Message, v *hdrView, rpcOK bool) {
	s := e.rpc()
	d := m.Dir.Index()
	rec.Reply = true
	rec.Backchannel = m.Dir == dissect.DirClientToServer
	key := newTxnKey(uint8(1-d), v.xid)
	rec.CallUndecoded = rc.mem.Known(opposite(m.Dir), uint64(v.xid))
	t := rc.out[key]
	if t != nil && v.vers == rpcrdma.Version2 && t.Reply != nil {
		// The next part of a version 2 Reply split over several Sends.
		rec.Txn, rec.Continued = t, true
		e.continueReply(p, rec, rs, t, m, v)
		return
	}
	if t == nil {
		t = s.newTxn()
		t.XID, t.Conn, t.callDir = v.xid, m.Conn, opposite(m.Dir)
		t.Direction = RPCForward
		if m.Dir == dissect.DirClientToServer {
			t.Direction = RPCBackchannel
		}
		if r := rc.findRecent(key); r != nil {
			rec.CallPacket, rec.CallTime = r.callPacket, r.callTime
			if r.hasProgram {
				t.HasProgram, t.Program, t.Version, t.Procedure = true, r.program, r.version, r.procedure
			}
		}
	} else {
		rec.CallPacket, rec.CallTime = t.call.callFrame()
	}
	rec.HasProgram, rec.Program, rec.Version, rec.Procedure = t.HasProgram, t.Program, t.Version, t.Procedure
	rec.Txn = t
	if m.Invalidate {
		rec.InvalidatedOwner, _ = rc.mem.Owner(m.InvalidatedSTag, t.callDir, t)
	}
	t.Reply = &t.reply
	t.reply.fill(m, v, rec.Header.HeaderLen())
	if v.kind == kindError {
		rs.Errors[d]++
	} else {
		rs.Replies[d]++
		e.RPC.Replies++
	}
	if v.vers == rpcrdma.Version1 {
		rs.Grants[d]++
		rs.CreditsGranted[d] = v.credit
		if v.credit > rs.MaxCreditsGranted[d] {
			rs.MaxCreditsGranted[d] = v.credit
		}
	}
	if m.Invalidate {
		rs.RepliesWithInvalidate++
	} else {
		rs.RepliesWithoutInvalidate++
	}
	if v.kind == kindError {
		e.finishTxn(t, TxnReplied)
		return
	}
	if v.middle {
		if len(v.rpc) > 0 {
			t.replyParts = append(s.bufFor(t.replyParts, len(v.rpc)), v.rpc...)
		}
		return
	}
	switch {
	case v.long:
		if msg, ok := e.gatherChunk(t, ChunkReply); ok {
			e.decodeWhole(p, rec, t, msg, true, ChunkReply)
		} else if t.Call != nil {
			rs.RebuildIncomplete++
		}
	case len(v.rpc) > 0:
		rec.HasRPC = true
		rec.RPCLength = len(v.rpc)
		rec.Message = v.rpc
		t.reply.RPCBytes = len(v.rpc)
		t.reply.RPCPacket = dissect.LastPacket(m.Packets)
		t.reply.RPCTime = m.Time
		if rpcOK {
			t.reply.setStatus(&rec.RPC)
			if rec.RPC.HasBody() {
				e.ulpDecode(rec, t, rec.RPC.Payload(), true)
			}
			e.rebuildReduced(rec, rs, t, v.rpc)
		}
	}
	e.finishTxn(t, TxnReplied)
}

// continueReply appends the next part of a version 2 Reply.
func (e *Engine) continueReply(p *dissect.Packet, rec *RPCRecord, rs *RPCStats, t *Transaction, m *dissect.Message, v *hdrView) {
	s := e.rpc()
	rec.CallPacket, rec.CallTime = t.call.callFrame()
	rec.HasProgram, rec.Program, rec.Version, rec.Procedure = t.HasProgram, t.Program, t.Version, t.Procedure
	t.reply.Packets = append(t.reply.Packets, m.Packets...)
	t.reply.Proc, t.reply.Time = v.proc, m.Time
	t.reply.InlineBytes += len(v.rpc)
	if len(t.replyParts)+len(v.rpc) <= s.maxMsg {
		t.replyParts = append(s.bufFor(t.replyParts, len(t.replyParts)+len(v.rpc)), v.rpc...)
	}
	if v.middle {
		return
	}
	e.decodeWhole(p, rec, t, t.replyParts, true, 0)
	e.finishTxn(t, TxnReplied)
}

func (sd *RPCSide) setStatus(h *oncrpc.Header) {
	sd.HasStatus, sd.ReplyStat, sd.AcceptStat = true, h.ReplyStat, h.AcceptStat
}

// decodeWhole decodes a whole RPC message (rebuilt, or put together from
// parts) into rec.
func (e *Engine) decodeWhole(p *dissect.Packet, rec *RPCRecord, t *Transaction, msg []byte, reply bool, src ChunkKind) {
	rec.HasRPC = true
	rec.Rebuilt = src != 0
	rec.Source = src
	rec.RPCLength = len(msg)
	rec.Message = msg
	rec.RPCErr = rec.RPC.DecodeFromBytes(msg)
	sd := &t.call
	if reply {
		sd = &t.reply
	}
	sd.RPCBytes = len(msg)
	sd.Rebuilt = src != 0
	if p != nil {
		sd.RPCPacket, sd.RPCTime = p.Number, p.Timestamp
	}
	if src != 0 {
		e.RPC.Rebuilt++
		rpcStats(t.Conn).Rebuilt++
		if rec.RPCErr != nil || rec.RPC.XID != t.XID {
			e.RPC.RebuiltBad++
		}
	}
	if rec.RPCErr != nil {
		return
	}
	if !reply && rec.RPC.MsgType == oncrpc.Call {
		t.setProgram(&rec.RPC)
	}
	if reply {
		sd.setStatus(&rec.RPC)
	}
	if rec.RPC.HasBody() {
		e.ulpDecode(rec, t, rec.RPC.Payload(), reply)
	}
}

// finishTxn ends a transaction: the callback sees it, the connection
// forgets it.
func (e *Engine) finishTxn(t *Transaction, o TxnOutcome) {
	s := e.rpc()
	t.Outcome = o
	if t.Call != nil && t.Reply != nil {
		t.Latency = t.reply.Time.Sub(t.call.Time)
	}
	c := t.Conn
	rc := s.conns[c]
	rs := rpcStats(c)
	key := newTxnKey(uint8(t.callDir.Index()), t.XID)
	if t.Call != nil && rc != nil && rc.out[key] == t {
		delete(rc.out, key)
		e.budgetView.Closed()
		rs.OutstandingCalls[key.dir()]--
		rc.unregister(t)
		rc.remember(t, key)
		rs.Outstanding--
	}
	switch o {
	case TxnNoReply:
		e.RPC.NoReply++
		rs.CallsWithoutReply++
	case TxnEvicted:
		e.RPC.Evicted++
		rs.Evicted++
		rs.CallsWithoutReply++
	case TxnSuperseded:
		e.RPC.Superseded++
		rs.CallsWithoutReply++
	}
	if t.Call == nil {
		t.Outcome = TxnReplyNoCall
		e.RPC.ReplyNoCall++
		rs.RepliesWithoutCall++
	}
	if t.Call != nil && !t.call.Rebuilt && t.call.RPCBytes == 0 && t.needsChunks() && !t.refusedV2() {
		rs.RebuildIncomplete++
	}
	e.RPC.Finished++
	if cb := e.opts.Transaction; cb != nil {
		cb(t)
	}
	if o, ok := e.opts.Observer.(TxnObserver); ok {
		o.Transaction(t)
	}
	if e.opts.Exchange != nil || e.exchangeObs {
		t.exchange(&e.exch)
		e.endExchange(&e.exch)
	}
	for i, b := range t.chunkData {
		s.held(-cap(b))
		e.buf.grew(cap(b), 0) // rebuild data counts in the buffer budget
		s.release(b)
		t.chunkData[i] = nil
	}
	s.release(t.callRPC)
	s.release(t.rebuilt)
	s.release(t.replyParts)
	t.callRPC, t.rebuilt, t.replyParts = nil, nil, nil
	s.pendTxn = append(s.pendTxn, t)
}

// refusedV2 tells whether a version 2 Responder answered the Call with
// RDMA2_ERROR: it discards the Call (draft-07 "Error Handling"), so its
// chunks are never read and nothing is missing.
func (t *Transaction) refusedV2() bool {
	return t.Reply != nil && t.reply.Vers == rpcrdma.Version2 && rpcrdma.HType(t.reply.Proc) == rpcrdma.HTypeError
}

// isErrVers tells whether h is an RDMA_ERROR/RDMA2_ERROR with ERR_VERS.
func isErrVers(h *rpcrdma.Message) bool {
	switch h.Vers {
	case rpcrdma.Version1:
		return h.V1.Proc == rpcrdma.RDMAError && h.V1.Err == rpcrdma.ErrVers
	case rpcrdma.Version2:
		return h.V2.HType == rpcrdma.HTypeError && h.V2.Err == rpcrdma.Err2Vers
	}
	// Another version decodes only as ERR_VERS (rpcrdma.Message).
	return h.V1.Proc == rpcrdma.RDMAError && h.V1.Err == rpcrdma.ErrVers
}

func (t *Transaction) needsChunks() bool {
	for i := range t.call.Chunks {
		if k := t.call.Chunks[i].Kind; k == ChunkRead || k == ChunkCall {
			return true
		}
	}
	return false
}

// held accounts for chunk data taken (n > 0) or given back (n < 0).
func (s *rpcState) held(n int) {
	s.ctr.RebuildBytes += n
	if s.ctr.RebuildBytes > s.ctr.MaxRebuildBytesHeld {
		s.ctr.MaxRebuildBytesHeld = s.ctr.RebuildBytes
	}
}

// register indexes the Call's segments by handle, for rpcRDMAOp.
func (rc *rpcConn) register(t *Transaction) {
	for ci := range t.call.Chunks {
		ch := &t.call.Chunks[ci]
		for si := range ch.Segments {
			sg := &ch.Segments[si]
			rc.mem.Advertise(t, t.callDir, int32(ci), int32(si),
				dissect.Region{STag: sg.Handle, Offset: sg.Offset, Length: sg.Length, Read: readKind(ch.Kind)})
		}
	}
}

func (rc *rpcConn) unregister(t *Transaction) {
	for ci := range t.call.Chunks {
		ch := &t.call.Chunks[ci]
		for si := range ch.Segments {
			rc.mem.Withdraw(t, ch.Segments[si].Handle)
		}
	}
}

// remember keeps a finished transaction's names, and its first segments in
// the connection's memory as answered.
func (rc *rpcConn) remember(t *Transaction, key txnKey) {
	r := &rc.recent[rc.nrec%recentTxns]
	rc.nrec++
	*r = recentTxn{key: key, hasProgram: t.HasProgram, program: t.Program, version: t.Version,
		procedure: t.Procedure}
	r.callPacket, r.callTime = t.call.callFrame()
	replyPacket := 0
	if t.Reply != nil {
		replyPacket = dissect.LastPacket(t.reply.Packets)
	}
	ret := rc.mem.Retire(t.callDir, uint64(t.XID), replyPacket)
	for ci := range t.call.Chunks {
		for _, sg := range t.call.Chunks[ci].Segments {
			if !ret.Add(dissect.Region{STag: sg.Handle, Offset: sg.Offset, Length: sg.Length}) {
				return
			}
		}
	}
}

func (rc *rpcConn) findRecent(key txnKey) *recentTxn {
	n := rc.nrec
	if n > recentTxns {
		n = recentTxns
	}
	for i := 0; i < n; i++ {
		r := &rc.recent[(rc.nrec-1-i)%recentTxns]
		if r.key == key {
			return r
		}
	}
	return nil
}

// releaseRPC ends c's open transactions, in the order their Calls came,
// and drops c's RPC state: the connection closed (release.go).
func (e *Engine) releaseRPC(c *dissect.Connection) {
	s := e.rpc()
	rc := s.conns[c]
	if rc == nil {
		return
	}
	open := make([]*Transaction, 0, len(rc.out))
	for _, t := range rc.out {
		open = append(open, t)
	}
	sortTxns(open)
	for _, t := range open {
		e.finishTxn(t, TxnNoReply)
	}
	delete(s.conns, c)
}

func sortTxns(ts []*Transaction) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].seq < ts[j-1].seq; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// duplicateSend decodes a retransmitted SEND_ONLY for display: the packet
// shows what it carries, the transactions and statistics do not count it
// again.
func (e *Engine) duplicateSend(p *dissect.Packet, m *dissect.Message) {
	c := m.Conn
	s := e.rpc()
	s.recycle(p)
	rc := s.conns[c]
	if rc == nil {
		return
	}
	e.RPC.Duplicates++
	rec := s.recs.newRecord(p)
	rec.Dir, rec.HasHeader, rec.Duplicate, rec.Length = m.Dir, true, true, m.Length
	rec.Invalidate, rec.InvalidatedSTag = m.Invalidate, m.InvalidatedSTag
	rec.Send, rec.SendPackets = m.Data, 1
	herr := rec.Header.DecodeFromBytes(m.Data)
	common, cerr := rpcrdma.ParseCommon(m.Data)
	rec.PrefixOK, rec.Common, rec.XID = cerr == nil, common, common.XID
	if herr != nil {
		rec.HeaderErr = herr
		return
	}
	v := viewOf(&rec.Header)
	if len(v.rpc) == 0 || len(v.chunks.ReadList) > 0 {
		return
	}
	rec.RPCErr = rec.RPC.DecodeFromBytes(v.rpc)
	rec.HasRPC, rec.RPCLength, rec.Message = true, len(v.rpc), v.rpc
	if rec.RPCErr == nil && rec.RPC.MsgType == oncrpc.Reply {
		rec.Reply = true
		key := newTxnKey(uint8(1-m.Dir.Index()), v.xid)
		if t := rc.out[key]; t != nil {
			rec.CallPacket, rec.CallTime = t.call.callFrame()
			rec.HasProgram, rec.Program, rec.Version, rec.Procedure = t.HasProgram, t.Program, t.Version, t.Procedure
		} else if r := rc.findRecent(key); r != nil {
			rec.CallPacket, rec.CallTime = r.callPacket, r.callTime
			rec.HasProgram, rec.Program, rec.Version, rec.Procedure = r.hasProgram, r.program, r.version, r.procedure
		}
		if rec.HasProgram && rec.RPC.HasBody() && s.ulp != nil {
			// A retransmitted Reply shows its results too, as tshark does.
			q := &s.query
			q.Reset()
			q.Reply, q.Program, q.Version, q.Procedure, q.Known = true, rec.Program, rec.Version, rec.Procedure, true
			// Its record only: no transaction takes its object.
			q.Body, q.Want = rec.RPC.Payload(), e.want&^rpcrdma.WantObject
			for _, wc := range v.chunks.WriteList {
				q.Reduced = true
				var n uint32
				for _, sg := range wc.Segments {
					n += sg.Length
				}
				q.WriteChunks = append(q.WriteChunks, n)
			}
			s.ulp.Decode(q, &rec.ULP)
		}
	}
}

// callFrame is the packet where the Call's RPC message was decoded and its
// time, or the Send's last packet when it was not decoded.
func (sd *RPCSide) callFrame() (int, time.Time) {
	if sd.RPCPacket == 0 {
		return dissect.LastPacket(sd.Packets), sd.Time
	}
	return sd.RPCPacket, sd.RPCTime
}
