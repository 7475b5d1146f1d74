package dfilter

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// pkt is a test packet: each field's occurrences.
type pkt map[string][]Value

// reg is a test registry over pkt, with the types of a few fields named as
// Wireshark names them.
type reg map[string]Type

func (r reg) Lookup(name string) (Field[pkt], bool) {
	t, ok := r[name]
	if !ok {
		return Field[pkt]{}, false
	}
	var names func(string, bool) (uint64, bool)
	if name == "nfs.opcode" {
		// Some NFSv4 operation numbers (RFC 8881, section 18).
		names = func(s string, _ bool) (uint64, bool) {
			v, ok := map[string]uint64{"getattr": 9, "putfh": 22, "sequence": 53}[strings.ToLower(s)]
			return v, ok
		}
	}
	size := map[string]int{"ip.ttl": 1, "tcp.port": 2, "tcp.flags": 2, "nfs.opcode": 4}[name]
	return Field[pkt]{Name: name, Type: t, Names: names, Size: size, Each: func(p pkt, emit func(Value)) {
		if t == TypeProtocol {
			if _, ok := p[name]; ok {
				emit(Value{})
			}
			return
		}
		for _, v := range p[name] {
			emit(v)
		}
	}}, true
}

var testReg = reg{
	"ip": TypeProtocol, "ip.addr": TypeIPv4, "ip.src": TypeIPv4, "ip.dst": TypeIPv4, "ip.ttl": TypeUint,
	"ipv6.addr": TypeIPv6, "eth.src": TypeEther, "data": TypeBytes, "name": TypeString, "flag": TypeBool,
	"frame.time_relative": TypeTime, "tcp.port": TypeUint, "tcp.flags": TypeUint, "nfs.opcode": TypeUint,
}

func ip(s string) Value { return Value{Addr: netip.MustParseAddr(s)} }

var samplePkt = pkt{
	"ip": nil, "ip.addr": {ip("192.0.2.1"), ip("198.51.100.7")}, "ip.src": {ip("192.0.2.1")},
	"ip.dst": {ip("198.51.100.7")}, "ip.ttl": {{U: 64}},
	"ipv6.addr": {ip("fe80::1"), ip("2001:db8::5")},
	"eth.src":   {{B: []byte{0x52, 0x54, 0, 0, 2, 1}}}, "data": {{B: []byte("\x01\x02hello")}},
	"name": {{S: "client.example"}}, "flag": {{U: 1}}, "frame.time_relative": {{U: 1_500_000_000}},
	"tcp.port": {{U: 52582}, {U: 20049}}, "tcp.flags": {{U: 0x18}}, "nfs.opcode": {{U: 53}, {U: 22}, {U: 9}},
}

