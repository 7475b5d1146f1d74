package smbdirect_test

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

// A connection driven by hand, the engine's way: each Send and RDMA
// operation goes to the session first, then to the check runner. The
// messages are laid out from the specifications ([MS-SMBD] 2.2.1-2.2.3.1,
// [MS-SMB2] 2.2.1.2, 2.2.19, 2.2.21), with the values Linux's cifs client
// and ksmbd negotiated in rxe-smbdirect.pcap.
type rig struct {
	t   *testing.T
	c   *dissect.Connection
	s   dissect.Session
	ck  *check.Runner
	pkt int
}

func newRig(t *testing.T) *rig {
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServicePort: smbdirect.Port, State: dissect.StateEstablished}
	u := smbdirect.New()
	if u.Claim(c) != dissect.Yes {
		t.Fatal("not claimed")
	}
	c.ULP = u.Name()
	return &rig{t: t, c: c, s: u.Start(c, &dissect.Env{}), ck: check.NewRunner(check.Config{}), pkt: 10}
}

func (r *rig) send(dir dissect.Direction, data []byte, inv bool, key uint32) int {
	r.pkt++
	m := &dissect.Message{Conn: r.c, Dir: dir, Packets: []int{r.pkt}, Data: data, Length: len(data),
		Invalidate: inv, InvalidatedSTag: key, Time: time.Unix(0, int64(r.pkt)*1000)}
	r.s.Message(nil, m)
	r.ck.Message(m)
	return r.pkt
}

const c2s, s2c = dissect.DirClientToServer, dissect.DirServerToClient

// negReq is a Negotiate Request: versions, CreditsRequested,
// PreferredSendSize, MaxReceiveSize, MaxFragmentedSize.
func negReq(minv, maxv, credits uint16, recv, frag uint32) []byte {
	b := make([]byte, 20)
	le := binary.LittleEndian
	le.PutUint16(b, minv)
	le.PutUint16(b[2:], maxv)
	le.PutUint16(b[6:], credits)
	le.PutUint32(b[8:], 1364)
	le.PutUint32(b[12:], recv)
	le.PutUint32(b[16:], frag)
	return b
}

// negResp is a successful Negotiate Response for version 0x0100.
func negResp(granted uint16, rw, recv, frag uint32) []byte {
	b := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint16(b, 0x100)
	le.PutUint16(b[2:], 0x100)
	le.PutUint16(b[4:], 0x100)
	le.PutUint16(b[8:], 255)
	le.PutUint16(b[10:], granted)
	le.PutUint32(b[16:], rw)
	le.PutUint32(b[20:], 1364)
	le.PutUint32(b[24:], recv)
	le.PutUint32(b[28:], frag)
	return b
}

// data is a Data Transfer Message granting credits, with flags and
// RemainingDataLength, carrying payload at DataOffset 24.
func data(granted, flags uint16, remaining uint32, payload []byte) []byte {
	b := make([]byte, 20, 24+len(payload))
	le := binary.LittleEndian
	le.PutUint16(b, 255)
	le.PutUint16(b[2:], granted)
	le.PutUint16(b[4:], flags)
	le.PutUint32(b[8:], remaining)
	if len(payload) > 0 {
		le.PutUint32(b[12:], 24)
		le.PutUint32(b[16:], uint32(len(payload)))
		b = append(b, 0, 0, 0, 0)
		b = append(b, payload...)
	}
	return b
}

// smb2 is an SMB2 message: header (command, MessageId, a response's
// status) and body.
func smb2(cmd uint16, mid uint64, response bool, status uint32, body []byte) []byte {
	b := make([]byte, 64, 64+len(body))
	le := binary.LittleEndian
	copy(b, "\xfeSMB")
	le.PutUint16(b[4:], 64)
	le.PutUint16(b[6:], 1)
	le.PutUint32(b[8:], status)
	le.PutUint16(b[12:], cmd)
	le.PutUint16(b[14:], 1)
	if response {
		le.PutUint32(b[16:], 1)
	}
	le.PutUint64(b[24:], mid)
	return append(b, body...)
}

