package rpcordma

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// RPC-over-RDMA version 2 (draft-ietf-nfsv4-rpcrdma-version-two-07) has no
// implementation to capture from: these messages are built with rpcrdma's
// encoder from the draft's XDR and go through the engine — every header
// type, every transport property, every error code.

// fieldText returns the -T fields form of a field on p.
func fieldText(t *testing.T, p *dissect.Packet, name string) string {
	t.Helper()
	v, ok := Present.Values(name, p, nil)
	if !ok {
		t.Fatalf("no field %s", name)
	}
	return strings.Join(v, ",")
}

func xdrWords(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

// TestRPCVersion2EveryType sends, on one connection: both sides'
// transport properties (RDMA2_CONNPROP_MIDDLE then _FINAL, every property
// of the draft and an unknown one), a credit grant (RDMA2_GRANT), an NFSv3
// WRITE whose data moves by a Read chunk (RDMA2_CALL_INLINE with an
// invalidation handle, answered by RDMA2_REPLY_INLINE sent With
// Invalidate of that handle), an NFSv3 READ whose data comes back by a
// Write chunk, a Reply continued over two Sends (RDMA2_REPLY_MIDDLE,
// _INLINE), a Call continued over two Sends (RDMA2_CALL_MIDDLE), a Call
// moved whole by its Call chunk (RDMA2_CALL_EXTERNAL) and its Reply by the
// Reply chunk (RDMA2_REPLY_EXTERNAL), and one RDMA2_ERROR of every error
// code — and checks what the packets show and what the transactions and
// statistics say.
func TestRPCVersion2EveryType(t *testing.T) {
	r := newTxnRig(t, Options{})
	seen := map[rpcrdma.HType]int{}
	send := func(d dissect.Direction, h rpcrdma.Header2, rpc []byte, inv uint32) *dissect.Packet {
		t.Helper()
		p := r.send(d, v2msg(t, h, rpc), inv)
		if len(Records(p)) != 1 || !Records(p)[0].HasHeader || Records(p)[0].HeaderErr != nil {
			t.Fatalf("%s: records %+v", h.HType, Records(p))
		}
		rec := &Records(p)[0]
		if rec.Header.Vers != rpcrdma.Version2 || rec.Header.V2.HType != h.HType {
			t.Fatalf("%s decoded as version %d type %d", h.HType, rec.Header.Vers, rec.Header.V2.HType)
		}
		seen[h.HType]++
		if got, want := fieldText(t, p, "rpcordma.msg_type"), fmt.Sprint(uint32(h.HType)); got != want {
			t.Errorf("%s: rpcordma.msg_type %s", h.HType, got)
		}
		if got := fieldText(t, p, "rpcordma.version"); got != "2" {
			t.Errorf("%s: rpcordma.version %s", h.HType, got)
		}
		if !strings.Contains(summary(p), h.HType.String()) {
			t.Errorf("%s: summary %q", h.HType, summary(p))
		}
		return p
	}

	// Transport properties (draft-07 "Transport Properties"): the client
	// sends its set over two messages, the server in one.
	p := send(c2s, rpcrdma.Header2{HType: rpcrdma.HTypeConnPropMid, Props: []rpcrdma.Property{
		rpcrdma.Uint32Property(rpcrdma.PropMaxSendSize, 8192),
		rpcrdma.Uint32Property(rpcrdma.PropRecvBufSize, 16384),
		{Which: rpcrdma.PropMaxSegmentSize}, // empty rdma_data: the default
	}}, nil, 0)
	if got := fieldText(t, p, "rdmashark.rpcordma.property"); got != "1,2,3" {
		t.Errorf("CONNPROP_MIDDLE properties %s", got)
	}
	if got := fieldText(t, p, "rdmashark.rpcordma.property_value"); got != "8192,16384,1048576 (default)" {
		t.Errorf("CONNPROP_MIDDLE values %s", got)
	}
	p = send(c2s, rpcrdma.Header2{HType: rpcrdma.HTypeConnPropFinal, Props: []rpcrdma.Property{
		rpcrdma.Uint32Property(rpcrdma.PropMaxSegments, 8),
		rpcrdma.Uint32Property(rpcrdma.PropReverseDir, uint32(rpcrdma.RvrsDirCont)),
		rpcrdma.HostAuthProperty([]byte("host")),
		{Which: 99, Data: []byte{1, 2, 3, 4}},
		{Which: rpcrdma.PropMaxSendSize, Data: []byte{1, 2}}, // not a uint32: RDMA2_ERR_BAD_PROPVAL material
	}}, nil, 0)
	if got := fieldText(t, p, "rdmashark.rpcordma.property"); got != "4,5,6,99,1" {
		t.Errorf("CONNPROP_FINAL properties %s", got)
	}
	vals := strings.Split(fieldText(t, p, "rdmashark.rpcordma.property_value"), ",")
	if len(vals) != 5 || vals[0] != "8" || vals[1] != "RDMA2_RVRSDIR_CONT" || vals[2] != hexOf("host") ||
		vals[3] != "unknown property: 01020304" || vals[4] != "bad value: 2 bytes (not one XDR uint32)" {
		t.Errorf("CONNPROP_FINAL values %q", vals)
	}
	send(s2c, rpcrdma.Header2{HType: rpcrdma.HTypeConnPropFinal, Props: []rpcrdma.Property{
		rpcrdma.Uint32Property(rpcrdma.PropMaxSendSize, 4096)}}, nil, 0)
	// A credit grant (draft-07 "Flow Control"): a prefix and nothing else.
	p = send(s2c, rpcrdma.Header2{HType: rpcrdma.HTypeGrant, Credit: 32}, nil, 0)
	if got := fieldText(t, p, "rpcordma.flow_control"); got != "32" {
		t.Errorf("GRANT credit %s", got)
	}

	// NFSv3 WRITE (RFC 1813 section 3.3.7) with its data in a Read chunk
	// at the data's XDR position (RFC 8267 section 3): the Send carries
	// the reduced Call, the length word stays.
	fh := xdrWords(8, 0x01020304, 0x05060708)
	data := fill(64, 'w')
	hdrLen := len(rpcCall(t, 0x10, oncrpc.ProgNFS, 3, 7, nil))
	args := append(append(append([]byte(nil), fh...), xdrWords(0, 0, 64, 2)...), xdrWords(64)...) // offset, count, stable, data length
	pos := uint32(hdrLen + len(args))
	p = send(c2s, rpcrdma.Header2{XID: 0x10, Credit: 16, HType: rpcrdma.HTypeCallInline, InvHandle: 0x77,
		ChunkLists: rpcrdma.ChunkLists{ReadList: []rpcrdma.ReadSegment{{Position: pos, Segment: seg(0x41, 64, 0x4000)}}}},
		rpcCall(t, 0x10, oncrpc.ProgNFS, 3, 7, args), 0)
	if got := fieldText(t, p, "rdmashark.rpcordma.inv_handle"); got != "0x00000077" {
		t.Errorf("inv_handle %s", got)
	}
	if got := fieldText(t, p, "rpcordma.position"); got != fmt.Sprint(pos) {
		t.Errorf("position %s", got)
	}
	p = r.read(s2c, 0x41, 0x4000, data)
	if rec := &Records(p)[0]; !rec.Rebuilt || rec.Source != ChunkRead || !bytes.Equal(rec.Message, append(rpcCall(t, 0x10, oncrpc.ProgNFS, 3, 7, args), data...)) {
		t.Errorf("WRITE Call rebuilt from its Read chunk: %+v", rec)
	}
	if got := fieldText(t, p, "nfs.procedure_v3"); got != "7" {
		t.Errorf("rebuilt WRITE Call: nfs.procedure_v3 %q", got)
	}
	// WRITE3resok: status, wcc_data (no attributes), count, committed, verifier.
	p = send(s2c, rpcrdma.Header2{XID: 0x10, Credit: 16, HType: rpcrdma.HTypeReplyInline},
		rpcReply(t, 0x10, xdrWords(0, 0, 0, 64, 2, 0, 0)), 0x77)
	if rec := &Records(p)[0]; !rec.Invalidate || rec.InvalidatedSTag != 0x77 || !strings.Contains(summary(p), "inv=0x00000077") {
		t.Errorf("Reply With Invalidate: %+v, %q", rec, summary(p))
	}
	if got := fieldText(t, p, "nfs.status3"); got != "0" {
		t.Errorf("WRITE Reply: nfs.status3 %q", got)
	}

	// NFSv3 READ with a Write chunk: the server RDMA Writes the data, the
	// Reply's Write list says how much, the READ3resok keeps the length.
	readArgs := append(append([]byte(nil), fh...), xdrWords(0, 0, 48)...)
	send(c2s, rpcrdma.Header2{XID: 0x11, HType: rpcrdma.HTypeCallInline, ChunkLists: rpcrdma.ChunkLists{
		WriteList: []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x42, 4096, 0x5000)}}}}},
		rpcCall(t, 0x11, oncrpc.ProgNFS, 3, 6, readArgs), 0)
	rdata := fill(48, 'r')
	r.write(s2c, 0x42, 0x5000, rdata)
	results := xdrWords(0, 0, 48, 1, 48) // status, no attributes, count, eof, data length
	p = send(s2c, rpcrdma.Header2{XID: 0x11, HType: rpcrdma.HTypeReplyInline, ChunkLists: rpcrdma.ChunkLists{
		WriteList: []rpcrdma.WriteChunk{{Segments: []rpcrdma.Segment{seg(0x42, 48, 0x5000)}}}}},
		rpcReply(t, 0x11, results), 0)
	if rec := &Records(p)[0]; !rec.Rebuilt || rec.Source != ChunkWrite || !bytes.Equal(rec.Message, append(rpcReply(t, 0x11, results), rdata...)) {
		t.Errorf("READ Reply rebuilt from its Write chunk: %+v", rec)
	}

	// A Reply continued over two Sends (draft-07 "Message Continuation").
	send(c2s, rpcrdma.Header2{XID: 0x12, HType: rpcrdma.HTypeCallInline}, rpcCall(t, 0x12, oncrpc.ProgNFS, 3, 1, fh), 0)
	long := rpcReply(t, 0x12, append(xdrWords(0), fill(84, 'a')...)) // GETATTR3res: status, then attributes
	p = send(s2c, rpcrdma.Header2{XID: 0x12, HType: rpcrdma.HTypeReplyMiddle, Remaining: uint32(len(long) - 40)}, long[:40], 0)
	if got := fieldText(t, p, "rdmashark.rpcordma.remaining"); got != fmt.Sprint(len(long)-40) {
		t.Errorf("REPLY_MIDDLE remaining %s", got)
	}
	if Records(p)[0].HasRPC {
		t.Errorf("the first part of a Reply shows an RPC message")
	}
	p = send(s2c, rpcrdma.Header2{XID: 0x12, HType: rpcrdma.HTypeReplyInline}, long[40:], 0)
	if rec := &Records(p)[0]; !rec.HasRPC || rec.RPCErr != nil || !bytes.Equal(rec.Message, long) {
		t.Errorf("continued Reply: %+v", rec)
	}
	// A Call continued over two Sends, answered inline.
	call := rpcCall(t, 0x13, oncrpc.ProgNFS, 3, 1, fh)
	p = send(c2s, rpcrdma.Header2{XID: 0x13, HType: rpcrdma.HTypeCallMiddle, Remaining: uint32(len(call) - 24)}, call[:24], 0)
	if Records(p)[0].HasRPC {
		t.Errorf("the first part of a Call shows an RPC message")
	}
	p = send(c2s, rpcrdma.Header2{XID: 0x13, HType: rpcrdma.HTypeCallInline}, call[24:], 0)
	if rec := &Records(p)[0]; !rec.HasRPC || !bytes.Equal(rec.Message, call) {
		t.Errorf("continued Call: %+v", rec)
	}
	send(s2c, rpcrdma.Header2{XID: 0x13, HType: rpcrdma.HTypeReplyInline}, rpcReply(t, 0x13, xdrWords(70)), 0) // NFS3ERR_STALE

	// A Call moved whole by its Call chunk, its Reply by the Reply chunk.
	ext := rpcCall(t, 0x14, oncrpc.ProgNFS, 3, 1, fh)
	send(c2s, rpcrdma.Header2{XID: 0x14, HType: rpcrdma.HTypeCallExternal, InvHandle: 0x51,
		CallList:   []rpcrdma.ReadSegment{{Segment: seg(0x43, uint32(len(ext)), 0x6000)}},
		ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true, ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x44, 1024, 0x7000)}}}}, nil, 0)
	p = r.read(s2c, 0x43, 0x6000, ext)
	if rec := &Records(p)[0]; !rec.Rebuilt || rec.Source != ChunkCall || !bytes.Equal(rec.Message, ext) {
		t.Errorf("Call from its Call chunk: %+v", rec)
	}
	extReply := rpcReply(t, 0x14, append(xdrWords(0), fill(84, 'x')...))
	r.write(s2c, 0x44, 0x7000, extReply)
	p = send(s2c, rpcrdma.Header2{XID: 0x14, HType: rpcrdma.HTypeReplyExternal, ChunkLists: rpcrdma.ChunkLists{HasReplyChunk: true,
		ReplyChunk: rpcrdma.WriteChunk{Segments: []rpcrdma.Segment{seg(0x44, uint32(len(extReply)), 0x7000)}}}}, nil, 0x51)
	if rec := &Records(p)[0]; !rec.Rebuilt || rec.Source != ChunkReply || !bytes.Equal(rec.Message, extReply) || rec.InvalidatedSTag != 0x51 {
		t.Errorf("Reply from the Reply chunk: %+v", rec)
	}

	// Every error code (draft-07 "RDMA2_ERROR"), each answering a Call.
	codes := []rpcrdma.Header2{
		{Err: rpcrdma.Err2Vers, VersLow: 1, VersHigh: 2}, {Err: rpcrdma.Err2BadXDR}, {Err: rpcrdma.Err2BadPropVal},
		{Err: rpcrdma.Err2InvalHType}, {Err: rpcrdma.Err2InvalCont}, {Err: rpcrdma.Err2ReadChunks, MaxChunks: 2},
		{Err: rpcrdma.Err2WriteChunks, MaxChunks: 3}, {Err: rpcrdma.Err2Segments, MaxSegs: 16},
		{Err: rpcrdma.Err2WriteResource, ChunkIndex: 1, LengthNeeded: 8192}, {Err: rpcrdma.Err2ReplyResource, LengthNeeded: 4096},
		{Err: rpcrdma.Err2VersMismatch}, {Err: rpcrdma.Err2System},
	}
	for i, e := range codes {
		xid := uint32(0x100 + i)
		send(c2s, rpcrdma.Header2{XID: xid, HType: rpcrdma.HTypeCallInline}, rpcCall(t, xid, oncrpc.ProgNFS, 3, 0, nil), 0)
		e.XID, e.HType = xid, rpcrdma.HTypeError
		p = send(s2c, e, nil, 0)
		if got := fieldText(t, p, "rpcordma.errcode"); got != fmt.Sprint(uint32(e.Err)) {
			t.Errorf("%s: rpcordma.errcode %s", e.Err, got)
		}
		if !strings.Contains(summary(p), e.Err.String()) {
			t.Errorf("%s: summary %q", e.Err, summary(p))
		}
		want := map[string]string{"rpcordma.vers_low": "", "rpcordma.vers_high": "", "rdmashark.rpcordma.max_chunks": "",
			"rdmashark.rpcordma.max_segments": "", "rdmashark.rpcordma.chunk_index": "", "rdmashark.rpcordma.length_needed": ""}
		switch e.Err {
		case rpcrdma.Err2Vers:
			want["rpcordma.vers_low"], want["rpcordma.vers_high"] = "1", "2"
		case rpcrdma.Err2ReadChunks, rpcrdma.Err2WriteChunks:
			want["rdmashark.rpcordma.max_chunks"] = fmt.Sprint(e.MaxChunks)
		case rpcrdma.Err2Segments:
			want["rdmashark.rpcordma.max_segments"] = "16"
		case rpcrdma.Err2WriteResource:
			want["rdmashark.rpcordma.chunk_index"], want["rdmashark.rpcordma.length_needed"] = "1", "8192"
		case rpcrdma.Err2ReplyResource:
			want["rdmashark.rpcordma.length_needed"] = "4096"
		}
		for f, w := range want {
			if got := fieldText(t, p, f); got != w {
				t.Errorf("%s: %s %q, want %q", e.Err, f, got, w)
			}
		}
	}

	for ht := rpcrdma.HTypeError; ht <= rpcrdma.HTypeReplyInline; ht++ {
		if seen[ht] == 0 {
			t.Errorf("%s never sent", ht)
		}
	}
	// The transactions: WRITE, READ, the continued Reply and Call, the
	// external Call, then one per error.
	if len(r.txns) != 5+len(codes) {
		t.Fatalf("%d transactions", len(r.txns))
	}
	for i, tx := range r.txns {
		if tx.Outcome != TxnReplied || tx.Call == nil || tx.Reply == nil || tx.Call.Vers != 2 || tx.Reply.Vers != 2 {
			t.Errorf("transaction %d (xid 0x%x): %+v", i, tx.XID, tx)
		}
		wantReply := "RDMA2_REPLY_INLINE"
		switch {
		case i == 4:
			wantReply = "RDMA2_REPLY_EXTERNAL"
		case i >= 5:
			wantReply = "RDMA2_ERROR"
		}
		if got := tx.Reply.ProcName(); got != wantReply {
			t.Errorf("transaction %d: reply %s, want %s", i, got, wantReply)
		}
	}
	w, rd, cont, call2, ext2 := r.txns[0], r.txns[1], r.txns[2], r.txns[3], r.txns[4]
	if w.ReadBytes != 64 || w.ProcedureName != "WRITE" || !w.Call.Rebuilt || !w.Reply.Invalidate || w.Reply.InvalidatedSTag != 0x77 || w.Call.Credits != 16 {
		t.Errorf("WRITE transaction %+v call %+v reply %+v", w, w.Call, w.Reply)
	}
	if rd.WriteBytes != 48 || rd.ProcedureName != "READ" || !rd.Reply.Rebuilt {
		t.Errorf("READ transaction %+v reply %+v", rd, rd.Reply)
	}
	if len(cont.Reply.Packets) != 2 || cont.Reply.RPCBytes != len(long) || len(call2.Call.Packets) != 2 || call2.Call.RPCBytes != len(call) {
		t.Errorf("continued: reply %+v, call %+v", cont.Reply, call2.Call)
	}
	if !ext2.Call.Rebuilt || !ext2.Reply.Rebuilt || ext2.Call.ProcName() != "RDMA2_CALL_EXTERNAL" || ext2.Reply.InvalidatedSTag != 0x51 {
		t.Errorf("external: call %+v reply %+v", ext2.Call, ext2.Reply)
	}
	rs := Stats(r.c)
	if rs.Version != 2 || rs.Versions[1] != 0 || rs.Control != [2]uint64{2, 2} || rs.Errors != [2]uint64{0, uint64(len(codes))} ||
		rs.BadHeaders != [2]uint64{} || rs.Calls != [2]uint64{uint64(5 + len(codes)), 0} || rs.Replies != [2]uint64{0, 5} ||
		rs.RepliesWithInvalidate != 2 || rs.UnattachedOps != 0 || rs.RebuildIncomplete != 0 {
		t.Errorf("stats %+v", rs)
	}
	if e := r.e.RPC; e.Unattached != 0 || e.RebuiltBad != 0 || e.BadHeaders != 0 || e.Rebuilt != 4 {
		t.Errorf("engine counters %+v", e)
	}
}

