package rpcrdma_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// hx turns annotated hex ("00000001 // rdma_vers") into bytes: text after //
// on each line is a comment, white space is ignored.
func hx(t testing.TB, s string) []byte {
	t.Helper()
	var sb strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func roundTrip(t *testing.T, h *rpcrdma.Header, wire []byte) {
	t.Helper()
	got, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wire[:h.HeaderLen]) {
		t.Errorf("encode:\n got %x\nwant %x", got, wire[:h.HeaderLen])
	}
}

func wantReason(t *testing.T, err error, r rpcrdma.Reason, part rpcrdma.Part) *rpcrdma.DecodeError {
	t.Helper()
	var de *rpcrdma.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want *DecodeError %s", err, r)
	}
	if !errors.Is(err, r) || de.Part != part {
		t.Fatalf("error %v: reason %s part %s, want %s in %s", err, de.Reason, de.Part, r, part)
	}
	return de
}

func TestV1ErrVers(t *testing.T) {
	// RFC 8166 section 4.5 / XDR rpc_rdma_error: ERR_VERS carries the range.
	wire := hx(t, `
		deadbeef  // rdma_xid
		00000001  // rdma_vers 1
		00000020  // rdma_credit 32
		00000004  // rdma_proc RDMA_ERROR
		00000001  // rdma_err ERR_VERS
		00000001  // rdma_vers_low 1
		00000001  // rdma_vers_high 1
	`)
	var h rpcrdma.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatal(err)
	}
	if h.XID != 0xdeadbeef || h.Vers != 1 || h.Credit != 32 || h.Proc != rpcrdma.RDMAError ||
		h.Err != rpcrdma.ErrVers || h.VersLow != 1 || h.VersHigh != 1 || h.HeaderLen != 28 {
		t.Errorf("decoded %+v", h)
	}
	if h.Proc.String() != "RDMA_ERROR" || h.Err.String() != "ERR_VERS" {
		t.Errorf("names %s %s", h.Proc, h.Err)
	}
	roundTrip(t, &h, wire)
	// Every shorter prefix is truncated, in the prefix or the error body.
	for n := range len(wire) {
		err := h.DecodeFromBytes(wire[:n])
		part := rpcrdma.PartError
		if n < 16 {
			part = rpcrdma.PartPrefix
		}
		wantReason(t, err, rpcrdma.ErrTruncated, part)
	}
}

func TestV1ErrChunk(t *testing.T) {
	wire := hx(t, `
		00000007  // rdma_xid
		00000001  // rdma_vers
		00000001  // rdma_credit
		00000004  // rdma_proc RDMA_ERROR
		00000002  // rdma_err ERR_CHUNK: void
	`)
	var h rpcrdma.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatal(err)
	}
	if h.Err != rpcrdma.ErrChunk || h.HeaderLen != 20 || h.VersLow != 0 || len(h.Payload()) != 0 {
		t.Errorf("decoded %+v", h)
	}
	roundTrip(t, &h, wire)

	// rpc_rdma_error has no default arm: rdma_err 3 is not a valid encoding.
	bad := append(wire[:16:16], 0, 0, 0, 3)
	de := wantReason(t, h.DecodeFromBytes(bad), rpcrdma.ErrUnknownErrCode, rpcrdma.PartError)
	if de.Value != 3 || de.Offset != 16 {
		t.Errorf("%+v", de)
	}
	if _, err := (&rpcrdma.Header{Proc: rpcrdma.RDMAError, Err: 3}).AppendBinary(nil); err == nil {
		t.Error("encoded rdma_err 3")
	}
}

func TestV1Done(t *testing.T) {
	// RDMA_DONE: void body (RFC 8166 section 4.6.2).
	wire := hx(t, `00000009 00000001 00000000 00000003`)
	var h rpcrdma.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatal(err)
	}
	if h.Proc != rpcrdma.RDMADone || h.HeaderLen != 16 || h.Proc.String() != "RDMA_DONE" {
		t.Errorf("decoded %+v", h)
	}
	roundTrip(t, &h, wire)
}