// TestMatch checks each filter's verdict on samplePkt against what
// wireshark-filter(4) specifies for it.
func TestMatch(t *testing.T) {
	cases := []struct {
		f    string
		want bool
	}{
		{"ip", true}, {"!ip", false}, {"not ip", false}, {"ip.src", true}, {"ip.ttl", true},
		{"ip.src == 192.0.2.1", true}, {"ip.src eq 192.0.2.2", false},
		{"ip.addr == 198.51.100.7", true},    // any occurrence
		{"ip.addr != 198.51.100.7", false},   // all_ne: one equals
		{"ip.addr ~= 198.51.100.7", true},    // any_ne: the other differs
		{"ip.addr === 198.51.100.7", false},  // all_eq
		{"ip.addr == 192.0.2.0/24", true},    // CIDR
		{"ip.addr == 10.0.0.0/8", false},     // CIDR
		{"ip.addr != 10.0.0.0/8", true},      // CIDR all_ne
		{"ipv6.addr == 2001:db8::/32", true}, // IPv6 CIDR
		{"ipv6.addr == fe80::1", true},       // IPv6
		{"ip.src < 192.0.2.2 && ip.dst > 198.51.100.6", true},
		{"ip.ttl == 64", true}, {"ip.ttl == 0x40", true}, {"ip.ttl == 0100", true}, // decimal, hex, octal
		{"ip.ttl > 63 and ip.ttl < 65", true}, {"ip.ttl ge 65", false}, {"ip.ttl le 64", true},
		{"ip.ttl lt 64 or ip.ttl gt 64", false}, {"ip.ttl == 'A'", false}, {"ip.ttl == '@'", true},
		{"ip.ttl in {1, 2, 64}", true}, {"ip.ttl in {1, 60..70}", true}, {"ip.ttl in {65..70}", false},
		{"ip.ttl not in {65..70}", true}, {"ip.src in {192.0.2.1, 10.0.0.1}", true},
		{"tcp.port == 20049", true}, {"tcp.port != 20049", false}, {"tcp.port > 60000", false},
		{"tcp.flags & 0x10", true}, {"tcp.flags & 0x02", false},
		{"nfs.opcode == 9 && !(nfs.opcode == 25)", true},
		{"eth.src == 52:54:00:00:02:01", true}, {"eth.src == 52-54-00-00-02-01", true},
		{"eth.src == 5254.0000.0201", true}, {"eth.src[0:3] == 52:54:00", true}, {"eth.src[3:] == 00:02:01", true},
		{"eth.src[-1] == 01", true}, {"eth.src[-1:1] == 0x01", true}, {"eth.src[1-2] == 54:00", true},
		{"eth.src[:2] == 52:54", true}, {"eth.src[0:2,5] == 52:54:01", true}, {"eth.src[4:5] == 02", false},
		{"ip.src[0:2] == c0:00", true}, {"ip.src[3] == 01", true}, {"ipv6.addr[0:2] == fe:80", true}, {"ip.src[0:2] == ip.dst[0:2]", false},
		{"data contains \"hello\"", true}, {"data contains 02:68", true}, {"data contains 03", false},
		{"data matches \"h.l+o$\"", true}, {"data == 01:02:68:65:6c:6c:6f", true},
		{`name == "client.example"`, true}, {`name contains "example"`, true}, {`name matches "^cli"`, true},
		{`name matches "^CLI"`, true}, {`name matches "(?-i)^CLI"`, false}, {`name[0:3] == "cli"`, true},
		{`name == "client\x2eexample"`, true}, {`name == client.example`, true}, {`name > "a"`, true},
		{"flag", true}, {"flag == 1", true}, {"flag == true", true}, {"flag == False", false},
		{"frame.time_relative > 1.4", true}, {"frame.time_relative >= 1.5", true}, {"frame.time_relative < 1.5", false},
		{"ip.src == ip.src", true}, {"ip.src == ip.dst", false}, {"ip.addr == ip.dst", true},
		{"ip || flag && !ip", true},
		{"(ip || flag) && !ip", false}, {"ip.ttl all_eq 64", true}, {"ip.addr any_ne 192.0.2.1", true},
		{"ip.addr all_ne 192.0.2.1", false}, {"ip.addr any_eq 192.0.2.1", true},
		// A field that does not occur fails every test but its negation.
		{"ip.ttl != 64 || name != \"x\"", true},
		{"ipv6.addr != fe80::2", true},
		// Names of values, as a bare word or quoted, in any case.
		{"nfs.opcode == SEQUENCE", true}, {`nfs.opcode == "putfh"`, true}, {"nfs.opcode != GetAttr", false},
		{"nfs.opcode in {PUTFH, 1..3}", true}, {"nfs.opcode > SEQUENCE", false}, {"nfs.opcode in {1..GETATTR}", true},
		// Functions (wireshark-filter(4), "Functions").
		{"len(eth.src) == 6", true}, {"len(data) == 7", true}, {"len(name) == 14", true}, {"len(ip.src) == 4", true},
		{"len(ipv6.addr) == 16", true}, {"len(flag) == 0", true}, {"len(frame.time_relative) == 0", true},
		{"count(ip.addr) == 2", true}, {"count(nfs.opcode) == 3", true}, {"count(nfs.opcode) > 3", false}, {"count(ip) == 1", true},
		{`upper(name) == "CLIENT.EXAMPLE"`, true}, {`lower(name) == "client.example"`, true}, {`upper(name) contains "ENT"`, true},
		{`upper(name)[0:3] == "CLI"`, true}, {`lower(name) matches "(?-i)^cl"`, true},
		{`string(ip.ttl) == "64"`, true}, {`string(ip.src) == "192.0.2.1"`, true}, {`string(ip.addr) contains "51.100"`, true},
		{`string(eth.src) == "52:54:00:00:02:01"`, true}, {`string(ipv6.addr) == "2001:db8::5"`, true},
		{"max(nfs.opcode) == 53", true}, {"min(nfs.opcode) == 9", true}, {"max(nfs.opcode, 60) == 53", false},
		{"max(ip.src, ip.dst) == 198.51.100.7", true}, {"max(ip.addr) === 198.51.100.7", true},
		{"abs(ip.ttl) == 64", true}, {"len(eth.src) == len(ip.src)", false},
		{"count(nfs.opcode) == ip.ttl", false}, {"len(eth.src) & 4", true}, {"count(ip.addr) != 2", false},
		// Arithmetic (wireshark-filter(4), "Arithmetic operators"), with
		// tshark 4.0's signed results below zero.
		{"ip.ttl + 1 == 65", true}, {"ip.ttl - 64 == 0", true}, {"ip.ttl * 2 == 128", true}, {"ip.ttl / 3 == 21", true},
		{"ip.ttl % 10 == 4", true}, {"ip.ttl + 1 * 2 == 66", true}, {"{ip.ttl + 1} * 2 == 130", true},
		{"ip.ttl -1 == 63", true}, {"ip.ttl - 65 < 0", true}, {"ip.ttl - 65 == 0 - 1", true}, {"ip.ttl - 63 > 0 - 5", false},
		{"-ip.ttl == 0 - 64", true}, {"ip.ttl == 0 - 1", false}, {"ip.ttl != -1", true}, {"ip.ttl ~= -1", false},
		{"ip.ttl in {-1, 64}", true}, {"tcp.port + 1 == 20050", true}, {"tcp.port + tcp.port == 52582 + 20049", true},
		{"ip.ttl / 0 == 0", false}, {"ip.ttl - 64", false}, {"ip.ttl - 63", true}, {"ip.ttl + len(eth.src) == 70", true},
		{"frame.time_relative + 1 > 2.4", true}, {"frame.time_relative - 2 < 0", true}, {"frame.time_relative > -1", true},
		{"ip.ttl == ip.ttl + 0", true},
	}
	empty := pkt{}
	for _, c := range cases {
		f, err := Compile[pkt](c.f, testReg)
		if err != nil {
			t.Errorf("%s: %v", c.f, err)
			continue
		}
		if got := f.Match(samplePkt); got != c.want {
			t.Errorf("%s: %v, want %v", c.f, got, c.want)
		}
		// With no fields at all, a test holds only under a not.
		if got := f.Match(empty); got && !strings.Contains(c.f, "!") && !strings.Contains(c.f, "not") {
			t.Errorf("%s matches a packet without the field", c.f)
		}
	}
	absent := []string{"ip.ttl != 64", "ip.ttl ~= 1", "ip.ttl === 64", "ip.src == ip.dst", "ip.ttl not in {1}"}
	for _, s := range absent[:4] {
		if f, _ := Compile[pkt](s, testReg); f.Match(empty) {
			t.Errorf("%s matches a packet without ip.ttl", s)
		}
	}
	// max() and min() with a literal have a value without the field, as
	// in tshark 4.0 (max(udp.srcport, 4791) == 4791 selects ARP frames).
	for _, s := range []string{"max(nfs.opcode, 60) == 60", "min(nfs.opcode, 3, 60) == 3"} {
		if f, _ := Compile[pkt](s, testReg); !f.Match(empty) || !f.Match(samplePkt) {
			t.Errorf("%s fails", s)
		}
	}
	// not in is the negation of in: true without the field.
	if f, _ := Compile[pkt](absent[4], testReg); !f.Match(empty) {
		t.Errorf("%s fails a packet without ip.ttl", absent[4])
	}
}