func hexOf(s string) string { return fmt.Sprintf("%x", s) }

// v2words lays a version 2 message out word by word from the draft's XDR
// (rpcrdma_common: rdma_xid, rdma_vers 2, rdma_credit, rdma_htype; then the
// body), followed by rpc.
func v2words(xid, credit, htype uint32, body []uint32, rpc []byte) []byte {
	return append(xdrWords(append([]uint32{xid, 2, credit, htype}, body...)...), rpc...)
}

// TestV2ErrorAnsweredCallNotIncomplete: a Responder that answers with
// RDMA2_ERROR discards the Call (draft-07 "Error Handling"); the Call
// chunk it never read is not "incomplete chunk data".
func TestV2ErrorAnsweredCallNotIncomplete(t *testing.T) {
	for _, answer := range []string{"error", "none"} {
		r := newTxnRig(t, Options{})
		// RDMA2_CALL_EXTERNAL (8): rdma_inv_handle 0, the Call chunk of one
		// segment at position 0 (handle 0x71, 64 octets at 0x8000), no
		// Read list, Write list or Reply chunk.
		r.send(c2s, v2words(0x6666, 4, 8, []uint32{0, 1, 0, 0x71, 64, 0, 0x8000, 0, 0, 0, 0}, nil), 0)
		if answer == "error" {
			// RDMA2_ERROR (4), RDMA2_ERR_BAD_XDR (2).
			r.send(s2c, v2words(0x6666, 4, 4, []uint32{2}, nil), 0)
		}
		r.e.Finish()
		rs := Stats(r.c)
		want := map[string]uint64{"error": 0, "none": 1}[answer]
		if rs.RebuildIncomplete != want {
			t.Errorf("answered by %s: RebuildIncomplete %d, want %d", answer, rs.RebuildIncomplete, want)
		}
	}
}

