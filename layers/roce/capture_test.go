package roce

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"

	"github.com/gopacket/gopacket/layers"
)

// Helpers that read the real captures in testdata/pcaps.

const capDir = "../../testdata/pcaps"

// capFrame is one captured packet.
type capFrame struct {
	num  int // 1-based, as tshark numbers frames
	data []byte
	orig int // length on the wire
}

// capRead reads a pcap file's frames (internal/pcaptest).
func capRead(t testing.TB, path string) ([]capFrame, layers.LinkType) {
	t.Helper()
	lt, frames := pcaptest.Read(t, path)
	out := make([]capFrame, len(frames))
	for i, f := range frames {
		out[i] = capFrame{num: f.Num, data: f.Data, orig: f.CI.Length}
	}
	return out, lt
}

// capRoCEFrame is a RoCEv2 packet taken apart by hand (independently of the
// code under test): ip runs from the IP header to the end of the IP packet,
// bth is the UDP payload (BTH through ICRC).
type capRoCEFrame struct {
	capFrame
	l2  []byte // bytes before the IP header
	ip  []byte
	bth []byte
}

// capRoCE returns the RoCEv2 (UDP port 4791) packets of a capture with
// an Ethernet, SLL or SLL2 link type.
func capRoCE(t testing.TB, path string) []capRoCEFrame {
	t.Helper()
	frames, lt := capRead(t, path)
	var out []capRoCEFrame
	for _, f := range frames {
		var ipOff int
		var etype uint16
		d := f.data
		switch lt {
		case layers.LinkTypeEthernet:
			if len(d) < 14 {
				continue
			}
			etype, ipOff = binary.BigEndian.Uint16(d[12:]), 14
		case layers.LinkTypeLinuxSLL:
			if len(d) < 16 {
				continue
			}
			etype, ipOff = binary.BigEndian.Uint16(d[14:]), 16
		case layers.LinkTypeLinuxSLL2:
			if len(d) < 20 {
				continue
			}
			etype, ipOff = binary.BigEndian.Uint16(d[0:]), 20
		default:
			t.Fatalf("%s: link type %v", path, lt)
		}
		ip := d[ipOff:]
		var udpOff int
		switch etype {
		case 0x0800:
			if len(ip) < 20 || ip[9] != 17 {
				continue
			}
			ip = ip[:min(len(ip), int(binary.BigEndian.Uint16(ip[2:])))]
			udpOff = int(ip[0]&0xF) * 4
		case 0x86DD:
			if len(ip) < 40 || ip[6] != 17 {
				continue
			}
			ip = ip[:min(len(ip), 40+int(binary.BigEndian.Uint16(ip[4:])))]
			udpOff = 40
		default:
			continue
		}
		if len(ip) < udpOff+8 || binary.BigEndian.Uint16(ip[udpOff+2:]) != 4791 {
			continue
		}
		udpLen := int(binary.BigEndian.Uint16(ip[udpOff+4:]))
		out = append(out, capRoCEFrame{capFrame: f, l2: d[:ipOff], ip: ip,
			bth: ip[udpOff+8 : min(len(ip), udpOff+udpLen)]})
	}
	return out
}

// capRoCEFiles are the captures with RoCEv2 traffic whose ICRCs were made
// by a real RoCE stack.
func capRoCEFiles(t testing.TB) []string {
	t.Helper()
	a, _ := filepath.Glob(filepath.Join(capDir, "rxe-*.pcap"))
	b, _ := filepath.Glob(filepath.Join(capDir, "public", "montybeatnik-*.pcap"))
	all := append(a, b...)
	if len(all) < 8 {
		t.Fatalf("expected the rxe and montybeatnik captures, found %v", all)
	}
	return all
}

const capERF = capDir + "/public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap"

// capIB strips the ERF record header (16 bytes, then 8-byte extension
// headers while the type's top bit / each extension's top bit says more
// follow) from the native InfiniBand capture and returns LRH..VCRC, cut to
// the ERF wire length.
func capIB(t testing.TB) []capFrame {
	t.Helper()
	frames, lt := capRead(t, capERF)
	if lt != 197 {
		t.Fatalf("ERF capture has link type %d", lt)
	}
	out := frames[:0]
	for _, f := range frames {
		d := f.data
		if len(d) < 16 {
			t.Fatalf("frame %d: short ERF header", f.num)
		}
		typ, wlen, p := d[8], int(binary.BigEndian.Uint16(d[14:16])), 16
		if typ&0x7F != 21 {
			t.Fatalf("frame %d: ERF type %d, want 21 (InfiniBand)", f.num, typ&0x7F)
		}
		for more := typ&0x80 != 0; more; p += 8 {
			if len(d) < p+8 {
				t.Fatalf("frame %d: short ERF extension header", f.num)
			}
			more = d[p]&0x80 != 0
		}
		out = append(out, capFrame{num: f.num, data: d[p:min(len(d), p+wlen)], orig: wlen})
	}
	return out
}

// capTshark reads a tab-separated file written by testdata/gen-tshark.sh:
// one map per row, keyed by field name.
func capTshark(t testing.TB, name string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var hdr []string
	var rows []map[string]string
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if hdr == nil {
			hdr = cols
			continue
		}
		row := map[string]string{}
		for i, c := range cols {
			if i < len(hdr) {
				row[hdr[i]] = c
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", name)
	}
	return rows
}
