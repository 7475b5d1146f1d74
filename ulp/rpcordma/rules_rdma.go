package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"

	"github.com/rdmashark/rdmashark/dissect"
)

// RDMA operations against advertised memory (RFC 8166 sections 3.4.3,
// 3.4.5, 3.4.6 and 3.6; RFC 5042 on what an exposed STag allows). The
// engine attaches every operation to the Call segment it served, or says
// why none explains it (dissect.RDMAOp.Attach); these rules read that.

func needsRPCOps(c *check.Conn) string {
	if why := needsRPC(c); why != "" {
		return why
	}
	if c.RDMAOps() == 0 {
		return "no RDMA Read or Write on this connection"
	}
	return ""
}

func opText(op *dissect.RDMAOp) string {
	return fmt.Sprintf("%s of %d bytes at STag 0x%08x offset 0x%x", op.Kind, op.Length, op.STag, op.Offset)
}

// checkByRequester: RDMA-BY-REQUESTER (RFC 8166 section 3.4.3: the
// requester exposes memory, the responder moves data with RDMA Read and
// Write).
func checkByRequester(c *check.Conn, op *dissect.RDMAOp) {
	if !carriesRPC(c) {
		return
	}
	c.Checked()
	if op.Dir != dissect.DirClientToServer {
		return
	}
	report(c, check.Finding{Packets: op.Packets, Key: op.Kind.String(), Message: fmt.Sprintf(
		"the client (the requester) initiated an %s; in RPC-over-RDMA version 1 only the responder initiates RDMA operations", opText(op))})
}

// checkAdvertised returns RDMA-READ-UNADVERTISED (read) or
// RDMA-WRITE-UNADVERTISED: an operation of the responder must fall inside
// a segment of the right kind advertised by a Call still outstanding.
func checkAdvertised(read bool) func(c *check.Conn, op *dissect.RDMAOp) {
	kind := dissect.RDMAWrite
	if read {
		kind = dissect.RDMARead
	}
	return func(c *check.Conn, op *dissect.RDMAOp) {
		if !carriesRPC(c) || op.Kind != kind || op.Dir != dissect.DirServerToClient {
			return
		}
		switch op.Attach.Reason {
		case dissect.Attached:
			c.Checked()
			return
		case dissect.UnattachedAfterResponse, dissect.UnattachedNoULP:
			return // RDMA-AFTER-REPLY's case
		case dissect.UnattachedRequestUnknown:
			c.Skip(check.ReasonCallUnknown)
			return
		case dissect.UnattachedCaptureGap:
			c.Skip(check.ReasonCaptureGap)
			return
		}
		if c.State == dissect.StateNoSetup || Stats(c.Connection) != nil && Stats(c.Connection).Evicted > 0 {
			c.Skip(check.ReasonMidTransaction)
			return
		}
		list := "Write or Reply chunk segment"
		if read {
			list = "Read segment"
		}
		open := 0
		if rs := Stats(c.Connection); rs != nil {
			open = rs.OutstandingCalls[dissect.DirClientToServer.Index()]
		}
		// The Call that advertised it may be one the capture lost:
		// judged at the end of the connection.
		c.Hold(check.Finding{Packets: op.Packets, Message: fmt.Sprintf(
			"the server's %s is not inside any %s of the %d Calls outstanding: it reaches memory the client did not advertise for it",
			opText(op), list, open)}, dissect.DirClientToServer, 0, dissect.FirstPacket(op.Packets))
	}
}

// checkAfterReply: RDMA-AFTER-REPLY (RFC 8166 section 3.6: once the Reply
// is sent the requester invalidates the Call's memory, RFC 8797 section
// 3.2).
func checkAfterReply(c *check.Conn, op *dissect.RDMAOp) {
	if !carriesRPC(c) || op.Dir != dissect.DirServerToClient {
		return
	}
	switch a := &op.Attach; a.Reason {
	case dissect.Attached:
		c.Checked()
	case dissect.UnattachedCaptureGap:
		c.Skip(check.ReasonCaptureGap)
	case dissect.UnattachedAfterResponse:
		c.Checked()
		report(c, check.Finding{XID: xidp(a.Key), Packets: append(append([]int{}, op.Packets...), a.ResponsePacket), Message: fmt.Sprintf(
			"the server's %s targets memory of the Call with XID 0x%08x after its Reply (packet %d) was sent", opText(op), a.Key, a.ResponsePacket)})
	}
}

// firstPacket is an operation's first packet (its request), 0 if none.
