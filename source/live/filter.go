package live

import (
	"fmt"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// A Filter selects the frames a capture keeps. It is a list of terms, any
// of which keeps a frame, written (and parsed by ParseFilter) as
//
//	filter = term { "," term }
//	term   = "udp" PORT | "tcp" PORT | "ether" ETHERTYPE | "all"
//
// "udp 4791" keeps UDP datagrams from or to port 4791 over IPv4 or IPv6;
// "tcp 20049" the same for TCP segments; "ether 0x8915" frames of that
// EtherType (decimal or 0x-hex); "all" keeps every frame and stands alone.
// Every term also matches frames carrying one or two VLAN tags (802.1Q
// 0x8100, 802.1ad 0x88a8, or the older 0x9100) in front of the EtherType.
// IPv4 fragments after the first (which carry no ports) and IPv6 packets
// whose UDP or TCP header follows extension headers are not kept.
//
// ParseFilter also reads pcap-filter expressions as tcpdump users type
// them ("udp port 4791 or tcp port 20049", pcapfilter.go); such a Filter
// has no Terms and compiles its expression.
type Filter struct {
	Terms []Term
	expr  *pcapExpr
}

// IsZero reports whether the filter is unset (Config then uses
// DefaultFilter).
func (f Filter) IsZero() bool { return len(f.Terms) == 0 && f.expr == nil }

// PcapFilter reports whether the filter is a pcap-filter expression.
func (f Filter) PcapFilter() bool { return f.expr != nil }

// TermKind is what a Term matches on.
type TermKind uint8

const (
	TermAll   TermKind = iota // every frame
	TermUDP                   // UDP source or destination port
	TermTCP                   // TCP source or destination port
	TermEther                 // EtherType
)

func (k TermKind) String() string {
	switch k {
	case TermAll:
		return "all"
	case TermUDP:
		return "udp"
	case TermTCP:
		return "tcp"
	case TermEther:
		return "ether"
	}
	return "?"
}

// Term is one alternative of a Filter.
type Term struct {
	Kind TermKind
	// Value is the port (TermUDP, TermTCP) or the EtherType (TermEther).
	Value uint16
}

func (t Term) String() string {
	switch t.Kind {
	case TermAll:
		return "all"
	case TermEther:
		return fmt.Sprintf("ether 0x%04x", t.Value)
	}
	return fmt.Sprintf("%s %d", t.Kind, t.Value)
}

// Well-known values of the default filter.
const (
	EtherTypeRoCEv1 = uint16(roce.EthernetTypeRoCEv1) // RoCEv1: GRH directly on Ethernet (IBTA Annex A16)
	PortRoCEv2      = uint16(roce.UDPPortRoCEv2)      // RoCEv2 UDP destination port (IBTA Annex A17)
	PortNFSRDMA     = nfs.RDMAPort                    // NFS over RDMA (RFC 8267 section 6.1, IANA "nfsrdma")
)

// DefaultFilter keeps RoCEv2 (UDP to or from rocePort), RoCEv1 (EtherType
// 0x8915) and iWARP on the TCP ports of the upper-layer protocols analysed
// (tcpPorts: the registered ULPs' ports; none given, NFS over RDMA's
// 20049).
func DefaultFilter(rocePort uint16, tcpPorts ...uint16) Filter {
	if rocePort == 0 {
		rocePort = PortRoCEv2
	}
	if len(tcpPorts) == 0 {
		tcpPorts = []uint16{PortNFSRDMA}
	}
	f := Filter{Terms: []Term{
		{TermUDP, rocePort},
		{TermEther, EtherTypeRoCEv1},
	}}
	for _, p := range tcpPorts {
		f.Terms = append(f.Terms, Term{TermTCP, p})
	}
	return f
}

// String writes the filter in the syntax ParseFilter reads.
func (f Filter) String() string {
	if f.expr != nil {
		return f.expr.src
	}
	s := make([]string, len(f.Terms))
	for i, t := range f.Terms {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// All reports whether the filter keeps every frame.
func (f Filter) All() bool {
	return f.expr == nil && len(f.Terms) == 1 && f.Terms[0].Kind == TermAll
}

// ParseFilter reads a filter in the syntax of Filter, or else as a
// pcap-filter expression. Keywords are case-insensitive; spaces around
// commas do not matter.
func ParseFilter(s string) (Filter, error) {
	f, err := parseTerms(s)
	if err == nil {
		return f, nil
	}
	if strings.Contains(s, ",") && !strings.ContainsAny(s, "()") {
		return Filter{}, err // the term list syntax
	}
	e, perr := parsePcapFilter(s)
	if perr != nil {
		if !pcapLike(s) {
			return Filter{}, err
		}
		return Filter{}, perr
	}
	return Filter{expr: e}, nil
}

// pcapLike: the filter uses a word only pcap-filter has, so its error is
// the one to report.
func pcapLike(s string) bool {
	for _, t := range tokenize(s) {
		switch strings.ToLower(t) {
		case "port", "portrange", "host", "net", "proto", "and", "or", "not", "src", "dst",
			"vlan", "less", "greater", "!", "&&", "||", "(", ")":
			return true
		}
	}
	return false
}

func parseTerms(s string) (Filter, error) {
	var f Filter
	if strings.TrimSpace(s) == "" {
		return f, fmt.Errorf("empty filter: give terms like \"udp 4791,tcp 20049,ether 0x8915\" or \"all\"")
	}
	for _, raw := range strings.Split(s, ",") {
		words := strings.Fields(raw)
		if len(words) == 0 {
			return Filter{}, fmt.Errorf("filter %q: empty term between commas", s)
		}
		kw := strings.ToLower(words[0])
		switch kw {
		case "all":
			if len(words) != 1 {
				return Filter{}, fmt.Errorf("filter %q: \"all\" takes no value", s)
			}
			f.Terms = append(f.Terms, Term{Kind: TermAll})
			continue
		case "udp", "tcp", "ether":
		default:
			return Filter{}, fmt.Errorf("filter %q: unknown term %q (want udp PORT, tcp PORT, ether TYPE or all)", s, words[0])
		}
		if len(words) != 2 {
			return Filter{}, fmt.Errorf("filter %q: %q takes exactly one value, as in \"%s %s\"", s, kw, kw, example(kw))
		}
		v, err := strconv.ParseUint(words[1], 0, 16)
		if err != nil {
			return Filter{}, fmt.Errorf("filter %q: %s value %q is not a number from 0 to 65535", s, kw, words[1])
		}
		t := Term{Value: uint16(v)}
		switch kw {
		case "udp":
			t.Kind = TermUDP
		case "tcp":
			t.Kind = TermTCP
		case "ether":
			t.Kind = TermEther
			if v < 0x0600 {
				// IEEE 802.3 clause 3.2.6: values below 1536 are lengths.
				return Filter{}, fmt.Errorf("filter %q: EtherType %s is below 0x0600 (a length, not a type)", s, words[1])
			}
		}
		if t.Kind != TermEther && v == 0 {
			return Filter{}, fmt.Errorf("filter %q: port 0 matches nothing", s)
		}
		f.Terms = append(f.Terms, t)
	}
	if len(f.Terms) > 1 {
		for _, t := range f.Terms {
			if t.Kind == TermAll {
				return Filter{}, fmt.Errorf("filter %q: \"all\" stands alone", s)
			}
		}
	}
	if n := len(f.Terms); n > maxTerms {
		return Filter{}, fmt.Errorf("filter %q: %d terms, at most %d", s, n, maxTerms)
	}
	return f, nil
}

// maxTerms keeps every jump of the compiled program within the 255
// instructions a conditional jump of classic BPF can skip.
const maxTerms = 64

func example(kw string) string {
	switch kw {
	case "udp":
		return "4791"
	case "tcp":
		return "20049"
	}
	return "0x8915"
}

// Offsets in an untagged Ethernet frame (IEEE 802.3 clause 3.1.1).
const (
	offEtherType = 12
	lenEthernet  = 14
	lenVLANTag   = 4
)

// Instructions compiles the filter to a classic BPF program that returns
// snaplen for a frame it keeps and 0 for one it drops; the kernel keeps at
// most snaplen bytes of a frame, so the program also sets the snap length.
// The program reads the frame from its Ethernet header.
//
// Register use: X holds the bytes of VLAN tags in front of the EtherType
// (0, 4 or 8), later the offset of the UDP/TCP header minus 14; scratch
// M[0] holds the IP protocol while X is recomputed.
func (f Filter) Instructions(snaplen uint32) ([]bpf.Instruction, error) {
	if snaplen == 0 {
		return nil, fmt.Errorf("snap length 0")
	}
	if f.expr != nil {
		return f.expr.compile(snaplen)
	}
	if len(f.Terms) == 0 {
		return nil, fmt.Errorf("empty filter")
	}
	if f.All() {
		return []bpf.Instruction{bpf.RetConstant{Val: snaplen}}, nil
	}
	var (
		a                 assembler
		ethers, udp, tcp  []uint16
		vlanTypes         = []uint32{0x8100, 0x88a8, 0x9100}
		haveIP            bool
		accept, dropLabel = "accept", "drop"
	)
	for _, t := range f.Terms {
		switch t.Kind {
		case TermEther:
			ethers = append(ethers, t.Value)
		case TermUDP:
			udp = append(udp, t.Value)
		case TermTCP:
			tcp = append(tcp, t.Value)
		case TermAll:
			return nil, fmt.Errorf("\"all\" stands alone")
		}
	}
	haveIP = len(udp)+len(tcp) > 0

	// Find the EtherType behind up to two VLAN tags.
	a.op(bpf.LoadConstant{Dst: bpf.RegX, Val: 0})
	a.op(bpf.LoadAbsolute{Off: offEtherType, Size: 2})
	for _, v := range vlanTypes {
		a.jeq(v, "tag1", "")
	}
	a.ja("type")
	a.label("tag1")
	a.op(bpf.LoadConstant{Dst: bpf.RegX, Val: lenVLANTag})
	a.op(bpf.LoadAbsolute{Off: offEtherType + lenVLANTag, Size: 2})
	for _, v := range vlanTypes {
		a.jeq(v, "tag2", "")
	}
	a.ja("type")
	a.label("tag2")
	a.op(bpf.LoadConstant{Dst: bpf.RegX, Val: 2 * lenVLANTag})
	a.op(bpf.LoadAbsolute{Off: offEtherType + 2*lenVLANTag, Size: 2})

	// A = EtherType, X = tag bytes.
	a.label("type")
	for _, e := range ethers {
		a.jeq(uint32(e), accept, "")
	}
	if !haveIP {
		a.ja(dropLabel)
	} else {
		a.jeq(0x0800, "ipv4", "")
		a.jeq(0x86dd, "ipv6", "")
		a.ja(dropLabel)

		// IPv4 (RFC 791 section 3.1): protocol at 9, flags and fragment
		// offset at 6, IHL in the low nibble of byte 0.
		a.label("ipv4")
		a.op(bpf.LoadIndirect{Off: lenEthernet + 6, Size: 2})
		a.jset(0x1fff, dropLabel, "") // a later fragment: no ports in it
		a.op(bpf.LoadIndirect{Off: lenEthernet + 9, Size: 1})
		a.op(bpf.StoreScratch{Src: bpf.RegA, N: 0})
		a.op(bpf.LoadIndirect{Off: lenEthernet, Size: 1})
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0x0f})
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpShiftLeft, Val: 2})
		a.op(bpf.ALUOpX{Op: bpf.ALUOpAdd})
		a.op(bpf.TAX{})
		a.op(bpf.LoadScratch{Dst: bpf.RegA, N: 0})
		a.ja("l4")

		// IPv6 (RFC 8200 section 3): next header at 6, fixed header 40 bytes.
		a.label("ipv6")
		a.op(bpf.LoadIndirect{Off: lenEthernet + 6, Size: 1})
		a.op(bpf.StoreScratch{Src: bpf.RegA, N: 0})
		a.op(bpf.TXA{})
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAdd, Val: 40})
		a.op(bpf.TAX{})
		a.op(bpf.LoadScratch{Dst: bpf.RegA, N: 0})

		// A = IP protocol, X + 14 = offset of the UDP/TCP header, whose
		// source port is at 0 and destination port at 2 (RFC 768, RFC 9293).
		a.label("l4")
		if len(udp) > 0 {
			a.jeq(17, "udp", "")
		}
		if len(tcp) > 0 {
			a.jeq(6, "tcp", "")
		}
		a.ja(dropLabel)
		for _, l4 := range []struct {
			name  string
			ports []uint16
		}{{"udp", udp}, {"tcp", tcp}} {
			if len(l4.ports) == 0 {
				continue
			}
			a.label(l4.name)
			a.op(bpf.LoadIndirect{Off: lenEthernet, Size: 2})
			for _, p := range l4.ports {
				a.jeq(uint32(p), accept, "")
			}
			a.op(bpf.LoadIndirect{Off: lenEthernet + 2, Size: 2})
			for _, p := range l4.ports {
				a.jeq(uint32(p), accept, "")
			}
			a.ja(dropLabel)
		}
	}
	a.label(dropLabel)
	a.op(bpf.RetConstant{Val: 0})
	a.label(accept)
	a.op(bpf.RetConstant{Val: snaplen})
	return a.resolve()
}

