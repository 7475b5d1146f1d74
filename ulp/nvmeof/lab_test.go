package nvmeof_test

// The lab captures of issue 26 (testdata/pcaps/README.md, "ulp/"): the
// nvmeof-mix workload (a Connect to a wrong NQN, discovery, an admin queue
// and three I/O queues — default, write and poll —, fio with verify, 4 KiB
// to 128 KiB I/O, Dataset Management, Write Zeroes, Flush) over Soft-RoCE
// and soft-iWARP, and the nvmeof workload under netem loss on Soft-RoCE.
// Expected values come from tshark 4.0 (testdata/tshark/nvme/*.lab.tsv,
// made by gen.sh there) and from the workloads' definitions
// (testdata/pcaps/ulp/scenarios/), never from this package's output.

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// labRow is one capsule as tshark 4.0 decoded it in a lab capture.
type labRow struct {
	frame        int
	qp, psn      uint32
	qid          int
	command      bool
	opc          int // nvme.cmd.opc; -1 for a Fabrics command
	fctype       int // nvme.fabrics.cmd.fctype; -1 for other commands
	cid          int
	code         uint32 // completion: SCT<<8 | SC
	sglType      int
	sglSubtype   int
	sglLen       uint64
	nlb          int // 0's based; -1 when tshark shows none
	invalidate   bool
	invalidated  uint32
	replay       bool // a go-back-N retransmission: its QP and PSN came before
	bthOpcodeRaw int
}

// labRows reads testdata/tshark/nvme/NAME.lab.tsv and marks the replays.
func labRows(t *testing.T, name string) []labRow {
	t.Helper()
	f, err := os.Open("../../testdata/tshark/nvme/" + name + ".lab.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	num := func(s string, def int) int {
		if s == "" {
			return def
		}
		base := 10
		if strings.HasPrefix(s, "0x") {
			s, base = s[2:], 16
		}
		v, err := strconv.ParseInt(s, base, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", name, s, err)
		}
		return int(v)
	}
	type qpPSN struct{ qp, psn uint32 }
	seen := map[qpPSN]bool{}
	var rows []labRow
	sc := bufio.NewScanner(f)
	sc.Scan()
	if h := strings.Split(sc.Text(), "\t"); len(h) != 18 || h[17] != "infiniband.ieth" {
		t.Fatalf("%s: header %q", name, h)
	}
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if len(c) < 18 {
			t.Fatalf("%s: row %q", name, sc.Text())
		}
		r := labRow{frame: num(c[0], 0), qp: uint32(num(c[1], 0)), psn: uint32(num(c[2], 0)), qid: num(c[3], -1),
			opc: num(c[4], -1), fctype: num(c[5], -1), sglType: num(c[12], -1), sglSubtype: num(c[13], -1),
			sglLen: uint64(num(c[14], 0)), nlb: num(c[15], -1), bthOpcodeRaw: num(c[16], 0)}
		switch {
		case c[6] != "":
			r.command, r.cid = true, num(c[6], 0)
		case c[7] != "":
			r.command, r.cid = true, num(c[7], 0)
		default:
			r.cid = num(c[8], 0)
			r.code = uint32(num(c[9], 0)<<8 | num(c[10], 0))
		}
		if r.bthOpcodeRaw == 23 { // SEND_ONLY_WITH_INVALIDATE
			r.invalidate = true
			r.invalidated = uint32(num("0x"+strings.Split(c[17], ",")[0], 0))
		}
		k := qpPSN{r.qp, r.psn}
		r.replay = seen[k]
		seen[k] = true
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// multiSend is a Send of several packets as tshark 4.0 shows its packets
// (testdata/tshark/nvme/NAME.sends.tsv): it does not reassemble them into a
// capsule (KD-NVME-MULTIPACKET), so these command capsules (in-capsule data
// over the path MTU: I/O Connects, 4 KiB Writes, Dataset Management) and
// their completions are not among its capsules.
type multiSend struct {
	qp     uint32
	length uint64 // the Send's bytes: the 64-byte SQE and in-capsule data
}

// multiSends reads NAME.sends.tsv: the Sends of several packets, by the
// frame of their last packet; replays are skipped.
func multiSends(t *testing.T, name string) map[int]multiSend {
	t.Helper()
	b, err := os.ReadFile("../../testdata/tshark/nvme/" + name + ".sends.tsv")
	if err != nil {
		t.Fatal(err)
	}
	type qpPSN struct{ qp, psn uint32 }
	seen := map[qpPSN]bool{}
	open := map[uint32]uint64{}
	out := map[int]multiSend{}
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		c := strings.Split(l, "\t")
		frame, _ := strconv.Atoi(c[0])
		qp, _ := strconv.ParseUint(strings.TrimPrefix(c[1], "0x"), 16, 32)
		psn, _ := strconv.ParseUint(c[2], 10, 32)
		opcode, _ := strconv.Atoi(c[3])
		udpLen, _ := strconv.Atoi(c[4])
		k := qpPSN{uint32(qp), uint32(psn)}
		if seen[k] {
			continue
		}
		seen[k] = true
		n := uint64(udpLen - 8 - 12 - 4) // UDP header, BTH, ICRC
		switch opcode {
		case 0: // SEND_FIRST
			open[k.qp] = n
		case 1: // SEND_MIDDLE
			open[k.qp] += n
		case 2: // SEND_LAST
			out[frame] = multiSend{qp: k.qp, length: open[k.qp] + n}
			delete(open, k.qp)
		}
	}
	if len(open) != 0 {
		t.Fatalf("%s: Sends unfinished: %v", name, open)
	}
	return out
}

