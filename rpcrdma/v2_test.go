package rpcrdma_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

func decode2(t *testing.T, wire []byte) *rpcrdma.Header2 {
	t.Helper()
	var h rpcrdma.Header2
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatalf("%v\n%x", err, wire)
	}
	got, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wire[:h.HeaderLen]) {
		t.Errorf("round trip:\n got %x\nwant %x", got, wire[:h.HeaderLen])
	}
	return &h
}

// Every rpcrdma2_hdr_error arm of draft-07 "RDMA2_ERROR", including the void
// default for codes without a body and for unknown codes.
func TestV2Error(t *testing.T) {
	prefix := `
		00000000  // rdma_xid
		00000002  // rdma_vers 2
		00000010  // rdma_credit
		00000004  // rdma_htype RDMA2_ERROR
	`
	cases := []struct {
		body  string
		check func(h *rpcrdma.Header2) bool
		len   int
	}{
		{`00000001 00000001 00000002`, func(h *rpcrdma.Header2) bool {
			return h.Err == rpcrdma.Err2Vers && h.VersLow == 1 && h.VersHigh == 2
		}, 28},
		{`00000002`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2BadXDR }, 20},
		{`00000003`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2BadPropVal }, 20},
		{`00000004`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2InvalHType }, 20},
		{`00000005`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2InvalCont }, 20},
		{`00000006 00000003`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2ReadChunks && h.MaxChunks == 3 }, 24},
		{`00000007 00000004`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2WriteChunks && h.MaxChunks == 4 }, 24},
		{`00000008 00000010`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2Segments && h.MaxSegs == 16 }, 24},
		{`00000009 00000001 00100000`, func(h *rpcrdma.Header2) bool {
			return h.Err == rpcrdma.Err2WriteResource && h.ChunkIndex == 1 && h.LengthNeeded == 0x100000
		}, 28},
		{`0000000a 00002000`, func(h *rpcrdma.Header2) bool {
			return h.Err == rpcrdma.Err2ReplyResource && h.LengthNeeded == 8192
		}, 24},
		{`0000000b`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2VersMismatch }, 20},
		{`00000064`, func(h *rpcrdma.Header2) bool { return h.Err == rpcrdma.Err2System }, 20},
		{`0000002a`, func(h *rpcrdma.Header2) bool { return h.Err == 42 && h.Err.String() == "RDMA2_ERR(42)" }, 20},
	}
	for _, c := range cases {
		wire := hx(t, prefix+c.body)
		h := decode2(t, wire)
		if !c.check(h) || h.HeaderLen != c.len || h.HType != rpcrdma.HTypeError || h.HType.CarriesRPC() {
			t.Errorf("%s: decoded %+v", c.body, h)
		}
		// A body cut short is truncated in the error part.
		if c.len > 20 {
			var h2 rpcrdma.Header2
			wantReason(t, h2.DecodeFromBytes(wire[:c.len-1]), rpcrdma.ErrTruncated, rpcrdma.PartError)
		}
	}
	if rpcrdma.Err2WriteResource.String() != "RDMA2_ERR_WRITE_RESOURCE" || rpcrdma.Err2System.String() != "RDMA2_ERR_SYSTEM" {
		t.Error("error code names")
	}
}

func TestV2Grant(t *testing.T) {
	// draft-07 "RDMA2_GRANT": prefix only, rdma_xid zero.
	h := decode2(t, hx(t, `00000000 00000002 00000040 00000005`))
	if h.HType != rpcrdma.HTypeGrant || h.Credit != 64 || h.HeaderLen != 16 || !h.HType.IsControl() {
		t.Errorf("decoded %+v", h)
	}
}