// TestV2FallbackVersion: a server without version 2 answers the client's
// first message with ERR_VERS; the client continues with a version in
// the offered range (draft-07 "Server Does Not Support RPC-over-RDMA
// Version 2"): the connection runs version 1.
func TestV2FallbackVersion(t *testing.T) {
	r := newTxnRig(t, Options{})
	call := rpcCall(t, 0x1001, oncrpc.ProgNFS, 3, 0, nil)
	// RDMA2_CALL_INLINE (10): rdma_inv_handle 0, three absent lists.
	r.send(c2s, v2words(0x1001, 1, 10, []uint32{0, 0, 0, 0}, call), 0)
	// The answer: RDMA_ERROR (4) / ERR_VERS (1), versions 1..1, in the
	// request's version.
	r.send(s2c, v2words(0x1001, 1, 4, []uint32{1, 1, 1}, nil), 0)
	if rs := Stats(r.c); rs.Version != 2 {
		t.Fatalf("before the fallback: version %d", rs.Version)
	}
	// Version 1 from now on: RDMA_MSG (0) with three absent lists.
	v1 := func(xid uint32, rpc []byte) []byte {
		return append(xdrWords(xid, 1, 32, 0, 0, 0, 0), rpc...)
	}
	call = rpcCall(t, 0x1002, oncrpc.ProgNFS, 3, 0, nil)
	r.send(c2s, v1(0x1002, call), 0)
	r.send(s2c, v1(0x1002, rpcReply(t, 0x1002, nil)), 0)
	rs := Stats(r.c)
	if rs.Version != 1 || rs.Versions != [3]uint64{0, 2, 2} {
		t.Errorf("after the fallback: version %d, versions %v", rs.Version, rs.Versions)
	}
	// Version 1's credits are requested and granted; version 2's limits
	// were the two first messages'.
	if rs.MaxCreditsRequested[0] != 32 || rs.MaxCreditsGranted[1] != 32 || rs.CreditLimits != [2]uint32{1, 1} || rs.V2Sent != [2]uint64{1, 1} {
		t.Errorf("credits %v %v, limits %v sent %v", rs.MaxCreditsRequested, rs.MaxCreditsGranted, rs.CreditLimits, rs.V2Sent)
	}
}

