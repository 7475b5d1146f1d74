package live

import (
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// pcap-filter expressions, as tcpdump users type them after -f:
//
//	udp port 4791 or tcp port 20049
//	host 192.0.2.1 and not arp
//	vlan 100 and src net 192.0.2.0/24 and udp dst portrange 4791-4792
//
// compiled to classic BPF for Ethernet frames without libpcap. The subset
// (the pcap-filter(7) manual page's meanings, checked against tcpdump's
// own programs on the real captures, pcapfilter_test.go):
//
//	[ip|ip6|arp|rarp|ether] [src|dst|src or dst|src and dst] host ADDR
//	[ip|ip6] [src|dst|...] net ADDR/LEN   (or net ADDR, a host's /32 or /128)
//	[tcp|udp|sctp] [src|dst|...] port N, portrange N-M
//	ether [src|dst] host MAC, ether proto N|ip|ip6|arp|rarp
//	ip, ip6, arp, rarp, tcp, udp, sctp, icmp
//	ip proto N|tcp|udp|sctp|icmp, ip6 proto N, proto N
//	vlan [ID]   (and everything after it looks behind the tag, as in libpcap)
//	less N, greater N
//	and, &&, or, ||, not, !, parentheses; a bare value repeats the
//	qualifiers before it (tcp dst port 20049 or 2049)
//
// Host names and service names are not resolved: give addresses and
// numbers.

// pcapExpr is a compiled pcap-filter expression.
type pcapExpr struct {
	src  string
	root pnode
}

// pnode is a node of the expression: a boolean combination of tests.
type pnode interface{}

type (
	pAnd  struct{ a, b pnode }
	pOr   struct{ a, b pnode }
	pNot  struct{ a pnode }
	pTrue struct{}
	// pTest loads a value and compares it: A = load & mask; A op val.
	pTest struct {
		kind loadKind
		off  uint32 // from the start of the frame (ldAbs), or of the IPv4 header's end minus 14 (ldInd4)
		size int    // 1, 2 or 4
		mask uint32 // 0: none
		op   bpf.JumpTest
		val  uint32
		// ihl is the offset of the IPv4 header whose length X takes
		// (ldInd4).
		ihl uint32
	}
)

type loadKind uint8

const (
	ldAbs  loadKind = iota
	ldInd4          // behind the IPv4 header: X = 4*(frame[ihl]&0xf)
	ldLen           // the frame's length
)

func and(a, b pnode) pnode { return pAnd{a, b} }
func or(a, b pnode) pnode  { return pOr{a, b} }
func ors(ns ...pnode) pnode {
	n := ns[0]
	for _, m := range ns[1:] {
		n = or(n, m)
	}
	return n
}
func eq(off uint32, size int, val uint32) pnode {
	return pTest{kind: ldAbs, off: off, size: size, op: bpf.JumpEqual, val: val}
}

// qualifiers of a primitive (pcap-filter(7): type, dir, proto).
type pqual struct {
	proto string // "", ether, ip, ip6, arp, rarp, tcp, udp, sctp
	dir   string // "", src, dst, "src or dst", "src and dst"
	typ   string // host, net, port, portrange
}

type pparser struct {
	toks []string
	i    int
	src  string
	// link is the offset of the EtherType field's end minus 14: 0, then
	// 4 more after each "vlan".
	link uint32
	last *pqual
}

// parsePcapFilter parses and checks a pcap-filter expression.
func parsePcapFilter(s string) (*pcapExpr, error) {
	p := &pparser{toks: tokenize(s), src: s}
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("empty filter")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, p.errf("unexpected %q", p.toks[p.i])
	}
	return &pcapExpr{src: s, root: n}, nil
}

