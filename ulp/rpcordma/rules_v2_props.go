package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"
	"slices"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Version 2 rules about sizes (draft-ietf-nfsv4-rpcrdma-version-two-07):
// the inline thresholds the Transport Properties set, the property values
// themselves, rdma_remaining of continued messages, and the Reply chunk.

// v2Sizes is what the size rules remember of a connection, by sender.
type v2Sizes struct {
	// rem is the rdma_remaining of the sender's last *_MIDDLE (hasRem:
	// one is open), remXID its rdma_xid, remPkt its last packet; sum the
	// payload octets of the pieces of that message so far.
	rem    [2]uint32
	hasRem [2]bool
	remXID [2]uint32
	remPkt [2]int
	sum    [2]uint64
	// at is the last packet of the message the state was last moved on
	// by (track), and before the state of its sender before it.
	at     [2]int
	before [2]v2Open
}

// v2Open is an open continued message: what its last *_MIDDLE said
// remained, and where.
type v2Open struct {
	open bool
	rem  uint32
	xid  uint32
	pkt  int
}

// track moves the state on by version 2 message m once, however many
// rules ask, and returns the sender's open message before m.
func (s *v2Sizes) track(m *Msg, t rpcrdma.HType) v2Open {
	d := m.Dir.Index()
	last := lastOf(m.Packets)
	if s.at[d] == last && last != 0 {
		return s.before[d]
	}
	s.at[d] = last
	b := v2Open{open: s.hasRem[d], rem: s.rem[d], xid: s.remXID[d], pkt: s.remPkt[d]}
	s.before[d] = b
	if !t.CarriesRPC() {
		if t != rpcrdma.HTypeGrant && t != rpcrdma.HTypeError {
			s.hasRem[d] = false // another message type: the continuation is broken
		}
		return b
	}
	p := v2Payload(m)
	if b.open && m.Common.XID == b.xid {
		s.sum[d] += p
	} else {
		s.sum[d] = p
	}
	middle := t == rpcrdma.HTypeCallMiddle || t == rpcrdma.HTypeReplyMiddle
	s.hasRem[d] = middle
	if middle {
		s.rem[d], s.remXID[d], s.remPkt[d] = m.Hdr.V2.Remaining, m.Common.XID, last
	}
	return b
}

// v2Payload is the number of octets of the RPC message a *_MIDDLE or
// *_INLINE Send carries: everything after the transport header, starting
// with rdma_rpc_first_word (draft-07 "RDMA2_CALL_MIDDLE" ... "The rpc
// message starts here and continues through the end of the
// transmission"); the wire length counts when the capture cut the Send.
func v2Payload(m *Msg) uint64 {
	n := m.Length - m.Hdr.V2.HeaderLen
	if n < 0 {
		return 0
	}
	return uint64(n)
}

// v2Limit returns the inline threshold that bounds version 2 message m and
// how it came about; ok is false when m is not a version 2 message (its
// limit is RFC 8797's). Without a Transport Properties exchange both
// thresholds are 4096; with one, a direction's threshold is the smaller of
// the sender's RDMA2_PROPID_SBSIZ and the receiver's RDMA2_PROPID_RBSIZ
// (draft-07 "Inline Threshold", "Maximum Send Size", "Receive Buffer
// Size"). A CONNPROP-type message is "limited to the default inline
// threshold for the RPC-over-RDMA version that is in effect"
// ("RDMA2_CONNPROP_FINAL"), whatever it publishes.
func v2Limit(c *check.Conn, m *Msg) (limit int, how string, ok bool) {
	if !m.HasPrefix || m.Common.Vers != rpcrdma.Version2 {
		return 0, "", false
	}
	t := rpcrdma.HType(m.Common.Type)
	if t == rpcrdma.HTypeConnPropMid || t == rpcrdma.HTypeConnPropFinal {
		return V2DefaultInline, "the version 2 default (a CONNPROP-type message is limited to it)", true
	}
	var p *V2Props
	if rs := Stats(c.Connection); rs != nil {
		p = rs.V2Props
	}
	from := m.Dir.Index()
	limit = p.Threshold(from)
	if !p.Exchanged() {
		return limit, "the version 2 default: no Transport Properties exchanged", true
	}
	s, r := &p.Sides[from], &p.Sides[1-from]
	prop := func(side *V2PropSide, id rpcrdma.PropID, v uint32) string {
		if side.Has(id) {
			return fmt.Sprintf("%s %d", id, v)
		}
		return fmt.Sprintf("%s %d (default)", id, v)
	}
	return limit, fmt.Sprintf("version 2 Transport Properties: %s's %s, %s's %s",
		sideName[from], prop(s, rpcrdma.PropMaxSendSize, s.SBSIZ), sideName[1-from], prop(r, rpcrdma.PropRecvBufSize, r.RBSIZ)), true
}

// v2Threshold reports THRESH-C2S/S2C for a version 2 message (the hook in
// checkThreshold); done is false for a version 1 message.
func v2Threshold(c *check.Conn, m *Msg, dir dissect.Direction) (done bool) {
	limit, how, ok := v2Limit(c, m)
	if !ok {
		return false
	}
	if m.Length > limit {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
			"Send of %d bytes (%s %s), %s inline threshold %d (%s)",
			m.Length, rpcrdma.HType(m.Common.Type), describe(m), dir, limit, how)})
	}
	return true
}

