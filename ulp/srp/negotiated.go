package srp

import "github.com/rdmashark/rdmashark/dissect"

// negotiation is SRP's dissect.Negotiated: the largest information unit
// each way, as the target's SRP_LOGIN_RSP set them (SRP-2 / SRP r16a
// "SRP_LOGIN_RSP": MAXIMUM INITIATOR TO TARGET IU LENGTH, MAXIMUM TARGET
// TO INITIATOR IU LENGTH). Remote invalidation is not negotiated by SRP.
type negotiation struct {
	maxIU [2]uint32 // by the sender's Direction.Index()
}

func (n negotiation) RemoteInvalidation() (allowed, known bool) { return false, false }

func (n negotiation) InlineLimit(d dissect.Direction) (bytes int, known bool) {
	if d == dissect.DirUnknown || n.maxIU[d.Index()] == 0 {
		return 0, false
	}
	return int(n.maxIU[d.Index()]), true
}

// Negotiated says what the login set (dissect.Negotiator).
func (s *session) Negotiated() dissect.Negotiated {
	return negotiation{maxIU: [2]uint32{s.conn.maxIU(dissect.DirClientToServer), s.conn.maxIU(dissect.DirServerToClient)}}
}