func TestV1Msgp(t *testing.T) {
	// RDMA_MSGP: rdma_align and rdma_thresh precede the chunk lists
	// (rpc_rdma_header_padded, RFC 8166 section 4.6.1); here one Write chunk.
	wire := hx(t, `
		11223344  // rdma_xid
		00000001  // rdma_vers
		00000010  // rdma_credit 16
		00000002  // rdma_proc RDMA_MSGP
		00001000  // rdma_align 4096
		00000400  // rdma_thresh 1024
		00000000  // read list: empty
		00000001  // write list: one chunk follows
		00000001  //   segment count 1
		0000abcd  //   handle
		00002000  //   length 8192
		00000000 12345000 // offset
		00000000  // write list ends
		00000000  // no reply chunk
		11223344  // RPC message: xid
	`)
	var h rpcrdma.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatal(err)
	}
	if h.Proc != rpcrdma.RDMAMsgp || h.Align != 4096 || h.Thresh != 1024 || h.HeaderLen != 60 ||
		len(h.WriteList) != 1 || len(h.WriteList[0].Segments) != 1 || h.HasReplyChunk {
		t.Fatalf("decoded %+v", h)
	}
	if s := h.WriteList[0].Segments[0]; s != (rpcrdma.Segment{Handle: 0xabcd, Length: 8192, Offset: 0x12345000}) {
		t.Errorf("segment %+v", s)
	}
	if !bytes.Equal(h.Payload(), wire[60:]) || !h.Proc.CarriesRPC() {
		t.Errorf("payload %x", h.Payload())
	}
	roundTrip(t, &h, wire)
	wantReason(t, h.DecodeFromBytes(wire[:20]), rpcrdma.ErrTruncated, rpcrdma.PartPadding)
}

// A Long Call (RDMA_NOMSG, position-zero Read chunk), a data Read chunk split
// into segments that do not sit next to each other in the list, two Write
// chunks, and a Reply chunk.
func TestV1ChunkLists(t *testing.T) {
	wire := hx(t, `
		00000001 00000001 00000080 00000001 // xid 1, vers 1, credit 128, RDMA_NOMSG
		00000001 00000000 00000010 00000100 00000000 00001000 // read: pos 0, handle 16, len 256, off 0x1000
		00000001 00000080 00000011 00000200 00000000 00002000 // read: pos 128, handle 17, len 512
		00000001 00000000 00000012 00000004 00000000 00003000 // read: pos 0 again, handle 18, len 4
		00000000                                              // read list ends
		00000001 00000002                                     // write chunk 0: 2 segments
		  00000020 00010000 00000000 00004000                 //   handle 32, 65536
		  00000021 00008000 00000000 00005000                 //   handle 33, 32768
		00000001 00000000                                     // write chunk 1: empty
		00000000                                              // write list ends
		00000001 00000001                                     // reply chunk: 1 segment
		  00000030 00001000 ffffffff fffff000                 //   handle 48, 4096
	`)
	var h rpcrdma.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatal(err)
	}
	if h.Proc != rpcrdma.RDMANoMsg || h.HeaderLen != len(wire) || len(h.ReadList) != 3 {
		t.Fatalf("decoded %+v", h)
	}
	// RFC 8166 section 3.4.5: segments sharing a Position form one Read chunk.
	if len(h.ReadChunks) != 2 || h.ReadChunks[0].Position != 0 || h.ReadChunks[1].Position != 128 {
		t.Fatalf("read chunks %+v", h.ReadChunks)
	}
	c0 := h.ReadChunks[0]
	if len(c0.Segments) != 2 || c0.Segments[0].Handle != 16 || c0.Segments[1].Handle != 18 || c0.Length() != 260 {
		t.Errorf("chunk 0 %+v", c0)
	}
	if len(h.ReadChunks[1].Segments) != 1 || h.ReadChunks[1].Segments[0].Handle != 17 {
		t.Errorf("chunk 1 %+v", h.ReadChunks[1])
	}
	if len(h.WriteList) != 2 || len(h.WriteList[0].Segments) != 2 || len(h.WriteList[1].Segments) != 0 ||
		h.WriteList[0].Length() != 98304 || h.WriteList[0].Segments[1].Handle != 33 {
		t.Errorf("write list %+v", h.WriteList)
	}
	if !h.HasReplyChunk || len(h.ReplyChunk.Segments) != 1 || h.ReplyChunk.Segments[0].Offset != 0xfffffffffffff000 {
		t.Errorf("reply chunk %+v", h.ReplyChunk)
	}
	if h.SegmentCount() != 6 {
		t.Errorf("segment count %d", h.SegmentCount())
	}
	roundTrip(t, &h, wire)

	// Decoding into the same Header again, with different input, leaves
	// nothing of the previous decode behind.
	short := hx(t, `00000002 00000001 00000001 00000000 00000000 00000000 00000000`)
	if err := h.DecodeFromBytes(short); err != nil {
		t.Fatal(err)
	}
	if len(h.ReadList)+len(h.ReadChunks)+len(h.WriteList) != 0 || h.HasReplyChunk || h.XID != 2 || h.HeaderLen != 28 {
		t.Errorf("reuse left %+v", h)
	}

	// Every truncation of the long header is reported in the right list.
	for n := 16; n < len(wire); n++ {
		err := h.DecodeFromBytes(wire[:n])
		// Layout: prefix 0-15, read list 16-91, write list 92-143 (chunk 0
		// count at 96, segments 100-131), reply chunk 144-167 (count at 148,
		// segment 152-167).
		var part rpcrdma.Part
		switch {
		case n < 92:
			part = rpcrdma.PartReadList
		case n < 144:
			part = rpcrdma.PartWriteList
		default:
			part = rpcrdma.PartReplyChunk
		}
		reason := rpcrdma.ErrTruncated
		if (n >= 100 && n < 132) || n >= 152 {
			// a segment count whose segments are cut off
			reason = rpcrdma.ErrCountTooLarge
		}
		de := wantReason(t, err, reason, part)
		if de.Offset > n {
			t.Errorf("len %d: offset %d past the end", n, de.Offset)
		}
	}
}

