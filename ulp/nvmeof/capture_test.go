package nvmeof_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

func init() { check.Register(nvmeof.Rules()...) }

// run analyses a capture with RPC-over-RDMA and NVMe/RDMA registered, as
// the command does, and returns the engine, the exchanges and the checks.
func run(t testing.TB, name string) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	return ulptest.Run(t, name, rpcordma.New(nfs.NewBinding(), nfs.RDMAPort), nvmeof.New())
}

// tsharkRow is one capsule as tshark 4.0 decoded it
// (testdata/tshark/nvme/rxe-nvmeof.pairing.tsv, made by gen.sh there).
type tsharkRow struct {
	frame, qid int
	command    bool
	cid        int
	invalidate bool
	rkey       uint32
}

func tsharkPairing(t *testing.T) []tsharkRow {
	f, err := os.Open("../../testdata/tshark/nvme/rxe-nvmeof.pairing.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tsharkRow
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	num := func(s string) int {
		v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(s, "0x")], 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return int(v)
	}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		r := tsharkRow{frame: num(c[0]), qid: num(c[1])}
		switch {
		case c[2] != "":
			r.command, r.cid = true, num(c[2])
		case c[3] != "":
			r.command, r.cid = true, num(c[3])
		default:
			r.cid = num(c[4])
		}
		if c[5] == "23" { // SEND_ONLY_WITH_INVALIDATE
			r.invalidate = true
			k, _ := strconv.ParseUint(strings.Split(c[6], ",")[0], 16, 32)
			r.rkey = uint32(k)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestPairingAgreesWithTshark: every command and completion tshark
// decodes is a request or response of one of our exchanges, with the same
// queue and CID, and every Send With Invalidate names the same R_Key.
// tshark 4.0 does not reassemble the two-packet I/O Connect (frames 93-94)
// nor decode its completion (96): KD-NVME-MULTIPACKET; we have both.
func TestPairingAgreesWithTshark(t *testing.T) {
	e, xs, res := run(t, "ulp/rxe-nvmeof.pcap")
	req, resp := map[int]*dissect.Exchange{}, map[int]*dissect.Exchange{}
	for i := range xs {
		x := &xs[i]
		if x.ULP != nvmeof.Name {
			t.Fatalf("exchange of %q", x.ULP)
		}
		if x.RequestPacket != 0 {
			req[x.RequestPacket] = x
		}
		if x.ResponsePacket != 0 {
			resp[x.ResponsePacket] = x
		}
	}
	rows := tsharkPairing(t)
	if len(rows) < 300 {
		t.Fatalf("%d tshark rows", len(rows))
	}
	for _, r := range rows {
		m := resp
		if r.command {
			m = req
		}
		x := m[r.frame]
		if x == nil {
			t.Errorf("frame %d (command %v, CID %d): in no exchange", r.frame, r.command, r.cid)
			continue
		}
		if int(x.Key>>16) != r.qid || int(x.Key&0xffff) != r.cid {
			t.Errorf("frame %d: key %#x, tshark QID %d CID %d", r.frame, x.Key, r.qid, r.cid)
		}
		if !r.command && (x.Invalidated != r.invalidate || x.InvalidatedSTag != r.rkey) {
			t.Errorf("frame %d: invalidated %v %#x, tshark %v %#x", r.frame, x.Invalidated, x.InvalidatedSTag, r.invalidate, r.rkey)
		}
	}
	// Ours besides tshark's: the I/O queue's Connect and its completion.
	if x := req[94]; x == nil || x.Name != "Connect" || x.ResponsePacket != 96 || !x.OK {
		t.Errorf("the I/O Connect: %+v", x)
	}
	// Every command answered but the admin queue's Asynchronous Event
	// Request, which a controller holds until an event (NVMe Base 2.0
	// 5.2): the capture ends with it outstanding.
	var open []string
	for _, x := range xs {
		if x.Outcome != dissect.Responded {
			open = append(open, x.Name+" "+x.Outcome.String())
		}
		if !x.OK && x.Outcome == dissect.Responded {
			t.Errorf("%s CID %d: status %s", x.Name, x.Key&0xffff, x.Status)
		}
	}
	if len(open) != 1 || open[0] != "Asynchronous Event Request no-response" {
		t.Errorf("not responded: %v", open)
	}
	if len(xs) != 172 {
		t.Errorf("%d exchanges, want 24 admin + 148 I/O commands", len(xs))
	}
	if e.Ops.RDMAOpsIncomplete != 0 {
		t.Errorf("%d RDMA operations incomplete", e.Ops.RDMAOpsIncomplete)
	}
	checkHealthy(t, e, res)
}

// checkHealthy: every connection is NVMe/RDMA's, every RDMA operation is
// attached to a command, and no rule finds anything on healthy traffic.
func checkHealthy(t *testing.T, e *dissect.Engine, res *check.Result) {
	t.Helper()
	for _, c := range e.Conns.Connections() {
		q, _ := c.ULPData.(*nvmeof.Queue)
		if c.ULP != nvmeof.Name || q == nil {
			t.Fatalf("connection %d: ULP %q", c.ID, c.ULP)
		}
		if q.UnattachedRDMAOps != 0 || q.BadCapsules != 0 || q.CompletionsWithoutCommand != 0 || q.CIDReused != 0 {
			t.Errorf("connection %d: %+v", c.ID, q)
		}
		if q.QID == nil || q.CRQSIZE == nil || q.Connect == nil || q.Connect.QID != *q.QID || q.Connect.SQSIZE != *q.HSQSIZE {
			t.Errorf("connection %d: set-up %+v connect %+v", c.ID, q, q.Connect)
		}
		if q.RemoteInvalidations != q.RemoteInvalidationRequested && *q.QID != 0 {
			t.Errorf("connection %d: %d invalidations for %d requested", c.ID, q.RemoteInvalidations, q.RemoteInvalidationRequested)
		}
	}
	for _, f := range res.Findings {
		t.Errorf("finding %s: %s", f.Rule, f.Message)
	}
	for _, cr := range res.Connections {
		evaluated := 0
		for _, ch := range cr.Checks {
			if strings.HasPrefix(ch.Rule, "NVME-") && ch.Status == check.StatusPassed {
				evaluated++
			}
			if ch.Rule == "INV-NOT-NEGOTIATED" || ch.Rule == "PD-FORMAT" {
				t.Errorf("connection %d lists RPC-over-RDMA's %s", cr.ID, ch.Rule)
			}
		}
		if evaluated < 7 {
			t.Errorf("connection %d: %d NVMe rules passed", cr.ID, evaluated)
		}
	}
}

// TestIWARPEqualsRoCE: the same workload over soft-iWARP (private data
// after the MPA v2 IRD/ORD field) gives the same queues and exchanges (the
// host NQN is made anew at each boot of the lab: only its presence counts).
func TestIWARPEqualsRoCE(t *testing.T) {
	re, rx, _ := run(t, "ulp/rxe-nvmeof.pcap")
	we, wx, wres := run(t, "ulp/siw-nvmeof.pcap")
	checkHealthy(t, we, wres)
	if len(rx) != len(wx) {
		t.Fatalf("%d exchanges on RoCE, %d on iWARP", len(rx), len(wx))
	}
	type sum struct {
		name, status string
		read, write  uint64
		o            dissect.Outcome
	}
	per := func(xs []dissect.Exchange) map[uint64][]sum {
		m := map[uint64][]sum{}
		for _, x := range xs {
			q := x.Key >> 16
			m[q] = append(m[q], sum{x.Name, x.Status, x.ReadBytes, x.WriteBytes, x.Outcome})
		}
		return m
	}
	r, w := per(rx), per(wx)
	for q := range r {
		if len(r[q]) != len(w[q]) {
			t.Errorf("queue %d: %d and %d", q, len(r[q]), len(w[q]))
			continue
		}
		for i := range r[q] {
			if r[q][i] != w[q][i] {
				t.Errorf("queue %d exchange %d: RoCE %+v, iWARP %+v", q, i, r[q][i], w[q][i])
			}
		}
	}
	for i, c := range re.Conns.Connections() {
		rq, wq := c.ULPData.(*nvmeof.Queue), we.Conns.Connections()[i].ULPData.(*nvmeof.Queue)
		if *rq.QID != *wq.QID || *rq.HRQSIZE != *wq.HRQSIZE || *rq.CRQSIZE != *wq.CRQSIZE ||
			rq.ReadBytes != wq.ReadBytes || rq.WriteBytes != wq.WriteBytes || rq.Connect.SubNQN != wq.Connect.SubNQN || wq.Connect.HostNQN == "" {
			t.Errorf("queue %d differs: %+v / %+v", *rq.QID, rq, wq)
		}
	}
}

// TestRPCCapturesUntouched: on NFS captures NVMe/RDMA claims nothing.
func TestRPCCapturesUntouched(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		e, xs, _ := run(t, name)
		for _, c := range e.Conns.Connections() {
			if c.ULP != rpcordma.Name {
				t.Errorf("%s connection %d: ULP %q", name, c.ID, c.ULP)
			}
		}
		for _, x := range xs {
			if x.ULP != rpcordma.Name {
				t.Fatalf("%s: exchange of %q", name, x.ULP)
			}
		}
	}
}

// TestExchangesNameTheirController: every exchange of the real capture
// carries its controller as its association — the host and subsystem
// NQNs the Connect data named and the controller's CNTLID — and these are
// what tshark 4.0 decodes there (testdata/tshark/nvme/rxe-nvmeof.data.tsv,
// gen.sh: nvme.fabrics.cmd.connect.data.hostnqn and .subnqn of the
// Connect's data, nvme.cmd.identify.ctrl.cntlid of the Identify
// Controller data the controller returned).
func TestExchangesNameTheirController(t *testing.T) {
	b, err := os.ReadFile("../../testdata/tshark/nvme/rxe-nvmeof.data.tsv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[h] = i
	}
	var host, sub string
	cntlid := -1
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if v := f[col["nvme.fabrics.cmd.connect.data.hostnqn"]]; v != "" {
			host, sub = v, f[col["nvme.fabrics.cmd.connect.data.subnqn"]]
		}
		if v := f[col["nvme.cmd.identify.ctrl.cntlid"]]; v != "" {
			n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
			if err != nil {
				t.Fatal(err)
			}
			cntlid = int(n)
		}
	}
	if host == "" || sub == "" || cntlid < 0 {
		t.Fatalf("tshark: host %q subsystem %q CNTLID %d", host, sub, cntlid)
	}
	_, xs, _ := run(t, "ulp/rxe-nvmeof.pcap")
	for _, x := range xs {
		if a := x.Association; a == nil || a.Initiator != host || a.Target != sub || a.ID != uint32(cntlid) {
			t.Fatalf("exchange %d of packet %d: association %+v, want %s %s %d", x.Key, x.RequestPacket, a, host, sub, cntlid)
		}
	}
	if len(xs) != 172 {
		t.Errorf("%d exchanges", len(xs))
	}
}
