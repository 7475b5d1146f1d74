package nvmeof_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// Capsules of the controller-wide rules, laid out from the
// specifications: NVMe over Fabrics 1.1 "Connect Command" (CDW10 RECFMT
// and QID, CDW11 SQSIZE and CATTR, CDW12 KATO), "Connect Data" (HOSTID,
// CNTLID at 16, SUBNQN at 256, HOSTNQN at 512), "Connect Response"
// (CNTLID in DW0), "Property Set Command" (CDW10 ATTRIB, CDW11 OFST,
// CDW12-13 VALUE), "Property Get Command"; NVMe Base 2.0 "Completion
// Queue Entry" (DW2: SQHD, SQID), "Keep Alive command" (opcode 18h),
// "Identify Controller Data Structure" (CTRATT at 96, IOCCSZ at 1792).

const (
	hostNQN = "nqn.2014-08.org.nvmexpress:uuid:test-host"
	subNQN  = "nqn.2026-11.lab:nvme"
)

// sqe lays out a submission queue entry: opcode, CID, FCTYPE (Fabrics),
// a keyed SGL of n bytes at address addr with key, and CDW10-13.
func sqe(opc uint8, cid uint16, fctype uint8, addr uint64, n, key uint32, cdw ...uint32) []byte {
	b := make([]byte, 64)
	b[0], b[1] = opc, 0x40
	binary.LittleEndian.PutUint16(b[2:], cid)
	if opc == 0x7f {
		b[4] = fctype
	}
	binary.LittleEndian.PutUint64(b[24:], addr)
	b[32], b[33], b[34] = byte(n), byte(n>>8), byte(n>>16)
	binary.LittleEndian.PutUint32(b[35:], key)
	b[39] = 0x40
	for i, v := range cdw {
		binary.LittleEndian.PutUint32(b[40+4*i:], v)
	}
	return b
}

// cqe lays out a completion: DW0, SQHD, SQID, CID, status.
func cqe(dw0 uint32, sqhd, sqid, cid, status uint16) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b[0:], dw0)
	binary.LittleEndian.PutUint16(b[8:], sqhd)
	binary.LittleEndian.PutUint16(b[10:], sqid)
	binary.LittleEndian.PutUint16(b[12:], cid)
	binary.LittleEndian.PutUint16(b[14:], status<<1)
	return b
}

func (r *rig) sqe(b []byte) int {
	r.subs++
	return r.send(dissect.DirClientToServer, b, false, 0)
}

// done completes command cid with success and the SQHD of a controller
// that consumed every entry the host filled (queues of 32 entries).
func (r *rig) done(cid uint16) int { return r.cqe(cqe(0, uint16(r.subs%32), 0, cid, 0)) }

func (r *rig) cqe(b []byte) int { return r.send(dissect.DirServerToClient, b, false, 0) }

// readData is the controller's RDMA Read of data the host advertised.
func (r *rig) readData(key uint32, addr uint64, data []byte) int {
	return r.opData(dissect.RDMARead, key, addr, data)
}

func (r *rig) opData(kind dissect.RDMAOpKind, key uint32, addr uint64, data []byte) int {
	r.pkt++
	op := &dissect.RDMAOp{Kind: kind, Conn: r.c, Dir: dissect.DirServerToClient, STag: key, Offset: addr, Length: uint32(len(data)),
		Data: data, Packets: []int{r.pkt}, Complete: true}
	r.s.RDMAOp(nil, op)
	r.ck.RDMAOp(op)
	return r.pkt
}

func connectData(cntlid uint16) []byte {
	b := make([]byte, 1024)
	b[0] = 0x42
	binary.LittleEndian.PutUint16(b[16:], cntlid)
	copy(b[256:], subNQN)
	copy(b[512:], hostNQN)
	return b
}

// connectQueue connects queue qid of controller cntlid: Connect (data by
// RDMA Read, as Linux hosts send it), its completion with SQHD 1 (the
// Connect was the queue's first entry) and the CNTLID. It returns the
// completion's packet.
func (r *rig) connectQueue(qid uint16, sqsize uint16, cattr uint8, kato uint32, cntlid uint16) int {
	data := connectData(0xffff)
	if qid != 0 {
		data = connectData(cntlid)
	}
	r.sqe(sqe(0x7f, 0, 0x01, 0x1000, 1024, 0x11, uint32(qid)<<16, uint32(sqsize)|uint32(cattr)<<16, kato))
	r.readData(0x11, 0x1000, data)
	return r.cqe(cqe(uint32(cntlid), 1, qid, 0, 0))
}

