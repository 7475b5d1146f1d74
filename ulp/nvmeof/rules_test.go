package nvmeof_test

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// A queue driven by hand, the engine's way: each Send and RDMA operation
// goes to the session first, then to the check runner. The capsules are
// laid out from the specifications (NVMe Base 2.0 "Common Command
// Format", "Completion Queue Entry"; NVMe RDMA Transport 1.0 "Keyed SGL
// Data Block Descriptor").
type rig struct {
	t  *testing.T
	c  *dissect.Connection
	s  dissect.Session
	ck *check.Runner
	u  dissect.ULP
	*clock
	// subs counts the command capsules sent by sqe.
	subs int
}

// clock numbers the packets of the queues of one rig and times them, 1 µs
// a packet plus skew; the queues of one controller share it.
type clock struct {
	pkt  int
	skew time.Duration
}

func (k *clock) now() time.Time { return time.Unix(0, int64(k.pkt)*1000).Add(k.skew) }

// cmReq is an NVMe/RDMA CM REQ private data: RECFMT 0, QID, HRQSIZE,
// HSQSIZE.
func cmReq(qid, hrq, hsq uint16) []byte {
	b := make([]byte, 32)
	binary.LittleEndian.PutUint16(b[2:], qid)
	binary.LittleEndian.PutUint16(b[4:], hrq)
	binary.LittleEndian.PutUint16(b[6:], hsq)
	return b
}

func newRig(t *testing.T, req []byte) *rig {
	return newQueue(t, nvmeof.New(), &clock{pkt: 10}, 1, req)
}

// newQueue sets up one more queue (connection id) of ULP u: the queues
// of one controller share u and k.
func newQueue(t *testing.T, u dissect.ULP, k *clock, id int, req []byte) *rig {
	c := &dissect.Connection{ID: id, Transport: dissect.TransportRoCE, ServicePort: nvmeof.Port, State: dissect.StateEstablished}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 1, Bytes: req}
	rep := make([]byte, 32)
	binary.LittleEndian.PutUint16(rep[2:], 32)
	c.PrivateData[1] = dissect.PrivateData{Seen: true, Packet: 2, Bytes: rep}
	if u.Claim(c) != dissect.Yes {
		t.Fatal("not claimed")
	}
	c.ULP = u.Name()
	return &rig{t: t, c: c, s: u.Start(c, &dissect.Env{}), ck: check.NewRunner(check.Config{}), u: u, clock: k}
}

func (r *rig) send(dir dissect.Direction, data []byte, inv bool, key uint32) int {
	r.pkt++
	m := &dissect.Message{Conn: r.c, Dir: dir, Packets: []int{r.pkt}, Data: data, Length: len(data),
		Invalidate: inv, InvalidatedSTag: key, Time: r.now()}
	r.s.Message(nil, m)
	r.ck.Message(m)
	return r.pkt
}

// command sends a command capsule: opcode, CID, a keyed SGL (address,
// length, key, subtype); fctype for a Fabrics command.
func (r *rig) command(opc uint8, cid uint16, addr uint64, n uint32, key uint32, subtype uint8, cdw10, cdw11 uint32, fctype uint8) int {
	b := make([]byte, 64)
	b[0] = opc
	b[1] = 0x40 // PSDT: SGL
	binary.LittleEndian.PutUint16(b[2:], cid)
	if opc == 0x7f {
		b[4] = fctype
	}
	binary.LittleEndian.PutUint64(b[24:], addr)
	b[32], b[33], b[34] = byte(n), byte(n>>8), byte(n>>16)
	binary.LittleEndian.PutUint32(b[35:], key)
	b[39] = 0x40 | subtype // Keyed SGL Data Block
	binary.LittleEndian.PutUint32(b[40:], cdw10)
	binary.LittleEndian.PutUint32(b[44:], cdw11)
	return r.send(dissect.DirClientToServer, b, false, 0)
}

// connect sends the Fabrics Connect for QID 1, SQSIZE sq.
func (r *rig) connect(cid uint16, sq uint16) int {
	return r.command(0x7f, cid, 0x1000, 1024, 0x11, 0xf, 1<<16, uint32(sq), 0x01)
}

func (r *rig) completion(cid uint16, status uint16, inv bool, key uint32) int {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint16(b[12:], cid)
	binary.LittleEndian.PutUint16(b[14:], status<<1)
	return r.send(dissect.DirServerToClient, b, inv, key)
}

func (r *rig) op(kind dissect.RDMAOpKind, dir dissect.Direction, key uint32, addr uint64, n uint32) int {
	r.pkt++
	op := &dissect.RDMAOp{Kind: kind, Conn: r.c, Dir: dir, STag: key, Offset: addr, Length: n, Packets: []int{r.pkt}, Complete: true}
	r.s.RDMAOp(nil, op)
	r.ck.RDMAOp(op)
	return r.pkt
}

// findings closes the queue and returns the rule IDs found, with their
// packets.
func (r *rig) findings() map[string][]int {
	r.s.Close()
	res := r.ck.Finish([]*dissect.Connection{r.c})
	out := map[string][]int{}
	for _, f := range res.Findings {
		if f.ULP != nvmeof.Name {
			r.t.Errorf("finding %s of ULP %q", f.Rule, f.ULP)
		}
		out[f.Rule] = append(out[f.Rule], f.Packets...)
	}
	return out
}

const (
	ioWrite = 0x01
	ioRead  = 0x02
	invKey  = 0xf
	address = 0x0
)

