package main

import (
	"strings"
	"testing"
)

// TestCheckSRP: with SRP registered the gate has its evidence on the SRP
// captures (exit 3, "no RPC-over-RDMA traffic", without the plug-in), finds
// nothing at warning level, and the exchanges and fields name SRP's.
func TestCheckSRP(t *testing.T) {
	for _, name := range []string{"rxe-srp.pcap", "siw-srp.pcap"} {
		path := "../../testdata/pcaps/ulp/" + name
		code, out, errs := runCmd(t, "check", "--fail-on", "warning", path)
		if code != 0 || !strings.Contains(out, "1 carrying other upper-layer protocols (1 with their set-up)") || !strings.Contains(out, "0 errors, 0 warnings") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errs)
		}
		code, out, errs = runCmd(t, "exchanges", path)
		if code != 0 || !strings.Contains(out, "51 exchanges") || !strings.Contains(out, " srp tag:0x") {
			t.Errorf("%s exchanges: exit %d\n%s%s", name, code, out, errs)
		}
	}
	code, out, errs := runCmd(t, "dissect", "-c", "23", "-T", "fields", "-e", "rdmashark.srp.opcode", "-e", "rdmashark.srp.cdb_opcode",
		"../../testdata/pcaps/ulp/rxe-srp.pcap")
	if code != 0 || !strings.Contains(out, "0x02\t0x12\n") || !strings.Contains(out, "0xc1\t0x12\n") {
		t.Errorf("dissect: exit %d\n%s%s", code, out, errs)
	}
}