// labFacts is what a lab capture's analysis must show, beyond what
// agreeWithTshark compares capsule by capsule.
type labFacts struct {
	// ioConnects: the I/O queues' Connect commands (a multi-packet Send
	// each, with the Connect data in the capsule) — as many as the
	// workload connected I/O queues.
	ioConnects int
	// replays: the capture has go-back-N retransmissions of capsules.
	replays bool
}

// agreeWithTshark runs the analysis of a RoCE lab capture and compares
// every capsule tshark decodes with the exchange that holds it: the same
// queue, CID and connection; a command's data moved by RDMA Read or Write
// equal to its keyed SGL's length, once, however often the wire repeated
// it; a completion's status and remote invalidation. It returns the
// analysis for more checks.
func agreeWithTshark(t *testing.T, name string, want labFacts) (*dissect.Engine, []dissect.Exchange, *check.Result) {
	t.Helper()
	e, xs, res := run(t, "ulp/"+name+".pcap")
	rows := labRows(t, name)
	multi := multiSends(t, name)
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
	qpConn := map[uint32]*dissect.Connection{}
	type qpCID struct {
		qp  uint32
		cid int
	}
	open := map[qpCID]labRow{} // tshark's commands awaiting their completion
	inTshark := map[*dissect.Exchange]bool{}
	perConn := map[*dissect.Connection]*struct{ cmds, cpls, read, write, inCapsule uint64 }{}
	replays, commands := 0, 0
	for _, r := range rows {
		if r.replay {
			replays++
			continue
		}
		m := resp
		if r.command {
			m = req
		}
		x := m[r.frame]
		if x == nil {
			t.Errorf("frame %d (command %v, QP %#x CID %#x): in no exchange", r.frame, r.command, r.qp, r.cid)
			continue
		}
		inTshark[x] = true
		if int(x.Key>>16) != r.qid || int(x.Key&0xffff) != r.cid {
			t.Errorf("frame %d: key %#x, tshark QID %d CID %#x", r.frame, x.Key, r.qid, r.cid)
		}
		if c, ok := qpConn[r.qp]; ok && c != x.Conn {
			t.Errorf("frame %d: QP %#x on connections %d and %d", r.frame, r.qp, c.ID, x.Conn.ID)
		}
		qpConn[r.qp] = x.Conn
		pc := perConn[x.Conn]
		if pc == nil {
			pc = &struct{ cmds, cpls, read, write, inCapsule uint64 }{}
			perConn[x.Conn] = pc
		}
		k := qpCID{r.qp, r.cid}
		if r.command {
			commands++
			pc.cmds++
			open[k] = r
			if r.qid > 0 && ioName[r.opc] != x.Name {
				t.Errorf("frame %d: I/O opcode %#x is %q, not %q", r.frame, r.opc, ioName[r.opc], x.Name)
			}
			switch {
			case r.sglType == 0x04: // Keyed SGL Data Block
				if x.Outcome == dissect.Responded && x.ReadBytes+x.WriteBytes != r.sglLen {
					t.Errorf("frame %d %s: %d bytes read and %d written by RDMA, keyed SGL of %d", r.frame, x.Name, x.ReadBytes, x.WriteBytes, r.sglLen)
				}
				if r.qid > 0 && r.opc == 0x01 && x.WriteBytes != 0 || r.qid > 0 && r.opc == 0x02 && x.ReadBytes != 0 {
					t.Errorf("frame %d %s: data moved the wrong way: read %d, write %d", r.frame, x.Name, x.ReadBytes, x.WriteBytes)
				}
				pc.read += x.ReadBytes
				pc.write += x.WriteBytes
			case r.sglType == 0x00 && r.sglSubtype == 0x01: // Data Block, Offset: in-capsule
				if x.ReadBytes+x.WriteBytes != 0 {
					t.Errorf("frame %d %s: in-capsule data, yet %d+%d bytes by RDMA", r.frame, x.Name, x.ReadBytes, x.WriteBytes)
				}
				pc.inCapsule += r.sglLen
			}
			continue
		}
		pc.cpls++
		if _, ok := open[k]; !ok {
			t.Errorf("frame %d: tshark's completion of CID %#x answers no command", r.frame, r.cid)
		}
		delete(open, k)
		if x.StatusCode != r.code || x.OK != (r.code == 0) {
			t.Errorf("frame %d %s: status %#x (%s, ok %v), tshark %#x", r.frame, x.Name, x.StatusCode, x.Status, x.OK, r.code)
		}
		if x.Invalidated != r.invalidate || x.InvalidatedSTag != r.invalidated {
			t.Errorf("frame %d: invalidated %v %#x, tshark %v %#x", r.frame, x.Invalidated, x.InvalidatedSTag, r.invalidate, r.invalidated)
		}
	}
	if commands < 100 {
		t.Fatalf("%s: %d commands in tshark's rows", name, commands)
	}
	if want.replays != (replays > 0) {
		t.Errorf("%s: %d capsules replayed by go-back-N", name, replays)
	}
	// What tshark left open is what we left open: the Asynchronous Event
	// Requests a controller holds until an event (NVMe Base 2.0 5.2).
	var noResp []string
	ioConnects := 0
	for i := range xs {
		x := &xs[i]
		switch {
		case x.Outcome == dissect.NoResponse:
			noResp = append(noResp, x.Name)
			if x.Name != "Asynchronous Event Request" || !inTshark[x] {
				t.Errorf("%s CID %#x (packet %d) has no completion", x.Name, x.Key&0xffff, x.RequestPacket)
			}
		case x.Outcome != dissect.Responded:
			t.Errorf("%s key %#x: outcome %s", x.Name, x.Key, x.Outcome)
		case !inTshark[x]:
			ms, ok := multi[x.RequestPacket]
			if !ok {
				t.Errorf("%s key %#x (packets %d, %d): not among tshark's capsules", x.Name, x.Key, x.RequestPacket, x.ResponsePacket)
				continue
			}
			if c, ok := qpConn[ms.qp]; ok && c != x.Conn {
				t.Errorf("packet %d: QP %#x on connections %d and %d", x.RequestPacket, ms.qp, c.ID, x.Conn.ID)
			}
			pc := perConn[x.Conn]
			pc.cmds++
			pc.cpls++
			pc.inCapsule += ms.length - 64
			pc.read += x.ReadBytes
			pc.write += x.WriteBytes
			if x.ReadBytes+x.WriteBytes != 0 {
				t.Errorf("%s key %#x: in-capsule data, yet %d+%d bytes by RDMA", x.Name, x.Key, x.ReadBytes, x.WriteBytes)
			}
			delete(multi, x.RequestPacket)
			if x.Name == "Connect" {
				ioConnects++
				if x.Key>>16 == 0 || !x.OK {
					t.Errorf("Connect key %#x: %s", x.Key, x.Status)
				}
			}
		}
	}
	for f := range multi {
		t.Errorf("tshark's multi-packet Send ending in frame %d: no command", f)
	}
	if len(noResp) != len(open) {
		t.Errorf("%d commands without completion (%v); tshark %d", len(noResp), noResp, len(open))
	}
	if ioConnects != want.ioConnects {
		t.Errorf("%d I/O queue Connects beside tshark's capsules, want %d", ioConnects, want.ioConnects)
	}
	// Per queue: tshark's capsules and multi-packet Sends once each, every
	// RDMA operation attached.
	for _, c := range e.Conns.Connections() {
		q, _ := c.ULPData.(*nvmeof.Queue)
		pc := perConn[c]
		if c.ULP != nvmeof.Name || q == nil || pc == nil {
			t.Errorf("connection %d: ULP %q, %d tshark rows", c.ID, c.ULP, map[bool]int{true: 1}[pc != nil])
			continue
		}
		if q.Commands != pc.cmds || q.Completions != pc.cpls || q.InCapsuleBytes != pc.inCapsule {
			t.Errorf("connection %d QID %d: %d commands, %d completions, %d bytes in capsules; tshark %d, %d, %d",
				c.ID, *q.QID, q.Commands, q.Completions, q.InCapsuleBytes, pc.cmds, pc.cpls, pc.inCapsule)
		}
		if q.ReadBytes != pc.read || q.WriteBytes != pc.write {
			t.Errorf("connection %d: RDMA Read %d, Write %d bytes; tshark's keyed SGLs %d, %d", c.ID, q.ReadBytes, q.WriteBytes, pc.read, pc.write)
		}
		if q.UnattachedRDMAOps != 0 || q.BadCapsules != 0 || q.CompletionsWithoutCommand != 0 || q.CIDReused != 0 || q.Evicted != 0 {
			t.Errorf("connection %d: %+v", c.ID, q)
		}
	}
	if e.Ops.RDMAOpsIncomplete != 0 {
		t.Errorf("%d RDMA operations incomplete", e.Ops.RDMAOpsIncomplete)
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("finding %s (%s) on connection %d: %s", f.Rule, f.Severity, f.Connection, f.Message)
		}
	}
	return e, xs, res
}

