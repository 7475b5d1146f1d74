package iser_test

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/iser"
)

// A connection driven by hand, the engine's way: each Send and RDMA
// operation goes to the session first, then to the check runner. The
// PDUs are laid out from the specifications (RFC 7145 section 4.2, the
// iSER header; RFC 7143 section 11, the BHS), with the values of
// rxe-iser.pcap's normal session.
type rig struct {
	t   *testing.T
	c   *dissect.Connection
	s   dissect.Session
	ck  *check.Runner
	pkt int
}

// newRig sets up a connection whose CM REQ carried the iSER flags.
func newRig(t *testing.T, cmFlags byte) *rig {
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportRoCE, ServicePort: iser.Port, State: dissect.StateEstablished}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 1, Bytes: []byte{cmFlags, 0, 0, 0}}
	c.PrivateData[1] = dissect.PrivateData{Seen: true, Packet: 2, Bytes: []byte{0x80, 0, 0, 0}}
	u := iser.New()
	if u.Claim(c) != dissect.Yes {
		t.Fatal("not claimed")
	}
	c.ULP = u.Name()
	return &rig{t: t, c: c, s: u.Start(c, &dissect.Env{}), ck: check.NewRunner(check.Config{}), pkt: 10}
}

func (r *rig) send(dir dissect.Direction, data []byte, inv bool, stag uint32) int {
	r.pkt++
	m := &dissect.Message{Conn: r.c, Dir: dir, Packets: []int{r.pkt}, Data: data, Length: len(data),
		Invalidate: inv, InvalidatedSTag: stag, Time: time.Unix(0, int64(r.pkt)*1000)}
	r.s.Message(nil, m)
	r.ck.Message(m)
	return r.pkt
}

// pdu lays out an iSER header (flags, write STag and offset, read STag
// and offset) and a BHS (opcode, BHS flags, ITT), then data.
func pdu(iflags byte, wstag uint32, woff uint64, rstag uint32, roff uint64, op byte, bflags byte, itt uint32, data []byte) []byte {
	b := make([]byte, 28+48, 28+48+len(data))
	b[0] = iflags
	binary.BigEndian.PutUint32(b[4:], wstag)
	binary.BigEndian.PutUint64(b[8:], woff)
	binary.BigEndian.PutUint32(b[16:], rstag)
	binary.BigEndian.PutUint64(b[20:], roff)
	h := b[28:]
	h[0], h[1] = op, bflags
	n := len(data)
	h[5], h[6], h[7] = byte(n>>16), byte(n>>8), byte(n)
	binary.BigEndian.PutUint32(h[16:], itt)
	return append(b, data...)
}

const (
	wsv, rsv  = 0x08, 0x04
	ctrl      = 0x10
	opCmd     = 0x01
	opLogin   = 0x03
	opDataOut = 0x05
	opResp    = 0x21
	opLoginR  = 0x23
)

// login runs the capture's normal-session login (frames 29 and 31).
func (r *rig) login(initiator, target string) {
	kv := func(s string) []byte { return []byte(strings.ReplaceAll(s, ",", "\x00") + "\x00") }
	r.send(dissect.DirClientToServer, pdu(ctrl, 0, 0, 0, 0, 0x40|opLogin, 0x87, 0, kv(initiator)), false, 0)
	r.send(dissect.DirServerToClient, pdu(ctrl, 0, 0, 0, 0, opLoginR, 0x87, 0, kv(target)), false, 0)
}

const (
	initiatorKeys = "InitiatorName=iqn.2026-11.lab:client,SessionType=Normal,InitialR2T=No,ImmediateData=Yes,MaxBurstLength=16776192,FirstBurstLength=262144,InitiatorRecvDataSegmentLength=262144,TargetRecvDataSegmentLength=8192,RDMAExtensions=Yes"
	targetKeys    = "InitialR2T=Yes,ImmediateData=Yes,MaxBurstLength=262144,FirstBurstLength=65536,RDMAExtensions=Yes,InitiatorRecvDataSegmentLength=262144,TargetRecvDataSegmentLength=8192"
)

// read sends a READ(10) of n bytes into Read STag stag at offset off.
func (r *rig) read(itt uint32, stag uint32, off uint64, n uint32) int {
	b := pdu(ctrl|rsv, 0, 0, stag, off, opCmd, 0xc1, itt, nil)
	binary.BigEndian.PutUint32(b[28+20:], n)
	b[28+32] = 0x28
	return r.send(dissect.DirClientToServer, b, false, 0)
}