// readWrite is a READ (8) or WRITE (9) request body with channel and one
// buffer descriptor V1 (offset, token, length) at offset 112 of the
// message.
func readWrite(cmd uint16, channel uint32, off uint64, token, n uint32) []byte {
	b := make([]byte, 48+16)
	le := binary.LittleEndian
	le.PutUint16(b, 49)
	if cmd == 8 {
		le.PutUint32(b[4:], n)
		le.PutUint32(b[36:], channel)
		le.PutUint16(b[44:], 112)
		le.PutUint16(b[46:], 16)
	} else {
		le.PutUint16(b[2:], 112)
		le.PutUint32(b[36:], n) // RemainingBytes
		le.PutUint32(b[32:], channel)
		le.PutUint16(b[40:], 112)
		le.PutUint16(b[42:], 16)
	}
	le.PutUint64(b[48:], off)
	le.PutUint32(b[56:], token)
	le.PutUint32(b[60:], n)
	return b
}

// start negotiates as the captures do and has the client grant the
// server its credits.
func (r *rig) start() {
	r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
	r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
	r.send(c2s, data(255, 0, 0, nil), false, 0)
}

func (r *rig) request(cmd uint16, mid uint64, body []byte) int {
	return r.send(c2s, data(1, 0, 0, smb2(cmd, mid, false, 0, body)), false, 0)
}

func (r *rig) response(cmd uint16, mid uint64, status uint32, inv bool, key uint32) int {
	return r.send(s2c, data(0, 0, 0, smb2(cmd, mid, true, status, make([]byte, 16))), inv, key)
}

func (r *rig) op(kind dissect.RDMAOpKind, dir dissect.Direction, key uint32, addr uint64, n uint32) int {
	r.pkt++
	op := &dissect.RDMAOp{Kind: kind, Conn: r.c, Dir: dir, STag: key, Offset: addr, Length: n, Packets: []int{r.pkt}, Complete: true}
	r.s.RDMAOp(nil, op)
	r.ck.RDMAOp(op)
	return r.pkt
}

// findings closes the connection and returns the rule IDs found, with
// their packets, and the rules' statuses.
func (r *rig) findings() (map[string][]int, map[string]check.Status) {
	r.s.Close()
	res := r.ck.Finish([]*dissect.Connection{r.c})
	out := map[string][]int{}
	for _, f := range res.Findings {
		if f.ULP != smbdirect.Name {
			r.t.Errorf("finding %s of ULP %q", f.Rule, f.ULP)
		}
		out[f.Rule] = append(out[f.Rule], f.Packets...)
	}
	st := map[string]check.Status{}
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			st[ch.Rule] = ch.Status
		}
	}
	return out, st
}

const (
	read, write       = 8, 9
	rdmaV1, rdmaV1Inv = 1, 2
)

// healthy is a connection as the captures show one: negotiation, a WRITE
// the server RDMA Reads, a READ it RDMA Writes, both answered With
// Invalidate of their token, a keep-alive answered.
func healthy(r *rig) {
	r.start()
	r.request(0, 0, make([]byte, 36))
	r.response(0, 0, 0, false, 0)
	r.request(write, 1, readWrite(write, rdmaV1Inv, 0x10000, 0x483, 8192))
	r.op(dissect.RDMARead, s2c, 0x483, 0x10000, 4096)
	r.op(dissect.RDMARead, s2c, 0x483, 0x11000, 4096)
	r.response(write, 1, 0, true, 0x483)
	r.request(read, 2, readWrite(read, rdmaV1Inv, 0x20000, 0x484, 4096))
	r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 4096)
	r.response(read, 2, 0, true, 0x484)
	// A compound request in two fragments (as frames 92-94 of
	// rxe-smbdirect.pcap), answered.
	msg := append(smb2(5, 3, false, 0, make([]byte, 56)), smb2(6, 4, false, 0, make([]byte, 24))...)
	binary.LittleEndian.PutUint32(msg[20:], 120) // NextCommand
	r.send(c2s, data(1, 0, uint32(len(msg)-100), msg[:100]), false, 0)
	r.send(c2s, data(1, 0, 0, msg[100:]), false, 0)
	r.response(5, 3, 0, false, 0)
	r.response(6, 4, 0, false, 0)
	r.send(c2s, data(1, 1, 0, nil), false, 0)
	r.send(s2c, data(1, 0, 0, nil), false, 0)
}

