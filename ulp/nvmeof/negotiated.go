package nvmeof

import "github.com/rdmashark/rdmashark/dissect"

// negotiation is NVMe/RDMA's dissect.Negotiated: on an I/O queue whose
// controller's Identify Controller the capture holds (on its admin
// queue), the largest command capsule the host may send, IOCCSZ (in
// 16-octet units: the SQE and the in-capsule data), and the largest
// response capsule, IORCSZ (NVMe over Fabrics 1.1 "Identify Controller
// Data Structure Fabrics Extensions"). Remote invalidation is not
// negotiated: a command asks for it in its keyed SGL (subtype Invalidate
// Key).
type negotiation struct {
	capsule [2]int
	known   bool
}

func (n negotiation) RemoteInvalidation() (allowed, known bool) { return false, false }

func (n negotiation) InlineLimit(d dissect.Direction) (bytes int, known bool) {
	if !n.known || d == dissect.DirUnknown {
		return 0, false
	}
	return n.capsule[d.Index()], true
}

// Negotiated says what the queue's controller allows (dissect.Negotiator).
func (s *session) Negotiated() dissect.Negotiated {
	q := s.q
	if q.Admin() || q.Controller == nil || q.Controller.admin == nil {
		return negotiation{}
	}
	aq, _ := q.Controller.admin.ULPData.(*Queue)
	if aq == nil || aq.Identify == nil {
		return negotiation{}
	}
	id := aq.Identify
	return negotiation{capsule: [2]int{int(id.IOCCSZ) * 16, int(id.IORCSZ) * 16}, known: true}
}