// write sends a WRITE(10) of n bytes, imm of them immediate, the rest
// from Write STag stag at offset off.
func (r *rig) write(itt uint32, flags byte, stag uint32, off uint64, n, imm uint32) int {
	b := pdu(flags, stag, off, 0, 0, opCmd, 0xa1, itt, make([]byte, imm))
	binary.BigEndian.PutUint32(b[28+20:], n)
	b[28+32] = 0x2a
	return r.send(dissect.DirClientToServer, b, false, 0)
}

func (r *rig) response(itt uint32, status byte, inv bool, stag uint32) int {
	b := pdu(ctrl, 0, 0, 0, 0, opResp, 0x80, itt, nil)
	b[28+3] = status
	return r.send(dissect.DirServerToClient, b, inv, stag)
}

func (r *rig) op(kind dissect.RDMAOpKind, dir dissect.Direction, stag uint32, off uint64, n uint32) int {
	r.pkt++
	op := &dissect.RDMAOp{Kind: kind, Conn: r.c, Dir: dir, STag: stag, Offset: off, Length: n, Packets: []int{r.pkt}, Complete: true}
	r.s.RDMAOp(nil, op)
	r.ck.RDMAOp(op)
	return r.pkt
}

// findings closes the connection and returns the rule IDs found (errors
// and warnings), with their packets.
func (r *rig) findings() map[string][]int {
	r.s.Close()
	res := r.ck.Finish([]*dissect.Connection{r.c})
	out := map[string][]int{}
	for _, f := range res.Findings {
		if f.ULP != iser.Name {
			r.t.Errorf("finding %s of ULP %q", f.Rule, f.ULP)
		}
		out[f.Rule] = append(out[f.Rule], f.Packets...)
	}
	return out
}

// TestHealthyConnectionHasNoFindings: the capture's pattern — a read by
// RDMA Write, a 64 KiB write with 8 KiB immediate and the rest by RDMA
// Read from the Write Base Offset, responses by Send With Invalidate of
// the task's STag.
func TestHealthyConnectionHasNoFindings(t *testing.T) {
	r := newRig(t, 0x80)
	r.login(initiatorKeys, targetKeys)
	r.read(0x11000000, 0x16cd, 0xff48022cc3cdd000, 4096)
	r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0xff48022cc3cdd000, 4096)
	r.response(0x11000000, 0, true, 0x16cd)
	r.write(0x14000000, ctrl|wsv, 0x16d0, 0xff48022ccca41000, 65536, 8192)
	r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16d0, 0xff48022ccca41000, 57344)
	r.response(0x14000000, 0, true, 0x16d0)
	if f := r.findings(); len(f) != 0 {
		t.Errorf("findings on a healthy connection: %v", f)
	}
	cn := r.c.ULPData.(*iser.Connection)
	k := cn.Keys.Effective()
	// RFC 7143 section 13: InitialR2T is an OR (the target's Yes wins),
	// ImmediateData an AND, FirstBurstLength and MaxBurstLength the
	// minimum.
	if !k.InitialR2T || !k.ImmediateData || k.FirstBurstLength != 65536 || k.MaxBurstLength != 262144 ||
		!k.RDMAExtensions || k.TargetRecvDataSegmentLength != 8192 || k.InitiatorRecvDataSegmentLength != 262144 {
		t.Errorf("keys %+v", k)
	}
	if cn.ReadBytes != 57344 || cn.WriteBytes != 4096 || cn.ImmediateBytes != 8192 || cn.RemoteInvalidations != 2 ||
		cn.SessionType != "Normal" || !cn.LoginDone() || *cn.SendWithInvalidate != true || *cn.ZBVANotSupported != true {
		t.Errorf("connection %+v", cn)
	}
}