func TestHealthyConnectionHasNoFindings(t *testing.T) {
	r := newRig(t)
	healthy(r)
	f, st := r.findings()
	if len(f) != 0 {
		t.Errorf("findings on a healthy connection: %v", f)
	}
	for _, id := range ruleIDs() {
		if st[id] != check.StatusPassed {
			t.Errorf("%s: %v", id, st[id])
		}
	}
	q := r.c.ULPData.(*smbdirect.Conn)
	if q.ReadBytes != 8192 || q.WriteBytes != 4096 || q.RemoteInvalidations != 2 || q.InvalidateRequested != 2 ||
		q.Requests != 5 || q.Responses != 5 || q.Client.Fragmented != 1 ||
		// The client: 254 credits from the Negotiate Response and 1 from
		// the server's last message, 7 Data Transfer Messages sent; the
		// server: 255 from the client's first message and 1 from each of
		// its 6 others, 6 sent.
		*q.Client.Credits != 254+1-7 || *q.Server.Credits != 255+6-6 ||
		q.Server.Granted != 254+1 || q.Client.Granted != 255+6 || *q.Client.MinCredits != 254-7 || *q.Server.MinCredits != 0 {
		t.Errorf("connection %+v client %+v server %+v", q, q.Client, q.Server)
	}
}

func ruleIDs() []string {
	var ids []string
	for _, ru := range smbdirect.Rules() {
		ids = append(ids, ru.ID)
	}
	return ids
}

// Each breaking case: a healthy start, then what breaks one rule, which
// must name the packets that show it; no other rule finds anything.
func TestRulesFindWhatBreaksThem(t *testing.T) {
	cases := []struct {
		rule   string
		break_ func(r *rig) []int
	}{
		{"SMBD-NEGOTIATE-FIRST", func(r *rig) []int {
			return []int{r.send(c2s, data(255, 0, 0, nil), false, 0)} // data before the negotiation
		}},
		{"SMBD-NEGOTIATE-VALUES", func(r *rig) []int { // MaxFragmentedSize below 128 KiB
			a := r.send(c2s, negReq(0x100, 0x100, 255, 1364, 65536), false, 0)
			r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
			return []int{a}
		}},
		{"SMBD-NEGOTIATE-VALUES", func(r *rig) []int { // no credit granted
			r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
			return []int{r.send(s2c, negResp(0, 8388608, 1364, 173910), false, 0)}
		}},
		{"SMBD-RECV-SIZE", func(r *rig) []int { // a 2000-octet Send to a client receiving 1364
			r.start()
			r.request(5, 1, make([]byte, 60))
			return []int{r.send(s2c, data(0, 0, 0, smb2(5, 1, true, 0, make([]byte, 2000-24-64))), false, 0)}
		}},
		{"SMBD-FRAGMENTED-SIZE", func(r *rig) []int { // 132,000 octets in 132 fragments to a client taking 131,072
			r.send(c2s, negReq(0x100, 0x100, 255, 1364, 131072), false, 0)
			r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
			r.send(c2s, data(255, 0, 0, nil), false, 0)
			r.request(14, 1, make([]byte, 32))
			msg := smb2(14, 1, true, 0, make([]byte, 132000-64))
			var last int
			for off := 0; off < len(msg); off += 1000 {
				last = r.send(s2c, data(0, 0, uint32(len(msg)-off-1000), msg[off:off+1000]), false, 0)
			}
			return []int{last}
		}},
		{"SMBD-FRAGMENTED-SIZE", func(r *rig) []int { // RemainingDataLength not decreasing by DataLength
			r.start()
			msg := smb2(5, 1, false, 0, make([]byte, 200))
			r.send(c2s, data(1, 0, 164, msg[:100]), false, 0)
			return []int{r.send(c2s, data(1, 0, 10, msg[100:200]), false, 0)}
		}},
		{"SMBD-CREDITS", func(r *rig) []int { // the server sends before the client granted it a credit
			r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
			r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
			return []int{r.send(s2c, data(0, 0, 0, nil), false, 0)}
		}},
		{"SMBD-CREDITS", func(r *rig) []int { // the client spends its last credit granting none
			r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
			r.send(s2c, negResp(1, 8388608, 1364, 173910), false, 0)
			return []int{r.send(c2s, data(0, 0, 0, nil), false, 0)}
		}},
		{"SMBD-RDMA-DESCRIPTOR", func(r *rig) []int { // an RDMA Write beyond the READ's descriptor
			r.start()
			r.request(read, 1, readWrite(read, rdmaV1Inv, 0x20000, 0x484, 4096))
			return []int{r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 8192)}
		}},
		{"SMBD-RDMA-DESCRIPTOR", func(r *rig) []int { // an RDMA Read of a READ's buffer (a WRITE's kind)
			r.start()
			r.request(read, 1, readWrite(read, rdmaV1Inv, 0x20000, 0x484, 4096))
			return []int{r.op(dissect.RDMARead, s2c, 0x484, 0x20000, 4096)}
		}},
		{"SMBD-RDMA-DESCRIPTOR", func(r *rig) []int { // after the response
			r.start()
			r.request(read, 1, readWrite(read, rdmaV1, 0x20000, 0x484, 4096))
			a := r.response(read, 1, 0, false, 0)
			return []int{r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 4096), a}
		}},
		{"SMBD-RDMA-DESCRIPTOR", func(r *rig) []int { // the client initiates
			r.start()
			return []int{r.op(dissect.RDMAWrite, c2s, 0x484, 0x20000, 4096)}
		}},
		{"SMBD-RDMA-DESCRIPTOR", func(r *rig) []int { // descriptors beyond MaxReadWriteSize
			r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
			r.send(s2c, negResp(254, 65536, 1364, 173910), false, 0)
			r.send(c2s, data(255, 0, 0, nil), false, 0)
			a := r.request(write, 1, readWrite(write, rdmaV1Inv, 0x10000, 0x483, 131072))
			r.op(dissect.RDMARead, s2c, 0x483, 0x10000, 131072)
			return []int{a}
		}},
		{"SMBD-INVALIDATE", func(r *rig) []int { // the channel was RDMA_V1: no remote invalidation asked
			r.start()
			a := r.request(read, 1, readWrite(read, rdmaV1, 0x20000, 0x484, 4096))
			r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 4096)
			return []int{a, r.response(read, 1, 0, true, 0x484)}
		}},
		{"SMBD-INVALIDATE", func(r *rig) []int { // another token
			r.start()
			a := r.request(read, 1, readWrite(read, rdmaV1Inv, 0x20000, 0x484, 4096))
			r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 4096)
			return []int{a, r.response(read, 1, 0, true, 0x999)}
		}},
		{"SMBD-KEEPALIVE-UNANSWERED", func(r *rig) []int { // the client asks, keeps sending, the server is silent
			r.start()
			a := r.send(c2s, data(1, 1, 0, nil), false, 0)
			r.send(c2s, data(1, 0, 0, nil), false, 0)
			return []int{a}
		}},
	}
	for _, tc := range cases {
		r := newRig(t)
		want := tc.break_(r)
		f, _ := r.findings()
		got := f[tc.rule]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: packets %v, want %v (all findings %v)", tc.rule, got, want, f)
		}
		if len(f) != 1 {
			t.Errorf("%s: findings of other rules: %v", tc.rule, f)
		}
	}
}