func tokenize(s string) []string {
	var out []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '(' || c == ')':
			flush()
			out = append(out, string(c))
		case c == '!' && (i+1 >= len(s) || s[i+1] != '='):
			flush()
			out = append(out, "!")
		case (c == '&' || c == '|') && i+1 < len(s) && s[i+1] == c:
			flush()
			out = append(out, s[i:i+2])
			i++
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

func (p *pparser) errf(format string, a ...any) error {
	return fmt.Errorf("filter %q: %s", p.src, fmt.Sprintf(format, a...))
}

func (p *pparser) peek() string {
	if p.i < len(p.toks) {
		return strings.ToLower(p.toks[p.i])
	}
	return ""
}

func (p *pparser) next() string {
	t := p.peek()
	p.i++
	return t
}

func (p *pparser) or() (pnode, error) {
	n, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "or" || p.peek() == "||" {
		p.i++
		m, err := p.and()
		if err != nil {
			return nil, err
		}
		n = or(n, m)
	}
	return n, nil
}

func (p *pparser) and() (pnode, error) {
	n, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peek() == "and" || p.peek() == "&&" {
		p.i++
		m, err := p.not()
		if err != nil {
			return nil, err
		}
		n = and(n, m)
	}
	return n, nil
}

func (p *pparser) not() (pnode, error) {
	if p.peek() == "not" || p.peek() == "!" {
		p.i++
		n, err := p.not()
		if err != nil {
			return nil, err
		}
		return pNot{n}, nil
	}
	return p.primary()
}

var protoNames = map[string]bool{"ether": true, "ip": true, "ip6": true, "arp": true, "rarp": true, "tcp": true, "udp": true, "sctp": true}

var ipProtos = map[string]uint32{"icmp": 1, "tcp": 6, "udp": 17, "sctp": 132}

func (p *pparser) primary() (pnode, error) {
	t := p.peek()
	switch t {
	case "":
		return nil, p.errf("expression ends where a primitive was expected")
	case "(":
		p.i++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.next() != ")" {
			return nil, p.errf("missing )")
		}
		return n, nil
	case ")":
		return nil, p.errf("unexpected )")
	case "vlan":
		p.i++
		tag := p.link + 12
		n := ors(eq(tag, 2, 0x8100), eq(tag, 2, 0x88a8), eq(tag, 2, 0x9100))
		if v := p.peek(); v != "" && isNumber(v) {
			p.i++
			id, err := p.number(v, 0xfff)
			if err != nil {
				return nil, err
			}
			n = and(n, pTest{kind: ldAbs, off: tag + 2, size: 2, mask: 0xfff, op: bpf.JumpEqual, val: id})
		}
		p.link += 4
		return n, nil
	case "less", "greater":
		p.i++
		v, err := p.number(p.next(), 0xffffffff)
		if err != nil {
			return nil, err
		}
		if t == "less" { // len <= N
			return pNot{pTest{kind: ldLen, op: bpf.JumpGreaterThan, val: v}}, nil
		}
		return pTest{kind: ldLen, op: bpf.JumpGreaterOrEqual, val: v}, nil
	case "icmp":
		p.i++
		return p.ipProto4(1), nil
	case "proto":
		p.i++
		v, err := p.protoValue(p.next())
		if err != nil {
			return nil, err
		}
		return or(p.ipProto4(v), p.ipProto6(v)), nil
	}
	q := pqual{}
	explicit := false
	if protoNames[t] {
		q.proto = t
		p.i++
		explicit = true
		switch p.peek() {
		case "proto":
			p.i++
			return p.protoOf(q.proto)
		case "broadcast", "multicast":
			return nil, p.errf("%s %s is not supported", t, p.peek())
		}
	}
	switch p.peek() {
	case "src", "dst":
		q.dir = p.next()
		if (p.peek() == "or" || p.peek() == "and") && p.i+1 < len(p.toks) {
			if o := strings.ToLower(p.toks[p.i+1]); o == "src" || o == "dst" {
				q.dir = "src " + p.next() + " dst"
				p.i++
			}
		}
		explicit = true
	}
	switch p.peek() {
	case "host", "net", "port", "portrange":
		q.typ = p.next()
		explicit = true
	}
	if !explicit {
		// A bare value: the qualifiers of the primitive before it.
		if p.last == nil {
			return nil, p.errf("%q: a value needs a qualifier (host, net, port, …) the first time", p.toks[p.i])
		}
		q = *p.last
	}
	if q.typ == "" {
		if q.dir != "" {
			q.typ = "host"
		} else {
			// "tcp", "ip6", "arp": the protocol alone.
			return p.protoAlone(q.proto)
		}
	}
	if p.i >= len(p.toks) {
		return nil, p.errf("%s needs a value", q.typ)
	}
	val := p.toks[p.i]
	p.i++
	qq := q
	p.last = &qq
	switch q.typ {
	case "host", "net":
		return p.hostNet(q, val)
	}
	return p.port(q, val)
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 0, 32)
	return err == nil
}

