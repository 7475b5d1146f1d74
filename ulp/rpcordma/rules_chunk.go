package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Chunk rules (RFC 8166 sections 3.4, 3.5, 4.3; RFC 8267 for NFS).

func lastPkt(pk []int) []int {
	if len(pk) == 0 {
		return nil
	}
	return pk[len(pk)-1:]
}

// callAndReply lists the Call's last packet and the Reply's packets, for a
// finding about both; built only when there is a finding, since most
// messages have none.
func callAndReply(k *Call, m *Msg) []int {
	pk := make([]int, 0, 1+len(m.Packets))
	return append(append(pk, lastPkt(k.Packets)...), m.Packets...)
}

// checkReadInReply: CHUNK-READ-IN-REPLY (RFC 8166 section 3.4.5: Read
// chunks convey Call data; RFC 8267 appendix A: the Read list in Replies was
// removed).
func checkReadInReply(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindReply {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	c.Checked()
	if len(ch.ReadList) > 0 {
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
			"the Reply to XID 0x%08x carries a Read list of %d segments; Replies carry none", m.Common.XID, len(ch.ReadList))})
	}
}

// checkReadPosition: CHUNK-READ-POSITION (RFC 8166 sections 3.4.5, 4.3.1).
func checkReadPosition(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindCall {
		return
	}
	ch := m.Chunks()
	if ch == nil || len(ch.ReadList) == 0 {
		return
	}
	c.Checked()
	inline, what := payloadStream(m)
	prev := uint32(0)
	for i, s := range ch.ReadList {
		switch {
		case s.Position%4 != 0:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "alignment", Message: fmt.Sprintf(
				"Read segment %d of XID 0x%08x has position %d, not a multiple of 4 (XDR alignment)", i, m.Common.XID, s.Position)})
			return
		case s.Position < prev:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "order", Message: fmt.Sprintf(
				"Read segment %d of XID 0x%08x has position %d after a segment at position %d: positions must not decrease, and the segments of one chunk must be adjacent",
				i, m.Common.XID, s.Position, prev)})
			return
		case s.Position != 0 && m.Proc() != rpcrdma.RDMANoMsg && int(s.Position) > inline:
			report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "range", Message: fmt.Sprintf(
				"Read segment %d of XID 0x%08x has position %d, past the end of the %d-byte Payload stream %s", i, m.Common.XID, s.Position, inline, what)})
			return
		}
		prev = s.Position
	}
}

// payloadStream returns the length of the Call's Payload stream that Read
// chunk positions count in, and where it was sent. Version 1: the RPC
// message sent inline (RFC 8166 section 3.4.5). Version 2 (draft-07
// "Message Continuation", "Special Format"): the RPC octets of every piece
// of a continued Call together; for RDMA2_CALL_EXTERNAL, the Call chunk.
func payloadStream(m *Msg) (int, string) {
	if m.Common.Vers == rpcrdma.Version2 {
		if rpcrdma.HType(m.Common.Type) == rpcrdma.HTypeCallExternal {
			n := 0
			for _, s := range m.Hdr.V2.CallList {
				n += int(s.Length)
			}
			return n, "in the Call chunk"
		}
		if t := m.Rec.Txn; m.Rec.Continued && t != nil && t.Call != nil {
			return t.Call.InlineBytes, "sent inline in the pieces of the continued Call"
		}
	}
	return len(m.Inline()), "sent inline"
}

// checkLongCall: CHUNK-LONG-CALL (RFC 8166 sections 3.5.3, 4.2.4).
func checkLongCall(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindCall || m.Common.Vers != rpcrdma.Version1 {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	c.Checked()
	zero := false
	for _, s := range ch.ReadList {
		if s.Position == 0 {
			zero = true
		}
	}
	nomsg := m.Proc() == rpcrdma.RDMANoMsg
	switch {
	case nomsg && !zero:
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "no position-zero chunk", Message: fmt.Sprintf(
			"RDMA_NOMSG Call XID 0x%08x has no position-zero Read chunk: the RPC Call is nowhere", m.Common.XID)})
	case nomsg && m.Hdr.V1.HeaderLen < len(m.Data):
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "inline payload", Message: fmt.Sprintf(
			"RDMA_NOMSG Call XID 0x%08x carries %d bytes after its transport header; a Long Call carries none inline", m.Common.XID, len(m.Data)-m.Hdr.V1.HeaderLen)})
	case !nomsg && zero:
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "position zero with " + m.Proc().String(), Message: fmt.Sprintf(
			"%s Call XID 0x%08x has a position-zero Read chunk; only RDMA_NOMSG conveys the Call in a position-zero chunk", m.Proc(), m.Common.XID)})
	}
}