// Every draft-07 transport property, with and without a value, plus one this
// package does not know.
func TestV2ConnProp(t *testing.T) {
	wire := hx(t, `
		00000000 00000002 00000001 00000007 // RDMA2_CONNPROP_FINAL
		00000009                            // 9 properties
		00000001 00000004 00010000          // SBSIZ 65536
		00000002 00000004 00004000          // RBSIZ 16384
		00000003 00000004 00200000          // RSSIZ 2 MiB
		00000004 00000004 00000020          // RCSIZ 32
		00000005 00000004 00000003          // BRS RDMA2_RVRSDIR_GENL
		00000006 0000000c 00000005 68656c6c 6f000000 // HOSTAUTH: opaque<> "hello"
		00000063 00000003 01020300          // unknown property 99, 3 bytes + pad
		00000002 00000000                   // RBSIZ with empty data: the default
		00000005 00000000                   // BRS default: NONE
	`)
	h := decode2(t, wire)
	if h.HType != rpcrdma.HTypeConnPropFinal || len(h.Props) != 9 || h.HeaderLen != len(wire) {
		t.Fatalf("decoded %+v", h)
	}
	u32 := func(i int, id rpcrdma.PropID, want uint32) {
		t.Helper()
		p := h.Props[i]
		v, err := p.Uint32()
		if p.Which != id || err != nil || v != want {
			t.Errorf("property %d: %s = %d, %v; want %s = %d", i, p.Which, v, err, id, want)
		}
	}
	u32(0, rpcrdma.PropMaxSendSize, 65536)
	u32(1, rpcrdma.PropRecvBufSize, 16384)
	u32(2, rpcrdma.PropMaxSegmentSize, 2<<20)
	u32(3, rpcrdma.PropMaxSegments, 32)
	u32(7, rpcrdma.PropRecvBufSize, 4096) // draft-07 default
	if rd, err := h.Props[4].ReverseDirection(); err != nil || rd != rpcrdma.RvrsDirGenl || rd.String() != "RDMA2_RVRSDIR_GENL" {
		t.Errorf("BRS %v %v", rd, err)
	}
	if rd, err := h.Props[8].ReverseDirection(); err != nil || rd != rpcrdma.RvrsDirNone {
		t.Errorf("BRS default %v %v", rd, err)
	}
	if msg, err := h.Props[5].HostAuth(); err != nil || string(msg) != "hello" {
		t.Errorf("HOSTAUTH %q %v", msg, err)
	}
	if p := h.Props[6]; p.Which != 99 || p.Which.Known() || !bytes.Equal(p.Data, []byte{1, 2, 3}) || p.Which.String() != "RDMA2_PROPID(99)" {
		t.Errorf("unknown property kept as %+v", p)
	}
	if _, err := h.Props[6].Uint32(); !errors.Is(err, rpcrdma.ErrBadPropertyValue) {
		t.Errorf("unknown property as uint32: %v", err)
	}
	if p, ok := h.Property(rpcrdma.PropHostAuth); !ok || p.Which != rpcrdma.PropHostAuth {
		t.Error("Property lookup")
	}
	if _, ok := h.Property(42); ok {
		t.Error("Property found an absent ID")
	}

	// CONNPROP_MIDDLE has the same body; the builders make the same bytes.
	m := rpcrdma.Header2{Vers: 2, Credit: 1, HType: rpcrdma.HTypeConnPropMid, Props: []rpcrdma.Property{
		rpcrdma.Uint32Property(rpcrdma.PropMaxSendSize, 65536), rpcrdma.HostAuthProperty([]byte("hello")),
	}}
	b, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := hx(t, `00000000 00000002 00000001 00000006 00000002
		00000001 00000004 00010000 00000006 0000000c 00000005 68656c6c 6f000000`)
	if !bytes.Equal(b, want) {
		t.Errorf("built\n%x\nwant\n%x", b, want)
	}
	decode2(t, b)
}

func TestV2PropertyValueErrors(t *testing.T) {
	for _, p := range []rpcrdma.Property{
		{Which: rpcrdma.PropMaxSendSize, Data: []byte{0, 1}},         // too short
		{Which: rpcrdma.PropMaxSegments, Data: make([]byte, 8)},      // not one uint32
		{Which: rpcrdma.PropHostAuth, Data: []byte{0, 0, 0, 4}},      // as uint32
		{Which: rpcrdma.PropReverseDir, Data: []byte{0, 0, 0, 1, 2}}, // 5 bytes
	} {
		if _, err := p.Uint32(); !errors.Is(err, rpcrdma.ErrBadPropertyValue) {
			t.Errorf("%s %x: %v", p.Which, p.Data, err)
		}
	}
	for _, data := range [][]byte{nil, {0, 0, 0, 9, 1, 2, 3, 4}, {0, 0, 0, 1, 'x', 0, 0, 0, 0}} {
		if _, err := (rpcrdma.Property{Which: rpcrdma.PropHostAuth, Data: data}).HostAuth(); !errors.Is(err, rpcrdma.ErrBadPropertyValue) {
			t.Errorf("HOSTAUTH %x: %v", data, err)
		}
	}
	if _, err := rpcrdma.Uint32Property(rpcrdma.PropMaxSendSize, 1).ReverseDirection(); err == nil {
		t.Error("SBSIZ read as BRS")
	}
}

