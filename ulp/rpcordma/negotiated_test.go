package rpcordma_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/ulptest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestNegotiation: RPC-over-RDMA's neutral Negotiated (dissect.Negotiator),
// as Connection.Negotiation answers after the run.
func TestNegotiation(t *testing.T) {
	type want struct {
		c2s, s2c    int
		ri, riKnown bool
	}
	for _, c := range []struct {
		file string
		want map[int]want
	}{
		// rxe-nfs3: the CM REQ's RFC 8797 message has R=1, sizes 4096;
		// the REP's R=0, sizes 4096 (the octets tshark 4.0 -x shows,
		// pvtdata's and rfc8797's TestLiteralsMatchCaptures): RFC 8797
		// section 4.2 gives 4096 each way, section 4.1 no remote
		// invalidation.
		{"rxe-nfs3.pcap", map[int]want{1: {4096, 4096, false, true}, 2: {4096, 4096, false, true}}},
		// v2/rxe-nfs3-v2-valid: connection 1 carries version 2, whose
		// Transport Properties give 8192 each way (analyze's
		// inline_threshold, from draft-07 "Inline Threshold"); remote
		// invalidation is solicited per Call, not negotiated.
		// Connection 2 is version 1 with RFC 8797's 4096.
		{"v2/rxe-nfs3-v2-valid.pcap", map[int]want{1: {8192, 8192, false, false}, 2: {4096, 4096, false, true}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			e, _, _ := ulptest.Run(t, c.file, rpcordma.New(nfs.NewBinding(), nfs.RDMAPort))
			seen := 0
			for _, cn := range e.Conns.Connections() {
				w, ok := c.want[cn.ID]
				if !ok {
					continue
				}
				seen++
				n := cn.Negotiation()
				c2s, k1 := n.InlineLimit(dissect.DirClientToServer)
				s2c, k2 := n.InlineLimit(dissect.DirServerToClient)
				ri, riKnown := n.RemoteInvalidation()
				if !k1 || !k2 || c2s != w.c2s || s2c != w.s2c || ri != w.ri || riKnown != w.riKnown {
					t.Errorf("connection %d: inline %d/%v %d/%v, remote invalidation %v/%v; want %+v", cn.ID, c2s, k1, s2c, k2, ri, riKnown, w)
				}
				if _, k := n.InlineLimit(dissect.DirUnknown); k {
					t.Errorf("connection %d: an inline limit for no direction", cn.ID)
				}
			}
			if seen != len(c.want) {
				t.Errorf("%d connections of %d", seen, len(c.want))
			}
		})
	}
}

// TestNegotiationUnclaimed: a connection no ULP claimed (rping) knows
// nothing, whatever its set-up said.
func TestNegotiationUnclaimed(t *testing.T) {
	e, _, _ := ulptest.Run(t, "rxe-rping.pcap", rpcordma.New(nfs.NewBinding(), nfs.RDMAPort))
	for _, cn := range e.Conns.Connections() {
		n := cn.Negotiation()
		if _, k := n.RemoteInvalidation(); k {
			t.Errorf("connection %d (%q): remote invalidation known", cn.ID, cn.ULP)
		}
		if _, k := n.InlineLimit(dissect.DirClientToServer); k {
			t.Errorf("connection %d (%q): inline limit known", cn.ID, cn.ULP)
		}
	}
}
