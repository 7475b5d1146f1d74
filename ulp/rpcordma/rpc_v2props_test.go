package rpcordma

import (
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
)

// TestV2PropsThresholds: draft-07 "Inline Threshold": without Transport
// Properties both thresholds are 4096; with them each direction's is the
// smaller of the sender's SBSIZ and the receiver's RBSIZ (an unpublished
// one is its default, 4096); a message with a bad property value applies
// none of its settings ("RDMA2_ERR_BAD_PROPVAL").
func TestV2PropsThresholds(t *testing.T) {
	var none *V2Props
	if none.Threshold(0) != 4096 || none.Threshold(1) != 4096 || none.Exchanged() {
		t.Fatal("no properties: thresholds not 4096")
	}
	rs := &RPCStats{}
	cp := func(d int, ht rpcrdma.HType, pkt int, props ...rpcrdma.Property) {
		rs.noteV2(d, &rpcrdma.Header2{HType: ht, Props: props}, pkt)
	}
	cp(0, rpcrdma.HTypeCallInline, 1) // not a CONNPROP: nothing
	if rs.V2Props != nil {
		t.Fatal("a Call made properties")
	}
	cp(0, rpcrdma.HTypeConnPropMid, 3, rpcrdma.Uint32Property(rpcrdma.PropMaxSendSize, 16384))
	cp(0, rpcrdma.HTypeConnPropFinal, 4, rpcrdma.Uint32Property(rpcrdma.PropRecvBufSize, 2048),
		rpcrdma.Property{Which: 77, Data: []byte{1}}, rpcrdma.HostAuthProperty([]byte("abc")))
	cp(1, rpcrdma.HTypeConnPropFinal, 5, rpcrdma.Uint32Property(rpcrdma.PropRecvBufSize, 8192),
		rpcrdma.Uint32Property(rpcrdma.PropReverseDir, 2))
	p := rs.V2Props
	// Client to server: min(client SBSIZ 16384, server RBSIZ 8192);
	// server to client: min(server SBSIZ default 4096, client RBSIZ 2048).
	if got0, got1 := p.Threshold(0), p.Threshold(1); got0 != 8192 || got1 != 2048 {
		t.Errorf("thresholds %d / %d, want 8192 / 2048", got0, got1)
	}
	c, s := &p.Sides[0], &p.Sides[1]
	if c.Messages != 2 || c.FirstPacket != 3 || c.FinalPacket != 4 || c.Unknown != 1 || c.HostAuth != 3 || !c.Has(rpcrdma.PropMaxSendSize) || c.Has(rpcrdma.PropReverseDir) {
		t.Errorf("client side %+v", *c)
	}
	if s.BRS != rpcrdma.RvrsDirCont || s.Has(rpcrdma.PropMaxSendSize) || s.HostAuth != -1 {
		t.Errorf("server side %+v", *s)
	}
	// A bad SBSIZ (8 octets) voids its message's RBSIZ too.
	cp(1, rpcrdma.HTypeConnPropFinal, 9, rpcrdma.Uint32Property(rpcrdma.PropRecvBufSize, 1024),
		rpcrdma.Property{Which: rpcrdma.PropMaxSendSize, Data: make([]byte, 8)})
	if s.RBSIZ != 8192 || s.BadValues != 1 || s.Applied != 1 || s.FirstBad == "" {
		t.Errorf("after a bad value: %+v", *s)
	}
	for _, c := range []struct {
		v   rpcrdma.Property
		bad bool
	}{
		{rpcrdma.Property{Which: rpcrdma.PropMaxSegments}, false},                       // empty: the default
		{rpcrdma.Property{Which: rpcrdma.PropMaxSegments, Data: make([]byte, 3)}, true}, // too short
		{rpcrdma.Property{Which: 42, Data: make([]byte, 3)}, false},                     // unknown: skipped
		{rpcrdma.Property{Which: rpcrdma.PropHostAuth}, false},
		{rpcrdma.Property{Which: rpcrdma.PropHostAuth, Data: []byte{0, 0, 0, 9, 1, 2, 3, 4}}, true},
	} {
		if got := BadPropVal(c.v) != ""; got != c.bad {
			t.Errorf("%s %d octets: bad %v, want %v", c.v.Which, len(c.v.Data), got, c.bad)
		}
	}
}

// TestShortSend: a Send shorter than the 16-octet prefix every version
// shares has a header error field, and its text names no version (the
// Send holds no rdma_vers) — issue 27.
func TestShortSend(t *testing.T) {
	r := newTxnRig(t, Options{})
	p := r.send(c2s, xdrWords(0x01, 2, 8), 0)
	if recs := Records(p); len(recs) != 1 || recs[0].PrefixOK {
		t.Fatalf("records %+v", Records(p))
	}
	got := fieldText(t, p, "rdmashark.rpcordma.header_error")
	if !strings.Contains(got, "need 16 bytes, have 12") || strings.Contains(got, "v0") {
		t.Errorf("header_error %q", got)
	}
}
