package check

import (
	"slices"
	"strings"
	"testing"
)

// The version 2 size rules (v2_props.go) on captures laid out word by word
// from the draft's XDR (shared/specs/rpcrdma-v2-draft-xdr.txt), as
// TestV2Rules does. The expected values come from the draft's text:
// "Inline Threshold" (4096 without properties; with them the sender's
// SBSIZ and the receiver's RBSIZ), "Transport Properties Model"
// (BAD_PROPVAL), RDMA2_*_MIDDLE (rdma_remaining: the octets still to be
// sent after the piece), "Choosing a Reply Mechanism".

// rpcrdma2_propval encodings: rdma_which, then rdma_data as an XDR
// opaque<> (length, octets, padding).
func prop(which uint32, data ...uint32) []byte {
	return cat(words(which, uint32(4*len(data))), words(data...))
}

// connpropWith is an RDMA2_CONNPROP_* with the given property values.
func connpropWith(htype uint32, props ...[]byte) []byte {
	return cat(prefix(0, 2, 8, htype), words(uint32(len(props))), cat(props...))
}

// bigCall is an NFSv3 NULL Call padded with zero words to n octets (n a
// multiple of 4, at least 40): the payload of a Send of a chosen size.
func bigCall(xid uint32, n int) []byte {
	return cat(nfsNullCall(xid), make([]byte, n-40))
}

const (
	pSBSIZ    = 1
	pRBSIZ    = 2
	pHOSTAUTH = 6
)