// Each breaking case: a healthy start, then what breaks one rule, which
// must name the packets that show it.
func TestRulesFindWhatBreaksThem(t *testing.T) {
	cases := []struct {
		rule    string
		cmFlags byte
		break_  func(r *rig) []int
	}{
		{"ISER-FLAGS-DIRECTION", 0x80, func(r *rig) []int { // a read without RSV
			b := pdu(ctrl, 0, 0, 0x16cd, 0x1000, opCmd, 0xc1, 7, nil)
			binary.BigEndian.PutUint32(b[28+20:], 4096)
			b[28+32] = 0x28
			p := r.send(dissect.DirClientToServer, b, false, 0)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-FLAGS-DIRECTION", 0x80, func(r *rig) []int { // a write flagged WSV and RSV
			p := r.write(7, ctrl|wsv|rsv, 0x16d0, 0x1000, 65536, 8192)
			r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16d0, 0x1000, 57344)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-FLAGS-DIRECTION", 0x80, func(r *rig) []int { // solicited data without a Write STag
			p := r.write(7, ctrl, 0, 0, 65536, 8192)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-RDMA-BOUNDS", 0x80, func(r *rig) []int { // one byte past the Read STag's length
			r.read(7, 0x16cd, 0x1000, 4096)
			p := r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0x1000, 4097)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-RDMA-BOUNDS", 0x80, func(r *rig) []int { // the immediate part read again: past the solicited data
			r.write(7, ctrl|wsv, 0x16d0, 0x1000, 65536, 8192)
			p := r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16d0, 0x1000, 65536)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-RDMA-BOUNDS", 0x80, func(r *rig) []int { // an RDMA Read of the Read STag
			r.read(7, 0x16cd, 0x1000, 4096)
			p := r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16cd, 0x1000, 4096)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-RDMA-BOUNDS", 0x80, func(r *rig) []int { // by the initiator
			return []int{r.op(dissect.RDMAWrite, dissect.DirClientToServer, 0x99, 0, 64)}
		}},
		{"ISER-RDMA-AFTER-RESPONSE", 0x80, func(r *rig) []int {
			r.read(7, 0x16cd, 0x1000, 4096)
			c := r.response(7, 0, false, 0)
			return []int{r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0x1000, 4096), c}
		}},
		{"ISER-INVALIDATE", 0xc0, func(r *rig) []int { // SIE not allowed by the CM REQ
			r.read(7, 0x16cd, 0x1000, 4096)
			r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0x1000, 4096)
			return []int{r.response(7, 0, true, 0x16cd)}
		}},
		{"ISER-INVALIDATE", 0x80, func(r *rig) []int { // another task's STag
			a := r.read(7, 0x16cd, 0x1000, 4096)
			r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0x1000, 4096)
			return []int{a, r.response(7, 0, true, 0x16ce)}
		}},
		{"ISER-INVALIDATE", 0x80, func(r *rig) []int { // the initiator sends With Invalidate (check.Neutral)
			return []int{r.send(dissect.DirClientToServer, pdu(ctrl, 0, 0, 0, 0, opDataOut, 0x80, 7, make([]byte, 512)), true, 0x16cd)}
		}},
		{"ISER-UNSOLICITED", 0x80, func(r *rig) []int { // beyond the target's receive size
			p := r.write(7, ctrl|wsv, 0x16d0, 0x1000, 65536, 16384)
			r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16d0, 0x1000, 65536-16384)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-UNSOLICITED", 0x80, func(r *rig) []int { // unsolicited Data-Out with InitialR2T=Yes
			r.write(7, ctrl|wsv, 0x16d0, 0x1000, 65536, 8192)
			b := pdu(ctrl, 0, 0, 0, 0, opDataOut, 0x80, 7, make([]byte, 4096))
			binary.BigEndian.PutUint32(b[28+20:], 0xffffffff) // TTT: unsolicited
			p := r.send(dissect.DirClientToServer, b, false, 0)
			r.op(dissect.RDMARead, dissect.DirServerToClient, 0x16d0, 0x1000, 65536-8192-4096)
			r.response(7, 0, false, 0)
			return []int{p}
		}},
		{"ISER-RESPONSE-UNMATCHED", 0x80, func(r *rig) []int {
			return []int{r.response(0x42, 0, false, 0)}
		}},
	}
	for _, tc := range cases {
		r := newRig(t, tc.cmFlags)
		r.login(initiatorKeys, targetKeys)
		want := tc.break_(r)
		got := r.findings()
		if len(got) != 1 || !slices.Equal(got[tc.rule], want) {
			t.Errorf("%s: findings %v, want only %s on packets %v", tc.rule, got, tc.rule, want)
		}
	}
	// ISER-UNSOLICITED: immediate data when the login said
	// ImmediateData=No; ISER-LOGIN-KEYS: a login without RDMAExtensions.
	r := newRig(t, 0x80)
	r.login(initiatorKeys, strings.Replace(targetKeys, "ImmediateData=Yes", "ImmediateData=No", 1))
	p := r.write(7, ctrl|wsv, 0x16d0, 0x1000, 65536, 8192)
	r.response(7, 0, false, 0)
	if got := r.findings(); len(got) != 1 || !slices.Equal(got["ISER-UNSOLICITED"], []int{p}) {
		t.Errorf("ImmediateData=No: %v", got)
	}
	// With InitialR2T=No and FirstBurstLength 65536 a 64 KiB write may
	// go all unsolicited: no Write STag needed, no finding.
	r = newRig(t, 0x80)
	r.login(initiatorKeys, strings.Replace(targetKeys, "InitialR2T=Yes", "InitialR2T=No", 1))
	r.write(7, ctrl, 0, 0, 65536, 8192)
	r.response(7, 0, false, 0)
	if got := r.findings(); len(got) != 0 {
		t.Errorf("InitialR2T=No, all unsolicited: %v", got)
	}
	r = newRig(t, 0x80)
	r.login(initiatorKeys, strings.Replace(targetKeys, "RDMAExtensions=Yes", "RDMAExtensions=No", 1))
	if got := r.findings(); len(got) != 1 || !slices.Equal(got["ISER-LOGIN-KEYS"], []int{12}) {
		t.Errorf("RDMAExtensions=No: %v", got)
	}
}

