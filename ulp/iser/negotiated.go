package iser

import "github.com/rdmashark/rdmashark/dissect"

// negotiation is iSER's dissect.Negotiated: whether the target may answer
// a task by Send With Invalidate, as the initiator's CM REQ said (RFC 7145
// section 5.1.3, the SIE bit: "Send with Invalidate Extension" clear
// means not supported). The largest Send is negotiated by the iSCSI login
// (MaxRecvDataSegmentLength and iSER's own keys), which this plug-in does
// not read: unknown.
type negotiation struct {
	sie, known bool
}

func (n negotiation) RemoteInvalidation() (allowed, known bool) { return n.sie, n.known }

func (n negotiation) InlineLimit(dissect.Direction) (bytes int, known bool) { return 0, false }

// Negotiated says what the CM REQ allowed (dissect.Negotiator).
func (s *session) Negotiated() dissect.Negotiated {
	if p := s.conn.SendWithInvalidate; p != nil {
		return negotiation{sie: *p, known: true}
	}
	return negotiation{}
}
