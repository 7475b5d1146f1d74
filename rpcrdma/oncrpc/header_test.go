package oncrpc_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// hx turns annotated hex ("00000001 // field") into bytes.
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

func decodeRT(t *testing.T, wire []byte) *oncrpc.Header {
	t.Helper()
	var h oncrpc.Header
	if err := h.DecodeFromBytes(wire); err != nil {
		t.Fatalf("%v\n%x", err, wire)
	}
	b, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, wire[:h.HeaderLen]) {
		t.Errorf("round trip:\n got %x\nwant %x", b, wire[:h.HeaderLen])
	}
	return &h
}

func wantReason(t *testing.T, err error, r oncrpc.Reason) *oncrpc.DecodeError {
	t.Helper()
	var de *oncrpc.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, r) {
		t.Fatalf("error %v, want %s", err, r)
	}
	if !strings.Contains(de.Error(), r.String()) {
		t.Errorf("message %q", de.Error())
	}
	return de
}

// An NFSv3 GETATTR call with AUTH_SYS and two auxiliary gids (RFC 5531
// section 9 call_body, appendix A authsys_parms).
var authSysCall = `
	12345678  // xid
	00000000  // mtype CALL
	00000002  // rpcvers 2
	000186a3  // prog 100003 NFS
	00000003  // vers 3
	00000001  // proc 1 GETATTR
	00000001  // cred.flavor AUTH_SYS
	00000024  // cred.body length 36
	  5f5e5d5c  // stamp
	  00000006 636c6965 6e740000 // machinename "client" + 2 pad
	  000003e8  // uid 1000
	  00000064  // gid 100
	  00000002 0000000a 0000000b // gids: 10, 11
	00000000 00000000 // verf AUTH_NONE, empty
	00000008 01020304 05060708 // arguments: an 8-byte file handle
`

func TestCallAuthSys(t *testing.T) {
	wire := hx(t, authSysCall)
	h := decodeRT(t, wire)
	if h.XID != 0x12345678 || h.MsgType != oncrpc.Call || h.RPCVers != 2 || h.Prog != oncrpc.ProgNFS ||
		h.Vers != 3 || h.Proc != 1 || h.Cred.Flavor != oncrpc.AuthSysFlav || len(h.Cred.Body) != 36 ||
		h.Verf.Flavor != oncrpc.AuthNone || h.HeaderLen != 76 || !h.HasBody() {
		t.Fatalf("decoded %+v", h)
	}
	a := h.AuthSys
	if a.Stamp != 0x5f5e5d5c || string(a.MachineName) != "client" || a.UID != 1000 || a.GID != 100 ||
		len(a.GIDs) != 2 || a.GIDs[0] != 10 || a.GIDs[1] != 11 {
		t.Errorf("auth_sys %+v", a)
	}
	if !bytes.Equal(h.Payload(), wire[76:]) {
		t.Errorf("payload %x", h.Payload())
	}
	body, err := a.AppendBinary(nil)
	if err != nil || !bytes.Equal(body, h.Cred.Body) {
		t.Errorf("AuthSys encode %x %v", body, err)
	}
	if h.Prog.String() != "NFS" || h.Cred.Flavor.String() != "AUTH_SYS" || h.MsgType.String() != "CALL" {
		t.Error("names")
	}
	// Every truncation of the header is an error, never a panic.
	for n := range 68 {
		var h2 oncrpc.Header
		wantReason(t, h2.DecodeFromBytes(wire[:n]), oncrpc.ErrTruncated)
	}
}

