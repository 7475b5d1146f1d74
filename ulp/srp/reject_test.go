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

// TestLoginRefusedByMPAReject: an iWARP login refused before the target
// saw it — the lab's srp.sh notes an IPv4 login on siw answered by an MPA
// Reply with the Rejected flag carrying only the MPA v2 IRD/ORD field (no
// SRP_LOGIN_REJ) — is recorded as refused without a reason of SRP's own.
// No such capture is kept: the connection is built here, its login
// request rxe-srp-rej.pcap's SRP_LOGIN_REQ (RDMA/CM layout, the layout
// an MPA Request carries too).
func TestLoginRefusedByMPAReject(t *testing.T) {
	e, _, _ := run(t, "ulp/rxe-srp-rej.pcap")
	req := e.Conns.Connections()[0].PrivateData[0].Consumer()
	c := &dissect.Connection{ID: 1, Transport: dissect.TransportIWARP, State: dissect.StateRejected,
		RejectReason: "MPA Reply with the Rejected flag (RFC 5044 section 7.1)"}
	c.PrivateData[0] = dissect.PrivateData{Seen: true, Packet: 4, Bytes: append([]byte(nil), req...)}
	c.PrivateData[1] = dissect.PrivateData{Seen: true, Packet: 6}
	u := srpulp.New()
	f, ok := u.(dissect.SetUpFailer)
	if !ok || u.Claim(c) != dissect.Yes {
		t.Fatal("no SetUpFailer, or the login not claimed")
	}
	f.SetUpFailed(c)
	cn, _ := c.ULPData.(*srpulp.Connection)
	if cn == nil || cn.Rejected == nil || cn.Rejected.SRP || cn.Rejected.Packet != 6 || cn.Rejected.By != "target" ||
		cn.Login == nil || cn.Accepted != nil || cn.SetUpError != "" {
		t.Fatalf("connection %+v, rejection %+v", cn, cn.Rejected)
	}
	// With an SRP_LOGIN_REJ in the MPA Reply (octets as rxe-srp-rej.pcap's
	// CM REJ carries them), its reason is read.
	c.PrivateData[1].Bytes = []byte{0xc2, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0}
	f.SetUpFailed(c)
	if cn := c.ULPData.(*srpulp.Connection); !cn.Rejected.SRP || cn.Rejected.Reason != 0x00010001 {
		t.Errorf("rejection %+v", cn.Rejected)
	}
}