// TestV2CreditLimits: in version 2 every message carries the sender's
// running credit limit (draft-07 "Flow Control"), control messages too;
// the version 1 requested/granted counters stay empty.
func TestV2CreditLimits(t *testing.T) {
	r := newTxnRig(t, Options{})
	// RDMA2_GRANT (5) from each side: rdma_xid 0, no body.
	r.send(c2s, v2words(0, 17, 5, nil, nil), 0)
	r.send(s2c, v2words(0, 33, 5, nil, nil), 0)
	call := rpcCall(t, 0x2001, oncrpc.ProgNFS, 3, 0, nil)
	r.send(c2s, v2words(0x2001, 18, 10, []uint32{0, 0, 0, 0}, call), 0)
	// RDMA2_REPLY_INLINE (13): an absent Write list.
	r.send(s2c, v2words(0x2001, 30, 13, []uint32{0}, rpcReply(t, 0x2001, nil)), 0)
	rs := Stats(r.c)
	if rs.CreditLimits != [2]uint32{18, 30} || rs.MaxCreditLimits != [2]uint32{18, 33} || rs.V2Sent != [2]uint64{2, 2} {
		t.Errorf("limits %v max %v sent %v", rs.CreditLimits, rs.MaxCreditLimits, rs.V2Sent)
	}
	if rs.MaxCreditsRequested != [2]uint32{} || rs.MaxCreditsGranted != [2]uint32{} {
		t.Errorf("version 1 credits %v %v", rs.MaxCreditsRequested, rs.MaxCreditsGranted)
	}
}