func TestCallRPCSecGSS(t *testing.T) {
	// RFC 2203 section 5: rpc_gss_cred_t version 1, DATA, seq 7,
	// rpc_gss_svc_integrity, 5-byte handle; verifier is a GSS checksum.
	wire := hx(t, `
		00000042 00000000 00000002 000186a3 00000004 00000001 // xid, CALL, rpcvers, NFS, v4, COMPOUND
		00000006 0000001c         // cred RPCSEC_GSS, 28 bytes
		  00000001                // version RPCSEC_GSS_VERS_1
		  00000000                // gss_proc RPCSEC_GSS_DATA
		  00000007                // seq_num
		  00000002                // service integrity
		  00000005 aabbccdd ee000000 // handle
		00000006 00000004 11223344 // verf RPCSEC_GSS, 4-byte checksum
	`)
	h := decodeRT(t, wire)
	g := h.GSS
	if h.Cred.Flavor != oncrpc.RPCSecGSS || g.Version != 1 || g.Proc != oncrpc.GSSData || g.Seq != 7 ||
		g.Service != oncrpc.GSSSvcIntegrity || !bytes.Equal(g.Handle, []byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee}) ||
		!bytes.Equal(h.Verf.Body, []byte{0x11, 0x22, 0x33, 0x44}) || h.HeaderLen != len(wire) {
		t.Fatalf("decoded %+v", h)
	}
	body, _ := g.AppendBinary(nil)
	if !bytes.Equal(body, h.Cred.Body) {
		t.Errorf("GSSCred encode %x", body)
	}
	if g.Proc.String() != "RPCSEC_GSS_DATA" || g.Service.String() != "rpc_gss_svc_integrity" {
		t.Error("names")
	}
	// Version 3 does not exist.
	bad := bytes.Clone(wire)
	bad[35] = 3
	de := wantReason(t, (&oncrpc.Header{}).DecodeFromBytes(bad), oncrpc.ErrBadGSSVersion)
	if de.Offset != 32 || de.Value != 3 {
		t.Errorf("%+v", de)
	}
	// A handle length running past the credential body.
	bad = bytes.Clone(wire)
	bad[51] = 9
	wantReason(t, (&oncrpc.Header{}).DecodeFromBytes(bad), oncrpc.ErrBadGSSCred)
}

func TestCallOtherFlavors(t *testing.T) {
	// AUTH_DH (3) and an unknown flavor are kept opaque, skipped by length.
	wire := hx(t, `
		00000001 00000000 00000002 000186a5 00000003 00000000 // MOUNT v3 NULL
		00000003 00000008 01020304 05060708  // cred AUTH_DH, 8 opaque bytes
		0000abcd 00000003 0a0b0c00            // verf flavor 0xabcd, 3 bytes + pad
	`)
	h := decodeRT(t, wire)
	if h.Prog != oncrpc.ProgMount || h.Cred.Flavor != oncrpc.AuthDH || len(h.Cred.Body) != 8 ||
		h.Verf.Flavor != 0xabcd || !bytes.Equal(h.Verf.Body, []byte{10, 11, 12}) || h.HeaderLen != len(wire) ||
		h.AuthSys.MachineName != nil || h.Verf.Flavor.String() != "AUTH_FLAVOR(43981)" {
		t.Fatalf("decoded %+v", h)
	}
}