// controller sets up an admin queue (connection 1) with KATO kato and
// CNTLID 1 on a fresh ULP, and returns it.
func controller(t *testing.T, kato uint32) *rig {
	a := newQueue(t, nvmeof.New(), &clock{pkt: 10}, 1, cmReq(0, 32, 31))
	a.connectQueue(0, 31, 0, kato, 1)
	return a
}

// ioQueue sets up I/O queue qid of a's controller on connection id.
func (a *rig) ioQueue(id int, qid uint16) *rig {
	q := newQueue(a.t, a.u, a.clock, id, cmReq(qid, 32, 31))
	q.connectQueue(qid, 31, 0, 0, 1)
	return q
}

// identify has the admin queue fetch the Identify Controller data with
// CTRATT ctratt.
func (a *rig) identify(cid uint16, ctratt uint32) {
	a.sqe(sqe(0x06, cid, 0, 0x4000, 4096, 0x44, 0x01))
	d := make([]byte, 4096)
	binary.LittleEndian.PutUint32(d[96:], ctratt)
	binary.LittleEndian.PutUint32(d[1792:], 4)
	binary.LittleEndian.PutUint32(d[1796:], 1)
	a.opData(dissect.RDMAWrite, 0x44, 0x4000, d)
	a.done(cid)
}

func (a *rig) keepAlive(cid uint16) int {
	p := a.sqe(sqe(0x18, cid, 0, 0, 0, 0))
	a.done(cid)
	return p
}

func (a *rig) read(cid uint16) int {
	p := a.sqe(sqe(ioRead, cid, 0, 0x8000, 512, 0x22))
	a.opData(dissect.RDMAWrite, 0x22, 0x8000, make([]byte, 512))
	a.done(cid)
	return p
}

func TestControllerOfQueues(t *testing.T) {
	a := controller(t, 5000)
	q := a.ioQueue(2, 1)
	aq, iq := a.c.ULPData.(*nvmeof.Queue), q.c.ULPData.(*nvmeof.Queue)
	x := aq.Controller
	if x == nil || iq.Controller != x {
		t.Fatalf("admin queue's controller %v, I/O queue's %v", x, iq.Controller)
	}
	want := []nvmeof.QueueRef{{QID: 0, Connection: 1}, {QID: 1, Connection: 2}}
	if x.CNTLID != 1 || x.KATO != 5000 || x.HostNQN != hostNQN || x.SubNQN != subNQN || !slices.Equal(x.Queues, want) ||
		x.AdminConnection == nil || *x.AdminConnection != 1 {
		t.Errorf("controller %+v", x)
	}
	// An I/O queue naming another CNTLID is not of this controller.
	o := newQueue(t, a.u, a.clock, 3, cmReq(1, 32, 31))
	o.connectQueue(1, 31, 0, 0, 7)
	if oq := o.c.ULPData.(*nvmeof.Queue); oq.Controller == x || oq.Controller == nil || oq.Controller.AdminConnection != nil {
		t.Errorf("queue of CNTLID 7: controller %+v", oq.Controller)
	}
}

// NVMe Base 2.0 "Keep Alive Timer": with KATO 5000 ms, a host that sends
// Keep Alive every 2.5 s (Linux: KATO/2) keeps the controller; a 6 s gap
// before the next Keep Alive is over the timeout. Without Traffic Based
// Keep Alive (CTRATT.TBKAS 0) I/O commands do not restart the timer; with
// it, they do.
func TestKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctratt uint32
		gap    time.Duration
		io     bool // an I/O command in the middle of the gap
		want   bool
	}{
		{"every 2.5 s", 0, 2500 * time.Millisecond, false, false},
		{"6 s gap", 0, 6 * time.Second, false, true},
		{"6 s gap, I/O without TBKAS", 0, 6 * time.Second, true, true},
		{"6 s gap, I/O with TBKAS", 1 << 6, 6 * time.Second, true, false},
	} {
		a := controller(t, 5000)
		a.identify(1, tc.ctratt)
		q := a.ioQueue(2, 1)
		from := a.keepAlive(2)
		a.skew += tc.gap / 2
		if tc.io {
			q.read(10)
		}
		a.skew += tc.gap - tc.gap/2
		to := a.keepAlive(3)
		got := a.findings()["NVME-KEEP-ALIVE"]
		if want := []int{from, to}; tc.want && !slices.Equal(got, want) || !tc.want && len(got) != 0 {
			t.Errorf("%s: NVME-KEEP-ALIVE on packets %v, want %v: %v", tc.name, got, tc.want, want)
		}
	}
}