// TestMissingEvidenceIsNotAFinding: what the capture lacks makes a rule
// not evaluated, never a finding: PSNs skipped (a lost grant, a lost
// request), no negotiation in the capture, the capture ending right after
// a keep-alive request.
func TestMissingEvidenceIsNotAFinding(t *testing.T) {
	// Skipped PSNs: a Send without credit and an RDMA Write of a READ the
	// capture lacks.
	r := newRig(t)
	r.c.MissingPSNs = 3
	r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
	r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
	r.send(s2c, data(0, 0, 0, nil), false, 0)
	r.op(dissect.RDMAWrite, s2c, 0x484, 0x20000, 4096)
	r.response(read, 1, 0, true, 0x484)
	f, st := r.findings()
	if len(f) != 0 || st["SMBD-CREDITS"] != check.StatusNotEvaluated || st["SMBD-RDMA-DESCRIPTOR"] != check.StatusNotEvaluated ||
		st["SMBD-INVALIDATE"] != check.StatusNotEvaluated {
		t.Errorf("lossy: findings %v, statuses %v", f, st)
	}
	// iWARP: TCP octets the capture lacks (a lost grant).
	r = newRig(t)
	r.c.Transport = dissect.TransportIWARP
	r.c.Health = &dissect.Health{}
	r.c.Health.Dir[0].TCPMissingOctets = 1400
	r.send(c2s, negReq(0x100, 0x100, 255, 1364, 173910), false, 0)
	r.send(s2c, negResp(254, 8388608, 1364, 173910), false, 0)
	r.send(s2c, data(0, 0, 0, nil), false, 0)
	f, st = r.findings()
	if len(f) != 0 || st["SMBD-CREDITS"] != check.StatusNotEvaluated {
		t.Errorf("iWARP gap: findings %v, statuses %v", f, st)
	}
	// No negotiation in the capture (it started mid-connection).
	r = newRig(t)
	r.c.State = dissect.StateNoSetup
	r.request(5, 7, make([]byte, 60))
	r.response(5, 7, 0, false, 0)
	f, st = r.findings()
	if len(f) != 0 || st["SMBD-NEGOTIATE-FIRST"] != check.StatusNotEvaluated || st["SMBD-CREDITS"] != check.StatusNotEvaluated ||
		st["SMBD-RECV-SIZE"] != check.StatusNotEvaluated || st["SMBD-NEGOTIATE-VALUES"] != check.StatusNotEvaluated {
		t.Errorf("no negotiation: findings %v, statuses %v", f, st)
	}
	// A keep-alive request the capture ends on.
	r = newRig(t)
	r.start()
	r.send(c2s, data(1, 1, 0, nil), false, 0)
	f, st = r.findings()
	if len(f) != 0 || st["SMBD-KEEPALIVE-UNANSWERED"] != check.StatusNotEvaluated {
		t.Errorf("keep-alive at the end: findings %v, statuses %v", f, st)
	}
}