func TestV2CallExternal(t *testing.T) {
	wire := hx(t, `
		a0000001 00000002 00000020 00000008 // xid, vers 2, credit 32, RDMA2_CALL_EXTERNAL
		00000101                            // rdma_inv_handle 0x101
		00000001 00000000 00000101 00000800 00000000 00010000 // rdma_call: pos 0, handle 0x101, 2048 bytes
		00000001 00000000 00000102 00000200 00000000 00020000 //   second segment, handle 0x102
		00000000                            // rdma_call ends
		00000001 00000040 00000103 00001000 00000000 00030000 // rdma_reads: pos 64, handle 0x103
		00000000                            // rdma_reads ends
		00000001 00000001 00000104 00008000 00000000 00040000 // one provisional Write chunk, 1 segment
		00000000                            // write list ends
		00000001 00000000                   // provisional Reply chunk present, 0 segments
	`)
	h := decode2(t, wire)
	if h.HType != rpcrdma.HTypeCallExternal || h.InvHandle != 0x101 || len(h.CallList) != 2 ||
		h.CallList[1].Handle != 0x102 || len(h.ReadList) != 1 || h.ReadChunks[0].Position != 64 ||
		len(h.WriteList) != 1 || h.WriteList[0].Segments[0].Length != 0x8000 || !h.HasReplyChunk ||
		len(h.ReplyChunk.Segments) != 0 || h.HeaderLen != len(wire) || h.HType.CarriesRPC() || !h.HType.IsCall() {
		t.Errorf("decoded %+v", h)
	}
	var h2 rpcrdma.Header2
	wantReason(t, h2.DecodeFromBytes(wire[:20]), rpcrdma.ErrTruncated, rpcrdma.PartCallList)
	wantReason(t, h2.DecodeFromBytes(wire[:18]), rpcrdma.ErrTruncated, rpcrdma.PartInvHandle)
	wantReason(t, h2.DecodeFromBytes(wire[:75]), rpcrdma.ErrTruncated, rpcrdma.PartReadList)
}

func TestV2CallInline(t *testing.T) {
	wire := hx(t, `
		a0000002 00000002 00000020 0000000a // RDMA2_CALL_INLINE
		00000000                            // rdma_inv_handle 0: no remote invalidation
		00000001 00000080 00000201 00000400 00000000 00050000 // read: pos 128
		00000000                            // reads end
		00000000                            // no provisional writes
		00000000                            // no provisional reply
		a0000002 00000000                   // RPC message: xid, CALL
	`)
	h := decode2(t, wire)
	if h.HType != rpcrdma.HTypeCallInline || h.InvHandle != 0 || len(h.ReadList) != 1 || h.HeaderLen != 56 ||
		!bytes.Equal(h.Payload(), wire[56:]) || !h.HType.CarriesRPC() {
		t.Errorf("decoded %+v", h)
	}
	// rdma_rpc_first_word is part of the XDR: a header with no RPC word is short.
	var h2 rpcrdma.Header2
	wantReason(t, h2.DecodeFromBytes(wire[:56]), rpcrdma.ErrTruncated, rpcrdma.PartRPCMessage)
}

func TestV2Middle(t *testing.T) {
	for _, ht := range []rpcrdma.HType{rpcrdma.HTypeCallMiddle, rpcrdma.HTypeReplyMiddle} {
		wire := hx(t, `a0000003 00000002 00000008`)
		wire = append(wire, 0, 0, 0, byte(ht))
		wire = append(wire, hx(t, `00001234 a0000003 00000001`)...) // rdma_remaining 0x1234, RPC xid, REPLY
		h := decode2(t, wire)
		if h.HType != ht || h.Remaining != 0x1234 || h.HeaderLen != 20 || len(h.Payload()) != 8 {
			t.Errorf("%s: decoded %+v", ht, h)
		}
	}
}

