package check

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// testNeutral is a ULP described to the neutral rules, with an
// Invalidated hook that returns inv.
func testNeutral(inv *Invalidation) *Neutral {
	return &Neutral{ULP: "test", Protocol: "TEST", Requester: "client", Responder: "server",
		Request: "request", Response: "response", Conn: "connection", Tag: "STag", Offset: "offset", Memory: "memory",
		Region:  func(dissect.RDMAOpKind) string { return "region" },
		KeyText: func(key uint64) string { return "key" },
		Invalidated: func(*Conn, *dissect.Message) (Invalidation, bool) {
			if inv == nil {
				return Invalidation{}, false
			}
			return *inv, true
		}}
}

// neutralConn is a connection whose current rule is a table rule (the
// neutral checks run as it; the rule's own functions do not).
func neutralConn() *Conn {
	r := NewRunner(Config{})
	c := r.conn(&dissect.Connection{ID: 1, State: dissect.StateEstablished})
	c.cur = byID["NAK"].index + 1
	return c
}

func op(kind dissect.RDMAOpKind, dir dissect.Direction, why dissect.UnattachedReason) *dissect.RDMAOp {
	return &dissect.RDMAOp{Kind: kind, Dir: dir, STag: 0x22, Length: 64, Packets: []int{5}, Attach: dissect.OpAttachment{Reason: why}}
}

// TestNeutralRDMA: which RDMA operations each check judges, and how. Each
// case's expectation follows from the check's definition (check/neutral.go),
// not from running it.
func TestNeutralRDMA(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		checks                  NeutralCheck
		op                      *dissect.RDMAOp
		checked, skipped, found int
		skipWhy                 Reason
	}{
		// No session of the ULP looked at it: none of the ULP's.
		{"no ULP, requester's", RDMAByRequester, op(dissect.RDMAWrite, dissect.DirClientToServer, dissect.UnattachedNoULP), 0, 0, 0, 0},
		{"no ULP, responder's", RDMAUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.UnattachedNoULP), 0, 0, 0, 0},
		{"by requester", RDMAByRequester, op(dissect.RDMAWrite, dissect.DirClientToServer, dissect.UnattachedNoRegion), 1, 0, 1, 0},
		{"responder's, by-requester rule", RDMAByRequester, op(dissect.RDMARead, dissect.DirServerToClient, dissect.UnattachedNoRegion), 1, 0, 0, 0},
		// An outstanding request that did not decode may explain it.
		{"request unknown", RDMAUnadvertised, op(dissect.RDMARead, dissect.DirServerToClient, dissect.UnattachedRequestUnknown), 0, 1, 0, ReasonCallUnknown},
		{"request unknown, after-response rule", RDMAAfterResponse, op(dissect.RDMARead, dissect.DirServerToClient, dissect.UnattachedRequestUnknown), 0, 0, 0, 0},
		// One rule per kind: the other kind is not its to judge.
		{"Read rule, a Write", RDMAReadUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.UnattachedNoRegion), 0, 0, 0, 0},
		{"Read rule, an attached Write", RDMAReadUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.Attached), 0, 0, 0, 0},
		{"Read rule, a Read", RDMAReadUnadvertised, op(dissect.RDMARead, dissect.DirServerToClient, dissect.UnattachedNoRegion), 1, 0, 1, 0},
		{"Write rule, an attached Write", RDMAWriteUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.Attached), 1, 0, 0, 0},
		{"Write rule, a capture gap", RDMAWriteUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.UnattachedCaptureGap), 0, 1, 0, ReasonCaptureGap},
		{"both kinds, a Write", RDMAUnadvertised, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.UnattachedNoRegion), 1, 0, 1, 0},
		{"after response", RDMAAfterResponse, op(dissect.RDMAWrite, dissect.DirServerToClient, dissect.UnattachedAfterResponse), 1, 0, 1, 0},
	} {
		c := neutralConn()
		n := testNeutral(nil)
		n.rdmaOp(c, tc.op, tc.checks, nil)
		c.settle()
		s := c.curState()
		skipped := 0
		for _, k := range s.skipped {
			skipped += k
		}
		if s.checked != tc.checked || skipped != tc.skipped || s.total != tc.found || tc.skipWhy != 0 && s.skipped[tc.skipWhy] != 1 {
			t.Errorf("%s: checked %d, skipped %d %v, found %d; want %d, %d (%v), %d", tc.name, s.checked, skipped, s.skipped, s.total,
				tc.checked, tc.skipped, tc.skipWhy, tc.found)
		}
	}
}

