package dissect_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/erf"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// The tests here feed the engine frames built by internal/synth and check
// what it makes of them against values that come from the spec and from
// the bytes we built, not from the code under test:
//
//   - the CRC oracles below compute ICRC and VCRC straight from IBA Vol 1
//     7.8 and Annexes A16/A17 with hash/crc32 and a bitwise CRC-16, sharing
//     no code with package roce; TestCRCOraclesMatchRealCaptures first
//     checks them against CRCs the Linux kernel (rxe) and a real InfiniBand
//     capture put on the wire;
//   - layers, addresses, QPNs and PSNs are the ones the test asked synth
//     to build.

// ---- capture helpers ---------------------------------------------------

// capPacket is one record of a capture, copied out of the reader.
type capPacket struct {
	num    int
	lt     layers.LinkType
	data   []byte
	length int
	ts     time.Time
}

const pcapDir = "../testdata/pcaps"

// loadCapture reads a whole capture into memory.
func loadCapture(t testing.TB, path string) []capPacket {
	t.Helper()
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []capPacket
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, capPacket{num: rec.Number, lt: rec.LinkType, data: slices.Clone(rec.Data),
			length: rec.CI.Length, ts: rec.CI.Timestamp})
	}
}

// realCaptures lists every real capture of testdata/pcaps, public/ included.
func realCaptures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "public/*.pcap", "public/*.pcapng"} {
		m, err := filepath.Glob(filepath.Join(pcapDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 15 {
		t.Fatalf("found only %d real captures", len(out))
	}
	return out
}

// run processes frames through a new engine, one fresh Packet per frame
// so that the test can look at every one afterwards.
func run(t testing.TB, frames []synth.Frame) (*dissect.Engine, []*dissect.Packet) {
	t.Helper()
	e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
	var pkts []*dissect.Packet
	for i, f := range frames {
		p := &dissect.Packet{Number: i + 1, Timestamp: f.Time, LinkType: f.LinkType,
			CaptureLength: len(f.Data), Length: f.Length}
		e.Process(p, f.Data)
		pkts = append(pkts, p)
	}
	return e, pkts
}

func build(t testing.TB, o synth.Options, src, dst synth.Node, h roce.BTH, payload []byte) synth.Frame {
	t.Helper()
	f, err := synth.Build(o, src, dst, h, payload)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ---- CRC oracles -------------------------------------------------------

// icrcOracle computes the invariant CRC of pkt, which starts at the first
// header the ICRC covers (IP header for RoCEv2, GRH for RoCEv1, LRH for
// native IB), as IBA Vol 1 7.8.1 and Annexes A16/A17.3.3 define it:
// CRC-32 (the Ethernet polynomial, hash/crc32's IEEE table) over the packet
// up to the ICRC with the variant fields replaced by ones — LRH VL (the
// whole LRH when a GRH follows); GRH
// TClass, FlowLabel and HopLmt; IPv4 TOS, TTL and header checksum; IPv6
// traffic class, flow label and hop limit; the UDP checksum; BTH Resv8a —
// and, for RoCE, 8 bytes of ones standing for the LRH in front. It returns
// the CRC as roce represents it (the wire bytes read big-endian) and where
// the ICRC field starts.
func icrcOracle(t testing.TB, enc dissect.Encap, pkt []byte) (uint32, int) {
	t.Helper()
	be := binary.BigEndian
	var m []byte
	maskGRH := func(g []byte) {
		g[0] |= 0x0F // TClass high nibble
		g[1], g[2], g[3] = 0xFF, 0xFF, 0xFF
		g[7] = 0xFF // HopLmt
	}
	var end, bth int
	switch enc {
	case dissect.EncapRoCEv2:
		var udp int
		if pkt[0]>>4 == 4 {
			end = int(be.Uint16(pkt[2:]))
			m = slices.Clone(pkt[:end])
			udp = int(pkt[0]&0xF) * 4
			m[1], m[8], m[10], m[11] = 0xFF, 0xFF, 0xFF, 0xFF
		} else {
			end = 40 + int(be.Uint16(pkt[4:]))
			m = slices.Clone(pkt[:end])
			udp = 40
			maskGRH(m) // the IPv6 header's first 4 bytes and hop limit, as the GRH's
		}
		m[udp+6], m[udp+7] = 0xFF, 0xFF
		bth = udp + 8
		m = append(bytes.Repeat([]byte{0xFF}, 8), m...)
		bth += 8
	case dissect.EncapRoCEv1:
		end = 40 + int(be.Uint16(pkt[4:]))
		m = slices.Clone(pkt[:end])
		maskGRH(m)
		m = append(bytes.Repeat([]byte{0xFF}, 8), m...)
		bth = 8 + 40
	case dissect.EncapIB:
		end = int(be.Uint16(pkt[4:])&0x7FF) * 4
		m = slices.Clone(pkt[:end])
		m[0] |= 0xF0 // VL
		bth = 8
		if pkt[1]&3 == 3 {
			// With a GRH the whole LRH is variant (a router rewrites
			// it): all ones, as RoCEv1's stand-in is. The real ERF
			// capture's LRH+GRH packets agree.
			copy(m, bytes.Repeat([]byte{0xFF}, 8))
			maskGRH(m[8:])
			bth = 48
		}
	default:
		t.Fatalf("no ICRC for %v", enc)
	}
	m[bth+4] = 0xFF // Resv8a
	c := crc32.ChecksumIEEE(m[:len(m)-4])
	// The CRC goes on the wire least significant byte first.
	return bits.ReverseBytes32(c), end - 4
}

// vcrcOracle computes the VCRC of a native IB packet (IBA Vol 1 7.8.2): the
// CRC-16 with polynomial 0x100B over the LRH through the ICRC, bit-reflected
// with initial value 0xFFFF, result inverted and sent least significant
// byte first. It returns it as roce represents it and where it starts.
func vcrcOracle(pkt []byte) (uint16, int) {
	end := int(binary.BigEndian.Uint16(pkt[4:])&0x7FF) * 4
	c := uint16(0xFFFF)
	for _, x := range pkt[:end] {
		c ^= uint16(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008 // 0x100B reflected
			} else {
				c >>= 1
			}
		}
	}
	return bits.ReverseBytes16(^c), end
}

// TestCRCOraclesMatchRealCaptures checks the oracles against CRCs real
// senders computed: the Linux kernel's rxe (RoCEv2 over IPv4, Ethernet
// captures) and the native InfiniBand ERF capture (LRH, with and without
// GRH). Offsets are found without the dissector: 14 bytes of Ethernet, 16
// of ERF header (these captures have no VLAN tags and no ERF extensions).
func TestCRCOraclesMatchRealCaptures(t *testing.T) {
	checked := map[string]int{}
	for _, c := range []struct {
		file string
		enc  dissect.Encap
	}{
		{"rxe-rping.pcap", dissect.EncapRoCEv2},
		{"rxe-ib_write_bw.pcap", dissect.EncapRoCEv2},
		{"public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", dissect.EncapIB},
	} {
		for i, cp := range loadCapture(t, filepath.Join(pcapDir, c.file)) {
			if i > 400 {
				break
			}
			var pkt []byte
			switch c.enc {
			case dissect.EncapRoCEv2:
				if len(cp.data) < 14+20+8+12 || binary.BigEndian.Uint16(cp.data[12:]) != 0x0800 ||
					cp.data[14+9] != 17 || binary.BigEndian.Uint16(cp.data[14+22:]) != 4791 {
					continue
				}
				pkt = cp.data[14:]
			case dissect.EncapIB:
				if cp.data[8]&0x80 != 0 || cp.data[8]&0x7F != 21 {
					t.Fatalf("%s %d: unexpected ERF header", c.file, cp.num)
				}
				pkt = cp.data[16:]
				if lnh := pkt[1] & 3; lnh != 2 && lnh != 3 {
					continue // raw packets carry no ICRC
				}
				v, at := vcrcOracle(pkt)
				if got := binary.BigEndian.Uint16(pkt[at:]); got != v {
					t.Errorf("%s %d: VCRC oracle 0x%04x, wire 0x%04x", c.file, cp.num, v, got)
				}
				if pkt[1]&3 == 3 {
					checked["IB+GRH"]++
				}
			}
			want, at := icrcOracle(t, c.enc, pkt)
			if got := binary.BigEndian.Uint32(pkt[at:]); got != want {
				t.Errorf("%s %d: ICRC oracle 0x%08x, wire 0x%08x", c.file, cp.num, want, got)
			}
			checked[c.file]++
		}
	}
	for _, k := range []string{"rxe-rping.pcap", "rxe-ib_write_bw.pcap", "public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", "IB+GRH"} {
		if checked[k] < 5 {
			t.Errorf("%s: only %d packets checked", k, checked[k])
		}
	}
}

// ---- encapsulations and link types -------------------------------------

var (
	lEth   = layers.LayerTypeEthernet
	lVLAN  = layers.LayerTypeDot1Q
	lSLL   = layers.LayerTypeLinuxSLL
	lSLL2  = layers.LayerTypeLinuxSLL2
	lIPv4  = layers.LayerTypeIPv4
	lIPv6  = layers.LayerTypeIPv6
	lUDP   = layers.LayerTypeUDP
	lERF   = erf.LayerTypeERF
	lLRH   = roce.LayerTypeLRH
	lGRH   = roce.LayerTypeGRH
	lBTH   = roce.LayerTypeBTH
	v4     = [2]synth.Node{synth.Client(), synth.Server()}
	v6     = [2]synth.Node{synth.ClientV6(), synth.ServerV6()}
	gid    = [2]synth.Node{synth.ClientGID(), synth.ServerGID()}
	ibGlob = [2]synth.Node{synth.Client().WithIP("fe80::2"), synth.Server().WithIP("fe80::1")}
)

// encapCase is one way of carrying the same RC SEND_ONLY.
type encapCase struct {
	name     string
	o        synth.Options
	nodes    [2]synth.Node
	layers   []gopacket.LayerType
	src, dst string
	encap    dissect.Encap
	proto    string
	// ipAt is where the header the ICRC starts at begins in the frame.
	ipAt int
}

func encapCases() []encapCase {
	eth, sll, sll2, raw := synth.LinkEthernet, synth.LinkSLL, synth.LinkSLL2, synth.LinkRaw
	ib, erfLT := synth.LinkInfiniBand, synth.LinkERF
	return []encapCase{
		{"Ethernet/IPv4", synth.Options{LinkType: eth}, v4, []gopacket.LayerType{lEth, lIPv4, lUDP, lBTH},
			"192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 14},
		{"Ethernet/VLAN/IPv4", synth.Options{LinkType: eth, VLANs: []uint16{10}}, v4,
			[]gopacket.LayerType{lEth, lVLAN, lIPv4, lUDP, lBTH}, "192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 18},
		{"Ethernet/IPv6", synth.Options{LinkType: eth, TClass: 0xB8, FlowLabel: 0xFEDCB}, v6,
			[]gopacket.LayerType{lEth, lIPv6, lUDP, lBTH}, "2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 14},
		{"Ethernet/VLAN/IPv6", synth.Options{LinkType: eth, VLANs: []uint16{4094}}, v6,
			[]gopacket.LayerType{lEth, lVLAN, lIPv6, lUDP, lBTH}, "2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 18},
		{"Ethernet/QinQ/IPv4", synth.Options{LinkType: eth, VLANs: []uint16{100, 200}, TClass: 0x03, HopLimit: 3}, v4,
			[]gopacket.LayerType{lEth, lVLAN, lVLAN, lIPv4, lUDP, lBTH}, "192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 22},
		{"Ethernet/QinQ/IPv6", synth.Options{LinkType: eth, VLANs: []uint16{100, 200}, FlowLabel: 1}, v6,
			[]gopacket.LayerType{lEth, lVLAN, lVLAN, lIPv6, lUDP, lBTH}, "2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 22},
		{"Ethernet/RoCEv1", synth.Options{LinkType: eth, Encap: synth.RoCEv1, TClass: 0x20, FlowLabel: 0xABCDE}, gid,
			[]gopacket.LayerType{lEth, lGRH, lBTH}, "fe80::5054:ff:fe00:202", "fe80::5054:ff:fe00:201", dissect.EncapRoCEv1, "RoCEv1", 14},
		{"Ethernet/VLAN/RoCEv1", synth.Options{LinkType: eth, Encap: synth.RoCEv1, VLANs: []uint16{5}}, gid,
			[]gopacket.LayerType{lEth, lVLAN, lGRH, lBTH}, "fe80::5054:ff:fe00:202", "fe80::5054:ff:fe00:201", dissect.EncapRoCEv1, "RoCEv1", 18},
		{"SLL/IPv4", synth.Options{LinkType: sll}, v4, []gopacket.LayerType{lSLL, lIPv4, lUDP, lBTH},
			"192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 16},
		{"SLL/RoCEv1", synth.Options{LinkType: sll, Encap: synth.RoCEv1}, gid, []gopacket.LayerType{lSLL, lGRH, lBTH},
			"fe80::5054:ff:fe00:202", "fe80::5054:ff:fe00:201", dissect.EncapRoCEv1, "RoCEv1", 16},
		{"SLL2/IPv6", synth.Options{LinkType: sll2, Outgoing: true}, v6, []gopacket.LayerType{lSLL2, lIPv6, lUDP, lBTH},
			"2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 20},
		{"SLL2/IPv4", synth.Options{LinkType: sll2}, v4, []gopacket.LayerType{lSLL2, lIPv4, lUDP, lBTH},
			"192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 20},
		{"RAW/IPv4", synth.Options{LinkType: raw}, v4, []gopacket.LayerType{lIPv4, lUDP, lBTH},
			"192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 0},
		{"RAW/IPv6", synth.Options{LinkType: raw}, v6, []gopacket.LayerType{lIPv6, lUDP, lBTH},
			"2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 0},
		{"IPV4", synth.Options{LinkType: synth.LinkIPv4}, v4, []gopacket.LayerType{lIPv4, lUDP, lBTH},
			"192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 0},
		{"IPV6", synth.Options{LinkType: synth.LinkIPv6}, v6, []gopacket.LayerType{lIPv6, lUDP, lBTH},
			"2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 0},
		{"InfiniBand/LRH", synth.Options{LinkType: ib, Encap: synth.IBLocal, SL: 3, VL: 2}, v4,
			[]gopacket.LayerType{lLRH, lBTH}, "LID 2", "LID 1", dissect.EncapIB, "InfiniBand", 0},
		{"InfiniBand/LRH+GRH", synth.Options{LinkType: ib, Encap: synth.IBGlobal, VL: 7, TClass: 9, FlowLabel: 99}, ibGlob,
			[]gopacket.LayerType{lLRH, lGRH, lBTH}, "fe80::2", "fe80::1", dissect.EncapIB, "InfiniBand", 0},
		{"ERF21/LRH", synth.Options{LinkType: erfLT, Encap: synth.IBLocal}, v4,
			[]gopacket.LayerType{lERF, lLRH, lBTH}, "LID 2", "LID 1", dissect.EncapIB, "InfiniBand", 16},
		{"ERF21/LRH+GRH", synth.Options{LinkType: erfLT, Encap: synth.IBGlobal}, ibGlob,
			[]gopacket.LayerType{lERF, lLRH, lGRH, lBTH}, "fe80::2", "fe80::1", dissect.EncapIB, "InfiniBand", 16},
		{"ERF2/Ethernet/VLAN/IPv4", synth.Options{LinkType: erfLT, ERFType: erf.TypeEth, VLANs: []uint16{7}}, v4,
			[]gopacket.LayerType{lERF, lEth, lVLAN, lIPv4, lUDP, lBTH}, "192.0.2.2", "192.0.2.1", dissect.EncapRoCEv2, "RoCEv2", 16 + 2 + 18},
		{"ERF2/Ethernet/IPv6", synth.Options{LinkType: erfLT, ERFType: erf.TypeEth}, v6,
			[]gopacket.LayerType{lERF, lEth, lIPv6, lUDP, lBTH}, "2001:db8::2", "2001:db8::1", dissect.EncapRoCEv2, "RoCEv2", 16 + 2 + 14},
	}
}

// TestSyntheticEncapsulations decodes one RC SEND_ONLY (33 bytes of payload,
// so 3 bytes of pad) carried every way rdmashark reads: the layers, the
// addresses, the BTH and payload, and the ICRC (and VCRC) verdicts must be
// what was built.
func TestSyntheticEncapsulations(t *testing.T) {
	payload := bytes.Repeat([]byte("rdma"), 9)[:33]
	for _, c := range encapCases() {
		t.Run(c.name, func(t *testing.T) {
			h := synth.Send(roce.OpRCSendOnly, 0x000ABC, 0x123456)
			f := build(t, c.o, c.nodes[0], c.nodes[1], h, payload)
			e, pkts := run(t, []synth.Frame{f})
			p := pkts[0]
			if p.Err != nil {
				t.Fatalf("decoding error: %v", p.Err)
			}
			if !slices.Equal(p.Decoded, c.layers) {
				t.Errorf("layers %v, want %v", p.Decoded, c.layers)
			}
			if p.Encap != c.encap || fields.Protocol(p) != c.proto {
				t.Errorf("encap %v protocol %q, want %v %q", p.Encap, fields.Protocol(p), c.encap, c.proto)
			}
			if fields.Source(p) != c.src || fields.Destination(p) != c.dst {
				t.Errorf("%s → %s, want %s → %s", fields.Source(p), fields.Destination(p), c.src, c.dst)
			}
			b := &p.BTH
			if b.OpCode != roce.OpRCSendOnly || b.DestQP != 0xABC || b.PSN != 0x123456 || b.PKey != 0xFFFF ||
				!b.AckReq || b.PadCnt != 3 || !bytes.Equal(b.Payload, payload) {
				t.Errorf("BTH %v QP %#x PSN %#x PKey %#x A %v pad %d payload %q", b.OpCode, b.DestQP, b.PSN, b.PKey,
					b.AckReq, b.PadCnt, b.Payload)
			}
			if info := fields.Info(p); !strings.HasPrefix(info, "RC SEND_ONLY QP=0x000abc PSN=1193046 Payload=33") {
				t.Errorf("info %q", info)
			}
			want, at := icrcOracle(t, c.encap, f.Data[c.ipAt:])
			if binary.BigEndian.Uint32(f.Data[c.ipAt+at:]) != want {
				t.Fatalf("synth wrote an ICRC the oracle disagrees with")
			}
			if p.ICRC.Status != dissect.CRCGood || p.ICRC.Carried != want || p.ICRC.Computed != want {
				t.Errorf("ICRC %v carried %#x computed %#x, oracle %#x", p.ICRC.Status, p.ICRC.Carried, p.ICRC.Computed, want)
			}
			if c.encap == dissect.EncapIB {
				v, at := vcrcOracle(f.Data[c.ipAt:])
				if binary.BigEndian.Uint16(f.Data[c.ipAt+at:]) != v {
					t.Fatalf("synth wrote a VCRC the oracle disagrees with")
				}
				if p.VCRC.Status != dissect.CRCGood || p.VCRC.Carried != uint32(v) {
					t.Errorf("VCRC %v carried %#x, oracle %#x", p.VCRC.Status, p.VCRC.Carried, v)
				}
				if p.LRH.SL != c.o.SL || p.LRH.VL != c.o.VL || p.LRH.SLID != 2 || p.LRH.DLID != 1 {
					t.Errorf("LRH SL %d VL %d SLID %d DLID %d", p.LRH.SL, p.LRH.VL, p.LRH.SLID, p.LRH.DLID)
				}
			} else if p.VCRC.Status != dissect.CRCNotApplicable {
				t.Errorf("VCRC %v on a packet without one", p.VCRC.Status)
			}
			if c.o.Encap == synth.IBGlobal || c.o.Encap == synth.RoCEv1 {
				if p.GRH.TClass != c.o.TClass || p.GRH.FlowLabel != c.o.FlowLabel || p.GRH.NxtHdr != 0x1B {
					t.Errorf("GRH TClass %#x FlowLabel %#x NxtHdr %#x", p.GRH.TClass, p.GRH.FlowLabel, p.GRH.NxtHdr)
				}
			}
			for i, id := range c.o.VLANs {
				if p.VLAN[i].VLANIdentifier != id {
					t.Errorf("VLAN tag %d: ID %d, want %d", i, p.VLAN[i].VLANIdentifier, id)
				}
			}
			if e.Stats.ICRC[dissect.CRCGood] != 1 || e.Stats.Packets != 1 {
				t.Errorf("stats %+v", e.Stats)
			}
			// RC traffic without CM: one no-setup connection, this packet
			// client-to-server.
			if cs := e.Conns.Connections(); len(cs) != 1 || p.Conn != cs[0] || p.Dir != dissect.DirClientToServer ||
				cs[0].State != dissect.StateNoSetup || cs[0].Server.QPN != 0xABC {
				t.Errorf("connection tracking: %d connections, dir %v", len(cs), p.Dir)
			}
		})
	}
}

// TestSyntheticIPv6ICRCMasks changes only fields the ICRC must ignore
// (IPv6 traffic class, flow label, hop limit, UDP checksum, BTH FECN/BECN)
// and requires the same ICRC; changing a covered field (the PSN) must
// change it (Annex A17.3.3).
func TestSyntheticIPv6ICRCMasks(t *testing.T) {
	h := synth.Send(roce.OpRCSendOnly, 0x22, 77)
	base := build(t, synth.Options{}, v6[0], v6[1], h, []byte("abcd"))
	h2 := h
	h2.FECN, h2.BECN = true, true
	variant := build(t, synth.Options{TClass: 0xFF, FlowLabel: 0xFFFFF, HopLimit: 1}, v6[0], v6[1], h2, []byte("abcd"))
	h3 := h
	h3.PSN++
	covered := build(t, synth.Options{}, v6[0], v6[1], h3, []byte("abcd"))
	_, pkts := run(t, []synth.Frame{base, variant, covered})
	for _, p := range pkts {
		if p.ICRC.Status != dissect.CRCGood {
			t.Errorf("packet %d: ICRC %v", p.Number, p.ICRC.Status)
		}
		if !p.Has(lIPv6) {
			t.Fatalf("packet %d not IPv6", p.Number)
		}
	}
	if pkts[0].IPv6.TrafficClass == pkts[1].IPv6.TrafficClass || pkts[0].UDP.Checksum == pkts[1].UDP.Checksum {
		t.Fatal("the variant packet does not differ in the masked fields")
	}
	if pkts[0].ICRC.Carried != pkts[1].ICRC.Carried {
		t.Errorf("masked fields changed the ICRC: %#x vs %#x", pkts[0].ICRC.Carried, pkts[1].ICRC.Carried)
	}
	if pkts[0].ICRC.Carried == pkts[2].ICRC.Carried {
		t.Errorf("a different PSN gave the same ICRC %#x", pkts[0].ICRC.Carried)
	}
}

// TestSyntheticERFInfiniBandLink: an ERF type 25 record holds an IB link
// packet (flow control, IBA Vol 1 7.9.4), not a transport packet: the ERF
// header is decoded, nothing else, and it is not an error.
func TestSyntheticERFInfiniBandLink(t *testing.T) {
	fc := synth.FlowControlPacket(1, 3, 0x123, 0x456)
	// Op 1 (init) FCTBS 0x123, VL 3 FCCL 0x456.
	if !bytes.Equal(fc[:4], []byte{0x11, 0x23, 0x34, 0x56}) {
		t.Fatalf("flow control packet % x", fc)
	}
	f, err := synth.ERFRecord(erf.TypeInfiniBandLink, fc)
	if err != nil {
		t.Fatal(err)
	}
	e, pkts := run(t, []synth.Frame{f})
	p := pkts[0]
	if p.Err != nil || !slices.Equal(p.Decoded, []gopacket.LayerType{lERF}) || p.ERF.Type != erf.TypeInfiniBandLink {
		t.Errorf("decoded %v type %v err %v", p.Decoded, p.ERF.Type, p.Err)
	}
	if p.ICRC.Status != dissect.CRCNotApplicable || len(e.Conns.Connections()) != 0 {
		t.Errorf("ICRC %v, %d connections", p.ICRC.Status, len(e.Conns.Connections()))
	}
	if p.Length != 6 || p.CaptureLength != 6 {
		t.Errorf("ERF wire length %d captured %d, want the 6-byte link packet", p.Length, p.CaptureLength)
	}
}

// ---- damaged frames ----------------------------------------------------

// TestSyntheticBadCRC corrupts one bit of the ICRC (or the VCRC) and
// requires the verdict "bad" for that CRC only, counted in the stats and
// shown in the summary line.
func TestSyntheticBadCRC(t *testing.T) {
	h := synth.Send(roce.OpRCSendOnly, 0x22, 5)
	for _, c := range encapCases() {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.CorruptICRC = true
			good := build(t, c.o, c.nodes[0], c.nodes[1], h, []byte("payload"))
			bad := build(t, o, c.nodes[0], c.nodes[1], h, []byte("payload"))
			e, pkts := run(t, []synth.Frame{good, bad})
			p := pkts[1]
			want, _ := icrcOracle(t, c.encap, good.Data[c.ipAt:])
			if p.ICRC.Status != dissect.CRCBad || p.ICRC.Computed != want || p.ICRC.Carried != want^1 {
				t.Errorf("ICRC %v carried %#x computed %#x, want bad, computed %#x", p.ICRC.Status, p.ICRC.Carried, p.ICRC.Computed, want)
			}
			if e.Stats.ICRC[dissect.CRCBad] != 1 || e.Stats.ICRC[dissect.CRCGood] != 1 {
				t.Errorf("ICRC counts %v", e.Stats.ICRC)
			}
			if !strings.Contains(fields.Info(p), "[ICRC bad]") || strings.Contains(fields.Info(pkts[0]), "ICRC") {
				t.Errorf("info %q / %q", fields.Info(p), fields.Info(pkts[0]))
			}
			if c.encap == dissect.EncapIB && p.VCRC.Status != dissect.CRCGood {
				t.Errorf("VCRC %v: synth recomputes it over the corrupted ICRC", p.VCRC.Status)
			}
		})
	}
	o := synth.Options{LinkType: synth.LinkInfiniBand, Encap: synth.IBLocal, CorruptVCRC: true}
	e, pkts := run(t, []synth.Frame{build(t, o, v4[0], v4[1], h, nil)})
	if p := pkts[0]; p.VCRC.Status != dissect.CRCBad || p.ICRC.Status != dissect.CRCGood || !strings.Contains(fields.Info(p), "[VCRC bad]") {
		t.Errorf("VCRC %v ICRC %v info %q", p.VCRC.Status, p.ICRC.Status, fields.Info(p))
	}
	if e.Stats.VCRC[dissect.CRCBad] != 1 {
		t.Errorf("VCRC counts %v", e.Stats.VCRC)
	}
}

// TestSyntheticSnapLength cuts frames by a snap length: a cut after the
// transport headers leaves the ICRC "not verifiable (truncated)", never
// "bad"; the wire length stays whole.
func TestSyntheticSnapLength(t *testing.T) {
	h := synth.Write(roce.OpRCRDMAWriteOnly, 0x22, 12, 0x1000, 0xabcd, 1000)
	payload := bytes.Repeat([]byte{0x5A}, 1000)
	for _, c := range encapCases() {
		t.Run(c.name, func(t *testing.T) {
			whole := build(t, c.o, c.nodes[0], c.nodes[1], h, payload)
			var frames []synth.Frame
			// Cut in the payload, in the pad+ICRC (3 bytes short), and
			// (IB) between ICRC and VCRC.
			cuts := []int{len(whole.Data) - 900, len(whole.Data) - 3}
			if c.encap == dissect.EncapIB {
				cuts = append(cuts, len(whole.Data)-2)
			}
			for _, n := range cuts {
				o := c.o
				o.Snap = n
				frames = append(frames, build(t, o, c.nodes[0], c.nodes[1], h, payload))
			}
			e, pkts := run(t, frames)
			for i, p := range pkts {
				// ERF: the engine takes the lengths of the packet after
				// the record header (and the Ethernet types' 2-byte pad),
				// the wire length from the header's WLen.
				hdr := 0
				if c.o.LinkType == synth.LinkERF {
					hdr = 16
					if c.encap != dissect.EncapIB {
						hdr += 2
					}
				}
				if p.Length != whole.Length-hdr || p.CaptureLength != cuts[i]-hdr {
					t.Errorf("cut %d: length %d captured %d, want %d %d", cuts[i], p.Length, p.CaptureLength,
						whole.Length-hdr, cuts[i]-hdr)
				}
				if !p.Has(lBTH) || !p.BTH.Has(roce.ExtRETH) || p.BTH.RETH.DMALen != 1000 {
					t.Errorf("cut %d: BTH/RETH not decoded: %v %v", cuts[i], p.Decoded, p.Err)
				}
				last := c.encap == dissect.EncapIB && i == 2
				if last {
					// Only the VCRC is missing: the ICRC is whole.
					if p.ICRC.Status != dissect.CRCGood || p.VCRC.Status != dissect.CRCTruncated {
						t.Errorf("cut before VCRC: ICRC %v VCRC %v", p.ICRC.Status, p.VCRC.Status)
					}
					continue
				}
				if p.ICRC.Status != dissect.CRCTruncated || p.ICRC.Status.String() != "not verifiable (truncated)" {
					t.Errorf("cut %d: ICRC %q, want not verifiable", cuts[i], p.ICRC.Status)
				}
				if !strings.Contains(fields.Info(p), "[ICRC not verifiable (truncated)]") {
					t.Errorf("cut %d: info %q", cuts[i], fields.Info(p))
				}
			}
			if e.Stats.ICRC[dissect.CRCBad] != 0 {
				t.Errorf("a cut frame counted as a bad ICRC: %v", e.Stats.ICRC)
			}
		})
	}
}

// TestSyntheticCutInHeaders: frames cut inside the headers are malformed,
// never a bad ICRC, and do not stop the engine.
func TestSyntheticCutInHeaders(t *testing.T) {
	h := synth.Write(roce.OpRCRDMAWriteOnly, 0x22, 12, 0x1000, 0xabcd, 100)
	for _, c := range encapCases() {
		whole := build(t, c.o, c.nodes[0], c.nodes[1], h, make([]byte, 100))
		var frames []synth.Frame
		for n := 1; n < len(whole.Data)-100; n += 3 {
			o := c.o
			o.Snap = n
			frames = append(frames, build(t, o, c.nodes[0], c.nodes[1], h, make([]byte, 100)))
		}
		e, _ := run(t, frames)
		if e.Stats.ICRC[dissect.CRCBad] != 0 || e.Stats.ICRC[dissect.CRCGood] != 0 || e.Stats.Packets != uint64(len(frames)) {
			t.Errorf("%s: stats %+v", c.name, e.Stats)
		}
	}
}

// ---- the committed corpus ----------------------------------------------

// TestSyntheticCorpusIsReproducible: the files under
// testdata/pcaps/synthetic are exactly what go run ./testdata/synthetic
// writes.
func TestSyntheticCorpusIsReproducible(t *testing.T) {
	files, err := synth.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", synth.CorpusDir)
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s differs from what the generator builds: run go run ./testdata/synthetic", f.Name)
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readme, synth.README(files)) {
		t.Error("README.md differs from what the generator writes")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files)+1 {
		t.Errorf("%d entries in %s, the generator writes %d", len(entries), dir, len(files)+1)
	}
}

// TestSyntheticCorpusThroughEngine reads every corpus file from disk through
// source and the engine: every packet decodes without error, and the CRC
// verdicts are good except on the frames built damaged.
func TestSyntheticCorpusThroughEngine(t *testing.T) {
	files, err := synth.Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			r, err := source.Open(filepath.Join("..", synth.CorpusDir, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			e := dissect.NewEngine(dissect.Options{ULPs: rpcULPs(nil)})
			var badICRC, badVCRC, cut []int
			err = e.Run(r, func(p *dissect.Packet) error {
				if p.Err != nil {
					t.Errorf("packet %d: %v", p.Number, p.Err)
				}
				switch p.ICRC.Status {
				case dissect.CRCBad:
					badICRC = append(badICRC, p.Number)
				case dissect.CRCTruncated:
					cut = append(cut, p.Number)
				case dissect.CRCNotApplicable:
					if p.Has(lBTH) {
						t.Errorf("packet %d: BTH without ICRC verdict", p.Number)
					}
				}
				if p.VCRC.Status == dissect.CRCBad {
					badVCRC = append(badVCRC, p.Number)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if e.Stats.Packets != uint64(f.Packets) {
				t.Errorf("%d packets, built %d", e.Stats.Packets, f.Packets)
			}
			if !slices.Equal(badICRC, f.BadICRC) || !slices.Equal(badVCRC, f.BadVCRC) || !slices.Equal(cut, f.Cut) {
				t.Errorf("bad ICRC %v VCRC %v cut %v; built %v %v %v", badICRC, badVCRC, cut, f.BadICRC, f.BadVCRC, f.Cut)
			}
		})
	}
}