// TestErrors checks that a bad filter is an *Error pointing at the token at
// fault.
func TestErrors(t *testing.T) {
	cases := []struct {
		f      string
		col    int // 1-based
		substr string
	}{
		{"foo", 1, `"foo" is neither a field nor a protocol name`},
		{"ip.src ==", 10, "unexpected end of filter"},
		{"ip.src == 1.2.3", 11, "not a valid IPv4 address"},
		{"ip.src == fe80::1", 11, "not a valid IPv4 address"},
		{"ip.ttl == 256", 11, "too big for this field, maximum 255"},
		{"ip.ttl + ip.src == 1", 10, "only integers and times"},
		{"0 - 1 == ip.ttl", 1, "constants cannot be on the left"},
		{`ip.ttl + "1" == 2`, 10, "not a valid arithmetic operand"},
		{"ip.ttl + 1 in {2}", 12, "cannot follow an arithmetic"},
		{"frame.time_relative * 2 > 1", 1, "times can only be added"},
		{"ip.ttl + 1.5 == 3", 10, "not a valid"},
		{"{ip.ttl + 1 == 2", 13, `expected "}"`},
		{"ip.ttl == 1 and", 16, "unexpected end"},
		{"ip.ttl == 1 ip", 13, `unexpected "ip"`},
		{"(ip", 4, `expected ")"`},
		{"ip)", 3, `unexpected ")"`},
		{"ip.ttl contains 1", 8, `"contains" needs`},
		{"ip.ttl matches \"x\"", 8, `"matches" needs`},
		{"name matches \"(\"", 14, "bad regular expression"},
		{"name matches x", 14, "regular expression in double quotes"},
		{"ip == 1", 1, "protocol"},
		{"ip.ttl[0:1] == 1", 7, "sliced"},
		{"eth.src[x] == 01", 8, "bad slice"},
		{"eth.src == 52:54", 12, "6 bytes"},
		{"ip.ttl in {}", 12, "empty set"},
		{"ip.ttl in {1..}", 15, "end of the range"},
		{"ip.ttl in {1 2}", 14, "separated by"},
		{"ip.ttl in {,1}", 12, "expected a value"},
		{"1 < ip.ttl", 1, "neither a field"},
		{"ip.src == ip.ttl", 11, "cannot be compared"},
		{"name == \"abc", 9, "unterminated string"},
		{"ip.ttl == 1 # x", 13, "unexpected character"},
		{"ip.src < 10.0.0.0/8", 10, "prefix length"},
		{"flag > 0", 6, "boolean"},
		{"flag == 2", 9, "not a valid boolean"},
		{"ip.ttl[0", 7, `"[" without "]"`},
		{"ip xor flag", 4, `unexpected "xor"`},
		{"ip ^^ flag", 4, `unexpected character "^"`},
		{"nfs.opcode == READDIR", 15, `"READDIR" cannot be found among the possible values for nfs.opcode`},
		{`nfs.opcode == "53"`, 15, "cannot be found among the possible values"},
		{"nfs.opcode & SEQUENCE", 14, "not a valid"},
		{"ip.ttl == SEQUENCE", 11, "not a valid unsigned integer"},
		{`ip.ttl == "64"`, 11, "cannot be converted from a string"},
		{"foo(ip.ttl) == 1", 1, `function "foo" does not exist`},
		{"Len(ip.ttl) == 1", 1, "does not exist"},
		{"len() == 1", 1, "needs an argument"},
		{"len(ip.ttl, ip.ttl) == 1", 1, "takes one argument"},
		{"len(ip.ttl)", 1, "presence"},
		{"len(ip.ttl) in {1}", 1, "membership"},
		{"1 == len(ip.ttl)", 1, "neither a field"},
		{`len("abc") == 3`, 5, "only fields"},
		{"len(upper(name)) == 3", 5, "only fields"},
		{"upper(ip.ttl) == 1", 7, "only string fields"},
		{`string(name) == "x"`, 8, "string conversion"},
		{`string(flag) == "1"`, 8, "string conversion"},
		{"abs(ip.src) == 1.2.3.4", 5, "not a valid argument"},
		{"max(3, ip.ttl) == 3", 5, "not valid for max()"},
		{`max(ip.ttl, "3") == 3`, 13, "not valid for max()"},
		{"min(tcp.port, nfs.opcode) == 9", 15, "same type"},
		{"len(ip) == 20", 5, "protocol"},
		{`len(eth.src) == "6"`, 17, "cannot be converted from a string"},
		{"len(eth.src[0:2) == 1", 12, `"[" without "]"`},
		{"len(eth.src == 1", 13, `expected "," or ")"`},
	}
	for _, c := range cases {
		_, err := Compile[pkt](c.f, testReg)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want an *Error", c.f, err)
			continue
		}
		if fe.Pos+1 != c.col || !strings.Contains(fe.Msg, c.substr) {
			t.Errorf("%s: column %d %q, want column %d %q", c.f, fe.Pos+1, fe.Msg, c.col, c.substr)
		}
		caret := fe.Caret()
		lines := strings.Split(caret, "\n")
		if len(lines) != 2 || strings.Index(lines[1], "^") != c.col-1 {
			t.Errorf("%s: caret\n%s\nnot at column %d", c.f, caret, c.col)
		}
	}
}

