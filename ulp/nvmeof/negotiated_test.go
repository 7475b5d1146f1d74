package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestNegotiation: NVMe/RDMA's neutral Negotiated. rxe-nvmeof's admin
// queue (connection 1) carried an Identify Controller whose IOCCSZ is 260
// and IORCSZ 1 (tshark 4.0: nvme.cmd.identify.ctrl.nvmeof.ioccsz 260,
// .iorcsz 1, frame 51): its I/O queue (connection 2) takes command
// capsules of 260*16 = 4160 octets (64-octet SQE and 4096 of in-capsule
// data) and response capsules of 16. The admin queue's own capsules are
// not what IOCCSZ says; remote invalidation is asked per command, never
// negotiated.
func TestNegotiation(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-nvmeof.pcap")
	cs := e.Conns.Connections()
	if len(cs) < 2 {
		t.Fatalf("%d connections", len(cs))
	}
	for _, c := range cs[:2] {
		n := c.Negotiation()
		if _, k := n.RemoteInvalidation(); k {
			t.Errorf("connection %d: remote invalidation known", c.ID)
		}
		cmd, k1 := n.InlineLimit(dissect.DirClientToServer)
		rsp, k2 := n.InlineLimit(dissect.DirServerToClient)
		switch c.ID {
		case 1:
			if k1 || k2 {
				t.Errorf("admin queue: limits %d/%v %d/%v", cmd, k1, rsp, k2)
			}
		case 2:
			if !k1 || !k2 || cmd != 4160 || rsp != 16 {
				t.Errorf("I/O queue: limits %d/%v %d/%v, want 4160 and 16", cmd, k1, rsp, k2)
			}
		}
	}
}