// TestMissingEvidenceIsNotAFinding: a response or RDMA operation whose
// task the capture lacks (PSNs skipped), and immediate data whose login
// the capture lacks, are evidence missing: the rules are not evaluated on
// them, they find nothing.
func TestMissingEvidenceIsNotAFinding(t *testing.T) {
	r := newRig(t, 0x80)
	r.c.MissingPSNs = 3
	r.op(dissect.RDMAWrite, dissect.DirServerToClient, 0x16cd, 0x1000, 4096)
	r.response(7, 0, true, 0x16cd)
	r.write(8, ctrl|wsv, 0x16d0, 0x1000, 65536, 1<<20) // far past any limit, but no login to judge by
	r.response(8, 0, false, 0)
	// A write with no Write STag: without the login, unsolicited Data-Out
	// (InitialR2T=No) may carry what the immediate data does not.
	r.write(9, ctrl, 0, 0, 65536, 8192)
	r.response(9, 0, false, 0)
	if f := r.findings(); len(f) != 0 {
		t.Errorf("findings from missing evidence: %v", f)
	}
	res := r.ck.Finish([]*dissect.Connection{r.c})
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Rule == "ISER-UNSOLICITED" && ch.Status != check.StatusNotEvaluated {
				t.Errorf("ISER-UNSOLICITED without a login: %s", ch.Status)
			}
		}
	}
}

// TestReject: a Reject (RFC 7143 section 11.17) answers the task of the
// PDU it rejects, whose BHS its data segment carries; rejecting a PDU of
// no outstanding task (a NOP-Out answering a NOP-In) answers nothing and
// is no unmatched response.
func TestReject(t *testing.T) {
	r := newRig(t, 0x80)
	r.login(initiatorKeys, targetKeys)
	var statuses []string
	env := &dissect.Env{Exchange: func(x *dissect.Exchange) { statuses = append(statuses, x.Name+": "+x.Status) }}
	r.s = iser.New().Start(r.c, env)
	rejected := pdu(ctrl, 0, 0, 0, 0, 0x40, 0x80, 0xffffffff, nil)[28:] // a NOP-Out, ITT reserved
	r.send(dissect.DirServerToClient, pdu(ctrl, 0, 0, 0, 0, 0x3f, 0x80, 0xffffffff, rejected), false, 0)
	r.read(7, 0x16cd, 0x1000, 4096)
	cmd := pdu(ctrl|rsv, 0, 0, 0x16cd, 0x1000, opCmd, 0xc1, 7, nil)[28:]
	rej := pdu(ctrl, 0, 0, 0, 0, 0x3f, 0x80, 0xffffffff, cmd)
	rej[28+2] = 0x09 // Invalid PDU field
	r.send(dissect.DirServerToClient, rej, false, 0)
	if f := r.findings(); len(f) != 0 {
		t.Errorf("findings: %v", f)
	}
	if len(statuses) != 1 || statuses[0] != "Read(10): Reject: Invalid PDU field" {
		t.Errorf("exchanges: %q", statuses)
	}
}