func TestV2Reply(t *testing.T) {
	ext := hx(t, `
		a0000004 00000002 00000020 0000000b // RDMA2_REPLY_EXTERNAL
		00000001 00000001 00000104 00001234 00000000 00040000 // Write chunk: 0x1234 bytes written
		00000000                            // writes end
		00000001 00000002                   // Reply chunk, 2 segments
		00000105 00001000 00000000 00060000
		00000106 00000010 00000000 00070000
	`)
	h := decode2(t, ext)
	if h.HType != rpcrdma.HTypeReplyExternal || len(h.WriteList) != 1 || h.WriteList[0].Length() != 0x1234 ||
		!h.HasReplyChunk || h.ReplyChunk.Length() != 0x1010 || h.HeaderLen != len(ext) || !h.HType.IsReply() {
		t.Errorf("decoded %+v", h)
	}
	inl := hx(t, `
		a0000005 00000002 00000020 0000000d // RDMA2_REPLY_INLINE
		00000001 00000000                   // one empty Write chunk
		00000000                            // writes end
		a0000005 00000001 00000000          // RPC reply
	`)
	h = decode2(t, inl)
	if h.HType != rpcrdma.HTypeReplyInline || len(h.WriteList) != 1 || len(h.WriteList[0].Segments) != 0 ||
		h.HeaderLen != 28 || len(h.Payload()) != 12 {
		t.Errorf("decoded %+v", h)
	}
}

func TestV2DecodeErrors(t *testing.T) {
	var h rpcrdma.Header2
	for _, c := range []struct {
		name   string
		wire   string
		reason rpcrdma.Reason
		part   rpcrdma.Part
	}{
		{"v1 header", `00000001 00000001 00000001 00000000`, rpcrdma.ErrBadVersion, rpcrdma.PartPrefix},
		{"htype 0 (v1's RDMA_MSG, -02's RDMA2_MSG)", `00000001 00000002 00000001 00000000 00000000`, rpcrdma.ErrUnknownHType, rpcrdma.PartPrefix},
		{"htype 14", `00000001 00000002 00000001 0000000e`, rpcrdma.ErrUnknownHType, rpcrdma.PartPrefix},
		{"short prefix", `00000001 00000002 00000001`, rpcrdma.ErrTruncated, rpcrdma.PartPrefix},
		{"property count lies", `00000000 00000002 00000001 00000006 10000000 00000001 00000000`, rpcrdma.ErrCountTooLarge, rpcrdma.PartProperties},
		{"property length lies", `00000000 00000002 00000001 00000006 00000001 00000001 00000100 00000000`, rpcrdma.ErrCountTooLarge, rpcrdma.PartProperties},
		{"property padding missing", `00000000 00000002 00000001 00000006 00000001 00000001 00000001 02`, rpcrdma.ErrCountTooLarge, rpcrdma.PartProperties},
		{"reply inline bad discriminator", `00000000 00000002 00000001 0000000d 00000003 00000000`, rpcrdma.ErrBadDiscriminator, rpcrdma.PartWriteList},
		{"reply external reply chunk count lies", `00000000 00000002 00000001 0000000b 00000000 00000001 00000002 00000000`, rpcrdma.ErrCountTooLarge, rpcrdma.PartReplyChunk},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantReason(t, h.DecodeFromBytes(hx(t, c.wire)), c.reason, c.part)
		})
	}
	// Too many properties.
	p := rpcrdma.Header2{Vers: 2, HType: rpcrdma.HTypeConnPropMid, Props: make([]rpcrdma.Property, 5)}
	b, _ := p.AppendBinary(nil)
	h.MaxProperties = 4
	wantReason(t, h.DecodeFromBytes(b), rpcrdma.ErrTooManyProperties, rpcrdma.PartProperties)
	h.MaxProperties = 0
	if err := h.DecodeFromBytes(b); err != nil || len(h.Props) != 5 {
		t.Errorf("%v %d", err, len(h.Props))
	}
	if _, err := (&rpcrdma.Header2{HType: 3}).AppendBinary(nil); err == nil {
		t.Error("encoded htype 3")
	}
}

