package check

import (
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
)

// TestNameIPv6: the connection's name writes the server's IPv6 address and
// service port as "[2001:db8::1]:20049" (RFC 5952 section 6), not
// "2001:db8::1:20049", which reads as an address with one more group. The
// capture's README: client 2001:db8::2 QP 0x11, server 2001:db8::1 port
// 20049 QP 0x12.
func TestNameIPv6(t *testing.T) {
	res, _ := runStream(t, "synthetic/rocev2-ipv6-qinq.pcap", 1, dissect.Options{}, nil)
	for _, cr := range res.Connections {
		if cr.ID != 1 {
			continue
		}
		want := "connection 1 (roce 2001:db8::2 QP 0x000011 → [2001:db8::1]:20049 QP 0x000012, closed)"
		if got := cr.Name(); got != want {
			t.Errorf("Name() = %q, want %q", got, want)
		}
		return
	}
	t.Fatal("no connection 1")
}
