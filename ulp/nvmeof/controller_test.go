package nvmeof_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TestControllersOfMixCapture: the nvmeof-mix scenario
// (testdata/pcaps/ulp/scenarios/nvmeof-mix-small.sh) connects once to the
// discovery controller, once to a subsystem that does not exist (its
// Connect fails: no controller), and once to the real controller "with 3
// I/O queues (+ the admin queue: 4 RDMA-CM connections)". tshark 4.0
// gives the admin Connects' completions CNTLID 0x0001 (frames 31 and 116
// of the RoCE capture, nvme.fabrics.cqe.connect.cntrlid); the scenario's
// NQN is nqn.2026-11.lab:nvme and the discovery NQN is NVMe over Fabrics
// 1.1's well-known nqn.2014-08.org.nvmexpress.discovery.
func TestControllersOfMixCapture(t *testing.T) {
	for _, name := range []string{"ulp/rxe-nvmeof-mix-small.pcap", "ulp/siw-nvmeof-mix-small.pcap"} {
		e, _, res := run(t, name)
		ctrls := map[*nvmeof.Controller][]*nvmeof.Queue{}
		none := 0
		for _, c := range e.Conns.Connections() {
			q, ok := c.ULPData.(*nvmeof.Queue)
			if !ok {
				continue
			}
			if q.Controller == nil {
				none++
				continue
			}
			ctrls[q.Controller] = append(ctrls[q.Controller], q)
		}
		if none != 1 || len(ctrls) != 2 {
			t.Fatalf("%s: %d controllers, %d queues without one; want 2 and 1 (the failed Connect)", name, len(ctrls), none)
		}
		for x, qs := range ctrls {
			if x.CNTLID != 1 || x.AdminConnection == nil {
				t.Errorf("%s: controller %+v", name, x)
			}
			want := map[string]int{"nqn.2014-08.org.nvmexpress.discovery": 1, "nqn.2026-11.lab:nvme": 4}[x.SubNQN]
			if len(qs) != want || len(x.Queues) != want {
				t.Errorf("%s: controller of %s has %d queues (%d listed), want %d", name, x.SubNQN, len(qs), len(x.Queues), want)
			}
			for i, r := range x.Queues {
				if int(r.QID) != i {
					t.Errorf("%s: controller of %s: queue %d has QID %d", name, x.SubNQN, i, r.QID)
				}
			}
			if x.SubNQN == "nqn.2026-11.lab:nvme" && x.KATO != 5000 {
				t.Errorf("%s: the I/O controller's admin Connect set KATO %d, tshark says 5000", name, x.KATO)
			}
			// tshark's nvme.cmd.identify.ctrl.ctratt: 0x00000041 for the
			// I/O controller (128-bit host ID, TBKAS; frame 148 of the
			// RoCE capture).
			const wantCTRATT = 0x41
			for _, q := range qs {
				if x.SubNQN == "nqn.2026-11.lab:nvme" && q.Admin() && (q.Identify == nil || q.Identify.CTRATT != wantCTRATT) {
					t.Errorf("%s: controller of %s: Identify %+v, want CTRATT 0x%x", name, x.SubNQN, q.Identify, wantCTRATT)
				}
			}
		}
		// tshark: the admin queue set CC.EN 1 (frame 134 of the RoCE
		// capture) and saw CSTS.RDY 1 (frame 140) before the I/O queues'
		// Connects (frames 198, 203, 208): NVME-IO-BEFORE-ENABLE judges
		// the three and passes; likewise NVME-SQHD on every queue, and
		// NVME-KEEP-ALIVE on the I/O controller's admin queue.
		passed := map[string]int{}
		for _, cr := range res.Connections {
			for _, ch := range cr.Checks {
				if ch.Status == check.StatusPassed {
					passed[ch.Rule]++
				}
			}
		}
		if passed["NVME-IO-BEFORE-ENABLE"] != 3 || passed["NVME-SQHD"] != 6 || passed["NVME-KEEP-ALIVE"] != 1 {
			t.Errorf("%s: connections passing: %v", name, passed)
		}
	}
}

// TestExchangesKnowTheirController: every exchange of a queue whose
// Connect succeeded — the Connect's own included, from its completion —
// names the controller of its queue in its command record (the
// exchange's Detail, valid during the call).
func TestExchangesKnowTheirController(t *testing.T) {
	r, err := source.Open("../../testdata/pcaps/ulp/rxe-nvmeof-mix-small.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type seen struct {
		conn int
		ctrl *nvmeof.Controller
		name string
	}
	var got []seen
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{nvmeof.New()}, Exchange: func(x *dissect.Exchange) {
		if cmd, ok := x.Detail.(*nvmeof.Command); ok && x.Outcome == dissect.Responded {
			got = append(got, seen{x.Conn.ID, cmd.Controller, cmd.Name})
		}
	}})
	if err := e.Run(r, func(*dissect.Packet) error { return nil }); err != nil {
		t.Fatal(err)
	}
	byConn := map[int]*nvmeof.Controller{}
	for _, c := range e.Conns.Connections() {
		if q, ok := c.ULPData.(*nvmeof.Queue); ok {
			byConn[c.ID] = q.Controller
		}
	}
	n := 0
	for _, s := range got {
		if want := byConn[s.conn]; s.ctrl != want {
			t.Errorf("connection %d: %s names controller %v, its queue's is %v", s.conn, s.name, s.ctrl, want)
		}
		if s.ctrl != nil {
			n++
		}
	}
	if n < 250 {
		t.Errorf("%d of %d responded exchanges with a controller", n, len(got))
	}
}
