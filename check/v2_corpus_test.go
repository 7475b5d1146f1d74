package check

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// The independent version 2 corpus (testdata/v2corpus: an encoder compiled
// by rpcgen from the draft's XDR, wrapped into the real CM exchange and
// QPs of rxe-nfs3.pcap). Its labels name the frame each scripted Send
// ends in; what each Send must or must not break is the draft's
// (encoder/enc.c says why for each).

const v2CorpusDir = "../testdata/pcaps/v2/"

// v2Labels reads NAME.labels: frame number, tab, label.
func v2Labels(t *testing.T, name string) map[string]int {
	t.Helper()
	f, err := os.Open("../testdata/v2corpus/" + name + ".labels")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n, l, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		frame, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		out[l] = frame
	}
	return out
}

// TestV2CorpusValid: every header type, property and error code of the
// draft, a 6000-octet Call inline that only the Transport Properties
// allow (8192 each way), continued messages split off word boundaries, a
// two-segment Write chunk, Call and Reply chunks, solicited remote
// invalidation; and on a second connection a fallback to version 1 after
// RDMA2_ERR_VERS: no error finding, and every version 2 rule evaluated.
func TestV2CorpusValid(t *testing.T) {
	res, eng := runFileEngine(t, v2CorpusDir+"rxe-nfs3-v2-valid.pcap", Config{})
	for _, f := range res.Findings {
		if f.Severity == Error {
			t.Errorf("%s: %s", f.Rule, f.Message)
		}
	}
	for _, id := range []string{"THRESH-C2S", "THRESH-S2C", "INV-V2-HANDLE", "V2-CONTINUATION", "V2-GRANT-XID", "V2-CALL-CHUNK",
		"V2-READ-POSITION-ZERO", "V2-CREDIT-OVERRUN", "V2-VERS-MISMATCH", "V2-PROPVAL", "V2-REMAINING", "V2-REPLY-CHUNK"} {
		if !checked(res, id) {
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
	if c.Messages != 2 || c.FinalPacket != v2Labels(t, "valid")["client CONNPROP_FINAL"] || c.HostAuth != len("rdmashark") || c.RSSIZ != 1048576 || c.RCSIZ != 16 {
		t.Errorf("client properties %+v", c)
	}
	if s.Messages != 1 || s.BRS != rpcrdma.RvrsDirCont || s.Unknown != 1 || s.RCSIZ != 16 {
		t.Errorf("server properties %+v", s)
	}
}

// TestV2CorpusForbidden: each violation the encoder scripted is found at
// its packet, by its rule, and nothing else of the version 2 rules.
func TestV2CorpusForbidden(t *testing.T) {
	res := runFile(t, v2CorpusDir+"rxe-nfs3-v2-forbidden.pcap", Config{})
	labels := v2Labels(t, "forbidden")
	want := []struct{ rule, label string }{
		{"V2-PROPVAL", "client CONNPROP_FINAL, bad SBSIZ"},
		{"THRESH-C2S", "5000-octet WRITE Call"},
		// The first piece says 4 octets too many remain: the second
		// piece, whose own rdma_remaining is right, disagrees with it.
		{"V2-REMAINING", "continued WRITE Call, rdma_remaining off by 4"},
		{"V2-REPLY-CHUNK", "REPLY_EXTERNAL without a provisioned chunk"},
		{"V2-REPLY-CHUNK", "READ Reply continued, Reply chunk unused"},
		{"V2-GRANT-XID", "GRANT with an XID"},
		{"V2-CONTINUATION", "CALL_INLINE of another XID"},
		{"V2-CONTINUATION", "CONNPROP_MIDDLE after CONNPROP_FINAL"},
		{"V2-CONTINUATION", "CONNPROP_FINAL after CONNPROP_FINAL"},
		{"V2-CALL-CHUNK", "CALL_EXTERNAL without a Call chunk"},
		{"V2-READ-POSITION-ZERO", "CALL_INLINE with a position-zero Read chunk"},
		{"INV-V2-HANDLE", "Reply With Invalidate of another handle"},
		{"V2-CREDIT-OVERRUN", "Call past the credit limit"},
		{"V2-VERS-MISMATCH", "version 1 Call"},
	}
	count := map[string]int{}
	for _, w := range want {
		count[w.rule]++
		pkt, ok := labels[w.label]
		if !ok {
			t.Fatalf("no label %q", w.label)
		}
		found := false
		for _, f := range findings(res, w.rule) {
			found = found || slices.Contains(f.Packets, pkt)
		}
		if !found {
			t.Errorf("%s: no finding at packet %d (%s): %v", w.rule, pkt, w.label, findings(res, w.rule))
		}
	}
	for rule, n := range count {
		if got := findings(res, rule); len(got) != n {
			t.Errorf("%s: %d findings, want %d: %v", rule, len(got), n, got)
		}
	}
}