// checkLongReply: CHUNK-LONG-REPLY (RFC 8166 sections 3.5.4, 4.2.4).
func checkLongReply(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindReply || m.Common.Vers != rpcrdma.Version1 || m.Proc() != rpcrdma.RDMANoMsg {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	c.Checked()
	switch {
	case !ch.HasReplyChunk:
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "no reply chunk", Message: fmt.Sprintf(
			"RDMA_NOMSG Reply to XID 0x%08x has no Reply chunk: the RPC Reply is nowhere", m.Common.XID)})
	case m.Call != nil && m.Call.Known && !m.Call.HasReply:
		k := m.Call
		report(c, check.Finding{XID: xidOf(m), Packets: append(lastPkt(k.Packets), m.Packets...), Key: "call provided none", Message: fmt.Sprintf(
			"RDMA_NOMSG Reply to XID 0x%08x uses a Reply chunk, but its Call (packet %d) provided none", m.Common.XID, lastPkt(k.Packets)[0])})
	case m.Hdr.V1.HeaderLen < len(m.Data):
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "inline payload", Message: fmt.Sprintf(
			"RDMA_NOMSG Reply to XID 0x%08x carries %d bytes after its transport header; a Long Reply carries none inline", m.Common.XID, len(m.Data)-m.Hdr.V1.HeaderLen)})
	}
}