// ioName: the NVM command set's I/O opcodes (NVMe NVM Command Set 1.0,
// Opcodes for NVM Commands) the workloads use.
var ioName = map[int]string{0x00: "Flush", 0x01: "Write", 0x02: "Read", 0x08: "Write Zeroes", 0x09: "Dataset Management"}

// TestLabMixRoCE: rxe-nvmeof-mix-small.pcap agrees with tshark capsule by
// capsule, and shows what the workload did.
func TestLabMixRoCE(t *testing.T) {
	e, xs, _ := agreeWithTshark(t, "rxe-nvmeof-mix-small", labFacts{ioConnects: 3})
	checkMix(t, e, xs)
}

// checkMix checks the facts of the nvmeof-mix-small workload
// (testdata/pcaps/ulp/scenarios/nvmeof-mix-small.sh) on either transport.
func checkMix(t *testing.T, e *dissect.Engine, xs []dissect.Exchange) {
	t.Helper()
	const (
		subsystem = "nqn.2026-11.lab:nvme"
		wrong     = "nqn.2026-11.lab:no-such-subsystem"
		discovery = "nqn.2014-08.org.nvmexpress.discovery" // NVMe over Fabrics 1.1, Discovery Service
	)
	conns := e.Conns.Connections()
	// A Connect to the wrong NQN, the discovery controller, the admin
	// queue and three I/O queues (nr_io_queues=1,nr_write_queues=1,
	// nr_poll_queues=1), each on an RDMA connection of its own.
	if len(conns) != 6 {
		t.Fatalf("%d connections, want 6", len(conns))
	}
	var cntlid *uint16
	qids := map[uint16]bool{}
	for i, c := range conns {
		q := c.ULPData.(*nvmeof.Queue)
		if q.QID == nil || q.Connect == nil {
			t.Fatalf("connection %d: no set-up or Connect: %+v", c.ID, q)
		}
		switch {
		case i == 0:
			// nvmet answers a Connect to a subsystem it does not have
			// with Connect Invalid Parameters (NVMe over Fabrics 1.1,
			// Connect Command status values: SCT 1h, SC 82h) and DNR.
			if q.Connect.SubNQN != wrong || *q.QID != 0 || q.Connect.ControllerID != nil ||
				q.Connect.Status != "Connect Invalid Parameters" || q.Errors["Connect Invalid Parameters"] != 1 || q.Commands != 1 || q.Completions != 1 {
				t.Errorf("the wrong-NQN queue: %+v, connect %+v", q, q.Connect)
			}
		case i == 1:
			if q.Connect.SubNQN != discovery || *q.QID != 0 || q.Connect.ControllerID == nil || q.Opcodes["Get Log Page"] == nil {
				t.Errorf("the discovery queue: %+v, connect %+v", q, q.Connect)
			}
		default:
			if q.Connect.SubNQN != subsystem || q.Connect.ControllerID == nil || q.Errors != nil {
				t.Errorf("queue %d: %+v, connect %+v", c.ID, q, q.Connect)
				continue
			}
			if cntlid == nil {
				cntlid = q.Connect.ControllerID
			} else if *q.Connect.ControllerID != *cntlid {
				t.Errorf("queue %d: controller %d, admin queue's %d", c.ID, *q.Connect.ControllerID, *cntlid)
			}
			// queue_size=32: SQSIZE 31 (0's based) on the I/O queues.
			if *q.QID > 0 && (*q.HSQSIZE != 31 || q.Connect.SQSIZE != 31) {
				t.Errorf("queue %d: HSQSIZE %d, SQSIZE %d", *q.QID, *q.HSQSIZE, q.Connect.SQSIZE)
			}
			qids[*q.QID] = true
		}
	}
	if len(qids) != 4 || !qids[0] || !qids[1] || !qids[2] || !qids[3] {
		t.Errorf("queues of the controller: %v", qids)
	}
	// The Connect exchange of the wrong NQN carries the error.
	for _, x := range xs {
		if x.Conn == conns[0] && (x.Name != "Connect" || x.OK || x.StatusCode != 0x182 || x.Outcome != dissect.Responded) {
			t.Errorf("wrong-NQN exchange: %+v", x)
		}
	}
	// Written: fio's 1 MiB sequential and 1 MiB random, and the 1 MiB dd:
	// 3 MiB in Write commands, 128 KiB ones by RDMA Read, 4 KiB ones in
	// the capsule (IOCCSZ allows 4 KiB of in-capsule data).
	var written, inCapsule uint64
	names := map[string]uint64{}
	for _, c := range conns[2:] {
		q := c.ULPData.(*nvmeof.Queue)
		if w := q.Opcodes["Write"]; w != nil {
			written += w.Bytes
		}
		for n, st := range q.Opcodes {
			names[n] += st.Count
		}
		if *q.QID > 0 {
			inCapsule += q.InCapsuleBytes - 1024 // less the Connect data
		}
	}
	if written != 3<<20 {
		t.Errorf("%d bytes written, want 3 MiB", written)
	}
	if inCapsule == 0 || inCapsule%4096 != 0 { // 4 KiB Writes; the Dataset Management capsule carries 4 KiB of in-capsule data on the wire
		t.Errorf("%d bytes in-capsule on the I/O queues", inCapsule)
	}
	for _, n := range []string{"Flush", "Write Zeroes", "Dataset Management", "Identify", "Get Log Page", "Keep Alive"} {
		if names[n] == 0 {
			t.Errorf("no %s", n)
		}
	}
}

