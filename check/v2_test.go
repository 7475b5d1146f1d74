package check

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/pvtdata"
)

// RPC-over-RDMA version 2 (draft-ietf-nfsv4-rpcrdma-version-two-07) as the
// rules see it. No implementation exists to capture from: each test lays
// out the transport headers word by word from the draft's XDR
// (shared/specs/rpcrdma-v2-draft-xdr.txt), puts them on a RoCEv2
// connection set up by RDMA-CM to the NFS port (synth), writes the capture
// and runs every rule on it as `rdmashark check` does.

// v2cap builds one connection's capture.
type v2cap struct {
	t      *testing.T
	s      *synth.Sequence
	c      synth.Conn
	psn    [2]uint32 // next PSN of the client's, the server's requests
	msn    [2]uint32
	cl, sv synth.Node
}

// newV2Cap sets the connection up; clientR and serverR are the R bits of
// the RFC 8797 private data each side sends.
func newV2Cap(t *testing.T, clientR, serverR bool) *v2cap {
	r := &v2cap{t: t, s: &synth.Sequence{Options: synth.Options{Encap: synth.RoCEv2}}, cl: synth.Client(), sv: synth.Server()}
	r.c = synth.Conn{Client: r.cl, Server: r.sv, ClientCommID: 0x2001, ServerCommID: 0x2002,
		ClientQPN: 0x41, ServerQPN: 0x42, ClientPSN: 1000, ServerPSN: 5000, ServiceID: synth.NFSService}
	msg := func(rbit bool) []byte {
		m, err := synth.RPCRDMAMessage(1, 0, rbit, 4096, 4096)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	cma := &pvtdata.CMAHeader{Version: pvtdata.CMAVersion, IPVersion: 4, SrcPort: 40000, SrcAddr: r.cl.IP, DstAddr: r.sv.IP}
	var err error
	if r.c.ClientPD, err = synth.PrivateData(roce.CMREQPrivateDataLength, cma, pvtdata.CMAHeaderLen, msg(clientR)); err != nil {
		t.Fatal(err)
	}
	if r.c.ServerPD, err = synth.PrivateData(roce.CMREPPrivateDataLength, nil, 0, msg(serverR)); err != nil {
		t.Fatal(err)
	}
	r.s.CM(r.cl, r.sv, 0x10, r.c.REQ())
	r.s.CM(r.sv, r.cl, 0x10, r.c.REP())
	r.s.CM(r.cl, r.sv, 0x11, r.c.RTU())
	// Each side's requests start at the PSN its peer's CM message names
	// (IBA Vol 1 12.6.5, 12.6.8): the client's at the REP's, the
	// server's at the REQ's.
	r.psn = [2]uint32{r.c.ServerPSN, r.c.ClientPSN}
	return r
}

func (r *v2cap) ends(fromClient bool) (src, dst synth.Node, dstQP, srcQP uint32, i int) {
	if fromClient {
		return r.cl, r.sv, r.c.ServerQPN, r.c.ClientQPN, 0
	}
	return r.sv, r.cl, r.c.ClientQPN, r.c.ServerQPN, 1
}

// send sends msg in one SEND_ONLY (With Invalidate of inv when inv != 0),
// acknowledged by the peer.
func (r *v2cap) send(fromClient bool, msg []byte, inv uint32) {
	src, dst, dqp, sqp, i := r.ends(fromClient)
	op := roce.OpRCSendOnly
	if inv != 0 {
		op = roce.OpRCSendOnlyWithInvalidate
	}
	h := synth.Send(op, dqp, r.psn[i])
	h.IETH.RKey = inv
	r.s.Packet(src, dst, h, msg)
	r.msn[i]++
	r.s.Packet(dst, src, synth.Ack(sqp, r.psn[i], r.msn[i], synth.ACKSyndrome(31)), nil)
	r.psn[i]++
}

// read has the server RDMA Read data from the client's (stag, va).
func (r *v2cap) read(stag uint32, va uint64, data []byte) {
	r.s.Packet(r.sv, r.cl, synth.ReadRequest(r.c.ClientQPN, r.psn[1], va, stag, uint32(len(data))), nil)
	r.msn[1]++
	r.s.Packet(r.cl, r.sv, synth.ReadResponse(roce.OpRCRDMAReadResponseOnly, r.c.ServerQPN, r.psn[1], r.msn[1]), data)
	r.psn[1]++
}

// run checks the capture.
func (r *v2cap) run() *Result {
	t := r.t
	t.Helper()
	if r.s.Err != nil {
		t.Fatal(r.s.Err)
	}
	var b bytes.Buffer
	if err := synth.WritePcap(&b, synth.LinkEthernet, r.s.Frames, synth.PcapOptions{}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "v2.pcap")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return runFile(t, name, Config{})
}

// findings returns the findings of rule id.
func findings(res *Result, id string) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.Rule == id {
			out = append(out, f)
		}
	}
	return out
}