// TestV2ListCountFields: the count fields show the lists a header type
// has in draft-07's XDR, and are absent for the lists it lacks (REPLY_INLINE
// has only rdma_writes, REPLY_EXTERNAL rdma_writes and rdma_reply, the
// *_MIDDLE types and the control types none).
func TestV2ListCountFields(t *testing.T) {
	r := newTxnRig(t, Options{})
	call := rpcCall(t, 0x3001, oncrpc.ProgNFS, 3, 0, nil)
	reply := rpcReply(t, 0x3001, nil)
	for _, c := range []struct {
		name                 string
		d                    dissect.Direction
		msg                  []byte
		reads, writes, reply string // "" for absent
	}{
		{"GRANT", s2c, v2words(0, 8, 5, nil, nil), "", "", ""},
		{"CALL_MIDDLE", c2s, v2words(0x3001, 8, 9, []uint32{uint32(len(call) - 8)}, call[:8]), "", "", ""},
		{"CALL_INLINE", c2s, v2words(0x3001, 8, 10, []uint32{0, 0, 0, 0}, call[8:]), "0", "0", "0"},
		{"REPLY_INLINE", s2c, v2words(0x3001, 8, 13, []uint32{0}, reply), "", "0", ""},
		// A Call with a Reply chunk (handle 0x61, 256 octets at 0x7000),
		// answered by REPLY_EXTERNAL through it.
		{"CALL_EXTERNAL", c2s, v2words(0x3002, 8, 8, []uint32{0, 1, 0, 0x71, 40, 0, 0x8000, 0, 0, 0, 1, 1, 0x61, 256, 0, 0x7000}, nil), "0", "0", "1"},
		{"REPLY_EXTERNAL", s2c, v2words(0x3002, 8, 11, []uint32{0, 1, 1, 0x61, 0, 0, 0x7000}, nil), "", "0", "1"},
	} {
		p := r.send(c.d, c.msg, 0)
		for _, f := range []struct{ name, want string }{
			{"rpcordma.reads_count", c.reads}, {"rpcordma.writes_count", c.writes}, {"rpcordma.reply_count", c.reply}} {
			v, _ := Present.Values(f.name, p, nil)
			if got := strings.Join(v, ","); got != f.want {
				t.Errorf("%s: %s = %q, want %q", c.name, f.name, got, f.want)
			}
		}
	}
}

// TestErrVersOfUnknownVersionFields: an RDMA_ERROR/ERR_VERS in an unknown
// rdma_vers (3) decodes, its layout being every version's (RFC 8166
// section 4), and shows its error code and version range.
func TestErrVersOfUnknownVersionFields(t *testing.T) {
	r := newTxnRig(t, Options{})
	r.send(c2s, v2msg(t, rpcrdma.Header2{XID: 0x77, HType: rpcrdma.HTypeCallInline}, rpcCall(t, 0x77, oncrpc.ProgNFS, 3, 0, nil)), 0)
	// rdma_xid, rdma_vers 3, rdma_credit, RDMA_ERROR (4), ERR_VERS (1), 1..2.
	p := r.send(s2c, xdrWords(0x77, 3, 1, 4, 1, 1, 2), 0)
	if rec := &Records(p)[0]; rec.HeaderErr != nil || rec.Kind != RPCKindError {
		t.Fatalf("record: %v, kind %v", rec.HeaderErr, rec.Kind)
	}
	for name, want := range map[string]string{"rpcordma.errcode": "1", "rpcordma.vers_low": "1", "rpcordma.vers_high": "2", "rpcordma.version": "3"} {
		if got := fieldText(t, p, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