// TestLabMixIWARPEqualsRoCE: the same workload over soft-iWARP
// (siw-nvmeof-mix-small.pcap, which tshark 4.0 does not decode) shows the
// workload's facts, pairs every command, attaches every RDMA operation,
// and gives per queue the same commands, statuses and bytes as over
// Soft-RoCE, but for Keep Alive, whose count follows the clock, and Write
// Zeroes: the iWARP host split the 1 MiB \`blkdiscard -z\` in two (SQEs read
// by hand: SLBA 0x1100 NLB 0xfe and SLBA 0x11ff NLB 0; over RoCE one, SLBA
// 0x1100 NLB 0xff, as tshark shows) — the Linux host's request limits
// follow the RDMA device, so that one is not the same workload.
func TestLabMixIWARPEqualsRoCE(t *testing.T) {
	re, rx, _ := run(t, "ulp/rxe-nvmeof-mix-small.pcap")
	we, wx, wres := run(t, "ulp/siw-nvmeof-mix-small.pcap")
	checkMix(t, we, wx)
	iwarpHealthy(t, we, wx, wres)
	sameQueues(t, rx, wx, 6, "Keep Alive", "Write Zeroes")
	rc, wc := re.Conns.Connections(), we.Conns.Connections()
	for i := range rc {
		rq, wq := rc[i].ULPData.(*nvmeof.Queue), wc[i].ULPData.(*nvmeof.Queue)
		if *rq.QID != *wq.QID || *rq.HSQSIZE != *wq.HSQSIZE || *rq.HRQSIZE != *wq.HRQSIZE || *rq.CRQSIZE != *wq.CRQSIZE ||
			rq.ReadBytes != wq.ReadBytes || rq.WriteBytes != wq.WriteBytes || rq.InCapsuleBytes != wq.InCapsuleBytes ||
			rq.RemoteInvalidationRequested != wq.RemoteInvalidationRequested || rq.RemoteInvalidations != wq.RemoteInvalidations {
			t.Errorf("queue %d differs: %+v / %+v", i, rq, wq)
		}
	}
}