func (p *pparser) number(s string, max uint64) (uint32, error) {
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil || v > max {
		return 0, p.errf("%q is not a number from 0 to %d", s, max)
	}
	return uint32(v), nil
}

func (p *pparser) protoValue(s string) (uint32, error) {
	s = strings.TrimPrefix(s, "\\")
	if v, ok := ipProtos[s]; ok {
		return v, nil
	}
	return p.number(s, 255)
}

// Offsets (IEEE 802.3 clause 3.1.1, RFC 791 section 3.1, RFC 8200 section
// 3, RFC 826) from the start of the network header at p.link+14.
func (p *pparser) nl() uint32 { return p.link + 14 }

func (p *pparser) ethertype(t uint32) pnode { return eq(p.link+12, 2, t) }

func (p *pparser) ipProto4(v uint32) pnode {
	return and(p.ethertype(0x0800), eq(p.nl()+9, 1, v))
}

// ipProto6 is libpcap's: the next header, or the one behind a fragment
// header (44).
func (p *pparser) ipProto6(v uint32) pnode {
	return and(p.ethertype(0x86dd), or(eq(p.nl()+6, 1, v), and(eq(p.nl()+6, 1, 44), eq(p.nl()+40, 1, v))))
}

func (p *pparser) protoOf(proto string) (pnode, error) {
	// libpcap wants protocol keywords escaped here (ether proto \ip6).
	s := strings.TrimPrefix(p.next(), "\\")
	switch proto {
	case "ether":
		var v uint32
		switch s {
		case "ip":
			v = 0x0800
		case "ip6":
			v = 0x86dd
		case "arp":
			v = 0x0806
		case "rarp":
			v = 0x8035
		default:
			var err error
			if v, err = p.number(s, 0xffff); err != nil {
				return nil, err
			}
			if v <= 1500 {
				return nil, p.errf("ether proto %s: values up to 1500 are 802.3 lengths (LLC), not supported", s)
			}
		}
		return p.ethertype(v), nil
	case "ip":
		v, err := p.protoValue(s)
		if err != nil {
			return nil, err
		}
		return p.ipProto4(v), nil
	case "ip6":
		v, err := p.protoValue(s)
		if err != nil {
			return nil, err
		}
		return p.ipProto6(v), nil
	}
	return nil, p.errf("%s proto is not supported", proto)
}

func (p *pparser) protoAlone(proto string) (pnode, error) {
	switch proto {
	case "ip":
		return p.ethertype(0x0800), nil
	case "ip6":
		return p.ethertype(0x86dd), nil
	case "arp":
		return p.ethertype(0x0806), nil
	case "rarp":
		return p.ethertype(0x8035), nil
	case "tcp", "udp", "sctp":
		v := ipProtos[proto]
		return or(p.ipProto4(v), p.ipProto6(v)), nil
	case "ether":
		return nil, p.errf("ether needs host, src, dst or proto")
	}
	return nil, p.errf("expected a primitive, not %q", p.toks[p.i-1])
}

// dirs combines the source and destination tests as the direction says.
func dirs(dir string, src, dst pnode) pnode {
	switch dir {
	case "src":
		return src
	case "dst":
		return dst
	case "src and dst":
		return and(src, dst)
	}
	return or(src, dst)
}