func TestV1DecodeErrors(t *testing.T) {
	prefix := hx(t, `00000005 00000001 00000001 00000000`)
	var h rpcrdma.Header
	cases := []struct {
		name   string
		wire   []byte
		reason rpcrdma.Reason
		part   rpcrdma.Part
		value  uint32
		offset int
		chunk  int
	}{
		{"version 2 to the v1 decoder", hx(t, `00000005 00000002 00000001 00000000 00000000 00000000 00000000`), rpcrdma.ErrBadVersion, rpcrdma.PartPrefix, 2, 4, -1},
		{"unknown proc", hx(t, `00000005 00000001 00000001 00000005`), rpcrdma.ErrUnknownProc, rpcrdma.PartPrefix, 5, 12, -1},
		{"read list discriminator 2", append(append([]byte{}, prefix...), 0, 0, 0, 2), rpcrdma.ErrBadDiscriminator, rpcrdma.PartReadList, 2, 16, 0},
		{"second read entry discriminator", append(append([]byte{}, prefix...), hx(t, `00000001 00000000 00000001 00000004 00000000 00000000 ffffffff`)...), rpcrdma.ErrBadDiscriminator, rpcrdma.PartReadList, 0xffffffff, 40, 1},
		{"write list discriminator", append(append([]byte{}, prefix...), hx(t, `00000000 00000007`)...), rpcrdma.ErrBadDiscriminator, rpcrdma.PartWriteList, 7, 20, 0},
		{"reply discriminator", append(append([]byte{}, prefix...), hx(t, `00000000 00000000 00000002`)...), rpcrdma.ErrBadDiscriminator, rpcrdma.PartReplyChunk, 2, 24, -1},
		{"write chunk count lies", append(append([]byte{}, prefix...), hx(t, `00000000 00000001 7fffffff 00000000`)...), rpcrdma.ErrCountTooLarge, rpcrdma.PartWriteList, 0x7fffffff, 28, 0},
		{"reply chunk count lies", append(append([]byte{}, prefix...), hx(t, `00000000 00000000 00000001 ffffffff`)...), rpcrdma.ErrCountTooLarge, rpcrdma.PartReplyChunk, 0xffffffff, 32, -1},
		{"read list without terminator", append(append([]byte{}, prefix...), hx(t, `00000001 00000000 00000001 00000004 00000000 00000000`)...), rpcrdma.ErrTruncated, rpcrdma.PartReadList, 0, 40, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			de := wantReason(t, h.DecodeFromBytes(c.wire), c.reason, c.part)
			if de.Value != c.value || de.Offset != c.offset || de.Chunk != c.chunk {
				t.Errorf("got value %#x offset %d chunk %d, want %#x %d %d (%v)", de.Value, de.Offset, de.Chunk, c.value, c.offset, c.chunk, de)
			}
			if de.Error() == "" || !strings.Contains(de.Error(), c.reason.String()) {
				t.Errorf("message %q", de.Error())
			}
		})
	}
}