func TestEmpty(t *testing.T) {
	for _, s := range []string{"", "   "} {
		f, err := Compile[pkt](s, testReg)
		if err != nil || !f.Match(pkt{}) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// TestNoAllocs checks that evaluating a compiled filter allocates nothing.
func TestNoAllocs(t *testing.T) {
	f, err := Compile[pkt](`ip.addr == 192.0.2.0/24 && eth.src[0:3] == 52:54:00 && name matches "ex.mple" && tcp.port in {1..100, 20049} && ip.addr == ip.dst && data contains "ell" && !(nfs.opcode != 9)`+
		` && ip.ttl + 1 == 65 && {ip.ttl - 65} * 2 < 0 && frame.time_relative - 1 > 0.4 && tcp.port + tcp.port > ip.ttl * 2`+
		` && nfs.opcode == SEQUENCE && len(name) == 14 && count(nfs.opcode) == 3 && upper(name) contains "EXAMPLE" && lower(name)[0:3] == "cli" && string(ip.addr) == "198.51.100.7" && string(ip.ttl) == "64" && max(nfs.opcode, 60) == 60 && min(ip.addr) == 192.0.2.1 && abs(ip.ttl) == 64 && string(eth.src) contains ":02:"`, testReg)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(samplePkt) {
		t.Fatal("does not match")
	}
	if n := testing.AllocsPerRun(100, func() { f.Match(samplePkt) }); n != 0 {
		t.Errorf("%v allocations per packet", n)
	}
}

func BenchmarkMatch(b *testing.B) {
	f, err := Compile[pkt](`ip.addr == 192.0.2.0/24 && tcp.port in {4791, 20049} && !(nfs.opcode == 25) && name contains "client"`, testReg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		f.Match(samplePkt)
	}
}

// FuzzCompile requires the parser never to panic and every failure to be an
// *Error inside the filter; what compiles must evaluate without panicking.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"ip", "ip.src == 1.2.3.4", "eth.src[0:3] == 52:54:00", `name matches "^a"`,
		"ip.ttl in {1, 2..5}", "not (ip || flag) && ip.addr == 10.0.0.0/8", "data contains 01:02", "'a' < ip.ttl",
		"len(name) == 3", "max(ip.ttl, 3) < count(ip.addr)", "ip.ttl - -1 == {2 * ip.ttl} % 3", "-ip.ttl", "ip.ttl / 0", `upper(name)[1:] == "X"`, `string(ip.addr) matches "^1"`,
		`name == "\x41\101"`, "eth.src[-1:1,2-3,:1,4:] == 00", "tcp.flags & 0x12", "ip.addr === ip.dst"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Compile[pkt](s, testReg)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("%q: %T %v", s, err, err)
			}
			if fe.Pos < 0 || fe.Pos > len(s) || fe.End < fe.Pos {
				t.Fatalf("%q: span %d-%d", s, fe.Pos, fe.End)
			}
			_ = fe.Caret()
			return
		}
		flt.Match(samplePkt)
		flt.Match(pkt{})
	})
}
