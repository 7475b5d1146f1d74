package main

import (
	"path/filepath"
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
		"infiniband.cm.req.ip_cm.private", "infiniband.reth.va", "infiniband.reth.r_key"} {
		if compared[f] == 0 {
			t.Errorf("%s: no tshark value compared", f)
		}
	}
}
