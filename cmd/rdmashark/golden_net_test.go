package main

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
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
		known: []knownDifference{{id: "KD-ERF-TIMESTAMP", field: "frame.time_delta",
			applies: func(ts, ours string, row map[string]string) bool {
				// tshark takes the ERF header's finer timestamp; within 1 µs.
				a, err1 := strconv.ParseFloat(ts, 64)
				b, err2 := strconv.ParseFloat(ours, 64)
				return strings.HasPrefix(row["frame.protocols"], "erf") && err1 == nil && err2 == nil && math.Abs(a-b) < 1e-6
			}}},
	}.run(t)
	// Only the InfiniBand capture has IPv6 (5 packets, in IPoIB).
	for _, f := range []string{"tcp.stream", "frame.time_delta", "ip.addr", "tcp.port", "udp.port", "eth.addr", "ip.dsfield.ecn", "tcp.flags", "ipv6.addr"} {
		if compared[f] < 5 {
			t.Errorf("%s: only %d tshark values compared", f, compared[f])
		}
	}
}
