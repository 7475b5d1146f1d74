package rpcordma

import (
	"fmt"
	"github.com/rdmashark/rdmashark/check"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
)

// Inline thresholds and remote invalidation (RFC 8797 sections 4.1, 4.2;
// RFC 8166 section 3.3.2).

// needsRPC: the rule reads RPC-over-RDMA messages of the connection.
func needsRPC(c *check.Conn) string {
	switch {
	case carriesRPC(c):
		return ""
	case c.SnapCut() > 0:
		return check.ReasonSnapLen.String() + " (RPC-over-RDMA cannot be recognised)"
	case c.Sends() > 0:
		return check.ReasonNotRPC.String()
	}
	if c.ID != 0 && rpcSetup(c) {
		return "no RDMA Send of this connection was reassembled"
	}
	return check.ReasonNotRPC.String()
}

// setupSkip says why the negotiated values of c are unknown, check.ReasonNone
// when they are known.
func setupSkip(c *check.Conn) check.Reason {
	switch {
	case c.State == dissect.StateNoSetup:
		return check.ReasonNoSetup
	case !c.Negotiated:
		return check.ReasonHalfSetup
	}
	return check.ReasonNone
}

func describe(m *Msg) string {
	s := m.Kind.String()
	if m.HasPrefix {
		s = fmt.Sprintf("%s XID 0x%08x", s, m.Common.XID)
	}
	return s
}

func xidOf(m *Msg) *uint32 {
	if m.HasPrefix {
		return xidp(m.Common.XID)
	}
	return nil
}

// checkThreshold returns THRESH-C2S or THRESH-S2C.
func checkThreshold(dir dissect.Direction) func(c *check.Conn, _ *dissect.Message) {
	return func(c *check.Conn, _ *dissect.Message) {
		m := msgOf(c)
		if m.Dir != dir {
			return
		}
		if why := setupSkip(c); why != check.ReasonNone {
			c.Skip(why)
			return
		}
		c.Checked()
		if v2Threshold(c, m, dir) {
			return // version 2: the Transport Properties' thresholds (v2_props.go)
		}
		t := thresholdsOf(c)
		limit, from, to := t.ClientToServer, 0, 1
		if dir == dissect.DirServerToClient {
			limit, from, to = t.ServerToClient, 1, 0
		}
		if m.Length <= limit {
			return
		}
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Message: fmt.Sprintf(
			"Send of %d bytes (%s), negotiated %s inline threshold %d (%s send size %s, %s receive size %s)",
			m.Length, describe(m), dir, limit,
			sideName[from], sizeText(c, from, true), sideName[to], sizeText(c, to, false))})
	}
}

// sizeText is side i's advertised send or receive size as negotiation used it.
func sizeText(c *check.Conn, i int, send bool) string {
	if !pdOf(c, i).Valid() {
		return "1024 (default: no private data)"
	}
	if send {
		return fmt.Sprint(pdOf(c, i).Message.SendBytes())
	}
	return fmt.Sprint(pdOf(c, i).Message.ReceiveBytes())
}

// withheld names the sides whose R bit is clear.
func withheld(c *check.Conn) string {
	var parts []string
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		switch {
		case !pdOf(c, i).Valid():
			parts = append(parts, fmt.Sprintf("the %s sent no RPC-over-RDMA private data (packet %d), so R=0 for it", sideName[i], pd.Packet))
		case !pdOf(c, i).Message.RemoteInvalidate:
			parts = append(parts, fmt.Sprintf("the %s's private data (packet %d) has R=0", sideName[i], pd.Packet))
		}
	}
	return strings.Join(parts, " and ")
}

// checkInvNegotiated: INV-NOT-NEGOTIATED (RFC 8797 section 4.1).
func checkInvNegotiated(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if m.HasPrefix && m.Common.Vers == rpcrdma.Version2 {
		return // version 2 solicits invalidation per Call: INV-V2-HANDLE
	}
	if !m.Invalidate {
		c.Checked()
		return
	}
	if why := setupSkip(c); why != check.ReasonNone {
		c.Skip(why)
		return
	}
	c.Checked()
	if thresholdsOf(c).RemoteInvalidation {
		return
	}
	if c.Dropped() {
		return // past the limits: counted, not formatted
	}
	key := "client R=0"
	if !thresholdsOf(c).ServerR {
		key = "server R=0"
		if !thresholdsOf(c).ClientR {
			key = "both R=0"
		}
	}
	report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: key, Message: fmt.Sprintf(
		"Send With Invalidate of STag 0x%08x carrying a %s from the %s, but %s: when either peer clears R the responder must use only plain Send for Replies",
		m.InvalidatedSTag, describe(m), sideOf(m.Dir), withheld(c))})
}

func sideOf(d dissect.Direction) string { return check.SideOf(d) }

