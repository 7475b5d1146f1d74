package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestRPCCreditsByVersion: version 1 shows the credits requested in Calls
// and granted in Replies (RFC 8166 section 3.3.1); version 2 the running
// limit each peer grants the other (draft-07 "Flow Control"), and a
// version 1 connection's JSON has no credit_limits. (The "rpc" section
// is RPC-over-RDMA's presentation's, registered by present_hook_test.go.)
func TestRPCCreditsByVersion(t *testing.T) {
	v1 := &rpcordma.RPCStats{Version: 1, Versions: [3]uint64{0, 4, 0},
		MaxCreditsRequested: [2]uint32{128, 0}, MaxCreditsGranted: [2]uint32{0, 64}}
	c1 := connection(&dissect.Connection{ULP: rpcordma.Name, ULPData: v1})
	r := c1.RPC
	if got := r.creditCell(); got != "128 / 64" {
		t.Errorf("version 1 credits %q", got)
	}
	if b, _ := json.Marshal(r); strings.Contains(string(b), "credit_limits") {
		t.Errorf("version 1 JSON has credit limits: %s", b)
	}
	v2 := &rpcordma.RPCStats{Version: 2, Versions: [3]uint64{0, 0, 4},
		CreditLimits: [2]uint32{18, 30}, MaxCreditLimits: [2]uint32{18, 33}, V2Sent: [2]uint64{2, 2}}
	c2 := connection(&dissect.Connection{ULP: rpcordma.Name, ULPData: v2})
	r = c2.RPC
	if got := r.creditCell(); got != "v2 limit 18 / 30" {
		t.Errorf("version 2 credits %q", got)
	}
	if l := r.CreditLimits; l == nil || l.Max.ServerToClient != 33 || l.Sent.ClientToServer != 2 {
		t.Errorf("version 2 limits %+v", l)
	}
}