// checkV2PropVal: V2-PROPVAL (draft-07 "Transport Properties Model": when
// the receiver recognizes rdma_which and rdma_data does not hold the
// property's XDR type, it "MUST report the error RDMA2_ERR_BAD_PROPVAL";
// "RDMA2_ERR_BAD_PROPVAL": it discards the message "without applying any
// of its property settings").
func checkV2PropVal(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	t, ok := v2Header(m)
	if !ok || (t != rpcrdma.HTypeConnPropMid && t != rpcrdma.HTypeConnPropFinal) {
		return
	}
	c.Checked()
	for i, v := range m.Hdr.V2.Props {
		if why := BadPropVal(v); why != "" {
			report(c, check.Finding{Packets: m.Packets, Message: fmt.Sprintf(
				"%s from the %s: property %d: %s; the receiver answers RDMA2_ERR_BAD_PROPVAL and applies none of the message's properties",
				t, sideOf(m.Dir), i, why)})
			return
		}
	}
}

// checkV2Remaining: V2-REMAINING (draft-07 "RDMA2_CALL_MIDDLE",
// "RDMA2_REPLY_MIDDLE": "The sender sets the rdma_remaining field to the
// number of bytes in the RPC ... message payload that remain to be sent").
// Each later piece of the message must carry no more than the previous
// piece said remained; a *_MIDDLE's own rdma_remaining must be what is
// left after it, and the *_INLINE that ends the message must carry
// exactly what remained. A piece that does not continue the message
// (V2-CONTINUATION) ends the count.
func checkV2Remaining(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	t, ok := v2Header(m)
	if !ok {
		return
	}
	b := connOf(c).v2.sizes.track(m, t)
	if !t.CarriesRPC() || !b.open || m.Common.XID != b.xid {
		return
	}
	c.Checked()
	p := v2Payload(m)
	middle := t == rpcrdma.HTypeCallMiddle || t == rpcrdma.HTypeReplyMiddle
	rem := uint64(b.rem)
	pk := []int{b.pkt, lastOf(m.Packets)}
	switch {
	case p > rem:
		report(c, check.Finding{XID: xidOf(m), Packets: pk, Key: "more than remained", Message: fmt.Sprintf(
			"%s XID 0x%08x carries %d octets of the RPC message, but the piece before it (packet %d) said %d remained",
			t, m.Common.XID, p, b.pkt, rem)})
	case middle && uint64(m.Hdr.V2.Remaining) != rem-p:
		report(c, check.Finding{XID: xidOf(m), Packets: pk, Key: "remaining", Message: fmt.Sprintf(
			"%s XID 0x%08x has rdma_remaining %d, but %d remained before it (packet %d) and it carries %d: %d remain",
			t, m.Common.XID, m.Hdr.V2.Remaining, rem, b.pkt, p, rem-p)})
	case !middle && p != rem:
		report(c, check.Finding{XID: xidOf(m), Packets: pk, Key: "final piece", Message: fmt.Sprintf(
			"%s XID 0x%08x ends the message with %d octets of it, but the piece before it (packet %d) said %d remained",
			t, m.Common.XID, p, b.pkt, rem)})
	}
}

// checkV2ReplyChunk: V2-REPLY-CHUNK (draft-07 "RDMA2_REPLY_EXTERNAL": its
// rdma_reply "MUST contain exactly one Reply chunk", the one the Requester
// provisioned; "Choosing a Reply Mechanism": "If a Requester provided a
// Reply chunk and the reduced Payload stream is larger than the reply
// inline threshold, the Responder MUST use the Requester-provided Reply
// chunk for the reply"; a Reply chunk too small for the Reply leaves
// Message Continuation to the Responder).
func checkV2ReplyChunk(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	t, ok := v2Header(m)
	if !ok {
		return
	}
	connOf(c).v2.sizes.track(m, t)
	if m.Kind != KindReply || (t != rpcrdma.HTypeReplyExternal && t != rpcrdma.HTypeReplyInline) {
		return
	}
	k := replyCall(c, m)
	if k == nil {
		return
	}
	c.Checked()
	pk := callAndReply(k, m)
	if t == rpcrdma.HTypeReplyExternal {
		switch {
		case !k.HasReply:
			report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "no Reply chunk", Message: fmt.Sprintf(
				"RDMA2_REPLY_EXTERNAL XID 0x%08x conveys the Reply in a Reply chunk, but its Call (packet %d) provisioned none", k.XID, pk[0])})
		case !m.Hdr.V2.HasReplyChunk:
			report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "no rdma_reply", Message: fmt.Sprintf(
				"RDMA2_REPLY_EXTERNAL XID 0x%08x has no Reply chunk in rdma_reply: it must carry exactly the one the Call (packet %d) provisioned", k.XID, pk[0])})
		}
		return
	}
	if !k.HasReply || m.Truncated {
		return
	}
	// The Reply's whole Payload stream: this piece and the earlier ones.
	total := connOf(c).v2.sizes.sum[m.Dir.Index()]
	limit, how, _ := v2Limit(c, m)
	var room uint64
	for _, sg := range k.Reply {
		room += uint64(sg.Length)
	}
	if total <= uint64(limit) || room < total {
		return
	}
	how2 := "in one Send"
	if all := m.Rec.Txn.Reply.Packets; len(all) > len(m.Packets) {
		how2 = "by Message Continuation"
		pk = slices.Concat(lastPkt(k.Packets), all) // every piece of the Reply
	}
	report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "Reply chunk unused", Message: fmt.Sprintf(
		"the Reply to XID 0x%08x is %d octets, over the %d-octet reply inline threshold (%s), and went %s although its Call (packet %d) provisioned a %d-octet Reply chunk: the Responder must use it",
		k.XID, total, limit, how, how2, pk[0], room)})
}