// Compile assembles Instructions for the kernel.
func (f Filter) Compile(snaplen uint32) ([]bpf.RawInstruction, error) {
	ins, err := f.Instructions(snaplen)
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(ins)
}

// assembler resolves named jump targets into classic BPF's relative skips.
type assembler struct {
	ins    []asmIns
	labels map[string]int
}

type asmIns struct {
	op       bpf.Instruction
	jt, jf   string // conditional targets ("" = next instruction)
	ja       string // unconditional target
	cond     bpf.JumpTest
	val      uint32
	isJumpIf bool
}

func (a *assembler) op(i bpf.Instruction) { a.ins = append(a.ins, asmIns{op: i}) }

func (a *assembler) jeq(v uint32, jt, jf string) {
	a.ins = append(a.ins, asmIns{isJumpIf: true, cond: bpf.JumpEqual, val: v, jt: jt, jf: jf})
}

func (a *assembler) jset(v uint32, jt, jf string) {
	a.ins = append(a.ins, asmIns{isJumpIf: true, cond: bpf.JumpBitsSet, val: v, jt: jt, jf: jf})
}

func (a *assembler) ja(l string) { a.ins = append(a.ins, asmIns{ja: l}) }

func (a *assembler) label(l string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[l] = len(a.ins)
}

func (a *assembler) skip(from int, l string) (uint32, error) {
	if l == "" {
		return 0, nil
	}
	to, ok := a.labels[l]
	if !ok {
		return 0, fmt.Errorf("bpf: no label %q", l)
	}
	if to <= from {
		return 0, fmt.Errorf("bpf: backward jump to %q", l)
	}
	return uint32(to - from - 1), nil
}

func (a *assembler) resolve() ([]bpf.Instruction, error) {
	out := make([]bpf.Instruction, len(a.ins))
	for i, in := range a.ins {
		switch {
		case in.isJumpIf:
			t, err := a.skip(i, in.jt)
			if err != nil {
				return nil, err
			}
			f, err := a.skip(i, in.jf)
			if err != nil {
				return nil, err
			}
			if t > 255 || f > 255 {
				return nil, fmt.Errorf("bpf: filter too long for a conditional jump")
			}
			out[i] = bpf.JumpIf{Cond: in.cond, Val: in.val, SkipTrue: uint8(t), SkipFalse: uint8(f)}
		case in.ja != "":
			s, err := a.skip(i, in.ja)
			if err != nil {
				return nil, err
			}
			out[i] = bpf.Jump{Skip: s}
		default:
			out[i] = in.op
		}
	}
	return out, nil
}