// checked tells whether rule id was evaluated on some connection.
func checked(res *Result, id string) bool {
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Rule == id && ch.Checked > 0 {
				return true
			}
		}
	}
	return false
}

// XDR words (RFC 4506: big-endian 32-bit units).
func words(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }

// Draft-07 rdma_htype values ("Transport Header Types").
const (
	tError        = 4
	tGrant        = 5
	tConnPropMid  = 6
	tConnPropFin  = 7
	tCallExternal = 8
	tCallMiddle   = 9
	tCallInline   = 10
	tReplyExt     = 11
	tReplyMiddle  = 12
	tReplyInline  = 13
)

// prefix is rpcrdma_common: rdma_xid, rdma_vers, rdma_credit, rdma_htype.
func prefix(xid, vers, credit, htype uint32) []byte { return words(xid, vers, credit, htype) }

// readSeg is one rpcrdma2_read_list entry: the discriminator 1, then
// rdma_position and the rpcrdma2_segment (handle, length, 64-bit offset).
func readSeg(pos, handle, length uint32, off uint64) []byte {
	return words(1, pos, handle, length, uint32(off>>32), uint32(off))
}

// none is an absent optional list (discriminator 0).
var none = words(0)

// nfsNullCall is an ONC RPC Call (RFC 5531) of NFSv3 NULL with AUTH_NONE:
// xid, CALL, rpcvers 2, prog 100003, vers 3, proc 0, cred and verf
// AUTH_NONE with no body — 40 octets.
func nfsNullCall(xid uint32) []byte { return words(xid, 0, 2, 100003, 3, 0, 0, 0, 0, 0) }

// nfsNullReply is its Reply: xid, REPLY, MSG_ACCEPTED, verf AUTH_NONE,
// SUCCESS — 24 octets.
func nfsNullReply(xid uint32) []byte { return words(xid, 1, 0, 0, 0, 0) }

// TestV2ContinuedMessageXID: draft-07 "Message Continuation": only the
// first piece of a continued message starts with the RPC message's XID;
// the later pieces continue it mid-message, so HDR-XID-MISMATCH must
// compare rdma_xid with the first piece only.
func TestV2ContinuedMessageXID(t *testing.T) {
	for _, breakIt := range []bool{false, true} {
		r := newV2Cap(t, true, true)
		const xid = 0x11110001
		call := nfsNullCall(xid)
		first := uint32(xid)
		if breakIt {
			first = 0x99999999 // the first piece's RPC XID differs: a real mismatch
			call = nfsNullCall(first)
		}
		// RDMA2_CALL_MIDDLE: rdma_remaining (octets of the message still to
		// come), then the first 12 octets of the Call.
		r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(28), call[:12]), 0)
		// RDMA2_CALL_INLINE: rdma_inv_handle 0, no reads, writes or reply
		// chunk, then the remaining 28 octets (starting with prog).
		r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[12:]), 0)
		reply := nfsNullReply(first)
		r.send(false, cat(prefix(xid, 2, 8, tReplyMiddle), words(16), reply[:8]), 0)
		r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, reply[8:]), 0)
		res := r.run()
		got := findings(res, "HDR-XID-MISMATCH")
		if !breakIt && len(got) != 0 {
			t.Errorf("valid continued messages: %v", got)
		}
		if breakIt && len(got) != 2 {
			t.Errorf("first pieces with another XID: %d findings, want 2 (the Call's and the Reply's): %v", len(got), got)
		}
	}
}

// callExternal is an RDMA2_CALL_EXTERNAL: rdma_inv_handle, the Call chunk
// (rdma_call), then rdma_reads; no provisional Write list or Reply chunk.
func callExternal(xid, inv uint32, call, reads []byte) []byte {
	return cat(prefix(xid, 2, 8, tCallExternal), words(inv), call, none, reads, none, none)
}

