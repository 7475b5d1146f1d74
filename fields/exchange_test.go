package fields

import "testing"

func TestExchangeKey(t *testing.T) {
	// A plug-in's format (RegisterExchangeKey), as RPC-over-RDMA's XID.
	RegisterExchangeKey("test-hex", func(dst []byte, key uint64) []byte { return AppendHex(dst, key, 8) })
	for _, c := range []struct {
		ulp  string
		key  uint64
		want string
	}{
		{"test-hex", 0x3cfb4714, "0x3cfb4714"},
		{"test-hex", 0x1, "0x00000001"},
		{"nvme-rdma", 1<<16 | 7, "65543"},
		{"", 0, "0"},
	} {
		if got := ExchangeKey(c.ulp, c.key); got != c.want {
			t.Errorf("ExchangeKey(%q, %#x) = %q, want %q", c.ulp, c.key, got, c.want)
		}
	}
}
