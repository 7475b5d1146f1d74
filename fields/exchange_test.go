package fields

import "testing"

func TestExchangeKey(t *testing.T) {
	for _, c := range []struct {
		ulp  string
		key  uint64
		want string
	}{
		{"rpcordma", 0x3cfb4714, "0x3cfb4714"},
		{"rpcordma", 0x1, "0x00000001"},
		{"nvme-rdma", 1<<16 | 7, "65543"},
		{"", 0, "0"},
	} {
		if got := ExchangeKey(c.ulp, c.key); got != c.want {
			t.Errorf("ExchangeKey(%q, %#x) = %q, want %q", c.ulp, c.key, got, c.want)
		}
	}
}