// checkInvV2Handle: INV-V2-HANDLE (draft-07 "Remote Invalidation").
func checkInvV2Handle(c *check.Conn, _ *dissect.Message) {
	m := msgOf(c)
	if !m.HasPrefix || m.Common.Vers != rpcrdma.Version2 {
		return
	}
	switch m.Kind {
	case KindCall:
		t := rpcrdma.HType(m.Common.Type)
		if m.HdrErr != nil || (t != rpcrdma.HTypeCallExternal && t != rpcrdma.HTypeCallInline) {
			return
		}
		c.Checked()
		h := &m.Hdr.V2
		if h.InvHandle == 0 || v2HeaderHandles(h, h.InvHandle) {
			return
		}
		report(c, check.Finding{XID: xidOf(m), Packets: m.Packets, Key: "not a handle of the Call", Message: fmt.Sprintf(
			"%s XID 0x%08x solicits remote invalidation of rdma_inv_handle 0x%08x, which is none of the handles in its header: it must match one of them, or be 0",
			t, m.Common.XID, h.InvHandle)})
	case KindReply:
		if !m.Invalidate {
			return
		}
		k := replyCall(c, m)
		if k == nil {
			return
		}
		c.Checked()
		last := k.Packets[len(k.Packets)-1]
		pk := append([]int{last}, m.Packets...)
		switch {
		case k.InvHandle == 0:
			report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "not solicited", Message: fmt.Sprintf(
				"the Reply to XID 0x%08x is sent With Invalidate of STag 0x%08x, but its Call (packet %d) set rdma_inv_handle 0: the Responder must use plain Send",
				k.XID, m.InvalidatedSTag, last)})
		case k.InvHandle != m.InvalidatedSTag:
			report(c, check.Finding{XID: xidp(k.XID), Packets: pk, Key: "other handle", Message: fmt.Sprintf(
				"the Reply to XID 0x%08x invalidates STag 0x%08x, but its Call (packet %d) solicited rdma_inv_handle 0x%08x: the Responder must use exactly that value",
				k.XID, m.InvalidatedSTag, last, k.InvHandle)})
		}
	}
}

// v2HeaderHandles tells whether h is an rdma_handle of the header: its
// Call chunk or a chunk list.
func v2HeaderHandles(hd *rpcrdma.Header2, h uint32) bool {
	for _, s := range hd.CallList {
		if s.Handle == h {
			return true
		}
	}
	for _, s := range hd.ReadList {
		if s.Handle == h {
			return true
		}
	}
	for _, w := range hd.WriteList {
		for _, s := range w.Segments {
			if s.Handle == h {
				return true
			}
		}
	}
	if hd.HasReplyChunk {
		for _, s := range hd.ReplyChunk.Segments {
			if s.Handle == h {
				return true
			}
		}
	}
	return false
}

func handleList(k *Call) string {
	var hs []string
	seen := map[uint32]bool{}
	add := func(h uint32) {
		if !seen[h] {
			seen[h] = true
			hs = append(hs, fmt.Sprintf("0x%08x", h))
		}
	}
	for _, s := range k.CallChunk {
		add(s.Handle)
	}
	for _, s := range k.Reads {
		add(s.Handle)
	}
	for _, w := range k.Writes {
		for _, s := range w.Segments {
			add(s.Handle)
		}
	}
	for _, s := range k.Reply {
		add(s.Handle)
	}
	if len(hs) == 0 {
		return "none"
	}
	return strings.Join(hs, ", ")
}

// onlyVersion2 tells whether every RPC-over-RDMA message of c that
// carried a known version used version 2.
func onlyVersion2(c *check.Conn) bool {
	rs := Stats(c.Connection)
	return rs != nil && rs.Versions[1] == 0 && rs.Versions[2] > 0
}

// endInvUsage: INV-USAGE.
func endInvUsage(c *check.Conn) {
	if !carriesRPC(c) {
		return
	}
	u := &connOf(c).Usage
	if u.Replies == 0 {
		// Its evidence is the connection's Replies: a connection whose
		// Calls were never answered (siw-nfs-callback's second) has
		// none, and the rule was not evaluated there, not passed.
		return
	}
	c.Checked()
	if onlyVersion2(c) {
		c.Reportf(nil, "", "%d of %d Replies used Send With Invalidate; version 2 solicits remote invalidation per Call (rdma_inv_handle): %d Calls solicited it",
			u.RepliesWithInvalidate, u.Replies, u.SolicitingCalls)
		return
	}
	neg := "not known (no CM exchange in the capture)"
	if c.Negotiated {
		neg = "no (" + withheld(c) + ")"
		if thresholdsOf(c).RemoteInvalidation {
			neg = "yes (both peers set R)"
		}
	}
	c.Reportf(nil, "", "%d of %d Replies used Send With Invalidate; remote invalidation negotiated: %s",
		u.RepliesWithInvalidate, u.Replies, neg)
}