func TestHTypeNames(t *testing.T) {
	names := map[rpcrdma.HType]string{
		4: "RDMA2_ERROR", 5: "RDMA2_GRANT", 6: "RDMA2_CONNPROP_MIDDLE", 7: "RDMA2_CONNPROP_FINAL",
		8: "RDMA2_CALL_EXTERNAL", 9: "RDMA2_CALL_MIDDLE", 10: "RDMA2_CALL_INLINE",
		11: "RDMA2_REPLY_EXTERNAL", 12: "RDMA2_REPLY_MIDDLE", 13: "RDMA2_REPLY_INLINE",
		0: "RDMA2_HTYPE(0)", 14: "RDMA2_HTYPE(14)",
	}
	for ht, n := range names {
		if ht.String() != n || ht.Known() != (ht >= 4 && ht <= 13) {
			t.Errorf("%d: %s known=%v", uint32(ht), ht, ht.Known())
		}
	}
	props := map[rpcrdma.PropID]string{1: "RDMA2_PROPID_SBSIZ", 2: "RDMA2_PROPID_RBSIZ", 3: "RDMA2_PROPID_RSSIZ",
		4: "RDMA2_PROPID_RCSIZ", 5: "RDMA2_PROPID_BRS", 6: "RDMA2_PROPID_HOSTAUTH"}
	for id, n := range props {
		if id.String() != n || !id.Known() {
			t.Errorf("%d: %s", uint32(id), id)
		}
	}
}

// Message tells v1 from v2 by rdma_vers.
func TestMessageDispatch(t *testing.T) {
	var m rpcrdma.Message
	v1 := hx(t, `00000011 00000001 00000080 00000000 00000000 00000000 00000000 00000011 00000000`)
	if err := m.DecodeFromBytes(v1); err != nil || m.Vers != 1 || m.XID() != 0x11 || m.Credit() != 128 ||
		m.HeaderLen() != 28 || len(m.RPCMessage()) != 8 || m.Chunks() != &m.V1.ChunkLists {
		t.Fatalf("v1: %v %+v", err, m)
	}
	v2 := hx(t, `00000022 00000002 00000040 0000000d 00000000 00000022 00000001`)
	if err := m.DecodeFromBytes(v2); err != nil || m.Vers != 2 || m.XID() != 0x22 || m.Credit() != 64 ||
		m.HeaderLen() != 20 || len(m.RPCMessage()) != 8 || m.Chunks() != &m.V2.ChunkLists {
		t.Fatalf("v2: %v %+v", err, m)
	}
	grant := hx(t, `00000000 00000002 00000040 00000005`)
	if err := m.DecodeFromBytes(grant); err != nil || m.RPCMessage() != nil {
		t.Fatalf("grant: %v", err)
	}
	v3 := hx(t, `00000022 00000003 00000040 00000000`)
	de := wantReason(t, m.DecodeFromBytes(v3), rpcrdma.ErrBadVersion, rpcrdma.PartPrefix)
	if de.Value != 3 || m.Vers != 3 {
		t.Errorf("%v", de)
	}
	wantReason(t, m.DecodeFromBytes(v3[:15]), rpcrdma.ErrTruncated, rpcrdma.PartPrefix)
	// RDMA_ERROR (4) / ERR_VERS (1) offering versions 1..2, in the
	// unknown version 3 of the request it refuses: its XDR is the same in
	// every version, so it decodes.
	errVers3 := hx(t, `00000022 00000003 00000040 00000004 00000001 00000001 00000002`)
	if err := m.DecodeFromBytes(errVers3); err != nil || m.Vers != 3 || m.XID() != 0x22 || m.V1.Proc != rpcrdma.RDMAError ||
		m.V1.Err != rpcrdma.ErrVers || m.V1.VersLow != 1 || m.V1.VersHigh != 2 || m.HeaderLen() != 28 || m.RPCMessage() != nil {
		t.Errorf("ERR_VERS of version 3: %v %+v", err, m.V1)
	}
	// Another error code of an unknown version stays undecodable.
	wantReason(t, m.DecodeFromBytes(hx(t, `00000022 00000003 00000040 00000004 00000002`)), rpcrdma.ErrBadVersion, rpcrdma.PartPrefix)
	c, err := rpcrdma.ParseCommon(v2)
	if err != nil || c != (rpcrdma.Common{XID: 0x22, Vers: 2, Credit: 64, Type: 13}) {
		t.Errorf("%+v %v", c, err)
	}
}