// words compares 4-byte words at off with want under mask.
func words(off uint32, want, mask []byte) pnode {
	var n pnode
	for i := 0; i < len(want); i += 4 {
		m := binary.BigEndian.Uint32(mask[i:])
		if m == 0 {
			continue
		}
		t := pTest{kind: ldAbs, off: off + uint32(i), size: 4, op: bpf.JumpEqual, val: binary.BigEndian.Uint32(want[i:]) & m}
		if m != 0xffffffff {
			t.mask = m
		}
		if n == nil {
			n = t
		} else {
			n = and(n, t)
		}
	}
	if n == nil {
		return pTrue{}
	}
	return n
}

func (p *pparser) hostNet(q pqual, val string) (pnode, error) {
	if q.proto == "ether" {
		if q.typ != "host" {
			return nil, p.errf("ether %s: only ether host", q.typ)
		}
		mac, err := net.ParseMAC(val)
		if err != nil || len(mac) != 6 {
			return nil, p.errf("%q is not a MAC address", val)
		}
		at := func(off uint32) pnode {
			return and(eq(off+2, 4, binary.BigEndian.Uint32(mac[2:])), eq(off, 2, uint32(binary.BigEndian.Uint16(mac))))
		}
		return dirs(q.dir, at(6), at(0)), nil
	}
	var ipnet *net.IPNet
	if strings.Contains(val, "/") {
		if q.typ == "host" {
			return nil, p.errf("host %s: a host has no prefix length (net %s)", val, val)
		}
		_, n, err := net.ParseCIDR(val)
		if err != nil {
			return nil, p.errf("%q is not an address/prefix", val)
		}
		ipnet = n
	} else {
		ip := net.ParseIP(val)
		if ip == nil {
			return nil, p.errf("%q is not an IP address (host names are not resolved)", val)
		}
		if v4 := ip.To4(); v4 != nil {
			ipnet = &net.IPNet{IP: v4, Mask: net.CIDRMask(32, 32)}
		} else {
			ipnet = &net.IPNet{IP: ip, Mask: net.CIDRMask(128, 128)}
		}
	}
	nl := p.nl()
	if v4 := ipnet.IP.To4(); v4 != nil && len(ipnet.Mask) == 4 {
		var alts []pnode
		if q.proto == "" || q.proto == "ip" {
			alts = append(alts, and(p.ethertype(0x0800), dirs(q.dir, words(nl+12, v4, ipnet.Mask), words(nl+16, v4, ipnet.Mask))))
		}
		if q.proto == "" || q.proto == "arp" || q.proto == "rarp" {
			// ARP (RFC 826) for Ethernet/IPv4: sender address at 14,
			// target address at 24.
			types := []pnode{p.ethertype(0x0806), p.ethertype(0x8035)}
			switch q.proto {
			case "arp":
				types = types[:1]
			case "rarp":
				types = types[1:]
			}
			alts = append(alts, and(ors(types...), dirs(q.dir, words(nl+14, v4, ipnet.Mask), words(nl+24, v4, ipnet.Mask))))
		}
		if len(alts) == 0 {
			return nil, p.errf("%s %s %s: an IPv4 address needs ip, arp or rarp", q.proto, q.typ, val)
		}
		return ors(alts...), nil
	}
	if q.proto != "" && q.proto != "ip6" {
		return nil, p.errf("%s %s %s: an IPv6 address needs ip6", q.proto, q.typ, val)
	}
	ip16 := ipnet.IP.To16()
	return and(p.ethertype(0x86dd), dirs(q.dir, words(nl+8, ip16, ipnet.Mask), words(nl+24, ip16, ipnet.Mask))), nil
}