// TestInterimResponseKeepsTheExchangeOpen: an interim STATUS_PENDING
// response ([MS-SMB2] 3.3.4.2) does not end the request; the final one
// does, with its status and the latency from the request.
func TestInterimResponseKeepsTheExchangeOpen(t *testing.T) {
	r := newRig(t)
	var xs []dissect.Exchange
	r.s = smbdirect.New().Start(r.c, &dissect.Env{Exchange: func(x *dissect.Exchange) { xs = append(xs, *x.Clone()) }})
	r.start()
	a := r.request(15, 4, make([]byte, 32)) // CHANGE_NOTIFY
	r.response(15, 4, 0x103, false, 0)
	if len(xs) != 0 {
		t.Fatalf("the interim response ended the exchange: %+v", xs)
	}
	b := r.response(15, 4, 0x10c, false, 0) // STATUS_NOTIFY_ENUM_DIR
	r.findings()
	if len(xs) != 1 || xs[0].RequestPacket != a || xs[0].ResponsePacket != b || xs[0].Status != "STATUS_NOTIFY_ENUM_DIR" ||
		xs[0].Name != "CHANGE_NOTIFY" || xs[0].Outcome != dissect.Responded || xs[0].Latency != time.Duration(b-a)*1000 {
		t.Errorf("%+v", xs)
	}
	if q := r.c.ULPData.(*smbdirect.Conn); q.Interim != 1 || q.Responses != 1 {
		t.Errorf("%+v", q)
	}
}

// TestClaimAndProbe: ports 445 and 5445 are SMB Direct's; elsewhere a
// connection without private data is probed, and its client's first Send
// must be a Negotiate Request ([MS-SMBD] 2.2.1).
func TestClaimAndProbe(t *testing.T) {
	u := smbdirect.New()
	for port, want := range map[uint16]dissect.Verdict{445: dissect.Yes, 5445: dissect.Yes, 4420: dissect.Maybe} {
		if v := u.Claim(&dissect.Connection{ServicePort: port}); v != want {
			t.Errorf("port %d: %v", port, v)
		}
	}
	c := &dissect.Connection{ServicePort: 7000}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Bytes: []byte{1, 2, 3, 4}}
	if v := u.Claim(c); v != dissect.No {
		t.Errorf("private data: %v", v)
	}
	c = &dissect.Connection{ServicePort: 7000}
	for _, tc := range []struct {
		dir  dissect.Direction
		data []byte
		want dissect.Verdict
	}{
		{c2s, negReq(0x100, 0x100, 255, 1364, 173910), dissect.Yes},
		{c2s, negReq(0x200, 0x300, 255, 1364, 173910), dissect.No},
		{c2s, data(255, 0, 0, nil), dissect.No},
		{s2c, negResp(254, 8388608, 1364, 173910), dissect.Maybe},
	} {
		if v := u.Probe(c, &dissect.Message{Dir: tc.dir, Data: tc.data}); v != tc.want {
			t.Errorf("probe %x: %v, want %v", tc.data, v, tc.want)
		}
	}
	if k := string(smbdirect.AppendKey([]byte("x "), 30)); k != "x MID:30" {
		t.Errorf("key %q", k)
	}
}
