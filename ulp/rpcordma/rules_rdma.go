package rpcordma

import (
	"fmt"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// RDMA operations against advertised memory (RFC 8166 sections 3.4.3,
// 3.4.5, 3.4.6 and 3.6; RFC 5042 on what an exposed STag allows) and the
// STag a Send With Invalidate may invalidate (RFC 8797 section 4.1): the
// protocol-neutral rules of check.Neutral, under RPC-over-RDMA's rule IDs.
// The engine attaches every operation to the Call segment it served, or
// says why none explains it (dissect.RDMAOp.Attach); the neutral rules
// read that, and the view Hooks made of each Send (Msg). Their findings
// keep the words, keys and XIDs they had when these rules were RPC's own
// (words).

// neutral describes RPC-over-RDMA to the neutral rules.
var neutral = &check.Neutral{ULP: Name, Protocol: "RPC-over-RDMA",
	Requester: "client", Responder: "server", Request: "Call", Response: "Reply", Conn: "connection",
	Tag: "STag", Offset: "offset", Memory: "memory",
	Region: func(k dissect.RDMAOpKind) string {
		if k == dissect.RDMARead {
			return "Read segment of a Call"
		}
		return "Write or Reply chunk segment of a Call"
	},
	AppendKey: AppendKey, KeyText: func(key uint64) string { return "XID " + hex32(uint32(key)) },
	Damaged: damaged, Invalidated: invalidated, Words: words,
}

// damaged: the capture lacks the connection's set-up, or the engine gave
// up transactions at its bound, so a Call the rules do not know may
// explain an RDMA operation (ReasonMidTransaction).
func damaged(c *check.Conn) bool {
	rs := Stats(c.Connection)
	return c.State == dissect.StateNoSetup || rs != nil && rs.Evicted > 0
}

// invalidated reads the view of a Send for the invalidation rules: only a
// Reply may be sent With Invalidate, from either side (the backchannel's
// Replies are the client's), and it answers the Call with its XID.
func invalidated(c *check.Conn, _ *dissect.Message) (inv check.Invalidation, ok bool) {
	m := connOf(c).run.msg
	switch m.Kind {
	case KindUnknown:
		inv.Undecodable = true
		return inv, true
	case KindReply:
		inv.Role = check.RoleResponse
	default:
		inv.Role = check.RoleOther
		return inv, true
	}
	if !m.Invalidate {
		return inv, true
	}
	k := m.Call
	if k == nil {
		inv.Unsure, inv.UnsureWhy = true, check.ReasonMidTransaction
		if m.Rec.CallUndecoded {
			inv.UnsureWhy = check.ReasonCallUnknown
		}
		return inv, true
	}
	inv.Answered, inv.Key, inv.Packet, inv.Name = true, uint64(k.XID), k.Packets[len(k.Packets)-1], "the Call"
	inv.Advertised = k.Handles(m.InvalidatedSTag)
	return inv, true
}

func opText(op *dissect.RDMAOp) string {
	return fmt.Sprintf("%s of %d bytes at STag 0x%08x offset 0x%x", op.Kind, op.Length, op.STag, op.Offset)
}

// words gives the neutral rules' findings the messages, keys and XIDs
// RPC-over-RDMA's own rules gave them (output contracts, which baselines
// match by key).
func words(c *check.Conn, w *check.Wording) {
	f := w.Finding
	switch w.Check {
	case check.RDMAByRequester:
		// RDMA-BY-REQUESTER (RFC 8166 section 3.4.3: the requester
		// exposes memory, the responder moves data with RDMA Read and
		// Write).
		f.Message = fmt.Sprintf("the client (the requester) initiated an %s; in RPC-over-RDMA version 1 only the responder initiates RDMA operations", opText(w.Op))
	case check.RDMAReadUnadvertised, check.RDMAWriteUnadvertised:
		// RDMA-READ-UNADVERTISED, RDMA-WRITE-UNADVERTISED: an operation
		// of the responder must fall inside a segment of the right kind
		// advertised by a Call still outstanding.
		list := "Write or Reply chunk segment"
		if w.Check == check.RDMAReadUnadvertised {
			list = "Read segment"
		}
		open := 0
		if rs := Stats(c.Connection); rs != nil {
			open = rs.OutstandingCalls[dissect.DirClientToServer.Index()]
		}
		f.Key = ""
		f.Message = fmt.Sprintf("the server's %s is not inside any %s of the %d Calls outstanding: it reaches memory the client did not advertise for it",
			opText(w.Op), list, open)
	case check.RDMAAfterResponse:
		// RDMA-AFTER-REPLY (RFC 8166 section 3.6: once the Reply is sent
		// the requester invalidates the Call's memory, RFC 8797 section
		// 3.2).
		a := &w.Op.Attach
		f.Key, f.XID, f.Exchange = "", xidp(a.Key), hex32(a.Key)
		f.Message = fmt.Sprintf("the server's %s targets memory of the Call with XID 0x%08x after its Reply (packet %d) was sent", opText(w.Op), a.Key, a.ResponsePacket)
	case check.InvalidateByRequester:
		// INV-WRONG-DIRECTION (RFC 8797 section 4.1: "the responder MAY
		// use RDMA Send With Invalidate when transmitting RPC Replies").
		m := connOf(c).run.msg
		f.Key, f.XID = m.Kind.String(), xidOf(m)
		if f.XID != nil {
			f.Exchange = hex32(*f.XID)
		}
		f.Message = fmt.Sprintf("Send With Invalidate of STag 0x%08x carrying a %s from the %s: only a responder may invalidate, and only with RPC Replies",
			m.InvalidatedSTag, describe(m), sideOf(m.Dir))
	case check.InvalidateSTag:
		// INV-FOREIGN-STAG (RFC 8797 section 4.1: "Each RDMA Send With
		// Invalidate MUST invalidate an STag associated only with the
		// XID in the rdma_xid field").
		m := connOf(c).run.msg
		k := m.Call
		if k == nil {
			return
		}
		owner := ""
		if o := m.Rec.InvalidatedOwner; o != nil && o.Call != nil && len(o.Call.Packets) > 0 {
			owner = fmt.Sprintf("; it belongs to the Call with XID 0x%08x (packet %d)", o.XID, o.Call.Packets[len(o.Call.Packets)-1])
		}
		last := k.Packets[len(k.Packets)-1]
		f.Key, f.XID, f.Exchange = "", xidp(k.XID), hex32(k.XID)
		f.Packets = append([]int{last}, m.Packets...)
		f.Message = fmt.Sprintf("the Reply to XID 0x%08x invalidates STag 0x%08x, which its Call (packet %d) did not advertise (handles %s)%s",
			k.XID, m.InvalidatedSTag, last, handleList(k), owner)
	}
}

func needsRPCOps(c *check.Conn) string {
	if why := needsRPC(c); why != "" {
		return why
	}
	if c.RDMAOps() == 0 {
		return "no RDMA Read or Write on this connection"
	}
	return ""
}