// NVMe Base 2.0 "Keep Alive Timer", "Controller Shutdown": the silence
// after the last Keep Alive is judged too, up to the latest NVMe/RDMA
// packet of the capture (here I/O on another queue 6 s later, which
// without Traffic Based Keep Alive restarts nothing), unless the host
// shut the controller down (Property Set of CC with SHN 01b) first: a
// host that ends the association stops keeping it alive, and its
// later admin commands are not judged either.
func TestKeepAliveAfterLastCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shutdown bool
		gap      time.Duration
		want     bool
	}{
		{"6 s of silence", false, 6 * time.Second, true},
		{"4 s of silence", false, 4 * time.Second, false},
		{"shut down, then 6 s of silence", true, 6 * time.Second, false},
	} {
		a := controller(t, 5000)
		a.identify(1, 0)
		q := a.ioQueue(2, 1)
		from := a.keepAlive(2)
		if tc.shutdown {
			a.propSetCC(3, 1<<14|1) // SHN 01b: normal shutdown
		}
		a.skew += tc.gap
		q.read(10)
		last := a.pkt
		if tc.shutdown {
			a.propGetCSTS(4, 0) // polling CSTS.SHST, long after
		}
		got := a.findings()["NVME-KEEP-ALIVE"]
		if want := []int{from, last}; tc.want && !slices.Equal(got, want) || !tc.want && len(got) != 0 {
			t.Errorf("%s: NVME-KEEP-ALIVE on packets %v, want %v: %v", tc.name, got, tc.want, want)
		}
	}
}

// A controller whose admin Connect set KATO 0 has no Keep Alive Timer.
func TestKeepAliveOff(t *testing.T) {
	a := controller(t, 0)
	a.skew += time.Hour
	a.keepAlive(2)
	if f := a.findings(); len(f) != 0 {
		t.Errorf("KATO 0: %v", f)
	}
}

// sqQueue is an I/O queue of SQSIZE 3 (4 entries) set up and connected:
// the Connect took entry 0, its completion reports SQHD 1.
func sqQueue(t *testing.T, cattr uint8) *rig {
	r := newRig(t, cmReq(1, 4, 3))
	r.sqe(sqe(0x7f, 0, 0x01, 0x1000, 1024, 0x11, 1<<16, 3|uint32(cattr)<<16))
	r.readData(0x11, 0x1000, connectData(1))
	sqhd := uint16(1)
	if cattr != 0 {
		sqhd = 0xffff // nvmet with SQ flow control disabled
	}
	r.cqe(cqe(1, sqhd, 1, 0, 0))
	return r
}

// NVMe Base 2.0 "Submission Queue Head Pointer": the Nth command (the
// Connect being the first) takes entry N-1 mod 4; a controller that
// consumed it reports SQHD N mod 4.
func TestSQHD(t *testing.T) {
	r := sqQueue(t, 0)
	for i := uint16(1); i <= 6; i++ { // through a wrap: 2, 3, 0, 1, 2, 3
		r.sqe(sqe(ioRead, i, 0, 0x8000, 512, 0x22))
		r.cqe(cqe(0, (i+1)%4, 1, i, 0))
	}
	if f := r.findings(); len(f) != 0 {
		t.Errorf("SQHD following the commands: %v", f)
	}
	// SQHD 3 after two commands (entries 1 and 2 taken, head at most 3)
	// is fine; SQHD 0 would mean entry 3 consumed too, which the host
	// never filled.
	r = sqQueue(t, 0)
	r.sqe(sqe(ioRead, 1, 0, 0x8000, 512, 0x22))
	r.sqe(sqe(ioRead, 2, 0, 0x9000, 512, 0x23))
	r.cqe(cqe(0, 3, 1, 2, 0))
	bad := r.cqe(cqe(0, 0, 1, 1, 0))
	if f := r.findings(); len(f) != 1 || !slices.Equal(f["NVME-SQHD"], []int{bad}) {
		t.Errorf("SQHD past the submitted entries: %v, want NVME-SQHD on %d", f, bad)
	}
	// An SQHD that names no entry of the 4.
	r = sqQueue(t, 0)
	r.sqe(sqe(ioRead, 1, 0, 0x8000, 512, 0x22))
	bad = r.cqe(cqe(0, 4, 1, 1, 0))
	if f := r.findings(); len(f) != 1 || !slices.Equal(f["NVME-SQHD"], []int{bad}) {
		t.Errorf("SQHD 4 on a queue of 4: %v, want NVME-SQHD on %d", f, bad)
	}
}

