package live

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/bpf"
)

const pcaps = "../../testdata/pcaps"

func TestParseFilter(t *testing.T) {
	good := []struct {
		in, want string
	}{
		{"udp 4791", "udp 4791"},
		{"udp 4791,tcp 20049,tcp 5001", "udp 4791,tcp 20049,tcp 5001"},
		{" UDP 4791 , Ether 0x8915 ", "udp 4791,ether 0x8915"},
		{"ether 35093", "ether 0x8915"},
		{"all", "all"},
		{"tcp 0x4e51", "tcp 20049"},
	}
	for _, g := range good {
		f, err := ParseFilter(g.in)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", g.in, err)
			continue
		}
		if f.String() != g.want {
			t.Errorf("ParseFilter(%q) = %q, want %q", g.in, f.String(), g.want)
		}
		again, err := ParseFilter(f.String())
		if err != nil || again.String() != f.String() {
			t.Errorf("%q does not read back: %v %q", f.String(), err, again.String())
		}
	}
	bad := []struct{ in, says string }{
		{"", "empty filter"},
		{"udp 4791 4792", "exactly one value"},
		{"udp 70000", "not a number"},
		// pcap-filter expressions that are wrong (pcapfilter.go).
		{"udp port 70000", "not a number from 0 to 65535"},
		{"host example.com", "host names are not resolved"},
		{"udp port 4791 and (tcp", "missing )"},
		{"udp x", "not a number"},
		{"icmp 1", "unknown term"},
		{"udp 4791,,tcp 1", "empty term"},
		{"all,udp 4791", "stands alone"},
		{"all 1", "takes no value"},
		{"ether 0x05dc", "below 0x0600"},
		{"tcp 0", "port 0"},
		{strings.Repeat("udp 1,", maxTerms) + "udp 2", "at most"},
	}
	for _, b := range bad {
		_, err := ParseFilter(b.in)
		if err == nil || !strings.Contains(err.Error(), b.says) {
			t.Errorf("ParseFilter(%q) = %v, want an error saying %q", b.in, err, b.says)
		}
	}
	// "udp" and "udp port 4791", wrong as terms, are pcap-filter
	// expressions, kept as written.
	for _, in := range []string{"udp", "udp port 4791", "udp port 4791 or tcp port 20049"} {
		if f, err := ParseFilter(in); err != nil || !f.PcapFilter() || f.String() != in || f.IsZero() {
			t.Errorf("ParseFilter(%q) = %q %v, want the pcap-filter expression", in, f.String(), err)
		}
	}
	if got := DefaultFilter(0).String(); got != "udp 4791,ether 0x8915,tcp 20049" {
		t.Errorf("DefaultFilter = %q", got)
	}
	if got := DefaultFilter(1234).String(); got != "udp 1234,ether 0x8915,tcp 20049" {
		t.Errorf("DefaultFilter(1234) = %q", got)
	}
}

// oracle says whether f keeps a frame, decoding it with gopacket's layers
// rather than with BPF: the EtherType behind the VLAN tags, the IPv4
// fragment offset, the IPv6 fixed header's next header, the ports.
func oracle(f Filter, frame []byte) bool {
	pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.NoCopy)
	eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if eth == nil {
		return false
	}
	etype := eth.EthernetType
	tags := 0
	for _, l := range pkt.Layers() {
		if q, ok := l.(*layers.Dot1Q); ok {
			etype = q.Type
			tags++
		}
	}
	if tags > 2 {
		return false
	}
	var proto layers.IPProtocol
	ipOK := false
	switch etype {
	case layers.EthernetTypeIPv4:
		if ip, ok := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok && ip.FragOffset == 0 {
			proto, ipOK = ip.Protocol, true
		}
	case layers.EthernetTypeIPv6:
		if ip, ok := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
			proto, ipOK = ip.NextHeader, true
		}
	}
	var sport, dport uint16
	if ipOK {
		switch proto {
		case layers.IPProtocolUDP:
			if u, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
				sport, dport = uint16(u.SrcPort), uint16(u.DstPort)
			}
		case layers.IPProtocolTCP:
			if tc, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP); ok {
				sport, dport = uint16(tc.SrcPort), uint16(tc.DstPort)
			}
		}
	}
	for _, term := range f.Terms {
		switch term.Kind {
		case TermAll:
			return true
		case TermEther:
			if uint16(etype) == term.Value {
				return true
			}
		case TermUDP, TermTCP:
			want := layers.IPProtocolUDP
			if term.Kind == TermTCP {
				want = layers.IPProtocolTCP
			}
			if ipOK && proto == want && (sport == term.Value || dport == term.Value) {
				return true
			}
		}
	}
	return false
}