// TestV2CallChunkHandles: a Reply With Invalidate may name a handle of the
// Call chunk of an RDMA2_CALL_EXTERNAL (draft-07 "Remote Invalidation":
// rdma_inv_handle "matches one of the rdma_handle fields in that header";
// the Call chunk is one of them): INV-FOREIGN-STAG counts it as
// advertised, and still finds a handle the Call did not advertise.
func TestV2CallChunkHandles(t *testing.T) {
	const xid, h = 0x22220001, 0xC0FFEE01
	for _, inv := range []uint32{h, 0xBAD00001} {
		r := newV2Cap(t, true, true)
		call := nfsNullCall(xid)
		r.send(true, callExternal(xid, h, readSeg(0, h, uint32(len(call)), 0x1000), none), 0)
		r.read(h, 0x1000, call)
		r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, nfsNullReply(xid)), inv)
		res := r.run()
		got := findings(res, "INV-FOREIGN-STAG")
		if want := map[bool]int{true: 0, false: 1}[inv == h]; len(got) != want || !checked(res, "INV-FOREIGN-STAG") {
			t.Errorf("invalidating 0x%08x: %d findings, want %d: %v", inv, len(got), want, got)
		}
	}
}

// TestV2ReadPositions: Read chunk positions are offsets in the Call's
// Payload stream (draft-07 "Read Chunks"); for an RDMA2_CALL_EXTERNAL that
// stream is in the Call chunk, for a continued Call it is every piece's
// RPC octets together — not the octets of the last Send.
func TestV2ReadPositions(t *testing.T) {
	const xid, hc, hr = 0x33330001, 0xCA110001, 0xDA7A0001
	call := nfsNullCall(xid) // the Payload stream: 40 octets
	for _, c := range []struct {
		name string
		pos  uint32
		want int
	}{{"at the end", 40, 0}, {"past the end", 44, 1}} {
		t.Run("external "+c.name, func(t *testing.T) {
			r := newV2Cap(t, true, true)
			r.send(true, callExternal(xid, 0, readSeg(0, hc, 40, 0x1000), cat(readSeg(c.pos, hr, 8, 0x2000), none)), 0)
			r.read(hc, 0x1000, call)
			r.read(hr, 0x2000, words(7, 7))
			r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, nfsNullReply(xid)), 0)
			if got := findings(r.run(), "CHUNK-READ-POSITION"); len(got) != c.want {
				t.Errorf("%d findings, want %d: %v", len(got), c.want, got)
			}
		})
		t.Run("continued "+c.name, func(t *testing.T) {
			r := newV2Cap(t, true, true)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(28), call[:12]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), readSeg(c.pos, hr, 8, 0x2000), none, none, none, call[12:]), 0)
			r.read(hr, 0x2000, words(7, 7))
			r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, nfsNullReply(xid)), 0)
			res := r.run()
			if got := findings(res, "CHUNK-READ-POSITION"); len(got) != c.want {
				t.Errorf("%d findings, want %d: %v", len(got), c.want, got)
			}
			// The Read chunk came with the last piece: the server's Read
			// of it is advertised.
			if got := findings(res, "RDMA-READ-UNADVERTISED"); len(got) != 0 {
				t.Errorf("RDMA-READ-UNADVERTISED: %v", got)
			}
		})
	}
}

// replyChunk is a present rpcrdma2_write_chunk of one segment (the
// discriminator 1, the segment count, then the segment).
func replyChunk(handle, length uint32, off uint64) []byte {
	return words(1, 1, handle, length, uint32(off>>32), uint32(off))
}

// TestV2RemoteInvalidation: version 2 solicits remote invalidation per
// Call with rdma_inv_handle, whatever RFC 8797's R bits (version 1's) say;
// the Responder must use exactly that value (draft-07 "Remote
// Invalidation"). INV-NOT-NEGOTIATED does not judge version 2 messages;
// INV-V2-HANDLE does.
func TestV2RemoteInvalidation(t *testing.T) {
	const xid, h, h2 = 0x44440001, 0x1AB00001, 0x1AB00002
	for _, c := range []struct {
		name     string
		inv, got uint32 // the Call's rdma_inv_handle, the STag the Reply invalidates
		want     string // INV-V2-HANDLE's finding key, "" for none
	}{
		{"solicited and used", h, h, ""},
		{"solicited, plain Send", h, 0, ""},
		{"not solicited", 0, h, "not solicited"},
		{"another handle", h, h2, "other handle"},
		{"solicits a handle not in the header", 0xDEAD0001, 0, "not a handle of the Call"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newV2Cap(t, false, false) // both R bits clear: version 1 would forbid invalidation
			// RDMA2_CALL_INLINE: rdma_inv_handle, no Read list, a Write list
			// of one chunk (handle h2), the provisional Reply chunk (handle h).
			writes := cat(words(1, 1, h2, 4096, 0, 0x3000), none)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(c.inv), none, writes, replyChunk(h, 1024, 0x4000), nfsNullCall(xid)), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, nfsNullReply(xid)), c.got)
			res := r.run()
			if got := findings(res, "INV-NOT-NEGOTIATED"); len(got) != 0 {
				t.Errorf("INV-NOT-NEGOTIATED on version 2: %v", got)
			}
			got := findings(res, "INV-V2-HANDLE")
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("INV-V2-HANDLE: %v", got)
			case c.want != "" && (len(got) != 1 || got[0].Key != c.want):
				t.Errorf("INV-V2-HANDLE: %v, want one %q", got, c.want)
			}
			if !checked(res, "INV-V2-HANDLE") {
				t.Error("INV-V2-HANDLE not evaluated")
			}
			for _, cr := range res.Connections {
				if u := cr.Usage; u != nil && (!u.Version2 || u.Negotiated != nil || u.SolicitingCalls != map[bool]int{true: 1, false: 0}[c.inv != 0]) {
					t.Errorf("remote invalidation summary %+v", *u)
				}
				for _, ch := range cr.Checks {
					if ch.Rule == "INV-NOT-NEGOTIATED" || ch.Rule == "CREDIT-OVERRUN" {
						t.Errorf("%s is listed for a version 2 connection", ch.Rule)
					}
				}
			}
		})
	}
}

