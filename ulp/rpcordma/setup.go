package rpcordma

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// RPC-over-RDMA's reading of a connection's set-up (RFC 8797): the engine
// keeps each side's private data and its generic framing
// (dissect.PrivateData); the RFC 8797 message in the consumer's data and
// what both sides' messages negotiate are RPC-over-RDMA's, read here on
// any connection (the checks and reports look for the message on every
// connection, claimed or not).

// PrivateData returns what RFC 8797 finds in one side's set-up private
// data: the framing the engine decoded, then the Format Identifier
// searched from the consumer's data on (section 5.2). A side whose set-up
// is not in the capture has none (rfc8797.ErrAbsent).
func PrivateData(pd *dissect.PrivateData) rfc8797.Result {
	return rfc8797.ParseFramed(pd.Bytes, pd.Framing)
}

// Thresholds returns c's inline thresholds and remote-invalidation
// permission as RFC 8797 negotiates them (sections 4.1, 4.2 and 5.1)
// from both sides' private data; zero until both sides' set-up messages
// were seen (c.Negotiated).
func Thresholds(c *dissect.Connection) rfc8797.Thresholds {
	if !c.Negotiated {
		return rfc8797.Thresholds{}
	}
	cl, sv := &c.PrivateData[0], &c.PrivateData[1]
	return rfc8797.NegotiateFramed(cl.Bytes, cl.Framing, sv.Bytes, sv.Framing)
}

// HasIdentifier reports whether some side's set-up private data carries
// the RFC 8797 Format Identifier, valid or not.
func HasIdentifier(c *dissect.Connection) bool {
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && PrivateData(pd).Offset >= 0 {
			return true
		}
	}
	return false
}

// PDSummary is one side's RFC 8797 private data as reports show it.
type PDSummary = rfc8797.Summary

// Summary reduces one side's private data to what reports show of its
// RFC 8797 message.
func Summary(pd *dissect.PrivateData) PDSummary {
	return rfc8797.Summarize(pd.Seen, pd.Packet, pd.Bytes, pd.Framing)
}

// negotiation is RPC-over-RDMA's dissect.Negotiated of one connection:
// RFC 8797's thresholds and R bits on a version 1 connection whose set-up
// is in the capture, version 2's Transport Properties (draft-07 "Inline
// Threshold") on one that carries only version 2, whose remote
// invalidation is solicited per Call and not negotiated.
type negotiation struct {
	inline                 [2]int
	inlineKnown            bool
	remoteInv, remoteKnown bool
}

func (n negotiation) RemoteInvalidation() (allowed, known bool) { return n.remoteInv, n.remoteKnown }

func (n negotiation) InlineLimit(d dissect.Direction) (bytes int, known bool) {
	if !n.inlineKnown || d == dissect.DirUnknown {
		return 0, false
	}
	return n.inline[d.Index()], true
}

// negotiationOf says what c negotiated, as RPC-over-RDMA reads it.
func negotiationOf(c *dissect.Connection) negotiation {
	var n negotiation
	if rs := Stats(c); rs != nil && rs.Versions[1] == 0 && rs.Versions[2] > 0 {
		n.inline = [2]int{rs.V2Props.Threshold(0), rs.V2Props.Threshold(1)}
		n.inlineKnown = true
		return n
	}
	if c.Negotiated {
		th := Thresholds(c)
		n.inline = [2]int{th.ClientToServer, th.ServerToClient}
		n.inlineKnown = true
		n.remoteInv, n.remoteKnown = th.RemoteInvalidation, true
	}
	return n
}

// Negotiated says what the connection negotiated (dissect.Negotiator).
func (s *rpcSession) Negotiated() dissect.Negotiated { return negotiationOf(s.c) }
