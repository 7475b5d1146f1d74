package check

import (
	"errors"
	"fmt"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// Connection set-up rules: the RFC 8797 private data each side sent in its
// CM REQ/REP (MPA Request/Reply), and the RDMA-CM header in front of it.

var sideName = [2]string{"client", "server"}

// setupMsg names the set-up message side i sent on c.
func setupMsg(c *Conn, i int) string {
	if c.Transport == dissect.TransportIWARP {
		return [2]string{"MPA Request", "MPA Reply"}[i]
	}
	return [2]string{"CM REQ", "CM REP"}[i]
}

// needsSetup: the rule reads what the set-up messages carried.
func needsSetup(c *Conn) string {
	if c.State == dissect.StateNoSetup {
		return ReasonNoSetup.String()
	}
	if !c.PrivateData[0].Seen && !c.PrivateData[1].Seen {
		return ReasonNoSetup.String()
	}
	return ""
}

// needsIdentifier: the rule reads an RFC 8797 message; some side must have
// sent the Format Identifier.
func needsIdentifier(c *Conn) string {
	if why := needsSetup(c); why != "" {
		return why
	}
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && c.pd(i).Offset >= 0 {
			return ""
		}
	}
	return "no RPC-over-RDMA private data (format identifier 0xf6ab0e18) on this connection"
}

// rpcSetup tells whether a connection is RPC-over-RDMA as far as its
// set-up shows: some side sent the identifier, the service port is
// nfsrdma's, or its traffic carried RPC-over-RDMA.
func rpcSetup(c *Conn) bool {
	if c.rpc == rpcYes || c.ServicePort == NFSRDMAPort {
		return true
	}
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && c.pd(i).Offset >= 0 {
			return true
		}
	}
	return false
}

// checkPDFormat: PD-FORMAT (RFC 8797 sections 4 and 5.2).
func checkPDFormat(c *Conn) {
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || c.pd(i).Offset < 0 {
			continue
		}
		c.Checked()
		r := c.pd(i)
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
func checkPDReserved(c *Conn) {
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || !c.pd(i).Valid() {
			continue
		}
		c.Checked()
		if rsv := c.pd(i).Message.Reserved; rsv != 0 {
			c.Reportf([]int{pd.Packet}, sideName[i],
				"the %s's %s private data has reserved bits 0x%02x (the 7 bits before R, octet %d of the private data); senders must set them to zero",
				sideName[i], setupMsg(c, i), rsv, c.pd(i).Offset+5)
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
func checkPDSizeRange(c *Conn) {
	key := pdKey{c.Transport, c.Client.Address, c.Server.Address, c.ServicePort}
	prev := c.r.lastPD[key]
	var now [2]pdSeen
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		if !pd.Seen || !c.pd(i).Valid() {
			continue
		}
		c.Checked()
		m := c.pd(i).Message
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
	if _, known := c.r.lastPD[key]; !known && len(c.r.lastPD) >= maxPDPairs {
		// Bounded: forget one pair of endpoints (any) to remember this
		// one; a reconnect between the forgotten pair is then compared
		// with nothing (Runner.pdForgotten counts them).
		for k := range c.r.lastPD {
			delete(c.r.lastPD, k)
			c.r.pdForgotten++
			break
		}
	}
	c.r.lastPD[key] = prev
}

// maxPDPairs bounds the pairs of endpoints whose last private data the
// runner remembers for PD-SIZE-RANGE.
const maxPDPairs = 4096

// checkPDAbsent: PD-ABSENT (RFC 8797 section 5.1).
func checkPDAbsent(c *Conn) {
	if !c.PrivateData[0].Seen || !c.PrivateData[1].Seen {
		return
	}
	for i := range c.PrivateData {
		pd := &c.PrivateData[i]
		c.Checked()
		r := c.pd(i)
		if r.Valid() {
			continue
		}
		why := "no format identifier in its " + fmt.Sprint(r.Len) + " octets"
		if r.Offset >= 0 {
			why = r.Reason()
		}
		c.Reportf([]int{pd.Packet}, sideName[i],
			"the %s's %s carries no valid RPC-over-RDMA private data (%s): defaults apply for it, R=0 and send/receive sizes of 1024 bytes",
			sideName[i], setupMsg(c, i), why)
	}
}

func pdAbsentApplies(c *Conn) string {
	if why := needsSetup(c); why != "" {
		return why
	}
	if !c.PrivateData[0].Seen || !c.PrivateData[1].Seen {
		return ReasonHalfSetup.String()
	}
	if !rpcSetup(c) {
		return ReasonNotRPC.String()
	}
	return ""
}

// checkCMAHeader: CM-IP-HEADER (IBA Vol 1 Annex A11, the IP CM Request
// Message RDMA-CM puts in front of the consumer's private data).
func checkCMAHeader(c *Conn) {
	pd := &c.PrivateData[0]
	if !pd.Seen || pd.Framing.Prefix != pvtdata.PrefixCMA {
		return
	}
	c.Checked()
	if err := pd.Framing.CMAProblem(); err != nil {
		c.Reportf([]int{pd.Packet}, "", "the client's CM REQ for IP service ID 0x%016x: %v", c.ServiceID, err)
	}
}

func cmaApplies(c *Conn) string {
	if why := needsSetup(c); why != "" {
		return why
	}
	if c.Transport != dissect.TransportRoCE {
		return "not an InfiniBand/RoCE connection"
	}
	if !c.PrivateData[0].Seen {
		return ReasonHalfSetup.String()
	}
	if c.PrivateData[0].Framing.Prefix != pvtdata.PrefixCMA {
		return "the service ID is not in the RDMA IP CM range"
	}
	return ""
}

// rfc8797SetUp is what RFC 8797 makes of a connection's set-up
// (ulp/rpcordma reads it from the private data the engine keeps), parsed
// again only when a set-up message came since: the message rules read it
// per message.
type rfc8797SetUp struct {
	ok         bool
	packets    [2]int
	negotiated bool
	pd         [2]rfc8797.Result
	thresholds rfc8797.Thresholds
}

func (c *Conn) setUp() *rfc8797SetUp {
	s := &c.rfc8797
	k := [2]int{c.PrivateData[0].Packet, c.PrivateData[1].Packet}
	if s.ok && s.packets == k && s.negotiated == c.Negotiated {
		return s
	}
	s.ok, s.packets, s.negotiated = true, k, c.Negotiated
	for i := range c.PrivateData {
		s.pd[i] = rpcordma.PrivateData(&c.PrivateData[i])
	}
	s.thresholds = rpcordma.Thresholds(c.Connection)
	return s
}

// pd is what RFC 8797 found in side i's set-up private data.
func (c *Conn) pd(i int) *rfc8797.Result { return &c.setUp().pd[i] }

// thresholds are the connection's RFC 8797 inline thresholds and
// remote-invalidation permission (zero until both sides' set-up was seen).
func (c *Conn) thresholds() *rfc8797.Thresholds { return &c.setUp().thresholds }
