package nfs_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
)

// xdr builds test bodies word by word.
type xdr []byte

func (b xdr) u32(v ...uint32) xdr {
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}
func (b xdr) u64(v uint64) xdr { return binary.BigEndian.AppendUint64(b, v) }
func (b xdr) zeros(n int) xdr  { return append(b, make([]byte, n)...) }
func (b xdr) opaque(p []byte) xdr {
	b = b.u32(uint32(len(p)))
	b = append(b, p...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// RFC 1813 section 3.3.6 READ3res with NFS3_OK: status, READ3resok
// {post_op_attr (FALSE: no attributes), count, eof, data<>}.
func nfs3ReadReply(data []byte, reduced bool, count uint32) xdr {
	b := xdr{}.u32(0 /* NFS3_OK */, 0 /* attributes_follow FALSE */, count, 1 /* eof */)
	if reduced {
		return b.u32(count) // RFC 8166 3.4.5: only the length stays
	}
	return b.opaque(data)
}

func TestNFS3ReadReplyReduced(t *testing.T) {
	body := nfs3ReadReply(nil, true, 4096)
	var in nfs.Info
	// Offsets: status 0, post_op_attr 4, count 8, eof 12, data length 16, data 20.
	red := &nfs.Reduction{WriteChunks: []uint32{1}}
	if err := in.Decode(100003, 3, 6, false, body, red); err != nil {
		t.Fatal(err)
	}
	if in.ProcName != "READ" || !in.HasStatus || in.Stat3() != nfs.NFS3_OK || in.Len != 20 {
		t.Errorf("got %+v", in)
	}
	want := nfs.Item{Kind: nfs.ItemNFS3ReadData, Op: -1, LenOffset: 16, Offset: 20, Length: 4096, Reduced: true}
	if len(in.Items) != 1 || in.Items[0] != want {
		t.Fatalf("items %+v, want %+v", in.Items, want)
	}
	if in.Items[0].End() != 20 || in.Items[0].Data(body) != nil {
		t.Errorf("End %d Data %v", in.Items[0].End(), in.Items[0].Data(body))
	}

	// Not told the item was reduced: the body is short by the data.
	err := in.Decode(100003, 3, 6, false, body, nil)
	var de *nfs.DecodeError
	if !errors.As(err, &de) || de.Reason != nfs.ErrTruncated || de.Offset != 20 || de.Need != 4096 || de.Have != 0 || de.Type != "READ3resok" {
		t.Fatalf("error %#v", err)
	}
	if !strings.Contains(err.Error(), "NFS v3 READ reply READ3resok at offset 20: truncated: need 4096 bytes, have 0") {
		t.Errorf("message %q", err)
	}
	// Auto finds it reduced.
	if err := in.Decode(100003, 3, 6, false, body, &nfs.Reduction{Auto: true}); err != nil || !in.Items[0].Reduced {
		t.Errorf("auto: %v %+v", err, in.Items)
	}
	// An empty Write chunk asks for the data inline (RFC 8267 5.4.1).
	inline := nfs3ReadReply([]byte("hello"), false, 5)
	if err := in.Decode(100003, 3, 6, false, inline, &nfs.Reduction{WriteChunks: []uint32{0}}); err != nil {
		t.Fatal(err)
	}
	if it := in.Items[0]; it.Reduced || it.Offset != 20 || it.Length != 5 || string(it.Data(inline)) != "hello" || it.End() != 28 || in.Len != 28 {
		t.Errorf("inline item %+v, len %d", it, in.Len)
	}
}

// RFC 5661 section 16.2: COMPOUND4args {tag, minorversion, argarray} with
// SEQUENCE (18.46), PUTFH (18.19), WRITE (18.32).
func compoundWrite(data []byte, reduced bool) xdr {
	b := xdr{}.opaque(nil).u32(1, 3)                     // tag "", minorversion 1, 3 ops: offsets 0..12
	b = b.u32(53).zeros(16).u32(7, 0, 0, 0)              // SEQUENCE @12: sessionid, seq, slot, highest, cachethis
	b = b.u32(22).opaque([]byte{1, 2, 3, 4, 5, 6, 7, 8}) // PUTFH @48
	b = b.u32(38).zeros(16).u64(0).u32(2)                // WRITE @64: stateid, offset, FILE_SYNC4
	if reduced {
		return b.u32(uint32(len(data))) // length @96, data would be @100
	}
	return b.opaque(data)
}

func TestNFS4CompoundWrite(t *testing.T) {
	var in nfs.Info
	body := compoundWrite([]byte("hello"), false)
	if err := in.Decode(100003, 4, 1, true, body, nil); err != nil {
		t.Fatal(err)
	}
	if in.ProcName != "COMPOUND" || in.MinorVersion != 1 || in.NumOps != 3 || in.Len != len(body) || len(body) != 108 {
		t.Errorf("info %+v (body %d)", in, len(body))
	}
	wantOps := []struct {
		name     string
		off, end int
		code     nfs.Opnum4
	}{{"SEQUENCE", 12, 48, nfs.OP_SEQUENCE}, {"PUTFH", 48, 64, nfs.OP_PUTFH}, {"WRITE", 64, 108, nfs.OP_WRITE}}
	for i, w := range wantOps {
		if o := in.Ops[i]; o.Name() != w.name || o.Offset != w.off || o.End != w.end || o.Code != w.code {
			t.Errorf("op %d: %+v, want %+v", i, o, w)
		}
	}
	want := nfs.Item{Kind: nfs.ItemNFS4WriteData, Op: 2, LenOffset: 96, Offset: 100, Length: 5}
	if len(in.Items) != 1 || in.Items[0] != want {
		t.Errorf("items %+v, want %+v", in.Items, want)
	}

	// The same call with the data in a Read chunk: the chunk's position is
	// the data's offset in the RPC message (header of 40 bytes + 100).
	red := compoundWrite(make([]byte, 8192), true)
	if err := in.Decode(100003, 4, 1, true, red, &nfs.Reduction{HeaderLen: 40, ReadPositions: []uint32{140}}); err != nil {
		t.Fatal(err)
	}
	want = nfs.Item{Kind: nfs.ItemNFS4WriteData, Op: 2, LenOffset: 96, Offset: 100, Length: 8192, Reduced: true}
	if in.Items[0] != want || in.Len != 100 {
		t.Errorf("reduced items %+v len %d", in.Items, in.Len)
	}
	// A Read chunk at another position does not reduce this item.
	if err := in.Decode(100003, 4, 1, true, red, &nfs.Reduction{HeaderLen: 40, ReadPositions: []uint32{144}}); !errors.Is(err, nfs.ErrTruncated) {
		t.Errorf("wrong position: %v", err)
	}
}

// CREATE4args with an NF4LNK (RFC 5661 18.4): linkdata is DDP-eligible.
func TestNFS4CreateSymlink(t *testing.T) {
	b := xdr{}.opaque([]byte("tg")).u32(0, 1)         // tag "tg" (8 bytes), minor 0, 1 op
	b = b.u32(6, 5).opaque([]byte("/target/of/link")) // CREATE @16: NF4LNK, linkdata length @24, bytes @28
	b = b.opaque([]byte("name")).u32(1, 0x10).opaque(nil)
	var in nfs.Info
	if err := in.Decode(100003, 4, 1, true, b, nil); err != nil {
		t.Fatal(err)
	}
	if string(in.Tag) != "tg" || in.Len != len(b) || len(in.Items) != 1 {
		t.Fatalf("%+v", in)
	}
	if it := in.Items[0]; it.Kind != nfs.ItemNFS4CreateLinkdata || it.Offset != 28 || it.Length != 15 || string(it.Data(b)) != "/target/of/link" {
		t.Errorf("item %+v", it)
	}
	// CREATE of a directory has no DDP-eligible item.
	d := xdr{}.opaque(nil).u32(0, 1).u32(6, 2).opaque([]byte("dir")).u32(0).opaque(nil)
	if err := in.Decode(100003, 4, 1, true, d, nil); err != nil || len(in.Items) != 0 {
		t.Errorf("NF4DIR: %v %+v", err, in.Items)
	}
}

// CB_COMPOUND (RFC 5661 section 20.2) with CB_SEQUENCE (20.9) and
// CB_RECALL (20.2): the captures have no backchannel traffic.
func TestCallback(t *testing.T) {
	args := xdr{}.opaque(nil).u32(1, 0, 2)                         // tag, minorversion, callback_ident, 2 ops
	args = args.u32(11).zeros(16).u32(1, 0, 0, 0).u32(0)           // CB_SEQUENCE, no referring calls
	args = args.u32(4).zeros(16).u32(0).opaque([]byte{9, 9, 9, 9}) // CB_RECALL
	var in nfs.Info
	if err := in.DecodeCallback(0x40000000, 1, 1, true, args, nil); err != nil {
		t.Fatal(err)
	}
	if in.ProcName != "CB_COMPOUND" || !in.Callback || len(in.Ops) != 2 || in.Ops[0].Name() != "CB_SEQUENCE" || in.Ops[1].CBCode != nfs.OP_CB_RECALL || in.Len != len(args) {
		t.Errorf("%+v", in)
	}
	res := xdr{}.u32(0).opaque(nil).u32(2)
	res = res.u32(11, 0).zeros(16).u32(1, 0, 0, 0)
	res = res.u32(4, uint32(nfs.NFS4ERR_BADHANDLE))
	if err := in.DecodeCallback(0x40000000, 1, 1, false, res, nil); err != nil {
		t.Fatal(err)
	}
	if in.Ops[1].Status != nfs.NFS4ERR_BADHANDLE || in.Ops[1].Status.String() != "NFS4ERR_BADHANDLE" || in.Len != len(res) {
		t.Errorf("%+v", in)
	}
}

// TestCallbackDefaultProgram: a CB_COMPOUND to program 0x40000000, the
// number Linux clients put in CREATE_SESSION's csa_cb_program, is a
// callback whichever entry point decodes it (RFC 8881 section 20.2): the
// binding (with no CREATE_SESSION seen, as when the capture starts late)
// and Info.Decode name its operations and their statuses. xdr/nfs4.x
// declares the program under that number, so it is a "known" program too,
// which once sent it down the plain walk that names no operation.
func TestCallbackDefaultProgram(t *testing.T) {
	args := xdr{}.opaque(nil).u32(1, 0, 2)
	args = args.u32(11).zeros(16).u32(1, 0, 0, 0).u32(0)
	args = args.u32(4).zeros(16).u32(0).opaque([]byte{9, 9, 9, 9})
	res := xdr{}.u32(0).opaque(nil).u32(2)
	res = res.u32(11, 0).zeros(16).u32(1, 0, 0, 0)
	res = res.u32(4, uint32(nfs.NFS4ERR_BADHANDLE))

	b := nfs.NewBinding()
	var out rpcrdma.ULBInfo
	b.Decode(&rpcrdma.ULBQuery{Program: 0x40000000, Version: 1, Procedure: 1, Known: true, Body: args}, &out)
	if out.Err != nil || !out.Callback || out.Protocol != "NFS_CB" || out.Procedure != "CB_COMPOUND" || !out.Compound ||
		strings.Join(out.Operations, ",") != "CB_SEQUENCE,CB_RECALL" || len(out.OpCodes) != 2 || out.OpCodes[0] != 11 || out.OpCodes[1] != 4 {
		t.Errorf("binding, call: %+v", out)
	}
	out.Reset()
	b.Decode(&rpcrdma.ULBQuery{Reply: true, Program: 0x40000000, Version: 1, Procedure: 1, Known: true, Body: res}, &out)
	if out.Err != nil || !out.Callback || !out.HasStatus || out.Status != 0 || len(out.OpStatus) != 2 || out.OpStatus[0] != 0 ||
		out.OpStatus[1] != uint32(nfs.NFS4ERR_BADHANDLE) || strings.Join(out.Operations, ",") != "CB_SEQUENCE,CB_RECALL" {
		t.Errorf("binding, reply: %+v", out)
	}

	var in nfs.Info
	if err := in.Decode(0x40000000, 1, 1, true, args, nil); err != nil || !in.Callback || in.ProcName != "CB_COMPOUND" ||
		len(in.Ops) != 2 || in.Ops[1].CBCode != nfs.OP_CB_RECALL || in.Len != len(args) {
		t.Errorf("Info.Decode: %v %+v", err, in)
	}
	// Version 1 is the only callback version (RFC 7530 section 16.1, RFC
	// 8881 section 20.1).
	if err := in.Decode(0x40000000, 2, 1, true, args, nil); !errors.Is(err, nfs.ErrUnknownVersion) {
		t.Errorf("version 2: %v", err)
	}
	// A program no client named (in a CREATE_SESSION this binding saw) is
	// not a callback program.
	out.Reset()
	b.Decode(&rpcrdma.ULBQuery{Program: 0x40000123, Version: 1, Procedure: 1, Known: true, Body: args}, &out)
	if out.Protocol != "" {
		t.Errorf("an unannounced program is decoded: %+v", out)
	}
}

// TestCallbackDetails: the operations the captures do not have, built
// from their XDR (RFC 8881 section 20: CB_GETATTR 20.1, CB_LAYOUTRECALL
// 20.3, CB_NOTIFY 20.4, CB_SEQUENCE with referring calls 20.9).
func TestCallbackDetails(t *testing.T) {
	sid := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	other := sid[:12]
	fh := []byte{0xfe, 0xed, 0xfa, 0xce, 0x01}
	args := xdr{}.opaque([]byte("tag")).u32(1, 7, 5) // tag, minorversion, callback_ident, 5 ops
	// CB_SEQUENCE: session, seq 9, slot 2, highest 3, cachethis, two lists (1 and 2 calls).
	args = append(args.u32(11), sid...)
	args = args.u32(9, 2, 3, 1, 2)
	args = append(args, sid...)
	args = args.u32(1, 4, 0)
	args = append(args, sid...)
	args = args.u32(2, 5, 1, 6, 2)
	// CB_GETATTR: fh, attr_request of 2 words.
	args = args.u32(3).opaque(fh).u32(2, 0x18, 0x10)
	// CB_NOTIFY: stateid, fh, 1 notify4 (bitmap4 of 1 word, opaque).
	args = append(args.u32(6, 42), other...)
	args = args.opaque(fh).u32(1, 1, 4).opaque([]byte{1, 2, 3})
	// CB_LAYOUTRECALL: LAYOUT4_NFSV4_1_FILES, LAYOUTIOMODE4_RW, changed,
	// LAYOUTRECALL4_FILE: fh, offset 4096, length all, stateid.
	args = args.u32(5, 1, 2, 1, 1).opaque(fh).u64(4096).u64(^uint64(0))
	args = append(args.u32(7), other...)
	// CB_LAYOUTRECALL, LAYOUTRECALL4_FSID.
	args = args.u32(5, 1, 3, 0, 2).u64(11).u64(12)
	var in nfs.Info
	if err := in.DecodeCallback(0x40000000, 1, 1, true, args, nil); err != nil {
		t.Fatal(err)
	}
	if in.Len != len(args) || len(in.Ops) != 5 || len(in.CBDetails) != 5 || in.CallbackIdent != 7 || string(in.Tag) != "tag" {
		t.Fatalf("%d of %d bytes, %d ops, %d details: %+v", in.Len, len(args), len(in.Ops), len(in.CBDetails), in.CBDetails)
	}
	d := in.CBDetails
	if s := d[0]; s.Op != 0 || s.SessionID[15] != 16 || s.SequenceID != 9 || s.SlotID != 2 || s.HighestSlotID != 3 || !s.CacheThis ||
		s.RefCallLists != 2 || s.RefCalls != 3 {
		t.Errorf("CB_SEQUENCE %+v", s)
	}
	if g := d[1]; g.Op != 1 || string(g.FH) != string(fh) || g.AttrWords != 2 || g.HasStateID {
		t.Errorf("CB_GETATTR %+v", g)
	}
	if n := d[2]; n.Op != 2 || n.StateID.Seqid != 42 || n.StateID.Other[11] != 12 || string(n.FH) != string(fh) || n.Changes != 1 {
		t.Errorf("CB_NOTIFY %+v", n)
	}
	if l := d[3]; l.LayoutType != 1 || l.IOMode != 2 || !l.Changed || l.RecallType != 1 || string(l.FH) != string(fh) ||
		l.Offset != 4096 || l.Len != ^uint64(0) || l.StateID.Seqid != 7 || !l.HasStateID {
		t.Errorf("CB_LAYOUTRECALL file %+v", l)
	}
	if l := d[4]; l.IOMode != 3 || l.Changed || l.RecallType != 2 || l.FSIDMajor != 11 || l.FSIDMinor != 12 || l.FH != nil {
		t.Errorf("CB_LAYOUTRECALL fsid %+v", l)
	}
	// Results: CB_SEQUENCE4resok when NFS4_OK, nothing when not; the other
	// results are only a status (CB_GETATTR's fattr4 is not read).
	res := xdr{}.u32(0).opaque(nil).u32(2)
	res = append(res.u32(11, 0), sid...)
	res = res.u32(9, 2, 3, 31)
	res = res.u32(3, uint32(nfs.NFS4ERR_BADHANDLE))
	if err := in.DecodeCallback(0x40000000, 1, 1, false, res, nil); err != nil {
		t.Fatal(err)
	}
	if len(in.CBDetails) != 1 || in.CBDetails[0].TargetSlotID != 31 || in.CBDetails[0].HighestSlotID != 3 || in.CBDetails[0].CacheThis {
		t.Errorf("results: %+v", in.CBDetails)
	}
	res = xdr{}.u32(uint32(nfs.NFS4ERR_BADSESSION)).opaque(nil).u32(1).u32(11, uint32(nfs.NFS4ERR_BADSESSION))
	if err := in.DecodeCallback(0x40000000, 1, 1, false, res, nil); err != nil || len(in.CBDetails) != 0 {
		t.Errorf("failed CB_SEQUENCE: %v %+v", err, in.CBDetails)
	}
}

func TestErrors(t *testing.T) {
	var in nfs.Info
	var de *nfs.DecodeError
	// An unknown operation stops the walk: its arguments' length is unknown.
	b := xdr{}.opaque(nil).u32(1, 2).u32(24).u32(99)
	err := in.Decode(100003, 4, 1, true, b, nil)
	if !errors.As(err, &de) || de.Reason != nfs.ErrUnknownOperation || de.Op != 1 || de.Value != 99 || de.Offset != 16 || in.Ops[0].Code != nfs.OP_PUTROOTFH {
		t.Errorf("unknown op: %v", err)
	}
	if !strings.Contains(err.Error(), "op 1 (Opnum4(99))") {
		t.Errorf("message %q", err)
	}
	// A post_op_attr discriminant of 2 has no arm (RFC 4506 4.15).
	err = in.Decode(100003, 3, 4, false, xdr{}.u32(0, 2), nil)
	if !errors.As(err, &de) || de.Reason != nfs.ErrBadDiscriminant || de.Type != "post_op_attr" || de.Value != 2 || de.Offset != 4 {
		t.Errorf("bad discriminant: %#v", err)
	}
	// READDIR3res whose optional-data entries pointer is 2 (RFC 4506 4.19).
	err = in.Decode(100003, 3, 16, false, xdr{}.u32(0, 0).zeros(8).u32(2), nil)
	if !errors.As(err, &de) || de.Reason != nfs.ErrBadBool || de.Type != "dirlist3" || de.Value != 2 || de.Offset != 16 {
		t.Errorf("bad bool: %#v", err)
	}
	// nfs_fh3 longer than NFS3_FHSIZE (64).
	err = in.Decode(100003, 3, 1, true, xdr{}.u32(65).zeros(68), nil)
	if !errors.As(err, &de) || de.Reason != nfs.ErrTooLong || de.Type != "nfs_fh3" || de.Value != 65 {
		t.Errorf("too long: %#v", err)
	}
	// A lying array count fails before any loop runs.
	err = in.Decode(100003, 4, 1, true, xdr{}.opaque(nil).u32(0, 0x7fffffff), nil)
	if !errors.Is(err, nfs.ErrTruncated) {
		t.Errorf("count: %v", err)
	}
	if err := in.Decode(100004, 1, 1, true, nil, nil); !errors.Is(err, nfs.ErrUnknownProgram) {
		t.Errorf("program: %v", err)
	}
	if err := in.Decode(100003, 5, 1, true, nil, nil); !errors.Is(err, nfs.ErrUnknownVersion) {
		t.Errorf("version: %v", err)
	}
	if err := in.Decode(100003, 3, 22, true, nil, nil); !errors.Is(err, nfs.ErrUnknownProcedure) {
		t.Errorf("procedure: %v", err)
	}
	if err := in.Decode(100003, 2, 6, true, nil, nil); !errors.Is(err, nfs.ErrVersionNotWalkable) || in.ProcName != "READ" {
		t.Errorf("v2: %v %q", err, in.ProcName)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{nfs.OP_READ.String(), "READ"},
		{nfs.OP_EXCHANGE_ID.String(), "EXCHANGE_ID"},
		{nfs.OP_READ_PLUS.String(), "READ_PLUS"},
		{nfs.OP_REMOVEXATTR.String(), "REMOVEXATTR"},
		{nfs.OP_ILLEGAL.String(), "ILLEGAL"},
		{nfs.Opnum4(2).String(), "Opnum4(2)"},
		{nfs.OP_CB_OFFLOAD.String(), "CB_OFFLOAD"},
		{nfs.NFS4ERR_DELAY.String(), "NFS4ERR_DELAY"},
		{nfs.NFS3ERR_JUKEBOX.String(), "NFS3ERR_JUKEBOX"},
		{nfs.MNT3ERR_ACCES.String(), "MNT3ERR_ACCES"},
		{nfs.ProcName(100003, 3, 17), "READDIRPLUS"},
		{nfs.ProcName(100003, 4, 1), "COMPOUND"},
		{nfs.ProcName(100005, 3, 1), "MNT"},
		{nfs.ProcName(100005, 1, 6), "EXPORTALL"},
		{nfs.ProcName(100227, 3, 1), "GETACL"},
		{nfs.ProcName(100227, 2, 4), "ACCESS"},
		{nfs.ProcName(100003, 3, 99), ""},
		{nfs.ProgNFSACL.String(), "NFSACL"},
		{nfs.ItemNFS4ReadlinkLink.String(), "READLINK4resok.link"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	// Every opcode from 3 to 75 is named (RFC 5661 16.2, RFC 7862 14, RFC 8276 8.3).
	for op := nfs.Opnum4(3); op <= 75; op++ {
		if !op.Known() {
			t.Errorf("opcode %d not known", op)
		}
	}
	for op := nfs.CBOpnum4(3); op <= 15; op++ {
		if !op.Known() || !strings.HasPrefix(op.String(), "CB_") {
			t.Errorf("callback opcode %d: %v", op, op)
		}
	}
}
