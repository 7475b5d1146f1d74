package main

import (
	"path/filepath"
	"testing"
)

// TestTsharkNetFields compares the Ethernet, IP, UDP and TCP fields of
// testdata/tshark/fields-net.txt with tshark's on every capture.
func TestTsharkNetFields(t *testing.T) {
	var captures []string
	for _, pat := range []string{"rxe-*.pcap", "siw-*.pcap", "public/montybeatnik-*.pcap", "public/srinivaskoritala-*.pcap"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", pat))
		if err != nil {
			t.Fatal(err)
		}
		captures = append(captures, m...)
	}
	compared := goldenSuite{
		fields:   "fields-net.txt",
		suffix:   "net.tsv",
		captures: captures,
		context:  []string{"frame.protocols"},
	}.run(t)
	// Only the InfiniBand capture has IPv6 (5 packets, in IPoIB).
	for _, f := range []string{"ip.addr", "tcp.port", "udp.port", "eth.addr", "ip.dsfield.ecn", "tcp.flags", "ipv6.addr"} {
		if compared[f] < 5 {
			t.Errorf("%s: only %d tshark values compared", f, compared[f])
		}
	}
}