// A runaway Read list (entries but no terminator, as many as fit) stops at
// the segment cap, and a list of exactly the cap decodes.
func TestV1SegmentCap(t *testing.T) {
	build := func(n int) []byte {
		h := rpcrdma.Header{Vers: 1, Proc: rpcrdma.RDMAMsg}
		for i := range n {
			h.ReadList = append(h.ReadList, rpcrdma.ReadSegment{Position: 4, Segment: rpcrdma.Segment{Handle: uint32(i), Length: 4}})
		}
		b, _ := h.AppendBinary(nil)
		return b
	}
	h := rpcrdma.Header{MaxSegments: 8}
	if err := h.DecodeFromBytes(build(8)); err != nil || len(h.ReadList) != 8 || len(h.ReadChunks) != 1 {
		t.Fatalf("8 segments: %v, %d", err, len(h.ReadList))
	}
	de := wantReason(t, h.DecodeFromBytes(build(9)), rpcrdma.ErrTooManySegments, rpcrdma.PartReadList)
	if de.Chunk != 8 || de.Value != 8 {
		t.Errorf("%v", de)
	}
	// The cap counts Write and Reply chunk segments too.
	w := rpcrdma.Header{Vers: 1, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{
		WriteList:     []rpcrdma.WriteChunk{{Segments: make([]rpcrdma.Segment, 5)}},
		HasReplyChunk: true, ReplyChunk: rpcrdma.WriteChunk{Segments: make([]rpcrdma.Segment, 4)},
	}}
	b, _ := w.AppendBinary(nil)
	wantReason(t, h.DecodeFromBytes(b), rpcrdma.ErrTooManySegments, rpcrdma.PartReplyChunk)
	// Empty Write chunks hold no segment but are capped too.
	e := rpcrdma.Header{Vers: 1, Proc: rpcrdma.RDMAMsg, ChunkLists: rpcrdma.ChunkLists{WriteList: make([]rpcrdma.WriteChunk, 9)}}
	eb, _ := e.AppendBinary(nil)
	de = wantReason(t, h.DecodeFromBytes(eb), rpcrdma.ErrTooManyChunks, rpcrdma.PartWriteList)
	if de.Chunk != 8 {
		t.Errorf("%v", de)
	}
	h.MaxSegments = 0 // default cap
	if err := h.DecodeFromBytes(b); err != nil || h.SegmentCount() != 9 {
		t.Fatalf("%v %d", err, h.SegmentCount())
	}
}

// Decoding a header into a reused Header allocates nothing.
func TestV1DecodeAllocs(t *testing.T) {
	sends := loadSends(t, "rxe-nfs3")
	var h rpcrdma.Header
	for _, s := range sends { // warm up: grow the reused slices
		_ = h.DecodeFromBytes(s.Payload)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		_ = h.DecodeFromBytes(sends[i%len(sends)].Payload)
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode", allocs)
	}
}
