package main

import (
	"strings"
	"testing"
)

// TestCapturePcapFilter: -f takes a pcap-filter expression as tcpdump
// users type it (the program's semantics are checked against tcpdump in
// source/live/pcapfilter_test.go), prints it with -d, and a wrong one is
// a usage error naming the problem.
func TestCapturePcapFilter(t *testing.T) {
	code, out, errs := runCmd(t, "capture", "-d", "-f", "udp port 4791 or tcp port 20049")
	if code != 0 || !strings.HasPrefix(out, "; udp port 4791 or tcp port 20049, snapshot length") || !strings.Contains(out, "ldh [12]") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	for _, bad := range []struct{ f, says string }{
		{"udp port 4791 and (tcp", "missing )"},
		{"host nfs-server", "host names are not resolved"},
		{"tcp port nfs", "service names are not resolved"},
	} {
		if code, _, errs := runCmd(t, "capture", "-d", "-f", bad.f); code != 2 || !strings.Contains(errs, bad.says) {
			t.Errorf("-f %q: exit %d %s", bad.f, code, errs)
		}
	}
}
