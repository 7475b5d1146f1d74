package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TestQueueRejected: a queue whose CM REQ the controller refused with a
// CM REJ carrying the RDMA_CM_REJECT private data (RECFMT 0, STS 6 "No
// Resources", NVMe RDMA Transport 1.0 "RDMA_CM_REJECT Status Values";
// both little-endian) carries no capsule: the engine hands it to the ULP
// as a dissect.SetUpFailer, and the queue records the STS. No capture of
// a refused NVMe/RDMA queue is at hand: the connection is built here.
func TestQueueRejected(t *testing.T) {
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServicePort: nvmeof.Port, State: dissect.StateRejected,
		RejectReason: "Consumer reject", RejectedBy: dissect.DirServerToClient}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 1, Bytes: cmReq(1, 32, 31)}
	c.Reject = dissect.PrivateData{Seen: true, Packet: 2, Bytes: []byte{0, 0, 6, 0}}
	u := nvmeof.New()
	f, ok := u.(dissect.SetUpFailer)
	if !ok || u.Claim(c) != dissect.Yes {
		t.Fatal("no SetUpFailer, or the queue not claimed")
	}
	f.SetUpFailed(c)
	q, _ := c.ULPData.(*nvmeof.Queue)
	if q == nil || q.Reject == nil || q.Reject.STS == nil || *q.Reject.STS != 6 || q.Reject.Status != "No Resources" ||
		q.Reject.Packet != 2 || q.Reject.SetUpReason != "Consumer reject" || q.QID == nil || *q.QID != 1 || q.CRQSIZE != nil || q.Unanswered {
		t.Errorf("queue %+v, reject %+v", q, q.Reject)
	}

	// A CM REQ never answered.
	c = &dissect.Connection{ID: 2, Transport: dissect.TransportRoCE, ServicePort: nvmeof.Port, State: dissect.StateIncomplete}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 1, Bytes: cmReq(0, 32, 31)}
	f.SetUpFailed(c)
	if q, _ := c.ULPData.(*nvmeof.Queue); q == nil || !q.Unanswered || q.Reject != nil {
		t.Errorf("queue %+v", q)
	}
}
