package check_test

import (
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// runRPC checks one capture with every rule, the way `rdmashark check`
// does, and returns the engine too.
func runRPC(t *testing.T, name string) (*check.Result, *dissect.Engine) {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := check.NewRunner(check.Config{})
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Observer: run}, nfs.NewBinding(), nil))
	if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return run.Finish(eng.Conns.Connections()), eng
}

// evaluated tells whether rule id examined something on some connection.
func evaluated(res *check.Result, id string) bool {
	for _, cr := range res.Connections {
		for _, ch := range cr.Checks {
			if ch.Rule == id && ch.Checked > 0 {
				return true
			}
		}
	}
	return false
}

// TestV2CorpusValid: every header type, property and error code of the
// draft, a 6000-octet Call inline that only the Transport Properties
// allow (8192 each way), continued messages split off word boundaries, a
// two-segment Write chunk, Call and Reply chunks, solicited remote
// invalidation; and on a second connection a fallback to version 1 after
// RDMA2_ERR_VERS: no error finding, and every version 2 rule evaluated.
func TestV2CorpusValid(t *testing.T) {
	res, eng := runRPC(t, "../testdata/pcaps/v2/rxe-nfs3-v2-valid.pcap")
	for _, f := range res.Findings {
		if f.Severity == check.Error {
			t.Errorf("%s: %s", f.Rule, f.Message)
		}
	}
	for _, id := range []string{"THRESH-C2S", "THRESH-S2C", "INV-V2-HANDLE", "V2-CONTINUATION", "V2-GRANT-XID", "V2-CALL-CHUNK",
		"V2-READ-POSITION-ZERO", "V2-CREDIT-OVERRUN", "V2-VERS-MISMATCH", "V2-PROPVAL", "V2-REMAINING", "V2-REPLY-CHUNK"} {
		if !evaluated(res, id) {
			t.Errorf("%s not evaluated", id)
		}
	}
	// The thresholds the properties set (encoder: client SBSIZ 8192,
	// RBSIZ 8192; server SBSIZ 8192, RBSIZ 8192), the rest as published.
	conns := eng.Conns.Connections()
	if len(conns) != 2 || rpcordma.Stats(conns[0]) == nil || rpcordma.Stats(conns[0]).V2Props == nil || rpcordma.Stats(conns[1]) == nil {
		t.Fatalf("connections %v", conns)
	}
	// The second connection offers version 2, is refused with
	// RDMA2_ERR_VERS (1..1) and goes on in version 1: its version is 1,
	// and V2-VERS-MISMATCH (no finding above) does not hold the fallback
	// against it.
	if v := rpcordma.Stats(conns[1]).Version; v != 1 {
		t.Errorf("the fallback connection's version is %d", v)
	}
	p := rpcordma.Stats(conns[0]).V2Props
	if p.Threshold(0) != 8192 || p.Threshold(1) != 8192 {
		t.Errorf("thresholds %d / %d, want 8192 / 8192", p.Threshold(0), p.Threshold(1))
	}
	c, s := p.Sides[0], p.Sides[1]
	if c.Messages != 2 || c.FinalPacket != check.V2Labels(t, "valid")["client CONNPROP_FINAL"] || c.HostAuth != len("rdmashark") || c.RSSIZ != 1048576 || c.RCSIZ != 16 {
		t.Errorf("client properties %+v", c)
	}
	if s.Messages != 1 || s.BRS != rpcrdma.RvrsDirCont || s.Unknown != 1 || s.RCSIZ != 16 {
		t.Errorf("server properties %+v", s)
	}
}
