package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTsharkCompatFields compares the fields offered under tshark's names
// (the RDMA-CM IP header of CM REQs, AtomicETH VA and R_Key as
// infiniband.reth.*) with tshark's on the real RoCE/IB captures and the
// synthetic ones (the only atomics, and an IPv6 RDMA-CM header).
func TestTsharkCompatFields(t *testing.T) {
	captures := goldenCaptures(t)
	for _, pat := range []string{"synthetic/rocev2-*.pcap", "synthetic/rocev2-*.pcapng"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		captures = append(captures, m...)
	}
	compared := goldenSuite{fields: "fields-compat.txt", suffix: "compat.tsv", captures: captures}.run(t)
	for _, f := range []string{"infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.sip6", "infiniband.cm.req.ip_cm.sport",
		"infiniband.cm.req.ip_cm.private", "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth", "infiniband.atomiceth"} {
		if compared[f] == 0 {
			t.Errorf("%s: no tshark value compared", f)
		}
	}
}

// TestAtomicTreeHasNoRETH: tshark 4.0's -V shows an atomic (packets 13
// CmpSwap and 15 FetchAdd of the synthetic IPv6/QinQ capture) with an
// AtomicETH and no RETH, although it fills infiniband.reth.va and r_key from
// the AtomicETH; an RDMA Write (packet 6) has a RETH (issue 28).
func TestAtomicTreeHasNoRETH(t *testing.T) {
	pcap := filepath.Join("..", "..", "testdata", "pcaps", "synthetic", "rocev2-ipv6-qinq.pcap")
	for _, c := range []struct {
		frame      string
		reth, atom bool
	}{{"6", true, false}, {"13", false, true}, {"15", false, true}} {
		code, out, errs := runCmd(t, "dissect", "-V", "-Y", "frame.number == "+c.frame, pcap)
		if code != 0 {
			t.Fatalf("frame %s: exit %d: %s", c.frame, code, errs)
		}
		if got := strings.Contains(out, "RDMA Extended Transport Header"); got != c.reth {
			t.Errorf("frame %s: RETH shown %v, tshark %v:\n%s", c.frame, got, c.reth, out)
		}
		if got := strings.Contains(out, "Atomic Extended Transport Header"); got != c.atom {
			t.Errorf("frame %s: AtomicETH shown %v, tshark %v", c.frame, got, c.atom)
		}
	}
}
