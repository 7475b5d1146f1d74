package dissect

import "testing"

// TestHostPort: an IPv6 address with a port is written in brackets (RFC
// 3986 section 3.2.2, RFC 5952 section 6); IPv4 and other names are not.
func TestHostPort(t *testing.T) {
	for _, c := range []struct {
		addr string
		port uint16
		want string
	}{
		{"2001:db8::2", 58286, "[2001:db8::2]:58286"},
		{"fe80::5054:ff:fe00:202", 4791, "[fe80::5054:ff:fe00:202]:4791"},
		{"192.0.2.2", 58286, "192.0.2.2:58286"},
	} {
		if got := HostPort(c.addr, c.port); got != c.want {
			t.Errorf("HostPort(%q, %d) = %q, want %q", c.addr, c.port, got, c.want)
		}
	}
}
