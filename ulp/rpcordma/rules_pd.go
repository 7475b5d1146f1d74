package rpcordma

import (
	"errors"
	"fmt"
	"github.com/rdmashark/rdmashark/check"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// Connection set-up rules: the RFC 8797 private data each side sent in its
// CM REQ/REP (MPA Request/Reply).

var sideName = check.SideName

func setupMsg(c *check.Conn, i int) string { return check.SetupMessage(c, i) }

// needsIdentifier: the rule reads an RFC 8797 message; some side must have
// sent the Format Identifier.
func needsIdentifier(c *check.Conn) string {
	if why := check.NeedsSetup(c); why != "" {
		return why
	}
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && pdOf(c, i).Offset >= 0 {
			return ""
		}
	}
	return "no RPC-over-RDMA private data (format identifier 0xf6ab0e18) on this connection"
}

// rpcSetup tells whether a connection is RPC-over-RDMA as far as its
// set-up shows: some side sent the identifier, the service port is
// nfsrdma's, or its traffic carried RPC-over-RDMA.
func rpcSetup(c *check.Conn) bool {
	if carriesRPC(c) || c.ServicePort == NFSRDMAPort {
		return true
	}
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && pdOf(c, i).Offset >= 0 {
			return true
		}
	}
	return false
}

// checkPDFormat: PD-FORMAT (RFC 8797 sections 4 and 5.2).
func checkPDFormat(c *check.Conn) {
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || pdOf(c, i).Offset < 0 {
			continue
		}
		c.Checked()
		r := pdOf(c, i)
		if r.Valid() {
			continue
		}
		var what string
		switch {
		case errors.Is(r.Err, rfc8797.ErrUnknownVersion):
			what = fmt.Sprintf("version %d, not 1", r.Message.Version)
		case errors.Is(r.Err, rfc8797.ErrTruncated):
			what = fmt.Sprintf("only %d octets from the identifier to the end of the private data, 8 needed", r.Len-r.Offset)
		default:
			what = r.Reason()
		}
		c.Reportf([]int{pd.Packet}, sideName[i]+" "+keyOf(r.Err),
			"the %s's %s carries the RPC-over-RDMA format identifier at offset %d of its private data, but %s: the peer must act as if it sent none (R=0, 1024-byte thresholds)",
			sideName[i], setupMsg(c, i), r.Offset, what)
	}
}

func keyOf(err error) string {
	switch {
	case errors.Is(err, rfc8797.ErrUnknownVersion):
		return "version"
	case errors.Is(err, rfc8797.ErrTruncated):
		return "truncated"
	}
	return ""
}

// checkPDReserved: PD-RESERVED (RFC 8797 section 4, Reserved).
func checkPDReserved(c *check.Conn) {
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || !pdOf(c, i).Valid() {
			continue
		}
		c.Checked()
		if rsv := pdOf(c, i).Message.Reserved; rsv != 0 {
			c.Reportf([]int{pd.Packet}, sideName[i],
				"the %s's %s private data has reserved bits 0x%02x (the 7 bits before R, octet %d of the private data); senders must set them to zero",
				sideName[i], setupMsg(c, i), rsv, pdOf(c, i).Offset+5)
		}
	}
}

// pdKey names a pair of endpoints, to compare reconnects.
type pdKey struct {
	transport      dissect.Transport
	client, server string
	port           uint16
}

type pdSeen struct {
	ok   bool
	conn int
	msg  rfc8797.Message
}

// checkPDSizeRange: PD-SIZE-RANGE (RFC 8797 sections 4, 4.2).
func checkPDSizeRange(c *check.Conn) {
	key := pdKey{c.Transport, c.Client.Address, c.Server.Address, c.ServicePort}
	prev := connOf(c).run.lastPD[key]
	var now [2]pdSeen
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || !pdOf(c, i).Valid() {
			continue
		}
		c.Checked()
		m := pdOf(c, i).Message
		now[i] = pdSeen{true, c.ID, m}
		for _, n := range []int{m.SendBytes(), m.ReceiveBytes()} {
			if n < rfc8797.SizeUnit || n > rfc8797.MaxSize {
				c.Reportf([]int{pd.Packet}, sideName[i]+" range", "the %s advertises %d bytes, outside 1024..262144", sideName[i], n)
			}
		}
		if p := prev[i]; p.ok && (p.msg.SendSize != m.SendSize || p.msg.ReceiveSize != m.ReceiveSize || p.msg.RemoteInvalidate != m.RemoteInvalidate) {
			c.Reportf([]int{pd.Packet}, sideName[i]+" changed",
				"the %s advertises %s; on the previous connection between these endpoints (connection %d) it advertised %s (settings may change on reconnection, RFC 8797 section 4)",
				sideName[i], m, p.conn, p.msg)
		}
	}
	for i := range now {
		if now[i].ok {
			prev[i] = now[i]
		}
	}
	if _, known := connOf(c).run.lastPD[key]; !known && len(connOf(c).run.lastPD) >= maxPDPairs {
		// Bounded: forget one pair of endpoints (any) to remember this
		// one; a reconnect between the forgotten pair is then compared
		// with nothing (runState.pdForgotten counts them).
		for k := range connOf(c).run.lastPD {
			delete(connOf(c).run.lastPD, k)
			connOf(c).run.pdForgotten++
			break
		}
	}
	connOf(c).run.lastPD[key] = prev
}

// maxPDPairs bounds the pairs of endpoints whose last private data the
// runner remembers for PD-SIZE-RANGE.
const maxPDPairs = 4096

// checkPDAbsent: PD-ABSENT (RFC 8797 section 5.1).
func checkPDAbsent(c *check.Conn) {
	if !c.PrivateData[0].Seen || !c.PrivateData[1].Seen {
		return
	}
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		c.Checked()
		if pdOf(c, i).Valid() {
			continue
		}
		why := "no format identifier in its " + fmt.Sprint(pdOf(c, i).Len) + " octets"
		if pdOf(c, i).Offset >= 0 {
			why = pdOf(c, i).Reason()
		}
		c.Reportf([]int{pd.Packet}, sideName[i],
			"the %s's %s carries no valid RPC-over-RDMA private data (%s): defaults apply for it, R=0 and send/receive sizes of 1024 bytes",
			sideName[i], setupMsg(c, i), why)
	}
}

func pdAbsentApplies(c *check.Conn) string {
	if why := check.NeedsSetup(c); why != "" {
		return why
	}
	if !c.PrivateData[0].Seen || !c.PrivateData[1].Seen {
		return check.ReasonHalfSetup.String()
	}
	if !rpcSetup(c) {
		return check.ReasonNotRPC.String()
	}
	return ""
}