// With SQ flow control disabled (CATTR bit 2) SQHD is reserved: nvmet
// sends FFFFh, and the rule is not evaluated, saying why.
func TestSQHDFlowControlDisabled(t *testing.T) {
	r := sqQueue(t, 0x04)
	r.sqe(sqe(ioRead, 1, 0, 0x8000, 512, 0x22))
	r.cqe(cqe(0, 0xffff, 1, 1, 0))
	r.s.Close()
	res := r.ck.Finish([]*dissect.Connection{r.c})
	if len(res.Findings) != 0 {
		t.Errorf("findings: %v", res.Findings)
	}
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Rule == "NVME-SQHD" && (ch.Status != check.StatusNotEvaluated || !strings.Contains(ch.Reason, "SQ flow control")) {
				t.Errorf("NVME-SQHD: %s (%s)", ch.Status, ch.Reason)
			}
		}
	}
}

// propSet and propGet are the admin queue's Property Set of CC (offset
// 14h, 4 bytes) and Property Get of CSTS (1Ch), the latter answered with
// value csts in DW0.
func (a *rig) propSetCC(cid uint16, cc uint32) {
	a.sqe(sqe(0x7f, cid, 0x00, 0, 0, 0, 0, 0x14, cc))
	a.done(cid)
}

func (a *rig) propGetCSTS(cid uint16, csts uint32) {
	a.sqe(sqe(0x7f, cid, 0x04, 0, 0, 0, 0, 0x1c))
	a.subs %= 32
	a.cqe(cqe(csts, uint16(a.subs), 0, cid, 0))
}

// NVMe Base 2.0 "Controller Initialization": CC.EN 1, then CSTS.RDY 1,
// then the I/O queues.
func TestIOBeforeEnable(t *testing.T) {
	for _, tc := range []struct {
		name string
		up   func(a *rig)
		want bool
	}{
		{"enabled and ready", func(a *rig) { a.propSetCC(1, 0x460001); a.propGetCSTS(2, 1) }, false},
		{"not enabled", func(a *rig) {}, true},
		{"enabled, not ready yet", func(a *rig) { a.propSetCC(1, 0x460001); a.propGetCSTS(2, 0) }, true},
		{"ready, then disabled", func(a *rig) { a.propSetCC(1, 0x460001); a.propGetCSTS(2, 1); a.propSetCC(3, 0x460000) }, true},
	} {
		a := controller(t, 5000)
		tc.up(a)
		q := newQueue(t, a.u, a.clock, 2, cmReq(1, 32, 31))
		cmd := a.pkt + 1
		done := q.connectQueue(1, 31, 0, 0, 1)
		got := q.findings()["NVME-IO-BEFORE-ENABLE"]
		if want := []int{cmd, done}; tc.want && !slices.Equal(got, want) || !tc.want && len(got) != 0 {
			t.Errorf("%s: NVME-IO-BEFORE-ENABLE on %v, want %v: %v", tc.name, got, tc.want, want)
		}
	}
	// Without its admin queue in the capture the Connect is not judged.
	q := newRig(t, cmReq(1, 32, 31))
	q.connectQueue(1, 31, 0, 0, 1)
	if f := q.findings(); len(f) != 0 {
		t.Errorf("I/O queue without its admin queue: %v", f)
	}
}

// The per-opcode latency quantiles come from a log histogram of 8 buckets
// an octave (dissect.Histogram): each is at or above the exact quantile
// by less than one bucket (2^(1/8)), never above the maximum. 100 Reads
// with latencies 1, 2, ... 100 ms: the exact p50 is 50 ms, the p99 99 ms.
func TestOpcodeLatencyQuantiles(t *testing.T) {
	r := sqQueue(t, 0)
	r.subs = 1
	for i := 1; i <= 100; i++ {
		cid := uint16(i)
		r.sqe(sqe(ioRead, cid, 0, 0x8000, 512, 0x22))
		r.skew += time.Duration(i) * time.Millisecond
		r.cqe(cqe(0, uint16(r.subs%4), 1, cid, 0))
	}
	st := r.c.ULPData.(*nvmeof.Queue).Opcodes["Read"]
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		P50 int64 `json:"latency_p50_ns"`
		P99 int64 `json:"latency_p99_ns"`
		Max int64 `json:"latency_max_ns"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// The rig adds 1 µs a packet to each latency.
	within := func(v int64, exact time.Duration) bool {
		exact += time.Microsecond
		return v >= exact.Nanoseconds() && float64(v) < float64(exact.Nanoseconds())*math.Pow(2, 1.0/8)
	}
	if !within(got.P50, 50*time.Millisecond) || !within(got.P99, 99*time.Millisecond) || got.Max != (100*time.Millisecond+time.Microsecond).Nanoseconds() {
		t.Errorf("Read latency p50 %d ns, p99 %d ns, max %d ns", got.P50, got.P99, got.Max)
	}
}
