package ipoib

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// tcpdump's IPoIB test capture (link type 242): ICMP, TCP and ARP.
const ipoibCapture = "../../testdata/pcaps/public/tcpdump-tests-ipoib.pcap"

// TestFirstPacket decodes frame 1 (an ICMP echo request), whose first 48
// bytes are (tshark -x):
//
//	00 00 ... 00 2f a3 00 0a    bytes 0-19: no GRH (bytes 0-1 zero)
//	80 00 05 50                 destination flags 0x80, QPN 0x000550
//	fe 80 00 00 00 00 00 00
//	00 10 e0 00 66 4a b4 51     destination GID fe80::10:e000:664a:b451
//	08 00 00 00                 type 0x0800 (IPv4), reserved 0
//	45 00 00 54                 the IPv4 header
func TestFirstPacket(t *testing.T) {
	pkt := pcaptest.Records(t, ipoibCapture)[0]
	var i IPoIB
	if err := i.DecodeFromBytes(pkt, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if i.GRH || i.DestinationFlags != 0x80 || i.DestinationQPN != 0x550 || i.DestinationGID.String() != "fe80::10:e000:664a:b451" ||
		i.Type != layers.EthernetTypeIPv4 || i.Reserved != 0 || i.SourceGID != nil {
		t.Errorf("%+v", i)
	}
	if len(i.Contents) != 44 || !bytes.HasPrefix(i.Payload, []byte{0x45, 0, 0, 0x54}) || i.NextLayerType() != layers.LayerTypeIPv4 {
		t.Errorf("contents %d, payload % x, next %v", len(i.Contents), i.Payload[:4], i.NextLayerType())
	}
}

// TestRealCapture compares all 30 packets with tshark's ipoib.* fields and
// the protocol tshark decodes next.
func TestRealCapture(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command("tshark", "-r", ipoibCapture, "-T", "fields", "-e", "ipoib.daddr.qpn", "-e", "ipoib.dgid",
		"-e", "ipoib.grh.ipver", "-e", "ipoib.grh.tclass", "-e", "ipoib.grh.flowlabel", "-e", "ipoib.grh.sqpn",
		"-e", "ipoib.grh.sgid", "-e", "ipoib.type", "-e", "ipoib.reserved", "-e", "frame.protocols").Output()
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	pkts := pcaptest.Records(t, ipoibCapture)
	if len(rows) != len(pkts) || len(pkts) != 30 {
		t.Fatalf("%d packets, tshark %d", len(pkts), len(rows))
	}
	next := map[string]gopacket.LayerType{"ip": layers.LayerTypeIPv4, "arp": layers.LayerTypeARP, "ipv6": layers.LayerTypeIPv6}
	grh := 0
	var i IPoIB
	for n, pkt := range pkts {
		if err := i.DecodeFromBytes(pkt, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("packet %d: %v", n+1, err)
		}
		f := make([]string, 9)
		if i.GRH {
			grh++
			f[2], f[3], f[4] = fmt.Sprint(i.IPVersion), fmt.Sprint(i.TrafficClass), fmt.Sprint(i.FlowLabel)
			f[5], f[6] = fmt.Sprintf("0x%06x", i.SourceQPN), i.SourceGID.String()
		} else {
			f[0] = fmt.Sprintf("0x%06x", i.DestinationQPN)
		}
		f[1] = i.DestinationGID.String()
		f[7], f[8] = fmt.Sprintf("0x%04x", uint16(i.Type)), fmt.Sprintf("0x%04x", i.Reserved)
		want := strings.Split(rows[n], "\t")
		if strings.Join(f, "\t") != strings.Join(want[:9], "\t") {
			t.Errorf("packet %d:\n got %q\nwant %q", n+1, f, want[:9])
		}
		if proto := strings.Split(want[9], ":")[1]; i.NextLayerType() != next[proto] {
			t.Errorf("packet %d: next %v, tshark %s", n+1, i.NextLayerType(), proto)
		}
	}
	if grh != 2 { // frames 7 and 26, the broadcast ARP requests
		t.Errorf("%d packets with a GRH pseudo-header", grh)
	}
}

func TestNewPacket(t *testing.T) {
	pkts := pcaptest.Records(t, ipoibCapture)
	p := gopacket.NewPacket(pkts[0], LayerTypeIPoIB, gopacket.Default)
	icmp, _ := p.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if p.ErrorLayer() != nil || icmp == nil || ip == nil || ip.SrcIP.String() != "192.168.56.10" || icmp.Seq != 0 {
		t.Fatalf("frame 1: %v", p)
	}
	// Frame 7, tshark: "192.168.56.24 is at 80000550fe800000000000000010e000664ab451".
	p = gopacket.NewPacket(pkts[6], LayerTypeIPoIB, gopacket.Default)
	arp, _ := p.Layer(layers.LayerTypeARP).(*layers.ARP)
	if arp == nil || arp.HwAddressSize != 20 || net.IP(arp.SourceProtAddress).String() != "192.168.56.24" ||
		fmt.Sprintf("%x", arp.SourceHwAddress) != "80000550fe800000000000000010e000664ab451" {
		t.Fatalf("frame 7: %v", p)
	}
}

func TestTruncated(t *testing.T) {
	pkt := pcaptest.Records(t, ipoibCapture)[0]
	var i IPoIB
	df := &feedback{}
	err := i.DecodeFromBytes(pkt[:43], df)
	if !errors.Is(err, ErrTruncated) || err.Error() != "IPoIB header truncated: 43 bytes, the header needs 44" || !df.truncated {
		t.Errorf("%v", err)
	}
	if err := i.DecodeFromBytes(pkt[:44], gopacket.NilDecodeFeedback); err != nil || len(i.Payload) != 0 {
		t.Errorf("header only: %v, %d", err, len(i.Payload))
	}
}

type feedback struct{ truncated bool }

func (f *feedback) SetTruncated() { f.truncated = true }

func TestSerializeRoundTrip(t *testing.T) {
	pkts := pcaptest.Records(t, ipoibCapture)
	for _, n := range []int{0, 6} { // unicast address form, GRH form
		var in IPoIB
		if err := in.DecodeFromBytes(pkts[n], gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &in, gopacket.Payload(in.Payload)); err != nil {
			t.Fatal(err)
		}
		var out IPoIB
		if err := out.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		in.BaseLayer, out.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
		if fmt.Sprint(in) != fmt.Sprint(out) {
			t.Errorf("frame %d:\n in %+v\nout %+v", n+1, in, out)
		}
		// Every byte a field covers is reproduced: 20-end without a GRH,
		// 0-3 and 5-end with one.
		b, want := buf.Bytes(), pkts[n]
		from := 20
		if in.GRH {
			from = 5
			if !bytes.Equal(b[:4], want[:4]) {
				t.Errorf("frame %d: GRH word differs", n+1)
			}
		}
		if !bytes.Equal(b[from:], want[from:]) {
			t.Errorf("frame %d: bytes differ", n+1)
		}
	}
	bad := IPoIB{GRH: true}
	if err := bad.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}); err == nil {
		t.Error("a GRH form whose first 16 bits are zero reads back as the address form")
	}
}

func FuzzIPoIB(f *testing.F) {
	for _, p := range pcaptest.Records(f, ipoibCapture) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var i IPoIB
		if err := i.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			if len(b) >= HeaderLength {
				t.Fatal(err)
			}
			return
		}
		if len(i.Contents)+len(i.Payload) != len(b) || len(i.DestinationGID) != 16 {
			t.Fatal("lengths")
		}
		_ = i.NextLayerType()
		buf := gopacket.NewSerializeBuffer()
		if err := i.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		gopacket.NewPacket(b, LayerTypeIPoIB, gopacket.Default)
	})
}

func BenchmarkDecode(b *testing.B) {
	pkt := pcaptest.Records(b, ipoibCapture)[0]
	var i IPoIB
	b.ReportAllocs()
	for b.Loop() {
		if err := i.DecodeFromBytes(pkt, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}