func (p *pparser) port(q pqual, val string) (pnode, error) {
	var lo, hi uint32
	var err error
	if q.typ == "portrange" {
		a, b, ok := strings.Cut(val, "-")
		if !ok {
			return nil, p.errf("portrange %q: want LOW-HIGH", val)
		}
		if lo, err = p.number(a, 0xffff); err != nil {
			return nil, err
		}
		if hi, err = p.number(b, 0xffff); err != nil {
			return nil, err
		}
		if lo > hi {
			lo, hi = hi, lo
		}
	} else {
		if lo, err = p.number(val, 0xffff); err != nil {
			return nil, p.errf("port %q is not a number from 0 to 65535 (service names are not resolved)", val)
		}
		hi = lo
	}
	var protos []uint32
	switch q.proto {
	case "":
		protos = []uint32{132, 6, 17}
	case "tcp", "udp", "sctp":
		protos = []uint32{ipProtos[q.proto]}
	default:
		return nil, p.errf("%s %s: ports are of tcp, udp or sctp", q.proto, q.typ)
	}
	match := func(t pTest) pnode {
		if lo == hi {
			t.op, t.val = bpf.JumpEqual, lo
			return t
		}
		ge := t
		ge.op, ge.val = bpf.JumpGreaterOrEqual, lo
		gt := t
		gt.op, gt.val = bpf.JumpGreaterThan, hi
		return and(ge, pNot{gt})
	}
	nl := p.nl()
	// IPv6: ports right behind the fixed header (no extension headers,
	// as libpcap).
	var p6, p4 []pnode
	for _, pr := range protos {
		p6 = append(p6, eq(nl+6, 1, pr))
		p4 = append(p4, eq(nl+9, 1, pr))
	}
	v6 := and(and(p.ethertype(0x86dd), ors(p6...)),
		dirs(q.dir, match(pTest{kind: ldAbs, off: nl + 40, size: 2}), match(pTest{kind: ldAbs, off: nl + 42, size: 2})))
	// IPv4: not a later fragment (RFC 791: fragment offset), ports behind
	// the header of IHL words.
	notFrag := pNot{pTest{kind: ldAbs, off: nl + 6, size: 2, op: bpf.JumpBitsSet, val: 0x1fff}}
	v4 := and(and(and(p.ethertype(0x0800), ors(p4...)), notFrag),
		dirs(q.dir, match(pTest{kind: ldInd4, off: nl, size: 2, ihl: nl}), match(pTest{kind: ldInd4, off: nl + 2, size: 2, ihl: nl})))
	return or(v6, v4), nil
}

// compile generates the program: snaplen for a frame the expression
// keeps, 0 for one it drops.
func (e *pcapExpr) compile(snaplen uint32) ([]bpf.Instruction, error) {
	var a assembler
	n := 0
	newLabel := func() string { n++; return "L" + strconv.Itoa(n) }
	var gen func(pnode, string, string)
	gen = func(nd pnode, t, f string) {
		switch x := nd.(type) {
		case pAnd:
			mid := newLabel()
			gen(x.a, mid, f)
			a.label(mid)
			gen(x.b, t, f)
		case pOr:
			mid := newLabel()
			gen(x.a, t, mid)
			a.label(mid)
			gen(x.b, t, f)
		case pNot:
			gen(x.a, f, t)
		case pTrue:
			a.ja(t)
		case pTest:
			switch x.kind {
			case ldLen:
				a.op(bpf.LoadExtension{Num: bpf.ExtLen})
			case ldInd4:
				a.op(bpf.LoadMemShift{Off: x.ihl})
				a.op(bpf.LoadIndirect{Off: x.off, Size: x.size})
			default:
				a.op(bpf.LoadAbsolute{Off: x.off, Size: x.size})
			}
			if x.mask != 0 {
				a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: x.mask})
			}
			a.ins = append(a.ins, asmIns{isJumpIf: true, cond: x.op, val: x.val, jt: t, jf: f})
		}
	}
	gen(e.root, "accept", "drop")
	a.label("drop")
	a.op(bpf.RetConstant{Val: 0})
	a.label("accept")
	a.op(bpf.RetConstant{Val: snaplen})
	ins, err := a.resolve()
	if err != nil {
		return nil, fmt.Errorf("filter %q: %w", e.src, err)
	}
	return ins, nil
}