// TestErrVersOfUnknownVersion: a Responder refuses a request of an
// unknown rdma_vers with RDMA_ERROR/ERR_VERS (draft-07 RDMA2_ERR_VERS),
// whose XDR every version keeps (RFC 8166 section 4), so the answer may be
// sent in the refused version: HDR-VERSION finds the request's version,
// not the answer's, and sees the Call answered by ERR_VERS.
func TestErrVersOfUnknownVersion(t *testing.T) {
	for _, code := range []uint32{1, 2} { // ERR_VERS, then ERR_CHUNK: not the answer the rule wants
		r := newV2Cap(t, true, true)
		const xid = 0x55550001
		// Version 3 is unknown: only its prefix is known.
		r.send(true, cat(prefix(xid, 3, 1, 0), nfsNullCall(xid)), 0)
		body := words(code, 1, 2) // rdma_err, rdma_vers_low 1, rdma_vers_high 2
		if code != 1 {
			body = words(code)
		}
		r.send(false, cat(prefix(xid, 3, 1, tError), body), 0)
		res := r.run()
		var keys []string
		for _, f := range findings(res, "HDR-VERSION") {
			keys = append(keys, f.Key)
		}
		want := []string{"vers 3"}
		if code != 1 {
			want = []string{"vers 3", "vers 3", "not ERR_VERS"}
		}
		slices.Sort(keys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Errorf("rdma_err %d: HDR-VERSION %q, want %q", code, keys, want)
		}
	}
}