func TestHealthyQueueHasNoFindings(t *testing.T) {
	r := newRig(t, cmReq(1, 32, 31))
	r.connect(1, 31)
	r.op(dissect.RDMARead, dissect.DirServerToClient, 0x11, 0x1000, 1024)
	r.completion(1, 0, false, 0)
	r.command(ioRead, 2, 0x8000, 4096, 0x22, invKey, 0, 0, 0)
	r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x22, 0x8000, 4096)
	r.completion(2, 0, true, 0x22)
	r.command(ioWrite, 2, 0x9000, 8192, 0x23, address, 0, 0, 0)
	r.op(dissect.RDMARead, dissect.DirServerToClient, 0x23, 0x9000, 8192)
	r.completion(2, 0, false, 0)
	if f := r.findings(); len(f) != 0 {
		t.Errorf("findings on a healthy queue: %v", f)
	}
	q := r.c.ULPData.(*nvmeof.Queue)
	if q.ReadBytes != 1024+8192 || q.WriteBytes != 4096 || q.RemoteInvalidations != 1 || q.RemoteInvalidationRequested != 2 {
		t.Errorf("queue %+v", q)
	}
}

// Each breaking case: a healthy start, then what breaks one rule, which
// must name the packets that show it.
func TestRulesFindWhatBreaksThem(t *testing.T) {
	cases := []struct {
		rule   string
		req    []byte
		break_ func(r *rig) []int
	}{
		{"NVME-CM-PRIVATE-DATA", cmReq(1, 16, 31), func(r *rig) []int { r.connect(1, 31); return []int{1} }},
		{"NVME-CONNECT-FIRST", cmReq(1, 32, 31), func(r *rig) []int {
			return []int{r.command(ioRead, 1, 0x8000, 512, 0x22, address, 0, 0, 0)}
		}},
		{"NVME-CONNECT-FIRST", cmReq(1, 32, 31), func(r *rig) []int { return []int{r.connect(1, 15)} }},
		{"NVME-CID-UNIQUE", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			a := r.command(ioRead, 7, 0x8000, 512, 0x22, address, 0, 0, 0)
			return []int{a, r.command(ioRead, 7, 0x9000, 512, 0x23, address, 0, 0, 0)}
		}},
		{"NVME-COMPLETION-UNMATCHED", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			return []int{r.completion(9, 0, false, 0)}
		}},
		{"NVME-QUEUE-DEPTH", cmReq(1, 3, 1), func(r *rig) []int {
			r.connect(1, 1)
			r.command(ioRead, 2, 0x8000, 512, 0x22, address, 0, 0, 0)
			return []int{r.command(ioRead, 3, 0x9000, 512, 0x23, address, 0, 0, 0)}
		}},
		{"NVME-INV-KEY", cmReq(1, 32, 31), func(r *rig) []int { // invalidates another key
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			a := r.command(ioRead, 2, 0x8000, 512, 0x22, invKey, 0, 0, 0)
			return []int{a, r.completion(2, 0, true, 0x99)}
		}},
		{"NVME-INV-KEY", cmReq(1, 32, 31), func(r *rig) []int { // did not ask
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			a := r.command(ioRead, 2, 0x8000, 512, 0x22, address, 0, 0, 0)
			return []int{a, r.completion(2, 0, true, 0x22)}
		}},
		{"NVME-INV-KEY", cmReq(1, 32, 31), func(r *rig) []int { // the host sends With Invalidate (check.Neutral)
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			return []int{r.send(dissect.DirClientToServer, sqe(ioRead, 2, 0, 0x8000, 512, 0x22), true, 0x77)}
		}},
		{"NVME-RDMA-BY-HOST", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			return []int{r.op(dissect.RDMAWrite, dissect.DirClientToServer, 0x55, 0, 64)}
		}},
		{"NVME-RDMA-UNADVERTISED", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			r.command(ioRead, 2, 0x8000, 512, 0x22, address, 0, 0, 0)
			return []int{r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x22, 0x8000, 513)} // one byte past
		}},
		{"NVME-RDMA-UNADVERTISED", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			r.command(ioRead, 2, 0x8000, 512, 0x22, address, 0, 0, 0)
			// A Read of memory advertised for the controller to write.
			return []int{r.op(dissect.RDMARead, dissect.DirServerToClient, 0x22, 0x8000, 512)}
		}},
		{"NVME-RDMA-AFTER-COMPLETION", cmReq(1, 32, 31), func(r *rig) []int {
			r.connect(1, 31)
			r.completion(1, 0, false, 0)
			r.command(ioRead, 2, 0x8000, 512, 0x22, address, 0, 0, 0)
			c := r.completion(2, 0, false, 0)
			return []int{r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x22, 0x8000, 512), c}
		}},
	}
	for _, tc := range cases {
		r := newRig(t, tc.req)
		want := tc.break_(r)
		got := r.findings()
		if len(got) != 1 || !slices.Equal(got[tc.rule], want) {
			t.Errorf("%s: findings %v, want only %s on packets %v", tc.rule, got, tc.rule, want)
		}
	}
}

// TestLostCommandIsNotAFinding: a completion or RDMA operation whose
// command the capture lacks (PSNs skipped) is evidence missing: the rules
// are not evaluated on it, they find nothing.
func TestLostCommandIsNotAFinding(t *testing.T) {
	r := newRig(t, cmReq(1, 32, 31))
	r.c.MissingPSNs = 3
	r.connect(1, 31)
	r.completion(1, 0, false, 0)
	r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x22, 0x8000, 512)
	r.completion(2, 0, true, 0x22)
	if f := r.findings(); len(f) != 0 {
		t.Errorf("findings from missing evidence: %v", f)
	}
}
