package main

import (
	"strings"
	"testing"
)

// TestCheckSMBDirect: with SMB Direct registered the gate has its evidence
// on the SMB Direct captures (exit 3, "no RPC-over-RDMA traffic", before
// issue 32) and finds nothing at warning level.
func TestCheckSMBDirect(t *testing.T) {
	for _, name := range []string{"rxe-smbdirect.pcap", "siw-smbdirect.pcap"} {
		code, out, errs := runCmd(t, "check", "--fail-on", "warning", "../../testdata/pcaps/ulp/"+name)
		if code != 0 || !strings.Contains(out, "2 carrying other upper-layer protocols") || !strings.Contains(out, "0 errors, 0 warnings") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errs)
		}
	}
}
