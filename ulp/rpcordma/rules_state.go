package rpcordma

import (
	"slices"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/pvtdata"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// What RPC-over-RDMA's rules keep, per connection (connState, in
// check.Conn.ULPState) and per capture (runState, check.Conn.Shared), and
// the hooks through which the runner hands them each message
// (check.Hooks).

// connState is what the rules keep for one connection.
type connState struct {
	run *runState
	// rpc: the connection carried an RPC-over-RDMA message (the engine
	// made its record of one).
	rpc bool
	// Usage counts Replies with and without remote invalidation;
	// Chunks counts the chunks of its RPC-over-RDMA messages.
	Usage  check.InvUsage
	Chunks check.ChunkSummary

	badVers  [2]xidSet   // by sender: Calls with an unsupported rdma_vers, awaiting ERR_VERS
	v1Sent   [2]bool     // the side sent version 1 headers
	unneeded [2]unneeded // CHUNK-UNNEEDED: Calls, Replies
	// overrunNow is set while the Calls sent each way exceed the credits
	// granted (CREDIT-OVERRUN reports once per overrun).
	overrunNow [2]bool
	v2         v2State // rules_v2.go
	setUp      setUpView
}

// setUpView is RFC 8797's reading of the connection's set-up, made once
// for the rules that read it on every message (the thresholds) and again
// only when the set-up the engine holds changed.
type setUpView struct {
	made   bool
	seen   [2]bool
	packet [2]int
	pd     [2]rfc8797.Result
	th     rfc8797.Thresholds
}

// setUpOf returns c's set-up as RFC 8797 reads it.
func setUpOf(c *check.Conn) *setUpView {
	v := &connOf(c).setUp
	pd := &c.PrivateData
	if v.made && v.seen == [2]bool{pd[0].Seen, pd[1].Seen} && v.packet == [2]int{pd[0].Packet, pd[1].Packet} {
		return v
	}
	v.made = true
	for i := range pd {
		v.seen[i], v.packet[i] = pd[i].Seen, pd[i].Packet
		v.pd[i] = PrivateData(&pd[i])
	}
	v.th = rfc8797.Thresholds{}
	if c.Negotiated {
		v.th = rfc8797.Negotiate(v.pd[0].Peer(), v.pd[1].Peer())
	}
	return v
}

// pdOf is side i's RFC 8797 private data (section 5.2's search).
func pdOf(c *check.Conn, i int) *rfc8797.Result { return &setUpOf(c).pd[i] }

// thresholdsOf are the connection's thresholds as RFC 8797 negotiates
// them (sections 4.1, 4.2, 5.1): zero until both sides' set-up was seen.
func thresholdsOf(c *check.Conn) *rfc8797.Thresholds { return &setUpOf(c).th }

// runState is what the rules keep across the connections of a capture:
// the reused views of the message being checked and of its Call, and the
// private data of the last connection between each pair of endpoints.
type runState struct {
	m    Msg
	msg  *Msg // &m while a message is checked
	call callView
	// ulb is what the Upper-Layer Binding rules read of the Call being
	// checked (rules_ulb.go).
	ulb ulbCall
	// lastPD remembers, per pair of endpoints, the private data of the
	// last connection between them (PD-SIZE-RANGE compares reconnects).
	lastPD      map[pdKey][2]pdSeen
	pdForgotten int // pairs dropped from lastPD at maxPDPairs
}

func newRunState() any { return &runState{lastPD: map[pdKey][2]pdSeen{}} }

// connOf returns c's state, made on first use.
//
// Small enough to inline into every rule, which calls it on each message:
// the first call on a connection goes to newConnState.
func connOf(c *check.Conn) *connState {
	if s, ok := c.ULPState.(*connState); ok {
		return s
	}
	return newConnState(c)
}

//go:noinline
func newConnState(c *check.Conn) *connState {
	s := &connState{run: c.Shared(Name, newRunState).(*runState)}
	c.ULPState = s
	return s
}

// carriesRPC tells whether c carried an RPC-over-RDMA message.
func carriesRPC(c *check.Conn) bool {
	s, ok := c.ULPState.(*connState)
	return ok && s.rpc
}

// Hooks are the rules' check.Hooks: each message's view (Msg) and the
// connection's summaries (check.ConnResult's RPC, Usage and Chunks).
func Hooks() check.Hooks {
	return check.Hooks{ULP: Name, Message: hookMessage, Result: hookResult, Refusal: refusal}
}

// hookMessage: the engine took the connection for RPC-over-RDMA and made
// its record of the message: the rules read it through the view.
func hookMessage(c *check.Conn, m *dissect.Message) {
	if Record(m) == nil {
		return
	}
	s := connOf(c)
	s.rpc = true
	s.run.msg = s.run.view(m)
	s.account(s.run.msg)
}

// hookResult adds the connection's use of remote invalidation and chunks.
func hookResult(c *check.Conn, cr *check.ConnResult) {
	if !carriesRPC(c) {
		return
	}
	s := connOf(c)
	cr.RPC = true
	u, ch := s.Usage, s.Chunks
	u.Version2 = onlyVersion2(c)
	if c.Negotiated && !u.Version2 {
		n := thresholdsOf(c).RemoteInvalidation
		u.Negotiated = &n
	}
	cr.Usage, cr.Chunks = &u, &ch
}

// report records f, a finding about the RPC transaction f.XID names (if
// any), keyed as the exchanges listing keys it (Finding.Exchange).
func report(c *check.Conn, f check.Finding) {
	if f.XID != nil && f.Exchange == "" {
		f.Exchange = hex32(*f.XID)
	}
	c.Report(f)
}

// xidp returns a pointer to a copy of x, for Finding.XID.
func xidp(x uint32) *uint32 { return &x }

// hex32 is "0x%08x" without fmt.
func hex32(x uint32) string {
	const digits = "0123456789abcdef"
	b := [10]byte{'0', 'x'}
	for i := 9; i >= 2; i-- {
		b[i] = digits[x&0xf]
		x >>= 4
	}
	return string(b[:])
}

// xidSet is a small bounded set of XIDs with the packet that added each.
type xidSet struct {
	xids []uint32
	pkts []int
}

const maxXIDSet = 64

func (s *xidSet) add(x uint32, pkt int) {
	if len(s.xids) >= maxXIDSet {
		copy(s.xids, s.xids[1:])
		copy(s.pkts, s.pkts[1:])
		s.xids, s.pkts = s.xids[:len(s.xids)-1], s.pkts[:len(s.pkts)-1]
	}
	s.xids = append(s.xids, x)
	s.pkts = append(s.pkts, pkt)
}

// take removes x and returns the packet that added it.
func (s *xidSet) take(x uint32) (int, bool) {
	for i, v := range s.xids {
		if v == x {
			p := s.pkts[i]
			s.xids = slices.Delete(s.xids, i, i+1)
			s.pkts = slices.Delete(s.pkts, i, i+1)
			return p, true
		}
	}
	return 0, false
}

// refusal names an RFC 8797 message at the start of a refusal's private
// data (check.Hooks.Refusal).
func refusal(pd []byte) (string, bool) {
	if res := rfc8797.Parse(pd, pvtdata.PrefixNone); res.Valid() {
		return "RPC-over-RDMA " + res.Message.String(), true
	}
	return "", false
}