func TestReplies(t *testing.T) {
	cases := []struct {
		name  string
		wire  string
		check func(h *oncrpc.Header) bool
	}{
		{"accepted SUCCESS", `00000001 00000001 00000000 00000000 00000000 00000000 00000000` /* + nfsstat3 NFS3_OK */, func(h *oncrpc.Header) bool {
			return h.ReplyStat == oncrpc.MsgAccepted && h.AcceptStat == oncrpc.Success && h.HeaderLen == 24 && h.HasBody() && len(h.Payload()) == 4
		}},
		{"PROG_MISMATCH", `00000001 00000001 00000000 00000000 00000000 00000002 00000002 00000004`, func(h *oncrpc.Header) bool {
			return h.AcceptStat == oncrpc.ProgMismatch && h.MismatchLow == 2 && h.MismatchHigh == 4 && !h.HasBody() && h.HeaderLen == 32
		}},
		{"PROG_UNAVAIL", `00000001 00000001 00000000 00000000 00000000 00000001`, func(h *oncrpc.Header) bool {
			return h.AcceptStat == oncrpc.ProgUnavail && h.AcceptStat.String() == "PROG_UNAVAIL" && !h.HasBody()
		}},
		{"PROC_UNAVAIL", `00000001 00000001 00000000 00000000 00000000 00000003`, func(h *oncrpc.Header) bool { return h.AcceptStat == oncrpc.ProcUnavail }},
		{"GARBAGE_ARGS", `00000001 00000001 00000000 00000000 00000000 00000004`, func(h *oncrpc.Header) bool { return h.AcceptStat == oncrpc.GarbageArgs }},
		{"SYSTEM_ERR", `00000001 00000001 00000000 00000000 00000000 00000005`, func(h *oncrpc.Header) bool { return h.AcceptStat == oncrpc.SystemErr }},
		{"denied RPC_MISMATCH", `00000001 00000001 00000001 00000000 00000002 00000002`, func(h *oncrpc.Header) bool {
			return h.ReplyStat == oncrpc.MsgDenied && h.RejectStat == oncrpc.RPCMismatch && h.MismatchLow == 2 && h.MismatchHigh == 2 && h.HeaderLen == 24
		}},
		{"denied AUTH_ERROR", `00000001 00000001 00000001 00000001 0000000d`, func(h *oncrpc.Header) bool {
			return h.RejectStat == oncrpc.AuthError && h.AuthStat == oncrpc.RPCSecGSSCredProblem &&
				h.AuthStat.String() == "RPCSEC_GSS_CREDPROBLEM" && h.HeaderLen == 20 && !h.HasBody()
		}},
		{"accepted with GSS verifier", `00000001 00000001 00000000 00000006 00000004 deadbeef 00000000`, func(h *oncrpc.Header) bool {
			return h.Verf.Flavor == oncrpc.RPCSecGSS && len(h.Verf.Body) == 4 && h.HeaderLen == 28
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wire := hx(t, c.wire)
			if h := decodeRT(t, wire); !c.check(h) {
				t.Errorf("decoded %+v", h)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	long := hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000 00000000 00000194`) // body length 404
	long = append(long, make([]byte, 404+8)...)
	gids17 := hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000 00000001 00000054
		00000000 00000000 00000000 00000000 00000011`)
	gids17 = append(gids17, make([]byte, 17*4+8)...)
	name256 := hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000 00000001 00000114
		00000000 00000100`)
	name256 = append(name256, make([]byte, 256+20+8)...)
	for _, c := range []struct {
		name   string
		wire   []byte
		reason oncrpc.Reason
		field  string
		offset int
	}{
		{"msg_type 2", hx(t, `00000001 00000002`), oncrpc.ErrBadMsgType, "mtype", 4},
		{"reply_stat 2", hx(t, `00000001 00000001 00000002`), oncrpc.ErrBadReplyStat, "rbody.stat", 8},
		{"reject_stat 2", hx(t, `00000001 00000001 00000001 00000002`), oncrpc.ErrBadRejectStat, "rreply.stat", 12},
		{"auth body 404 bytes", long, oncrpc.ErrAuthTooLong, "cbody.cred.body", 28},
		{"17 gids", gids17, oncrpc.ErrTooManyGIDs, "cred.authsys.gids", 48},
		{"machinename 256", name256, oncrpc.ErrMachineNameLong, "cred.authsys.machinename", 36},
		{"auth_sys body longer than its fields", hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000
			00000001 00000018 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000`), oncrpc.ErrBadAuthSys, "cred.authsys.gids", 52},
		{"auth_sys body too short", hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000
			00000001 00000008 00000000 00000000 00000000 00000000`), oncrpc.ErrBadAuthSys, "cred.authsys.uid", 40},
		{"verifier cut", hx(t, `00000001 00000000 00000002 000186a3 00000003 00000000 00000000 00000000 00000000`), oncrpc.ErrTruncated, "cbody.verf.body", 36},
		{"empty", nil, oncrpc.ErrTruncated, "xid", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			de := wantReason(t, (&oncrpc.Header{}).DecodeFromBytes(c.wire), c.reason)
			if de.Field != c.field || de.Offset != c.offset {
				t.Errorf("field %s offset %d, want %s %d (%v)", de.Field, de.Offset, c.field, c.offset, de)
			}
		})
	}
	if _, err := (&oncrpc.Header{MsgType: 5}).AppendBinary(nil); err == nil {
		t.Error("encoded msg_type 5")
	}
	if _, err := (&oncrpc.AuthSys{GIDs: make([]uint32, 17)}).AppendBinary(nil); err == nil {
		t.Error("encoded 17 gids")
	}
}

func TestProgramNames(t *testing.T) {
	for p, n := range map[oncrpc.Program]string{100000: "PORTMAP", 100003: "NFS", 100005: "MOUNT", 100021: "NLM",
		100024: "NSM", 100227: "NFSACL", 0x40000000: "NFS_CB", 100099: "100099"} {
		if p.String() != n {
			t.Errorf("%d: %s, want %s", uint32(p), p, n)
		}
	}
}

// Reusing a Header: a call after an AUTH_SYS call keeps no stale gids.
func TestReuse(t *testing.T) {
	var h oncrpc.Header
	if err := h.DecodeFromBytes(hx(t, authSysCall)); err != nil {
		t.Fatal(err)
	}
	if err := h.DecodeFromBytes(hx(t, `00000001 00000001 00000000 00000000 00000000 00000000`)); err != nil {
		t.Fatal(err)
	}
	if h.AuthSys.GIDs != nil || h.Cred.Body != nil || h.Prog != 0 || h.MsgType != oncrpc.Reply {
		t.Errorf("stale %+v", h)
	}
}