// TestLabLossyRoCE: rxe-nvmeof-loss2.pcap is the nvmeof workload (a 4 MiB
// write in 64 KiB direct I/O, read back and compared, 16 reads of 4 KiB)
// under netem "delay 1ms loss 2%" each way. Go-back-N replays capsules and
// RDMA data; each command still pairs once with its completion, its data is
// counted once, and no rule errs.
func TestLabLossyRoCE(t *testing.T) {
	e, xs, _ := agreeWithTshark(t, "rxe-nvmeof-loss2", labFacts{ioConnects: 1, replays: true})
	conns := e.Conns.Connections()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want the admin and one I/O queue", len(conns))
	}
	io := conns[1].ULPData.(*nvmeof.Queue)
	if *io.QID != 1 {
		t.Fatalf("second queue: QID %d", *io.QID)
	}
	// dd wrote 64 blocks of 64 KiB and read them back, then 16 of 4 KiB:
	// every byte once, whatever the wire repeated.
	w, r := io.Opcodes["Write"], io.Opcodes["Read"]
	if w == nil || r == nil || w.Count != 64 || w.Bytes != 4<<20 || w.Completed != 64 || w.Errors != 0 ||
		io.ReadBytes != 4<<20 || r.Errors != 0 || r.Count != r.Completed || r.Bytes < 4<<20+64<<10 || io.WriteBytes != r.Bytes {
		t.Errorf("I/O queue: writes %+v, reads %+v, RDMA read %d, write %d", w, r, io.ReadBytes, io.WriteBytes)
	}
	var resent uint64
	for _, c := range conns {
		if h := c.Health; h != nil {
			resent += h.Dir[0].RetransmittedPackets + h.Dir[1].RetransmittedPackets
		}
	}
	if resent == 0 {
		t.Error("no retransmission in a lossy capture")
	}
	n := 0
	for _, x := range xs {
		if x.Name == "Write" && x.Key>>16 == 1 {
			n++
			if x.ReadBytes != 64<<10 || !x.OK {
				t.Errorf("Write CID %#x: %d bytes read, %s", x.Key&0xffff, x.ReadBytes, x.Status)
			}
		}
	}
	if n != 64 {
		t.Errorf("%d Write exchanges", n)
	}
}