func TestV2SizeRules(t *testing.T) {
	const xid = 0x77770001
	// A CALL_INLINE of n octets in all: 16 prefix + 16 (rdma_inv_handle
	// and three absent lists) + the Call.
	callOf := func(n int) []byte {
		return cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, bigCall(xid, n-32))
	}
	reply := nfsNullReply(xid)
	replyInline := cat(prefix(xid, 2, 8, tReplyInline), none, reply)
	props := func(r *v2cap, client, server [][]byte) {
		r.send(true, connpropWith(tConnPropFin, client...), 0)
		r.send(false, connpropWith(tConnPropFin, server...), 0)
	}
	// bigReply is a Reply of n octets, its first 8 in a REPLY_MIDDLE
	// saying rem remain, the rest in a REPLY_INLINE.
	bigReply := cat(reply, make([]byte, 5000-len(reply)))
	contReply := func(r *v2cap, rem uint32) {
		r.send(false, cat(prefix(xid, 2, 8, tReplyMiddle), words(rem), bigReply[:2500]), 0)
		r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, bigReply[2500:]), 0)
	}
	for _, c := range []struct {
		rule, name string
		script     func(r *v2cap)
		want       []string // finding keys ("" for a finding without one)
	}{
		{"THRESH-C2S", "4096 without properties", func(r *v2cap) {
			r.send(true, callOf(4096), 0)
			r.send(false, replyInline, 0)
		}, nil},
		{"THRESH-C2S", "over 4096 without properties", func(r *v2cap) {
			r.send(true, callOf(4100), 0)
		}, []string{""}},
		{"THRESH-C2S", "client SBSIZ 8192, server RBSIZ 6000", func(r *v2cap) {
			props(r, [][]byte{prop(pSBSIZ, 8192)}, [][]byte{prop(pRBSIZ, 6000)})
			r.send(true, callOf(6000), 0)
			r.send(false, replyInline, 0)
		}, nil},
		{"THRESH-C2S", "over the server's RBSIZ 6000", func(r *v2cap) {
			props(r, [][]byte{prop(pSBSIZ, 8192)}, [][]byte{prop(pRBSIZ, 6000)})
			r.send(true, callOf(6004), 0)
		}, []string{""}},
		{"THRESH-C2S", "over the client's SBSIZ 2048 (server RBSIZ 8192)", func(r *v2cap) {
			props(r, [][]byte{prop(pSBSIZ, 2048)}, [][]byte{prop(pRBSIZ, 8192)})
			r.send(true, callOf(2052), 0)
		}, []string{""}},
		{"THRESH-S2C", "server SBSIZ 8192, client RBSIZ default", func(r *v2cap) {
			props(r, nil, [][]byte{prop(pSBSIZ, 8192)})
			r.send(true, callOf(100), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, cat(reply, make([]byte, 4200))), 0)
		}, []string{""}},
		{"V2-PROPVAL", "uint32, default and unknown", func(r *v2cap) {
			props(r, [][]byte{prop(pSBSIZ, 8192), prop(pRBSIZ), prop(99, 1, 2, 3)},
				[][]byte{prop(pHOSTAUTH, 5, 0x41424344, 0x45000000)})
		}, nil},
		{"V2-PROPVAL", "an 8-octet SBSIZ", func(r *v2cap) {
			props(r, [][]byte{prop(pSBSIZ, 0, 8192)}, nil)
		}, []string{""}},
		{"V2-PROPVAL", "a HOSTAUTH whose length lies", func(r *v2cap) {
			props(r, nil, [][]byte{prop(pHOSTAUTH, 9, 0x41424344)})
		}, []string{""}},
		// A bad value voids the whole message: the server's RBSIZ 8192
		// next to it is not applied, so 4096 stays the limit.
		{"THRESH-C2S", "RBSIZ beside a bad value is not applied", func(r *v2cap) {
			props(r, nil, [][]byte{prop(pRBSIZ, 8192), prop(pSBSIZ, 1, 2)})
			r.send(true, callOf(6000), 0)
		}, []string{""}},
		{"V2-REMAINING", "on a word boundary", func(r *v2cap) {
			call := nfsNullCall(xid)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(28), call[:12]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[12:]), 0)
			r.send(false, replyInline, 0)
		}, nil},
		{"V2-REMAINING", "off a word boundary, three pieces", func(r *v2cap) {
			call := nfsNullCall(xid)
			r.send(false, prefix(0, 2, 8, tGrant), 0) // the client may send more than one
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(27), call[:13]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(22), call[13:18]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[18:]), 0)
			r.send(false, replyInline, 0)
		}, nil},
		{"V2-REMAINING", "the final piece carries more than remained", func(r *v2cap) {
			call := nfsNullCall(xid)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(20), call[:12]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[12:]), 0)
		}, []string{"more than remained"}},
		{"V2-REMAINING", "the final piece carries less than remained", func(r *v2cap) {
			call := nfsNullCall(xid)
			r.send(true, cat(prefix(xid, 2, 8, tCallMiddle), words(32), call[:12]), 0)
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, none, call[12:]), 0)
		}, []string{"final piece"}},
		{"V2-REMAINING", "a middle piece counts wrong", func(r *v2cap) {
			r.send(true, callOf(100), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyMiddle), words(16), reply[:8]), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyMiddle), words(16), reply[8:16]), 0) // 8 remain
			r.send(false, cat(prefix(xid, 2, 8, tReplyInline), none, reply[16:]), 0)
		}, []string{"remaining", "final piece"}},
		{"V2-REPLY-CHUNK", "external Reply into the provisioned chunk", func(r *v2cap) {
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, replyChunk(0xEE01, 8192, 0x5000), nfsNullCall(xid)), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyExt), none, replyChunk(0xEE01, 24, 0x5000)), 0)
		}, nil},
		{"V2-REPLY-CHUNK", "external Reply, no chunk provisioned", func(r *v2cap) {
			r.send(true, callOf(100), 0)
			r.send(false, cat(prefix(xid, 2, 8, tReplyExt), none, replyChunk(0xEE01, 24, 0x5000)), 0)
		}, []string{"no Reply chunk"}},
		{"V2-REPLY-CHUNK", "continued Reply, no chunk provisioned", func(r *v2cap) {
			r.send(true, callOf(100), 0)
			contReply(r, 2500)
		}, nil},
		{"V2-REPLY-CHUNK", "continued Reply, chunk too small", func(r *v2cap) {
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, replyChunk(0xEE01, 1024, 0x5000), nfsNullCall(xid)), 0)
			contReply(r, 2500)
		}, nil},
		{"V2-REPLY-CHUNK", "continued Reply, chunk large enough", func(r *v2cap) {
			r.send(true, cat(prefix(xid, 2, 8, tCallInline), words(0), none, none, replyChunk(0xEE01, 8192, 0x5000), nfsNullCall(xid)), 0)
			contReply(r, 2500)
		}, []string{"Reply chunk unused"}},
	} {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			r := newV2Cap(t, true, true)
			c.script(r)
			res := r.run()
			var keys []string
			for _, f := range findings(res, c.rule) {
				keys = append(keys, f.Key)
				t.Log(f.Packets, f.Message)
			}
			if !slices.Equal(keys, c.want) {
				t.Errorf("findings %q, want %q", keys, c.want)
			}
			if !checked(res, c.rule) {
				t.Errorf("%s not evaluated", c.rule)
			}
			if c.want == nil {
				for _, f := range res.Findings {
					if f.Severity == Error && f.Rule != "CHUNK-DDP-ELIGIBLE" && !strings.HasPrefix(f.Rule, "RDMA-") {
						t.Errorf("%s: %s", f.Rule, f.Message)
					}
				}
			}
		})
	}
}

// TestShortSend: a whole Send shorter than the 16-octet prefix on a
// connection carrying RPC-over-RDMA is a truncated header (RFC 8166
// section 4.2: every version starts with rdma_xid, rdma_vers, rdma_credit
// and rdma_proc) — issue 27: it was only in the summary line.
func TestShortSend(t *testing.T) {
	r := newV2Cap(t, true, true)
	r.send(true, words(0x1, 2, 8), 0)
	res := r.run()
	got := findings(res, "HDR-TRUNCATED")
	if len(got) != 1 || got[0].Key != "short prefix" || !slices.Equal(got[0].Packets, []int{4}) { // after the CM REQ, REP and RTU
		t.Errorf("HDR-TRUNCATED %v", got)
	}
}
