package srp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	srpulp "github.com/rdmashark/rdmashark/ulp/srp"
)

// TestLoginRejected: rxe-srp-rej.pcap is a real refused login (the lab's
// srp-rej.sh: ib_srpt with no ACL for the initiator). The connection
// carries no Send, yet it is SRP's (dissect.SetUpFailer) and its
// SRP_LOGIN_REJ is read: reason 0x00010006 — what the initiator's kernel
// logged ("ib_srp: SRP LOGIN REJECTED, reason 0x00010006") and the
// target's ("Rejecting login with reason 0x10006"), SRP-2's "RDMA channel
// limit reached for this initiator" — supported buffer formats 0x0006 (the
// octets 24-25 of the REJ's private data as tshark -x shows them: 00 06,
// direct and indirect), in a CM REJ of reason 28 (consumer defined).
func TestLoginRejected(t *testing.T) {
	e, xs, res := run(t, "ulp/rxe-srp-rej.pcap")
	conns := e.Conns.Connections()
	if len(conns) != 1 || len(xs) != 0 {
		t.Fatalf("%d connections, %d exchanges", len(conns), len(xs))
	}
	c := conns[0]
	cn, ok := c.ULPData.(*srpulp.Connection)
	if c.ULP != srpulp.Name || !ok || cn.Rejected == nil {
		t.Fatalf("connection ULP %q, data %#v", c.ULP, c.ULPData)
	}
	r := cn.Rejected
	if !r.SRP || r.Reason != 0x00010006 || r.Packet != 14 || r.SupportedBufferFormats != "direct, indirect" || r.By != "target" ||
		r.SetUpReason != "Consumer reject" || cn.Unanswered || cn.Login == nil || cn.Accepted != nil || cn.SetUpError != "" {
		t.Errorf("rejection %+v, login %+v accepted %+v, error %q", r, cn.Login, cn.Accepted, cn.SetUpError)
	}
	if pd, d := c.RejectPrivateData(); pd == nil || d != dissect.DirServerToClient || pd.Packet != 14 || len(pd.Bytes) != 148 {
		t.Errorf("REJ private data %+v from %v", pd, d)
	}
	n := 0
	for _, f := range res.Findings {
		if f.Rule == "SRP-LOGIN-REJECTED" {
			n++
			if f.Key != "reason 0x00010006" || !strings.Contains(f.Message, "RDMA channel limit reached for this initiator") {
				t.Errorf("finding %+v", f)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d SRP-LOGIN-REJECTED findings, want 1", n)
	}
}

// TestLoginUnanswered: the same capture without its CM REJ (the last
// frame): a login request the capture holds no answer to, recorded as
// such, and no refusal reported.
func TestLoginUnanswered(t *testing.T) {
	lt, frames := pcaptest.Read(t, filepath.Join("../../testdata/pcaps/ulp/rxe-srp-rej.pcap"))
	path := pcaptest.Write(t, lt, frames[:len(frames)-1])
	e, _, res := run(t, path)
	c := e.Conns.Connections()[0]
	cn, ok := c.ULPData.(*srpulp.Connection)
	if c.ULP != srpulp.Name || !ok || !cn.Unanswered || cn.Rejected != nil || cn.Login == nil {
		t.Fatalf("connection ULP %q, data %#v", c.ULP, c.ULPData)
	}
	for _, f := range res.Findings {
		if f.Rule == "SRP-LOGIN-REJECTED" {
			t.Errorf("finding %+v", f)
		}
	}
}