// iwarpHealthy: every connection is soft-iWARP's NVMe/RDMA, every command
// but the Asynchronous Event Requests completed, every RDMA operation
// attached, no rule finds more than information.
func iwarpHealthy(t *testing.T, e *dissect.Engine, xs []dissect.Exchange, res *check.Result) {
	t.Helper()
	for _, c := range e.Conns.Connections() {
		q, _ := c.ULPData.(*nvmeof.Queue)
		if c.Transport != dissect.TransportIWARP || q == nil {
			t.Fatalf("connection %d: %s %q", c.ID, c.Transport, c.ULP)
		}
		if q.UnattachedRDMAOps != 0 || q.BadCapsules != 0 || q.CompletionsWithoutCommand != 0 || q.CIDReused != 0 || q.Evicted != 0 {
			t.Errorf("connection %d: %+v", c.ID, q)
		}
	}
	for _, x := range xs {
		if x.Outcome != dissect.Responded && (x.Name != "Asynchronous Event Request" || x.Outcome != dissect.NoResponse) {
			t.Errorf("%s key %#x: %s", x.Name, x.Key, x.Outcome)
		}
	}
	if e.Ops.RDMAOpsIncomplete != 0 {
		t.Errorf("%d RDMA operations incomplete", e.Ops.RDMAOpsIncomplete)
	}
	for _, f := range res.Findings {
		if f.Severity >= check.Warning {
			t.Errorf("finding %s (%s) on connection %d: %s", f.Rule, f.Severity, f.Connection, f.Message)
		}
	}
}

