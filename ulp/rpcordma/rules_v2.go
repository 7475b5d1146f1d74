package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// RPC-over-RDMA version 2 rules (draft-ietf-nfsv4-rpcrdma-version-two-07).
// Each judges only version 2 messages (check.Rule.Version 2).

// v2State is what the version 2 rules remember of a connection, by sender.
type v2State struct {
	// open is the *_MIDDLE type a sender's last version 2 message left
	// open (0: none), with its rdma_xid and last packet.
	open    [2]rpcrdma.HType
	openXID [2]uint32
	openPkt [2]int
	// final: the sender sent RDMA2_CONNPROP_FINAL (its packet).
	final [2]int
	// ok: the sender sent a version 2 message other than RDMA2_ERROR;
	// settled: both did, so version 2 is in effect on the connection.
	ok      [2]bool
	settled bool
	// sent counts each side's Sends; granted is the largest rdma_credit
	// each side received in a version 2 message (hasGrant: one came).
	sent     [2]uint64
	granted  [2]uint32
	hasGrant [2]bool
	overrun  [2]bool // V2-CREDIT-OVERRUN reports once per overrun
	// sizes: V2-REMAINING and V2-REPLY-CHUNK (v2_props.go).
	sizes v2Sizes
}

// v2Header returns m's version 2 header type, ok false when m is not a
// version 2 message whose header decoded.
func v2Header(m *Msg) (rpcrdma.HType, bool) {
	if !m.HasPrefix || m.Common.Vers != rpcrdma.Version2 || m.HdrErr != nil {
		return 0, false
	}
	return m.Hdr.V2.HType, true
}

// continues tells which types may follow a *_MIDDLE type (draft-07: "If
// a peer follows an RDMA2_CALL_MIDDLE header type with anything other than
// an RDMA2_CALL_MIDDLE message or an RDMA2_CALL_INLINE message, the
// receiver MUST respond with ... RDMA2_ERR_INVAL_CONT"; likewise for
// REPLY_MIDDLE and CONNPROP_MIDDLE).
func continues(open, next rpcrdma.HType) bool {
	switch open {
	case rpcrdma.HTypeCallMiddle:
		return next == rpcrdma.HTypeCallMiddle || next == rpcrdma.HTypeCallInline
	case rpcrdma.HTypeReplyMiddle:
		return next == rpcrdma.HTypeReplyMiddle || next == rpcrdma.HTypeReplyInline
	case rpcrdma.HTypeConnPropMid:
		return next == rpcrdma.HTypeConnPropMid || next == rpcrdma.HTypeConnPropFinal
	}
	return true
}

// checkV2Continuation: V2-CONTINUATION (draft-07 RDMA2_CALL_MIDDLE,
// RDMA2_REPLY_MIDDLE, RDMA2_CONNPROP_MIDDLE, RDMA2_CONNPROP_FINAL and
// "RDMA2_ERR_INVAL_CONT").
func checkV2Continuation(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	t, ok := v2Header(m)
	if !ok {
		return
	}
	c.Checked()
	s := &connOf(c).v2
	d := m.Dir.Index()
	last := lastOf(m.Packets)
	if open := s.open[d]; open != 0 {
		sameMsg := open == rpcrdma.HTypeConnPropMid || m.Common.XID == s.openXID[d]
		if !continues(open, t) || !sameMsg {
			report(c, check.Finding{XID: xidOf(m), Packets: []int{s.openPkt[d], last}, Key: "broken continuation", Message: fmt.Sprintf(
				"the %s's %s XID 0x%08x (packet %d) is followed by %s XID 0x%08x: a continued message must go on with its own *_MIDDLE or end with its *_INLINE/CONNPROP_FINAL (the receiver answers RDMA2_ERR_INVAL_CONT)",
				sideOf(m.Dir), open, s.openXID[d], s.openPkt[d], t, m.Common.XID)})
		}
	}
	if (t == rpcrdma.HTypeConnPropMid || t == rpcrdma.HTypeConnPropFinal) && s.final[d] != 0 {
		report(c, check.Finding{XID: xidOf(m), Packets: []int{s.final[d], last}, Key: "CONNPROP after CONNPROP_FINAL", Message: fmt.Sprintf(
			"the %s sends %s after its RDMA2_CONNPROP_FINAL (packet %d): no CONNPROP-type message may follow it (the receiver answers RDMA2_ERR_INVAL_CONT)",
			sideOf(m.Dir), t, s.final[d])})
	}
	if t == rpcrdma.HTypeConnPropFinal && s.final[d] == 0 {
		s.final[d] = last
	}
	s.open[d], s.openXID[d], s.openPkt[d] = 0, 0, 0
	switch t {
	case rpcrdma.HTypeCallMiddle, rpcrdma.HTypeReplyMiddle, rpcrdma.HTypeConnPropMid:
		s.open[d], s.openXID[d], s.openPkt[d] = t, m.Common.XID, last
	}
}

func lastOf(pk []int) int {
	if len(pk) == 0 {
		return 0
	}
	return pk[len(pk)-1]
}

