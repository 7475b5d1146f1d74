package smbdirect_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/smbdirect"
)

// withoutFrames returns a pcap file's bytes without the given frames
// (1-based): a capture that lost them.
func withoutFrames(t *testing.T, name string, drop ...int) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte{}, b[:24]...)
	gone := map[int]bool{}
	for _, n := range drop {
		gone[n] = true
	}
	for off, n := 24, 1; off+16 <= len(b); n++ {
		l := int(binary.LittleEndian.Uint32(b[off+8:]))
		if !gone[n] {
			out = append(out, b[off:off+16+l]...)
		}
		off += 16 + l
	}
	return out
}

// TestLossyCaptureIsNotAFinding: rxe-smbdirect.pcap without two of its
// Sends — the client's first Data Transfer Message, which grants the
// server its 255 credits (frame 22), and a READ request with its buffer
// descriptor (frame 1526, MessageId 65, token 0x485) — is what a capture
// that lost packets looks like: the server then sends without a credit
// the capture shows, RDMA Writes into a descriptor no request in the
// capture names, and answers a READ the capture lacks With Invalidate.
// The PSNs skipped make those rules not evaluated: no SMB Direct finding.
func TestLossyCaptureIsNotAFinding(t *testing.T) {
	data := withoutFrames(t, "../../testdata/pcaps/ulp/rxe-smbdirect.pcap", 22, 1526)
	r, err := source.NewReader(bytes.NewReader(data), "rxe-smbdirect-lossy.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var xs []dissect.Exchange
	ck := check.NewRunner(check.Config{})
	e := dissect.NewEngine(dissect.Options{ULPs: []dissect.ULP{smbdirect.New()}, Observer: ck,
		Exchange: func(x *dissect.Exchange) { xs = append(xs, *x.Clone()) }})
	if err := e.Run(r, func(p *dissect.Packet) error { ck.Packet(p); return nil }); err != nil {
		t.Fatal(err)
	}
	res := ck.Finish(e.Conns.Connections())
	for _, f := range res.Findings {
		if f.ULP == smbdirect.Name {
			t.Errorf("finding %s: %s", f.Rule, f.Message)
		}
	}
	q := sdConns(e)[0]
	if q.Server.NoCredit == 0 || q.UnattachedRDMAOps == 0 || q.ResponsesWithoutRequest != 1 {
		t.Errorf("the losses did not show: %+v", q)
	}
	skipped := map[string]bool{}
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Status == check.StatusNotEvaluated || ch.NotEvaluated > 0 {
				skipped[ch.Rule] = true
			}
		}
	}
	for _, id := range []string{"SMBD-CREDITS", "SMBD-RDMA-DESCRIPTOR", "SMBD-INVALIDATE"} {
		if !skipped[id] {
			t.Errorf("%s: no item left unjudged on the lossy connection", id)
		}
	}
	if len(xs) != 135 {
		t.Errorf("%d exchanges", len(xs))
	}
}