// tag inserts VLAN tags (TPID, TCI pairs) after the MAC addresses.
func tag(frame []byte, tpidTCI ...uint16) []byte {
	out := append([]byte{}, frame[:12]...)
	for i := 0; i+1 < len(tpidTCI); i += 2 {
		out = binary.BigEndian.AppendUint16(out, tpidTCI[i])
		out = binary.BigEndian.AppendUint16(out, tpidTCI[i+1])
	}
	return append(out, frame[12:]...)
}

func readFrames(t testing.TB, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		return nil
	}
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, data)
	}
	return out
}

// TestFilterOnCaptures runs the compiled programs in x/net/bpf's VM over
// every frame of the Ethernet captures, untagged, with an 802.1Q tag and
// with 802.1ad+802.1Q tags, and compares each verdict with the oracle. The
// default filter's totals are those of tshark -Y "udp.port==4791 or
// tcp.port==20049 or eth.type==0x8915" on the same files.
func TestFilterOnCaptures(t *testing.T) {
	tshark := map[string]int{
		"rxe-ib_send_bw.pcap": 1450, "rxe-ib_write_bw.pcap": 1492, "rxe-nfs3.pcap": 7128,
		"rxe-nfs41.pcap": 3641, "rxe-nfs42-small.pcap": 7187, "rxe-rping.pcap": 65,
		"siw-ib_read_bw.pcap": 0, "siw-ib_send_bw.pcap": 0, "siw-nfs3.pcap": 5108,
		"siw-nfs41.pcap": 5050, "siw-nfs42-small.pcap": 6254, "siw-rping.pcap": 0,
		"montybeatnik-rdma-roce-lab-test.pcap": 12,
	}
	filters := []Filter{DefaultFilter(0), mustParse(t, "tcp 7174,udp 4791"), mustParse(t, "ether 0x0806"), mustParse(t, "tcp 20048,udp 111")}
	const snaplen = 96
	files, _ := filepath.Glob(filepath.Join(pcaps, "*.pcap"))
	files = append(files, filepath.Join(pcaps, "public", "montybeatnik-rdma-roce-lab-test.pcap"))
	checked := 0
	for _, file := range files {
		frames := readFrames(t, file)
		if frames == nil {
			continue
		}
		for fi, f := range filters {
			ins, err := f.Instructions(snaplen)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := bpf.NewVM(ins)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kept := 0
			for n, frame := range frames {
				for _, variant := range [][]byte{frame, tag(frame, 0x8100, 0x2064), tag(frame, 0x88a8, 0x0005, 0x8100, 0xe064)} {
					got, err := vm.Run(variant)
					if err != nil {
						t.Fatalf("%s frame %d: %v", file, n+1, err)
					}
					// The program returns the snap length for a frame it
					// keeps; the kernel cuts longer frames to it.
					want := 0
					if oracle(f, variant) {
						want = snaplen
					}
					if got != want {
						t.Errorf("%s frame %d (%d bytes), filter %q: BPF keeps %d bytes, oracle %d", filepath.Base(file), n+1, len(variant), f, got, want)
					}
				}
				if got, _ := vm.Run(frame); got > 0 {
					kept++
				}
			}
			if want, ok := tshark[filepath.Base(file)]; ok && fi == 0 && kept != want {
				t.Errorf("%s: default filter keeps %d frames, tshark %d", filepath.Base(file), kept, want)
			}
			checked++
		}
	}
	if checked < 4*len(tshark) {
		t.Errorf("checked %d file×filter pairs, want %d", checked, 4*len(tshark))
	}
}