// TestNeutralWords: Words rewrites what the neutral rule made, also of a
// finding it holds to the end of the connection.
func TestNeutralWords(t *testing.T) {
	c := neutralConn()
	n := testNeutral(nil)
	var got NeutralCheck
	n.Words = func(_ *Conn, w *Wording) {
		got = w.Check
		w.Finding.Key, w.Finding.Message = "", "own words"
	}
	n.rdmaOp(c, op(dissect.RDMARead, dissect.DirServerToClient, dissect.UnattachedNoRegion), RDMAUnadvertised, nil)
	c.settle()
	s := c.curState()
	if got != RDMAReadUnadvertised || len(s.findings) != 1 || s.findings[0].Message != "own words" || s.findings[0].Key != "" {
		t.Errorf("check %v, findings %+v; want RDMAReadUnadvertised's, one, with Words' message and no key", got, s.findings)
	}
}

// TestNeutralInvalidateRole: who may send With Invalidate, by direction
// or by what the ULP says the Send is (Invalidation.Role); a rule of
// InvalidateByRequester alone examines every Send.
func TestNeutralInvalidateRole(t *testing.T) {
	send := func(dir dissect.Direction, inv bool) *dissect.Message {
		return &dissect.Message{Dir: dir, Invalidate: inv, InvalidatedSTag: 0x22, Packets: []int{7}}
	}
	for _, tc := range []struct {
		name                    string
		checks                  NeutralCheck
		inv                     Invalidation
		m                       *dissect.Message
		checked, skipped, found int
	}{
		{"plain Send, direction rule", InvalidateByRequester, Invalidation{}, send(dissect.DirClientToServer, false), 1, 0, 0},
		{"plain Send, combined rule", InvalidateForeign, Invalidation{}, send(dissect.DirClientToServer, false), 0, 0, 0},
		{"undecodable, direction rule", InvalidateByRequester, Invalidation{Undecodable: true}, send(dissect.DirServerToClient, true), 0, 1, 0},
		{"requester's", InvalidateByRequester, Invalidation{}, send(dissect.DirClientToServer, true), 1, 0, 1},
		{"responder's, direction rule", InvalidateByRequester, Invalidation{}, send(dissect.DirServerToClient, true), 1, 0, 0},
		// A response from the client (a backchannel's) may invalidate.
		{"client's response", InvalidateByRequester, Invalidation{Role: RoleResponse}, send(dissect.DirClientToServer, true), 1, 0, 0},
		// No response (a request, an error) may, from the server either.
		{"server's non-response", InvalidateByRequester, Invalidation{Role: RoleOther}, send(dissect.DirServerToClient, true), 1, 0, 1},
		{"server's non-response, STag rule", InvalidateSTag, Invalidation{Role: RoleOther}, send(dissect.DirServerToClient, true), 0, 0, 0},
		{"client's response, foreign STag", InvalidateSTag, Invalidation{Role: RoleResponse, Answered: true, Packet: 3}, send(dissect.DirClientToServer, true), 1, 0, 1},
		{"client's response, its STag", InvalidateSTag, Invalidation{Role: RoleResponse, Answered: true, Packet: 3, Advertised: true}, send(dissect.DirClientToServer, true), 1, 0, 0},
		{"no request, unsure why", InvalidateSTag, Invalidation{Unsure: true, UnsureWhy: ReasonCallUnknown}, send(dissect.DirServerToClient, true), 0, 1, 0},
	} {
		c := neutralConn()
		inv := tc.inv
		testNeutral(&inv).invalidate(c, tc.m, tc.checks)
		c.settle()
		s := c.curState()
		skipped := 0
		for _, k := range s.skipped {
			skipped += k
		}
		if s.checked != tc.checked || skipped != tc.skipped || s.total != tc.found {
			t.Errorf("%s: checked %d, skipped %d %v, found %d; want %d, %d, %d", tc.name, s.checked, skipped, s.skipped, s.total, tc.checked, tc.skipped, tc.found)
		}
		if tc.inv.UnsureWhy != 0 && s.skipped[tc.inv.UnsureWhy] != 1 {
			t.Errorf("%s: skipped %v, want for %v", tc.name, s.skipped, tc.inv.UnsureWhy)
		}
	}
}
