package check

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
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