func mustParse(t *testing.T, s string) Filter {
	t.Helper()
	f, err := ParseFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFilterEdges runs hand-built frames the captures lack.
func TestFilterEdges(t *testing.T) {
	eth := func(etype uint16, payload ...byte) []byte {
		b := make([]byte, 12, 14+len(payload))
		b = binary.BigEndian.AppendUint16(b, etype)
		return append(b, payload...)
	}
	// IPv4 header (RFC 791 3.1) with ihl words, flags/fragment word, protocol.
	ipv4 := func(ihl int, frag uint16, proto byte, l4 ...byte) []byte {
		h := make([]byte, ihl*4)
		h[0] = 0x40 | byte(ihl)
		binary.BigEndian.PutUint16(h[6:], frag)
		h[9] = proto
		return append(h, l4...)
	}
	// IPv6 fixed header (RFC 8200 3) with next header.
	ipv6 := func(next byte, rest ...byte) []byte {
		h := make([]byte, 40)
		h[0] = 0x60
		h[6] = next
		return append(h, rest...)
	}
	ports := func(src, dst uint16) []byte {
		b := binary.BigEndian.AppendUint16(nil, src)
		b = binary.BigEndian.AppendUint16(b, dst)
		return append(b, make([]byte, 16)...)
	}
	def := DefaultFilter(0)
	cases := []struct {
		name  string
		frame []byte
		keep  bool
	}{
		{"RoCEv2 to 4791", eth(0x0800, ipv4(5, 0x4000, 17, ports(49152, 4791)...)...), true},
		{"UDP from 4791", eth(0x0800, ipv4(5, 0, 17, ports(4791, 1)...)...), true},
		{"IPv4 options (IHL 7)", eth(0x0800, ipv4(7, 0, 17, ports(1, 4791)...)...), true},
		{"first fragment", eth(0x0800, ipv4(5, 0x2000, 17, ports(1, 4791)...)...), true},
		{"later fragment", eth(0x0800, ipv4(5, 0x2010, 17, ports(1, 4791)...)...), false},
		{"last fragment, offset 0x1000", eth(0x0800, ipv4(5, 0x1000, 17, ports(1, 4791)...)...), false},
		{"TCP to 4791", eth(0x0800, ipv4(5, 0, 6, ports(1, 4791)...)...), false},
		{"NFS/RDMA on iWARP", eth(0x0800, ipv4(5, 0, 6, ports(20049, 700)...)...), true},
		{"UDP to 20049", eth(0x0800, ipv4(5, 0, 17, ports(1, 20049)...)...), false},
		{"IPv6 RoCEv2", eth(0x86dd, ipv6(17, ports(1, 4791)...)...), true},
		{"IPv6 hop-by-hop first", eth(0x86dd, ipv6(0, ports(1, 4791)...)...), false},
		{"RoCEv1", eth(0x8915, make([]byte, 60)...), true},
		{"RoCEv1 in 0x9100", tag(eth(0x8915, make([]byte, 60)...), 0x9100, 7), true},
		{"three tags", tag(eth(0x8915, make([]byte, 60)...), 0x88a8, 1, 0x8100, 2, 0x8100, 3), false},
		{"ARP", eth(0x0806, make([]byte, 28)...), false},
		{"runt", []byte{1, 2, 3}, false},
		{"IPv4 cut before the ports", eth(0x0800, ipv4(5, 0, 17)...), false},
	}
	ins, err := def.Instructions(DefaultSnapLen)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got, err := vm.Run(c.frame)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (got > 0) != c.keep {
			t.Errorf("%s: kept %d bytes, want keep=%v", c.name, got, c.keep)
		}
		if c.keep && got != DefaultSnapLen {
			t.Errorf("%s: returned %d, want the snap length", c.name, got)
		}
	}
	// "all" keeps everything, cut to the snap length.
	ins, _ = Filter{Terms: []Term{{Kind: TermAll}}}.Instructions(64)
	vm, _ = bpf.NewVM(ins)
	if got, _ := vm.Run(make([]byte, 10)); got != 64 {
		t.Errorf("all: kept %d bytes, want 64", got)
	}
	// The longest filter still assembles: every jump fits.
	var many Filter
	for i := range maxTerms {
		many.Terms = append(many.Terms, Term{Kind: TermKind(1 + i%3), Value: uint16(0x0600 + i)})
	}
	if _, err := many.Compile(DefaultSnapLen); err != nil {
		t.Errorf("%d terms: %v", maxTerms, err)
	}
}
