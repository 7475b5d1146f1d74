package smbdirect

import "github.com/rdmashark/rdmashark/dissect"

// negotiation is SMB Direct's dissect.Negotiated: the largest Send each
// way is the MaxReceiveSize its receiver named in the negotiation
// ([MS-SMBD] 2.2.1, 2.2.2, 3.1.5.1; the limit SMBD-RECV-SIZE checks).
// Remote invalidation is not negotiated: a READ or WRITE request asks for
// it (SMB2_CHANNEL_RDMA_V1_INVALIDATE).
type negotiation struct {
	maxReceive [2]uint32 // by the sender's Direction.Index()
}

func (n negotiation) RemoteInvalidation() (allowed, known bool) { return false, false }

func (n negotiation) InlineLimit(d dissect.Direction) (bytes int, known bool) {
	if d == dissect.DirUnknown || n.maxReceive[d.Index()] == 0 {
		return 0, false
	}
	return int(n.maxReceive[d.Index()]), true
}

// Negotiated says what the negotiation set (dissect.Negotiator).
func (s *session) Negotiated() dissect.Negotiated {
	return negotiation{maxReceive: [2]uint32{s.sum.maxReceive(dissect.DirClientToServer), s.sum.maxReceive(dissect.DirServerToClient)}}
}