// checkV2GrantXID: V2-GRANT-XID (draft-07 "RDMA2_GRANT": "Senders MUST set
// the rdma_xid field to zero").
func checkV2GrantXID(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if t, ok := v2Header(m); !ok || t != rpcrdma.HTypeGrant {
		return
	}
	c.Checked()
	if m.Common.XID != 0 {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
			"RDMA2_GRANT from the %s has rdma_xid 0x%08x: its rdma_xid is unused and senders must set it to zero", sideOf(m.Dir), m.Common.XID)})
	}
}

// checkV2CallChunk: V2-CALL-CHUNK (draft-07 "RDMA2_CALL_EXTERNAL" and
// "Special Format": the Responder reads the Payload stream from the Call
// chunk; "Every Read segment in this chunk MUST contain zero (0) in its
// Position field").
func checkV2CallChunk(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if t, ok := v2Header(m); !ok || t != rpcrdma.HTypeCallExternal {
		return
	}
	c.Checked()
	call := m.Hdr.V2.CallList
	if len(call) == 0 {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "no Call chunk", Message: fmt.Sprintf(
			"RDMA2_CALL_EXTERNAL XID 0x%08x has no Call chunk: the Call it conveys is nowhere", m.Common.XID)})
		return
	}
	for i, s := range call {
		if s.Position != 0 {
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "Call chunk position", Message: fmt.Sprintf(
				"segment %d of the Call chunk of XID 0x%08x has position %d: every Read segment of the Call chunk must have position 0", i, m.Common.XID, s.Position)})
			return
		}
	}
}

// checkV2ReadZero: V2-READ-POSITION-ZERO (draft-07 RDMA2_CALL_EXTERNAL,
// RDMA2_CALL_INLINE: rdma_reads holds "only data item chunks. A Requester
// MUST NOT insert Position-zero Read chunks in this list").
func checkV2ReadZero(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	t, ok := v2Header(m)
	if !ok || (t != rpcrdma.HTypeCallExternal && t != rpcrdma.HTypeCallInline) {
		return
	}
	c.Checked()
	for i, s := range m.Hdr.V2.ReadList {
		if s.Position == 0 {
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
				"Read segment %d of %s XID 0x%08x has position 0: in version 2 the whole Call moves in the Call chunk (RDMA2_CALL_EXTERNAL), and rdma_reads holds only data item chunks", i, t, m.Common.XID)})
			return
		}
	}
}

// checkV2Credits: V2-CREDIT-OVERRUN (draft-07 "Flow Control": a sender
// "MUST NOT post this message if the connection's 'Sent message counter'
// is greater than the connection's current 'Received credits' value",
// which is the rdma_credit of the last message received, 1 before any;
// "Initial Connection State"). The count starts at the connection's set-up,
// so the rule needs it in the capture; it compares with the largest limit
// received so far, so that a grant still in flight when the sender
// posted is not held against it.
func checkV2Credits(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	s := &connOf(c).v2
	d := m.Dir.Index()
	before := s.sent[d]
	s.sent[d]++
	if !m.HasPrefix || !knownVersion(m) {
		return
	}
	defer func() {
		if m.Common.Vers == rpcrdma.Version2 && m.HdrErr == nil && (!s.hasGrant[1-d] || m.Common.Credit > s.granted[1-d]) {
			s.granted[1-d], s.hasGrant[1-d] = m.Common.Credit, true
		}
	}()
	if m.Common.Vers != rpcrdma.Version2 {
		return
	}
	if c.State == dissect.StateNoSetup {
		c.Skip(check.ReasonNoSetup)
		return
	}
	c.Checked()
	limit := uint32(1)
	if s.hasGrant[d] {
		limit = s.granted[d]
	}
	if before <= uint64(limit) {
		s.overrun[d] = false
		return
	}
	if s.overrun[d] {
		return
	}
	s.overrun[d] = true
	report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
		"the %s posts its Send number %d with %d sent before it, but the largest credit limit it received is %d: a sender must not post while its sent message count exceeds the received credits",
		sideOf(m.Dir), before+1, before, limit)})
}

// checkV2VersMismatch: V2-VERS-MISMATCH (draft-07 "RDMA2_ERR_VERS_MISMATCH":
// a message whose version differs from the one "used in previous
// successful exchanges on the same connection"; "RDMA2_ERR_VERS": a
// Requester "MUST NOT subsequently send a message that uses a version
// that the Responder has indicated it does not support"). Version 2 is
// in effect once both peers sent a version 2 message other than
// RDMA2_ERROR; a version 1 message after that is the mismatch.
func checkV2VersMismatch(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !m.HasPrefix || !knownVersion(m) {
		return
	}
	s := &connOf(c).v2
	d := m.Dir.Index()
	c.Checked()
	if m.Common.Vers == rpcrdma.Version2 {
		if m.HdrErr == nil && rpcrdma.HType(m.Common.Type) != rpcrdma.HTypeError {
			s.ok[d] = true
			s.settled = s.settled || s.ok[0] && s.ok[1]
		}
		return
	}
	if !s.settled {
		return
	}
	report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
		"the %s sends a version 1 %s on a connection where both peers exchanged version 2 messages: the receiver answers RDMA2_ERR_VERS_MISMATCH and drops it",
		sideOf(m.Dir), describe(m))})
}