// TestV2Rules runs each version 2 rule on a capture that follows the
// draft and on captures that break it, laid out from the draft's XDR.
func TestV2Rules(t *testing.T) {
	const xid = 0x66660001
	call, reply := nfsNullCall(xid), nfsNullReply(xid)
	callInline := func(reads []byte) []byte {
		return cat(prefix(xid, 2, 8, tCallInline), words(0), reads, none, none, call)
	}
	replyInline := cat(prefix(xid, 2, 8, tReplyInline), none, reply)
	connprop := func(htype uint32) []byte { return cat(prefix(0, 2, 8, htype), words(0)) } // an empty rdma_props
	v1msg := func(x uint32, rpc []byte) []byte { return cat(words(x, 1, 8, 0), none, none, none, rpc) }
	for _, c := range []struct {
		rule, name string
		script     func(r *v2cap)
		want       []string // finding keys ("" for a finding without one)
	}{
		{"V2-CONTINUATION", "continued Call and properties", func(r *v2cap) {
			r.send(true, connprop(tConnPropMid), 0)
			r.send(true, connprop(tConnPropFin), 0)
			r.send(false, connprop(tConnPropFin), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(28), call[:12]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[12:]), 0)
			r.send(false, replyInline, 0)
		}, nil},
		{"V2-CONTINUATION", "CALL_MIDDLE followed by another XID", func(r *v2cap) {
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(28), call[:12]), 0)
			r.send(true, cat(prefix(xid+1, 2, 8, tCallInline), words(0), none, none, none, nfsNullCall(xid+1)), 0)
		}, []string{"broken continuation"}},
		{"V2-CONTINUATION", "REPLY_MIDDLE followed by a GRANT", func(r *v2cap) {
			r.send(true, callInline(none), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyMiddle), words(16), reply[:8]), 0)
			r.send(false, prefix(0, 2, 8, tGrant), 0)
		}, []string{"broken continuation"}},
		{"V2-CONTINUATION", "CONNPROP after CONNPROP_FINAL", func(r *v2cap) {
			r.send(true, connprop(tConnPropFin), 0)
			r.send(true, connprop(tConnPropMid), 0)
			r.send(true, connprop(tConnPropFin), 0)
		}, []string{"CONNPROP after CONNPROP_FINAL", "CONNPROP after CONNPROP_FINAL"}},
		{"V2-GRANT-XID", "zero", func(r *v2cap) { r.send(false, prefix(0, 2, 8, tGrant), 0) }, nil},
		{"V2-GRANT-XID", "non-zero", func(r *v2cap) { r.send(false, prefix(5, 2, 8, tGrant), 0) }, []string{""}},
		{"V2-CALL-CHUNK", "Call chunk at position 0", func(r *v2cap) {
			r.send(true, callExternal(xid, 0, cat(readSeg(0, 0xCA11, 40, 0x1000), readSeg(0, 0xCA12, 0, 0x2000)), none), 0)
			r.read(0xCA11, 0x1000, call)
			r.send(false, replyInline, 0)
		}, nil},
		{"V2-CALL-CHUNK", "no Call chunk", func(r *v2cap) {
			r.send(true, cat(prefix(xid, 2, 8, tCallExternal), words(0), none, none, none, none), 0)
		}, []string{"no Call chunk"}},
		{"V2-CALL-CHUNK", "Call chunk at position 4", func(r *v2cap) {
			r.send(true, callExternal(xid, 0, readSeg(4, 0xCA11, 40, 0x1000), none), 0)
		}, []string{"Call chunk position"}},
		{"V2-READ-POSITION-ZERO", "data item at 40", func(r *v2cap) {
			r.send(true, callInline(cat(readSeg(40, 0xDA7A, 8, 0x3000), none)), 0)
		}, nil},
		{"V2-READ-POSITION-ZERO", "position zero", func(r *v2cap) {
			r.send(true, callInline(cat(readSeg(0, 0xDA7A, 40, 0x3000), none)), 0)
		}, []string{""}},
		// Before any message from the server the client's limit is 1: it
		// may post with 0 and 1 Sends before (the draft's "greater than").
		{"V2-CREDIT-OVERRUN", "within the grant", func(r *v2cap) {
			r.send(true, prefix(0, 2, 4, tGrant), 0)
			r.send(false, prefix(0, 2, 3, tGrant), 0) // sent 0 + 3 advertised
			r.send(true, prefix(0, 2, 4, tGrant), 0)
			r.send(true, prefix(0, 2, 4, tGrant), 0)
			r.send(true, prefix(0, 2, 4, tGrant), 0) // 3 sent before, limit 3
		}, nil},
		{"V2-CREDIT-OVERRUN", "past the initial credit", func(r *v2cap) {
			r.send(true, prefix(0, 2, 4, tGrant), 0)
			r.send(true, prefix(0, 2, 4, tGrant), 0)
			r.send(true, prefix(0, 2, 4, tGrant), 0) // 2 sent before, limit 1
			r.send(true, prefix(0, 2, 4, tGrant), 0) // the same overrun
		}, []string{""}},
		{"V2-VERS-MISMATCH", "fallback after ERR_VERS", func(r *v2cap) {
			r.send(true, callInline(none), 0)
			r.send(false, cat(prefix(xid, 2, 8, tError), words(1, 1, 1)), 0) // RDMA2_ERR_VERS, versions 1..1
			r.send(true, v1msg(xid+1, nfsNullCall(xid+1)), 0)
			r.send(false, v1msg(xid+1, nfsNullReply(xid+1)), 0)
		}, nil},
		{"V2-VERS-MISMATCH", "version 1 after version 2", func(r *v2cap) {
			r.send(true, callInline(none), 0)
			r.send(false, replyInline, 0)
			r.send(true, v1msg(xid+1, nfsNullCall(xid+1)), 0)
		}, []string{""}},
	} {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			r := newV2Cap(t, true, true)
			c.script(r)
			res := r.run()
			var keys []string
			for _, f := range findings(res, c.rule) {
				keys = append(keys, f.Key)
			}
			if !slices.Equal(keys, c.want) {
				t.Errorf("findings %q, want %q", keys, c.want)
			}
			if !checked(res, c.rule) {
				t.Errorf("%s not evaluated", c.rule)
			}
			if c.want == nil {
				// A capture that follows the draft has no error at all
				// (but the NULL Calls' data items, which NFS does not
				// have: CHUNK-DDP-ELIGIBLE is right about them).
				for _, f := range res.Findings {
					if f.Severity == Error && f.Rule != "CHUNK-DDP-ELIGIBLE" {
						t.Errorf("%s: %s", f.Rule, f.Message)
					}
				}
			}
		})
	}
}