// checkReplyEcho: CHUNK-REPLY-ECHO (RFC 8166 sections 3.4.6, 4.3.2, 4.3.3:
// a Reply returns the Call's Write list and Reply chunk with each segment's
// length set to the bytes written).
func checkReplyEcho(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindReply {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	k := replyCall(c, m)
	if k == nil {
		return
	}
	c.Checked()
	report := func(key, format string, a ...any) {
		report(c, check.Finding{XID: xidp(k.XID), Packets: callAndReply(k, m), Key: key, Message: fmt.Sprintf("Reply to XID 0x%08x: ", k.XID) + fmt.Sprintf(format, a...)})
	}
	if len(ch.WriteList) != len(k.Writes) {
		report("write chunk count", "its Write list has %d chunks, the Call's (packet %d) had %d", len(ch.WriteList), callAndReply(k, m)[0], len(k.Writes))
		return
	}
	echo := func(what string, got, want []rpcrdma.Segment) bool {
		if len(got) != len(want) {
			report(what+" segment count", "%s has %d segments, the Call's had %d", what, len(got), len(want))
			return false
		}
		for i := range got {
			if got[i].Handle != want[i].Handle {
				report(what+" handle", "segment %d of %s has handle 0x%08x, the Call's had 0x%08x", i, what, got[i].Handle, want[i].Handle)
				return false
			}
			if got[i].Length > want[i].Length {
				report(what+" length", "segment %d of %s reports %d bytes written into a %d-byte segment", i, what, got[i].Length, want[i].Length)
				return false
			}
		}
		return true
	}
	for i := range ch.WriteList {
		if !echo(fmt.Sprintf("Write chunk %d", i), ch.WriteList[i].Segments, k.Writes[i].Segments) {
			return
		}
	}
	if ch.HasReplyChunk {
		if !k.HasReply {
			report("reply chunk unrequested", "it returns a Reply chunk the Call did not provide")
			return
		}
		echo("the Reply chunk", ch.ReplyChunk.Segments, k.Reply)
	}
}

// checkUnneeded: CHUNK-UNNEEDED (RFC 8166 section 3.5: chunks are for what
// does not fit inline).
func checkUnneeded(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Common.Vers != rpcrdma.Version1 || (m.Kind != KindCall && m.Kind != KindReply) {
		return
	}
	ch := m.Chunks()
	if ch == nil {
		return
	}
	moved, listBytes := uint64(0), 0
	what := ""
	if m.Kind == KindCall {
		for _, s := range ch.ReadList {
			moved += uint64(s.Length)
			listBytes += 24 // discriminator, position, handle, length, offset
		}
		what = "Read chunks"
	} else {
		for _, w := range ch.WriteList {
			listBytes += 8 // discriminator, count
			for _, s := range w.Segments {
				moved += uint64(s.Length)
				listBytes += 16
			}
		}
		if ch.HasReplyChunk {
			listBytes += 4
			for _, s := range ch.ReplyChunk.Segments {
				moved += uint64(s.Length)
				listBytes += 16
			}
		}
		what = "Write/Reply chunks"
	}
	if moved == 0 {
		return
	}
	if why := setupSkip(c); why != check.ReasonNone {
		c.Skip(why)
		return
	}
	c.Checked()
	limit := thresholdsOf(c).ClientToServer
	if m.Dir == dissect.DirServerToClient {
		limit = thresholdsOf(c).ServerToClient
	}
	inline := uint64(len(m.Data)-listBytes) + (moved+3)&^3
	if m.Truncated {
		inline = uint64(m.Length-listBytes) + (moved+3)&^3
	}
	if inline <= uint64(limit) {
		i := 0
		if m.Kind == KindReply {
			i = 1
		}
		u := &connOf(c).unneeded[i]
		u.n++
		if len(u.packets) < c.MaxPackets() {
			u.packets = append(u.packets, m.Packets[len(m.Packets)-1])
		}
		if u.n == 1 {
			u.example = fmt.Sprintf("XID 0x%08x moved %d bytes in %s and would have been %d bytes inline",
				m.Common.XID, moved, what, inline)
			u.limit = limit
			u.dir = m.Dir
		}
	}
}

// unneeded counts one kind of message (Calls, Replies) whose chunks were
// not needed, for one CHUNK-UNNEEDED finding per connection and kind.
type unneeded struct {
	n       int
	packets []int
	example string
	limit   int
	dir     dissect.Direction
}

// endUnneeded reports CHUNK-UNNEEDED once per kind of message.
func endUnneeded(c *check.Conn) {
	for i, kind := range [2]string{"Calls", "Replies"} {
		u := &connOf(c).unneeded[i]
		if u.n == 0 {
			continue
		}
		// The key stays plural (baselines match it); the message says
		// "1 Reply ... (XID ...)", not "1 Replies ... (the first: ...)".
		what, first := kind, "the first: "
		if u.n == 1 {
			what, first = [2]string{"Call", "Reply"}[i], ""
		}
		report(c, check.Finding{Packets: u.packets, Key: kind, PacketsOmitted: u.n - len(u.packets), Message: fmt.Sprintf(
			"%d %s moved data by chunk although the whole message would have fit the %d-byte %s inline threshold (%s%s)",
			u.n, what, u.limit, u.dir, first, u.example)})
	}
}

// checkMissingReply: CHUNK-MISSING-REPLY (RFC 8166 sections 3.5.4, 4.5.2;
// RFC 8267 section 2).
func checkMissingReply(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.Kind != KindReply && m.Kind != KindError {
		return
	}
	k := replyCall(c, m)
	if k == nil {
		return
	}
	c.Checked()
	if k.HasReply {
		return
	}
	switch {
	case m.Kind == KindError && m.Common.Vers == rpcrdma.Version1 && m.HdrErr == nil && m.Hdr.V1.Err == rpcrdma.ErrChunk:
		pk := callAndReply(k, m)
		report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "ERR_CHUNK", Message: fmt.Sprintf(
			"the Call with XID 0x%08x (packet %d) provided no Reply chunk and the server answered RDMA_ERROR/ERR_CHUNK: the Reply did not fit", k.XID, pk[0])})
	case m.Kind == KindReply && m.Proc() != rpcrdma.RDMANoMsg && !m.Truncated:
		if why := setupSkip(c); why != check.ReasonNone {
			return
		}
		limit := thresholdsOf(c).ServerToClient
		if m.Dir == dissect.DirClientToServer {
			limit = thresholdsOf(c).ClientToServer
		}
		if l, _, v2 := v2Limit(c, m); v2 {
			limit = l
		}
		if m.Length > limit {
			pk := callAndReply(k, m)
			report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "inline", Message: fmt.Sprintf(
				"the Reply to XID 0x%08x is %d bytes, over the %d-byte %s inline threshold, and was sent inline: its Call (packet %d) provided no Reply chunk",
				k.XID, m.Length, limit, m.Dir, pk[0])})
		}
	}
}
