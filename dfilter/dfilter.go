// Package dfilter compiles and evaluates display filters in Wireshark's
// display-filter language (wireshark-filter(4), as of Wireshark 4.0) over
// packets of any type P.
//
// The package knows nothing of how packets are decoded: a Registry names
// the fields a filter can use, their types, and how to read each field's
// occurrences out of a packet. A filter is compiled once (Compile) and then
// evaluated on every packet (Filter.Match) without allocating.
//
// A field that occurs several times in a packet matches a test when any
// occurrence does, as in Wireshark; "!=" is "all_ne" (the field is present
// and no occurrence equals), "===" is "all_eq" and "~=" is "any_ne".
package dfilter

import (
	"fmt"
	"net/netip"
	"strings"
)

// Type is the kind of value a field holds; it decides how a literal beside
// the field is read and how values compare.
type Type uint8

const (
	TypeProtocol Type = iota // a protocol or header name: tested for presence only
	TypeUint                 // unsigned integers of any width
	TypeBool                 // 0 or 1
	TypeBytes                // a byte string
	TypeEther                // a 6-byte MAC address, compared as bytes
	TypeIPv4                 // an IPv4 address
	TypeIPv6                 // an IPv6 address
	TypeString               // text
	TypeTime                 // nanoseconds (relative or since the epoch), written in seconds
)

var typeNames = [...]string{
	TypeProtocol: "protocol", TypeUint: "unsigned integer", TypeBool: "boolean", TypeBytes: "byte string",
	TypeEther: "Ethernet address", TypeIPv4: "IPv4 address", TypeIPv6: "IPv6 address", TypeString: "string",
	TypeTime: "time",
}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown type"
}

// Value is one occurrence of a field. Which member holds it depends on the
// field's Type: U for integers, booleans and times (nanoseconds), B for bytes
// and Ethernet addresses, Addr for IP addresses, S for strings.
type Value struct {
	U    uint64
	B    []byte
	S    string
	Addr netip.Addr
	// Neg marks an integer of signed type, U holding an int64: the
	// result of arithmetic that went below zero (or negated), or a
	// negative literal. As in tshark 4.0, a signed value is compared with
	// an unsigned one as a signed number when it is on the left, and
	// cannot be compared when it is negative and on the right.
	Neg bool
}

// Field is a field a filter can name. Each calls emit once per occurrence
// of the field in p, in order; it must not keep emit after it returns.
type Field[P any] struct {
	Name string
	Type Type
	Each func(p P, emit func(Value))
	// Names, when set, reads the name of one of the field's values
	// (Wireshark's value_string, or a boolean's names for true and false)
	// as that value, ignoring case; ok is false for a name the field's
	// values do not have (quoted: it was written in double quotes). A
	// filter may then give the name instead of the
	// number: rpc.msgtyp == Reply, rpcordma.msg_type == "RDMA_NOMSG".
	Names func(name string, quoted bool) (v uint64, ok bool)
	// Size is the width in bytes of an integer field's values (1 for a
	// uint8, 3 for a uint24, ...), as Wireshark's field type gives it:
	// len() returns it, and max() and min() take only arguments of one
	// type and size.
	Size int
}

// Registry resolves the names in a filter. Lookup returns a fresh Field for
// each call (a compiled filter owns the Fields it looked up).
type Registry[P any] interface {
	Lookup(name string) (Field[P], bool)
}

// Filter is a compiled display filter. It is not safe for concurrent use:
// Match reuses buffers held in the filter.
type Filter[P any] struct {
	text string
	root node[P]
}

// String returns the filter's source text.
func (f *Filter[P]) String() string { return f.text }

// Match reports whether p passes the filter. A nil or empty filter passes
// every packet.
func (f *Filter[P]) Match(p P) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(p)
}

// Compile parses src against the fields of reg. An empty (or blank) filter
// compiles to one that passes everything. A faulty filter returns an
// *Error that points at the offending token.
func Compile[P any](src string, reg Registry[P]) (*Filter[P], error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	f := &Filter[P]{text: src}
	if len(toks) == 1 {
		return f, nil
	}
	ps := &parser[P]{src: src, toks: toks, reg: reg}
	root, err := ps.parse()
	if err != nil {
		return nil, err
	}
	f.root = root
	return f, nil
}

// Error is a fault in a filter: a message and the span [Pos, End) of the
// filter (byte offsets) it is about.
type Error struct {
	Filter   string
	Pos, End int
	Msg      string
}

// Error returns the message with the column (1-based) of the fault.
func (e *Error) Error() string {
	return fmt.Sprintf("column %d: %s", e.Pos+1, e.Msg)
}

// Caret returns the filter and, under it, a caret and tildes marking the
// offending span, as tshark shows a bad filter.
func (e *Error) Caret() string {
	n := e.End - e.Pos
	if n < 1 {
		n = 1
	}
	src := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, e.Filter)
	return src + "\n" + strings.Repeat(" ", e.Pos) + "^" + strings.Repeat("~", n-1)
}