// sameQueues: two runs of one workload have, queue by queue (subsystem
// NQN and QID), the same commands with the same statuses, RDMA bytes and
// outcomes, but for the commands named in skip.
func sameQueues(t *testing.T, rx, wx []dissect.Exchange, queues int, skip ...string) {
	t.Helper()
	type sum struct {
		name, status string
		read, write  uint64
		o            dissect.Outcome
	}
	type queue struct {
		sub string
		qid uint64
	}
	per := func(xs []dissect.Exchange) map[queue]map[sum]int {
		m := map[queue]map[sum]int{}
		for _, x := range xs {
			if slices.Contains(skip, x.Name) {
				continue
			}
			q := queue{x.Conn.ULPData.(*nvmeof.Queue).Connect.SubNQN, x.Key >> 16}
			if m[q] == nil {
				m[q] = map[sum]int{}
			}
			m[q][sum{x.Name, x.Status, x.ReadBytes, x.WriteBytes, x.Outcome}]++
		}
		return m
	}
	r, w := per(rx), per(wx)
	if len(r) != queues || len(w) != queues {
		t.Fatalf("queues: RoCE %d, iWARP %d, want %d", len(r), len(w), queues)
	}
	for q, rs := range r {
		for s, n := range rs {
			if w[q][s] != n {
				t.Errorf("%s QID %d: %+v ×%d on RoCE, ×%d on iWARP", q.sub, q.qid, s, n, w[q][s])
			}
		}
		for s, n := range w[q] {
			if rs[s] == 0 {
				t.Errorf("%s QID %d: %+v ×%d on iWARP only", q.sub, q.qid, s, n)
			}
		}
	}
}

// TestLabLossyIWARP: siw-nvmeof-loss2.pcap is the same lossy workload over
// soft-iWARP: TCP recovers what netem dropped; every command pairs, every
// RDMA operation attaches, and the queues equal the RoCE run's.
func TestLabLossyIWARP(t *testing.T) {
	_, rx, _ := run(t, "ulp/rxe-nvmeof-loss2.pcap")
	we, wx, wres := run(t, "ulp/siw-nvmeof-loss2.pcap")
	iwarpHealthy(t, we, wx, wres)
	sameQueues(t, rx, wx, 2, "Keep Alive")
	io := we.Conns.Connections()[1].ULPData.(*nvmeof.Queue)
	if w := io.Opcodes["Write"]; w == nil || w.Count != 64 || w.Bytes != 4<<20 || io.ReadBytes != 4<<20 {
		t.Errorf("I/O queue: %+v", io)
	}
}
