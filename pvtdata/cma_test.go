package pvtdata

import (
	"bytes"
	"errors"
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"net/netip"
	"strings"
	"testing"
)

func TestServiceID(t *testing.T) {
	cases := []struct {
		sid   ServiceID
		ps    PortSpace
		name  string
		port  uint16
		isIP  bool
		descr string
	}{
		// rxe-nfs3.pcap frame 36; tshark: Prefix 0000000001, Protocol 0x06, Port 0x4e51.
		{0x0000000001064e51, PortSpaceTCP, "TCP", 20049, true, "NFS/RDMA"},
		// rxe-rping.pcap frame 13 (port 7174), perftest (18515).
		{0x0000000001061c06, PortSpaceTCP, "TCP", 7174, true, "rping"},
		{0x0000000001064853, PortSpaceTCP, "TCP", 18515, true, "perftest"},
		{0x0000000001111234, PortSpaceUDP, "UDP", 0x1234, true, "RDMA_PS_UDP"},
		// RDMA_PS_IB = 0x013F lies in the Annex A11 prefix as well.
		{0x00000000013F0001, PortSpaceIB, "IB", 1, true, "RDMA_PS_IB"},
		// RDMA_PS_IPOIB = 0x0002 does not.
		{0x000000000002abcd, PortSpaceIPoIB, "IPoIB", 0xabcd, false, "RDMA_PS_IPOIB"},
		// IPoIB connected mode: 0x1000000000000000 | QPN (srinivaskoritala capture).
		{0x1000000000000404, 0, "none", 0x0404, false, "IPoIB CM"},
		// Prefix 0x0000000002: not the IP CM range.
		{0x0000000002064e51, 0x0206, "PortSpace(0x206)", 20049, false, "other"},
	}
	for _, c := range cases {
		if got := c.sid.PortSpace(); got != c.ps || got.String() != c.name {
			t.Errorf("%s %v: PortSpace %v (%s), want %v (%s)", c.descr, c.sid, uint16(got), got, uint16(c.ps), c.name)
		}
		if got := c.sid.Port(); got != c.port {
			t.Errorf("%s: Port %d, want %d", c.descr, got, c.port)
		}
		if got := c.sid.IsIP(); got != c.isIP {
			t.Errorf("%s: IsIP %v, want %v", c.descr, got, c.isIP)
		}
	}
	if got := ServiceIDFor(PortSpaceTCP, 20049); got != 0x0000000001064e51 {
		t.Errorf("ServiceIDFor = %v", got)
	}
	if got := ServiceID(0x0000000001064e51).String(); got != "0x0000000001064e51" {
		t.Errorf("String = %s", got)
	}
}

// ipv6Header: the hand-built IPv6 RDMA-CM header (internal/pdtest).
var ipv6Header = pdtest.IPv6CMAHeader

func TestDecodeCMAHeaderIPv6(t *testing.T) {
	h, err := DecodeCMAHeader(ipv6Header)
	if err != nil {
		t.Fatal(err)
	}
	want := CMAHeader{IPVersion: 6, SrcPort: 49153,
		SrcAddr: netip.MustParseAddr("2001:db8::2"), DstAddr: netip.MustParseAddr("2001:db8::1")}
	if h != want {
		t.Errorf("got %+v, want %+v", h, want)
	}
	b, err := h.MarshalBinary()
	if err != nil || !bytes.Equal(b, ipv6Header) {
		t.Errorf("MarshalBinary = %x, %v", b, err)
	}
}

func TestDecodeCMAHeaderErrors(t *testing.T) {
	good := rxeNFS3REQ(t)[:CMAHeaderLen]
	mod := func(i int, v byte) []byte {
		b := bytes.Clone(good)
		b[i] = v
		return b
	}
	cases := []struct {
		name string
		b    []byte
		err  error
		want CMAHeader // fields decoded despite the error
		msg  string
	}{
		{"empty", nil, ErrCMATruncated, CMAHeader{}, "0 octets"},
		{"3 octets", good[:3], ErrCMATruncated, CMAHeader{}, "3 octets"},
		{"35 octets", good[:35], ErrCMATruncated, CMAHeader{IPVersion: 4, SrcPort: 0x88c2}, "35 octets"},
		{"cma_version 1", mod(0, 0x01), ErrCMAVersion,
			CMAHeader{Version: 1, IPVersion: 4, SrcPort: 0x88c2,
				SrcAddr: netip.MustParseAddr("192.0.2.2"), DstAddr: netip.MustParseAddr("192.0.2.1")}, "cma_version 1"},
		{"IP version 5", mod(1, 0x50), ErrCMAIPVersion, CMAHeader{IPVersion: 5, SrcPort: 0x88c2}, "IP version 5"},
		{"IP version 0", mod(1, 0x04), ErrCMAIPVersion, CMAHeader{Reserved: 4, SrcPort: 0x88c2}, "IP version 0"},
	}
	for _, c := range cases {
		h, err := DecodeCMAHeader(c.b)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
			continue
		}
		if h != c.want {
			t.Errorf("%s: header %+v, want %+v", c.name, h, c.want)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q lacks %q", c.name, err, c.msg)
		}
	}
	// Reserved nibble set: still valid, reported.
	h, err := DecodeCMAHeader(mod(1, 0x4f))
	if err != nil || h.Reserved != 0xf || h.IPVersion != 4 {
		t.Errorf("reserved nibble: %+v %v", h, err)
	}
}

func TestCMAHeaderRoundTrip(t *testing.T) {
	real := rxeNFS3REQ(t)[:CMAHeaderLen]
	h, err := DecodeCMAHeader(real)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.AppendBinary([]byte{0xaa})
	if err != nil || b[0] != 0xaa || !bytes.Equal(b[1:], real) {
		t.Errorf("AppendBinary = %x, %v", b, err)
	}
	// IPv4-mapped IPv6 address in an IPv4 header is unmapped.
	h.SrcAddr = netip.MustParseAddr("::ffff:192.0.2.2")
	if b, err := h.MarshalBinary(); err != nil || !bytes.Equal(b, real) {
		t.Errorf("mapped: %x %v", b, err)
	}
	// IPv6 address in an IPv4 header cannot be encoded.
	h.SrcAddr = netip.MustParseAddr("2001:db8::1")
	if _, err := h.MarshalBinary(); err == nil {
		t.Error("IPv6 address in IPv4 header encoded")
	}
	if _, err := (CMAHeader{IPVersion: 16}).MarshalBinary(); err == nil {
		t.Error("IP version 16 encoded")
	}
	if _, err := (CMAHeader{IPVersion: 6, SrcAddr: netip.MustParseAddr("fe80::1%eth0")}).MarshalBinary(); err == nil {
		t.Error("zoned address encoded")
	}
	// Zero addresses encode as zero octets, for malformed test headers.
	b, err = (CMAHeader{Version: 7, IPVersion: 9, SrcPort: 1}).MarshalBinary()
	want := append([]byte{7, 0x90, 0, 1}, make([]byte, 32)...)
	if err != nil || !bytes.Equal(b, want) {
		t.Errorf("malformed header = %x, %v", b, err)
	}
}
