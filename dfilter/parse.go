package dfilter

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The grammar (wireshark-filter(4), the parts rdmashark supports):
//
//	filter  = or
//	or      = and { ("or" | "||") and }
//	and     = unary { ("and" | "&&") unary }
//	unary   = ("not" | "!") unary | "(" or ")" | test
//	test    = operand [ relop operand | ["not"] "in" set | "contains" operand
//	                  | ("matches" | "~") string | "&" operand ]
//	relop   = "==" | "!=" | "===" | "~=" | "<" | ">" | "<=" | ">="
//	        | "eq" | "ne" | "all_eq" | "any_eq" | "all_ne" | "any_ne" | "lt" | "gt" | "le" | "ge"
//	operand = field [ "[" range { "," range } "]" ] | literal   (a field on the left)
//	set     = "{" elem { "," elem } "}"
//	elem    = literal [ ".." literal ]
//	range   = i:j | i-j | i | :j | i:

type parser[P any] struct {
	src  string
	toks []token
	i    int
	reg  Registry[P]
}

func (ps *parser[P]) peek() token { return ps.toks[ps.i] }

func (ps *parser[P]) next() token {
	t := ps.toks[ps.i]
	if t.kind != tokEOF {
		ps.i++
	}
	return t
}

func (ps *parser[P]) errAt(t token, format string, a ...any) error {
	end := t.end
	if end <= t.pos {
		end = t.pos + 1
	}
	return &Error{Filter: ps.src, Pos: t.pos, End: end, Msg: fmt.Sprintf(format, a...)}
}

func (ps *parser[P]) unexpected(t token, want string) error {
	if t.kind == tokEOF {
		return ps.errAt(t, "unexpected end of filter: expected %s", want)
	}
	return ps.errAt(t, "unexpected %q: expected %s", t.raw, want)
}

func (ps *parser[P]) parse() (node[P], error) {
	n, err := ps.or()
	if err != nil {
		return nil, err
	}
	if t := ps.peek(); t.kind != tokEOF {
		return nil, ps.unexpected(t, `"and", "or" or the end of the filter`)
	}
	return n, nil
}

func (ps *parser[P]) or() (node[P], error) {
	l, err := ps.and()
	if err != nil {
		return nil, err
	}
	for ps.peek().kind == tokOr {
		ps.next()
		r, err := ps.and()
		if err != nil {
			return nil, err
		}
		l = &orNode[P]{l, r}
	}
	return l, nil
}

func (ps *parser[P]) and() (node[P], error) {
	l, err := ps.unary()
	if err != nil {
		return nil, err
	}
	for ps.peek().kind == tokAnd {
		ps.next()
		r, err := ps.unary()
		if err != nil {
			return nil, err
		}
		l = &andNode[P]{l, r}
	}
	return l, nil
}

func (ps *parser[P]) unary() (node[P], error) {
	switch t := ps.peek(); t.kind {
	case tokNot:
		ps.next()
		n, err := ps.unary()
		if err != nil {
			return nil, err
		}
		return &notNode[P]{n}, nil
	case tokLParen:
		ps.next()
		n, err := ps.or()
		if err != nil {
			return nil, err
		}
		if c := ps.next(); c.kind != tokRParen {
			return nil, ps.unexpected(c, `")"`)
		}
		return n, nil
	}
	return ps.test()
}

// operand is a parsed operand: a field (maybe sliced) or a literal token.
type operand[P any] struct {
	tok    token
	field  *Field[P]
	slices []sliceRange
	isCall bool     // field is a function call's result
	arith  *expr[P] // an arithmetic expression, not yet compiled (arith.go)
}

// names is how the operand's values are named, if they are: a field's,
// not a slice's.
func (o *operand[P]) names() func(string, bool) (uint64, bool) {
	if o.slices != nil || o.field == nil {
		return nil
	}
	return o.field.Names
}

func (o *operand[P]) typ() Type {
	if o.slices != nil {
		return TypeBytes
	}
	return o.field.Type
}

func (ps *parser[P]) operand(want string) (operand[P], error) {
	t := ps.next()
	switch t.kind {
	case tokString, tokCharLit:
		return operand[P]{tok: t}, nil
	case tokWord:
	default:
		return operand[P]{}, ps.unexpected(t, want)
	}
	return ps.wordOperand(t)
}

// wordOperand reads the operand that starts with the word t: a call, a
// field (maybe sliced) or a literal.
func (ps *parser[P]) wordOperand(t token) (operand[P], error) {
	if ps.peek().kind == tokLParen {
		o, err := ps.call(t)
		if err != nil {
			return o, err
		}
		return o, ps.slice(&o)
	}
	o := operand[P]{tok: t}
	if f, ok := ps.reg.Lookup(t.text); ok {
		o.field = &f
		return o, ps.slice(&o)
	} else if s := ps.peek(); s.kind == tokSlice {
		return o, ps.errAt(t, "%q is neither a field nor a protocol name", t.text)
	}
	return o, nil
}

// slice reads a slice after a field or a call, if one follows.
func (ps *parser[P]) slice(o *operand[P]) error {
	s := ps.peek()
	if s.kind != tokSlice {
		return nil
	}
	ps.next()
	f := o.field
	switch f.Type {
	case TypeBytes, TypeEther, TypeString, TypeIPv4, TypeIPv6:
	default:
		return ps.errAt(s, "%s is a %s: only byte strings, addresses and strings can be sliced", f.Name, f.Type)
	}
	rs, err := parseSlice(s.text)
	if err != nil {
		return ps.errAt(s, "bad slice %s: %v", s.raw, err)
	}
	o.slices = rs
	o.tok.end = s.end
	return nil
}

// call reads a function call whose name is t (func.go).
func (ps *parser[P]) call(t token) (operand[P], error) {
	kind, ok := functions[t.text]
	if !ok {
		return operand[P]{}, ps.errAt(t, "function %q does not exist", t.text)
	}
	ps.next() // "("
	var args []operand[P]
	if ps.peek().kind != tokRParen {
		for {
			a, err := ps.operand("a field or a value")
			if err != nil {
				return a, err
			}
			args = append(args, a)
			if ps.peek().kind != tokComma {
				break
			}
			ps.next()
		}
	}
	end := ps.next()
	if end.kind != tokRParen {
		return operand[P]{}, ps.unexpected(end, `"," or ")"`)
	}
	name := t.text + "()"
	switch {
	case len(args) == 0:
		return operand[P]{}, ps.errAt(t, "%s needs an argument", name)
	case len(args) > 1 && kind != fnMax && kind != fnMin:
		return operand[P]{}, ps.errAt(t, "%s takes one argument", name)
	}
	first := args[0]
	if first.field == nil || first.isCall || first.slices != nil {
		if kind == fnMax || kind == fnMin {
			return operand[P]{}, ps.errAt(first.tok, "argument %s is not valid for %s: the first must be a field", first.tok.raw, name)
		}
		return operand[P]{}, ps.errAt(first.tok, "only fields can be used as parameter for %s", name)
	}
	c := &call[P]{kind: kind, argTyp: first.field.Type, argLen: first.field.Size}
	c.visit = c.one
	typ, size := first.field.Type, first.field.Size
	bad := func() (operand[P], error) {
		return operand[P]{}, ps.errAt(first.tok, "%s is a %s: not a valid argument to %s", first.field.Name, first.field.Type, name)
	}
	switch kind {
	case fnLen:
		if typ == TypeProtocol {
			return operand[P]{}, ps.errAt(first.tok, "len() of a protocol is not supported: rdmashark keeps no protocol's bytes")
		}
		typ, size = TypeUint, 4
	case fnCount:
		typ, size = TypeUint, 4
	case fnUpper, fnLower:
		if typ != TypeString {
			return operand[P]{}, ps.errAt(first.tok, "only string fields can be used as parameter for %s", name)
		}
	case fnString:
		switch typ {
		case TypeUint, TypeIPv4, TypeIPv6, TypeEther:
		default:
			return operand[P]{}, ps.errAt(first.tok, "string conversion of %s (a %s) is not supported", first.field.Name, typ)
		}
		typ, size = TypeString, 0
	case fnAbs:
		if typ != TypeUint && typ != TypeTime {
			return bad()
		}
	case fnMax, fnMin:
		if typ == TypeProtocol {
			return bad()
		}
	}
	for _, a := range args {
		switch {
		case a.isCall || a.slices != nil:
			return operand[P]{}, ps.errAt(a.tok, "only fields and values can be arguments of %s", name)
		case a.field != nil:
			if a.field.Type != first.field.Type || a.field.Size != first.field.Size {
				return operand[P]{}, ps.errAt(a.tok, "arguments to %s must have the same type (%s, a %s of %d bytes, is not %s, a %s of %d)",
					name, a.field.Name, a.field.Type, a.field.Size, first.field.Name, first.field.Type, first.field.Size)
			}
			c.args = append(c.args, a.field)
		default:
			if a.tok.kind == tokString && c.argTyp != TypeString {
				return operand[P]{}, ps.errAt(a.tok, "argument %s is not valid for %s", a.tok.raw, name)
			}
			k, err := ps.literal(a.tok, c.argTyp, first.field.Name, first.field.Size, nil, false)
			if err != nil {
				return operand[P]{}, err
			}
			c.consts = append(c.consts, k.v)
		}
	}
	span := ps.src[t.pos:end.end]
	f := &Field[P]{Name: span, Type: typ, Size: size, Each: c.each}
	return operand[P]{tok: token{kind: tokWord, text: span, raw: span, pos: t.pos, end: end.end}, field: f, isCall: true}, nil
}

func (ps *parser[P]) test() (node[P], error) {
	lhs, err := ps.arithOperand("a field, a protocol, \"not\" or \"(\"")
	if err != nil {
		return nil, err
	}
	if lhs.arith != nil {
		f := firstField(lhs.arith)
		if f == nil {
			return nil, ps.errAt(lhs.tok, "an arithmetic expression of constants cannot be on the left")
		}
		typ := f.field.Type
		if typ != TypeUint && typ != TypeTime {
			return nil, ps.errAt(f.tok, "%s is a %s: only integers and times take part in arithmetic", f.field.Name, typ)
		}
		af, err := ps.compileArith(lhs.arith, typ, f.field.Size, f.field.Name)
		if err != nil {
			return nil, err
		}
		lhs.field = af
	}
	t := ps.peek()
	var (
		o    op
		m    = modeAny
		negl bool
	)
	switch t.kind {
	case tokEq:
		o = opEq
	case tokAllEq:
		o, m = opEq, modeAll
	case tokNe:
		o, m = opEq, modeNone
	case tokAnyNe:
		o, m = opEq, modeNotAll
	case tokLt:
		o = opLt
	case tokGt:
		o = opGt
	case tokLe:
		o = opLe
	case tokGe:
		o = opGe
	case tokContains:
		o = opContains
	case tokMatches:
		o = opMatches
	case tokIn:
		o = opIn
	case tokNot:
		if ps.toks[ps.i+1].kind == tokIn {
			ps.next()
			o, negl = opIn, true
			t = ps.peek()
		} else {
			o = opExists
		}
	case tokBitAnd:
		o = opBitAnd
	default:
		o = opExists
	}
	if lhs.field == nil {
		if o == opExists {
			return nil, ps.errAt(lhs.tok, "%q is neither a field nor a protocol name", lhs.tok.raw)
		}
	}
	if lhs.arith != nil {
		switch o {
		case opExists:
			// An expression alone holds when its value is not zero.
			tn := &test[P]{field: *lhs.field, typ: lhs.field.Type, op: opNe, consts: []constant{{}}}
			tn.init()
			return tn, nil
		case opIn, opContains, opMatches:
			return nil, ps.errAt(t, "%q cannot follow an arithmetic expression", t.raw)
		}
	}
	if lhs.isCall {
		switch o {
		case opExists:
			return nil, ps.errAt(lhs.tok, "a function cannot be tested for presence: compare its value")
		case opIn:
			return nil, ps.errAt(lhs.tok, "only a field may be tested for membership in a set")
		}
	}
	if o == opExists {
		tn := &test[P]{field: *lhs.field, typ: lhs.typ(), slices: lhs.slices, op: opExists}
		tn.init()
		return tn, nil
	}
	ps.next() // the operator
	var n node[P]
	switch o {
	case opIn:
		n, err = ps.inSet(lhs, t)
	case opMatches:
		n, err = ps.matches(lhs, t)
	default:
		n, err = ps.relation(lhs, t, o, m)
	}
	if err != nil {
		return nil, err
	}
	if negl {
		n = &notNode[P]{n}
	}
	return n, nil
}

func (ps *parser[P]) relation(lhs operand[P], optok token, o op, m mode) (node[P], error) {
	rhs, err := ps.arithOperand("a value or a field")
	if err != nil {
		return nil, err
	}
	if rhs.arith != nil && lhs.field != nil {
		typ := lhs.typ()
		if typ != TypeUint && typ != TypeTime {
			return nil, ps.errAt(rhs.tok, "%s is a %s: it cannot be compared with arithmetic", lhs.field.Name, typ)
		}
		if o == opBitAnd || o == opContains {
			return nil, ps.errAt(rhs.tok, "%q: expected a value", rhs.tok.raw)
		}
		af, err := ps.compileArith(rhs.arith, typ, lhs.field.Size, lhs.field.Name)
		if err != nil {
			return nil, err
		}
		rhs.field = af
	}
	if lhs.field == nil && rhs.field == nil {
		return nil, ps.errAt(lhs.tok, "%q is neither a field nor a protocol name", lhs.tok.raw)
	}
	if lhs.field == nil {
		// Wireshark 4.0 wants the field on the left.
		return nil, ps.errAt(lhs.tok, "%q is neither a field nor a protocol name", lhs.tok.raw)
	}
	typ := lhs.typ()
	if typ == TypeProtocol {
		return nil, ps.errAt(lhs.tok, "%s is a protocol: it can only be tested for presence", lhs.field.Name)
	}
	switch o {
	case opContains:
		if typ != TypeBytes && typ != TypeEther && typ != TypeString {
			return nil, ps.errAt(optok, "%s is a %s: \"contains\" needs a string or a byte string", lhs.field.Name, typ)
		}
	case opBitAnd:
		if typ != TypeUint && typ != TypeBool && typ != TypeBytes {
			return nil, ps.errAt(optok, "%s is a %s: \"&\" needs an integer or a byte string", lhs.field.Name, typ)
		}
	case opLt, opGt, opLe, opGe:
		if typ == TypeBool {
			return nil, ps.errAt(optok, "%s is a boolean: it can only be tested with == and !=", lhs.field.Name)
		}
	}
	tn := &test[P]{field: *lhs.field, typ: typ, slices: lhs.slices, op: o, mode: m}
	tn.init()
	if rhs.field != nil {
		if o == opBitAnd || o == opContains {
			return nil, ps.errAt(rhs.tok, "%q: expected a value", rhs.tok.raw)
		}
		rt := rhs.typ()
		if !compatible(typ, rt) {
			return nil, ps.errAt(rhs.tok, "%s (%s) and %s (%s) cannot be compared", lhs.field.Name, typ, rhs.field.Name, rt)
		}
		tn.other, tn.oslice = rhs.field, rhs.slices
		return tn, nil
	}
	names := lhs.names()
	if o == opBitAnd {
		names = nil // tshark takes a number after "&"
	}
	c, err := ps.literal(rhs.tok, typ, lhs.field.Name, lhs.field.Size, names, o == opEq || o == opNe)
	if err != nil {
		return nil, err
	}
	if c.prefix.IsValid() && o != opEq {
		return nil, ps.errAt(rhs.tok, "an address with a prefix length can only be tested with == and !=")
	}
	tn.consts = []constant{c}
	return tn, nil
}

// compatible reports whether fields of types a and b can be compared.
func compatible(a, b Type) bool {
	class := func(t Type) Type {
		switch t {
		case TypeBool:
			return TypeUint
		case TypeEther:
			return TypeBytes
		}
		return t
	}
	return class(a) == class(b)
}

func (ps *parser[P]) matches(lhs operand[P], optok token) (node[P], error) {
	if lhs.field == nil {
		return nil, ps.errAt(lhs.tok, "%q is neither a field nor a protocol name", lhs.tok.raw)
	}
	typ := lhs.typ()
	if typ != TypeString && typ != TypeBytes {
		return nil, ps.errAt(optok, "%s is a %s: \"matches\" needs a string or a byte string", lhs.field.Name, typ)
	}
	r := ps.next()
	if r.kind != tokString {
		return nil, ps.unexpected(r, "a regular expression in double quotes")
	}
	// Wireshark matches without regard to case unless the expression
	// says (?-i).
	re, err := regexp.Compile("(?i)" + r.text)
	if err != nil {
		return nil, ps.errAt(r, "bad regular expression: %v", err)
	}
	tn := &test[P]{field: *lhs.field, typ: typ, slices: lhs.slices, op: opMatches, re: re}
	tn.init()
	return tn, nil
}

func (ps *parser[P]) inSet(lhs operand[P], optok token) (node[P], error) {
	if lhs.field == nil {
		return nil, ps.errAt(lhs.tok, "%q is neither a field nor a protocol name", lhs.tok.raw)
	}
	typ := lhs.typ()
	if typ == TypeProtocol {
		return nil, ps.errAt(lhs.tok, "%s is a protocol: it can only be tested for presence", lhs.field.Name)
	}
	if b := ps.next(); b.kind != tokLBrace {
		return nil, ps.unexpected(b, `"{"`)
	}
	tn := &test[P]{field: *lhs.field, typ: typ, slices: lhs.slices, op: opIn}
	tn.init()
	for {
		t := ps.next()
		switch t.kind {
		case tokRBrace:
			if len(tn.consts) == 0 {
				return nil, ps.errAt(t, "empty set")
			}
			return tn, nil
		case tokComma:
			if len(tn.consts) == 0 {
				return nil, ps.unexpected(t, "a value")
			}
			if t = ps.next(); t.kind != tokWord && t.kind != tokString && t.kind != tokCharLit {
				return nil, ps.unexpected(t, "a value")
			}
		case tokWord, tokString, tokCharLit:
			if len(tn.consts) > 0 {
				// Wireshark 4.0 separates the elements with commas.
				return nil, ps.errAt(t, `set elements must be separated by ","`)
			}
		default:
			return nil, ps.unexpected(t, `a value or "}"`)
		}
		c, err := ps.literal(t, typ, lhs.field.Name, lhs.field.Size, lhs.names(), true)
		if err != nil {
			return nil, err
		}
		if ps.peek().kind == tokRange {
			ps.next()
			h := ps.next()
			if h.kind != tokWord && h.kind != tokString && h.kind != tokCharLit {
				return nil, ps.unexpected(h, "the end of the range")
			}
			hc, err := ps.literal(h, typ, lhs.field.Name, lhs.field.Size, lhs.names(), false)
			if err != nil {
				return nil, err
			}
			if c.prefix.IsValid() {
				return nil, ps.errAt(t, "a range cannot start at an address with a prefix length")
			}
			c.isRange, c.hi = true, hc.v
		}
		tn.consts = append(tn.consts, c)
	}
}

// literal reads a value of type typ from t. names reads the names of the
// field's values, if they have names; prefixOK allows an address with a
// prefix length.
func (ps *parser[P]) literal(t token, typ Type, fname string, size int, names func(string, bool) (uint64, bool), prefixOK bool) (constant, error) {
	s := t.text
	bad := func(format string, a ...any) (constant, error) {
		return constant{}, ps.errAt(t, format, a...)
	}
	if t.kind == tokWord {
		if f, ok := ps.reg.Lookup(s); ok && f.Type == TypeProtocol {
			return bad("%q is a protocol, not a %s", s, typ)
		}
	}
	switch typ {
	case TypeUint, TypeBool:
		// As tshark 4.0: a bare word is true or false (booleans), then a
		// number, then a name of a value; a quoted string only a name.
		byName := func() (constant, error) {
			if v, ok := names(s, t.kind == tokString); ok {
				return constant{v: Value{U: v}}, nil
			}
			return bad("%q cannot be found among the possible values for %s", s, fname)
		}
		if t.kind == tokString {
			if names != nil {
				return byName()
			}
			return bad("%s cannot be converted from a string (%q)", typ, s)
		}
		if typ == TypeBool && t.kind == tokWord {
			switch strings.ToLower(s) {
			case "true":
				return constant{v: Value{U: 1}}, nil
			case "false":
				return constant{}, nil
			}
		}
		if neg, ok := strings.CutPrefix(s, "-"); ok && typ == TypeUint && t.kind == tokWord {
			// A negative number is a signed value no unsigned one
			// equals (tshark 4.0: frame.number != -1 holds).
			if v, err := strconv.ParseUint(neg, 0, 63); err == nil {
				return constant{v: Value{U: uint64(-int64(v)), Neg: true}}, nil
			}
		}
		v, err := strconv.ParseUint(s, 0, 64)
		if err == nil && size > 0 && size < 8 && v >= 1<<(8*size) {
			if names != nil {
				return byName()
			}
			return bad("%q is too big for this field, maximum %d", s, uint64(1)<<(8*size)-1)
		}
		if err != nil {
			// tshark reads a word with a "/" as an address with a prefix
			// length, never as a name.
			if names != nil && t.kind == tokWord && !strings.Contains(s, "/") {
				return byName()
			}
			return bad("%q is not a valid %s", s, typ)
		}
		if typ == TypeBool && v > 1 {
			return bad("%q is not a valid boolean (0, 1, true or false)", s)
		}
		return constant{v: Value{U: v}}, nil
	case TypeTime:
		abs, neg := strings.CutPrefix(s, "-")
		ns, ok := parseSeconds(abs)
		if !ok || t.kind != tokWord {
			return bad("%q is not a valid time in seconds", s)
		}
		if neg {
			ns = uint64(-int64(ns))
		}
		return constant{v: Value{U: ns}}, nil
	case TypeIPv4, TypeIPv6:
		if t.kind != tokWord {
			return bad("%q is not a valid %s", s, typ)
		}
		var c constant
		if strings.Contains(s, "/") {
			if !prefixOK {
				return bad("%q: a prefix length is allowed only with == and !=", s)
			}
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return bad("%q is not a valid %s with a prefix length", s, typ)
			}
			c.prefix = p.Masked()
			c.v.Addr = c.prefix.Addr()
		} else {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return bad("%q is not a valid %s", s, typ)
			}
			c.v.Addr = a
		}
		if typ == TypeIPv4 && !c.v.Addr.Is4() || typ == TypeIPv6 && !c.v.Addr.Is6() {
			return bad("%q is not a valid %s", s, typ)
		}
		return c, nil
	case TypeString:
		return constant{v: Value{S: s}}, nil
	case TypeBytes, TypeEther:
		if t.kind == tokString {
			return constant{v: Value{B: []byte(s)}}, nil
		}
		if t.kind == tokCharLit {
			v, _ := strconv.Atoi(s)
			return constant{v: Value{B: []byte{byte(v)}}}, nil
		}
		b, ok := parseBytes(s)
		if !ok {
			return bad("%q is not a valid %s", s, typ)
		}
		if typ == TypeEther && len(b) != 6 {
			return bad("%q is not a valid Ethernet address (6 bytes)", s)
		}
		return constant{v: Value{B: b}}, nil
	}
	return bad("%s cannot be compared with a value", typ)
}

// parseBytes reads a byte string: hex bytes separated by ":", "-" or "."
// (aa:bb:cc, 00-11-22, 0011.2233.4455), or one byte 0xNN.
func parseBytes(s string) ([]byte, bool) {
	if h, ok := strings.CutPrefix(s, "0x"); ok && len(h) >= 1 && len(h) <= 2 {
		v, err := strconv.ParseUint(h, 16, 8)
		return []byte{byte(v)}, err == nil
	}
	if s == "" {
		return nil, false
	}
	var out []byte
	for _, g := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == '-' || r == '.' }) {
		if len(g) == 1 {
			g = "0" + g
		}
		if len(g)%2 != 0 {
			return nil, false
		}
		for i := 0; i < len(g); i += 2 {
			hi, lo := hexVal(g[i]), hexVal(g[i+1])
			if hi < 0 || lo < 0 {
				return nil, false
			}
			out = append(out, byte(hi<<4|lo))
		}
	}
	// Separators must be single, between groups.
	if strings.Contains(s, "::") || strings.HasPrefix(s, ":") || strings.HasSuffix(s, ":") || len(out) == 0 {
		return nil, false
	}
	return out, true
}

// parseSeconds reads seconds with up to nine decimals as nanoseconds.
func parseSeconds(s string) (uint64, bool) {
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || len(fp) > 9 {
		return 0, false
	}
	var sec uint64
	if ip != "" {
		v, err := strconv.ParseUint(ip, 10, 64)
		if err != nil || v > (1<<63)/1_000_000_000 {
			return 0, false
		}
		sec = v
	}
	var frac uint64
	for i := 0; i < 9; i++ {
		frac *= 10
		if i < len(fp) {
			if fp[i] < '0' || fp[i] > '9' {
				return 0, false
			}
			frac += uint64(fp[i] - '0')
		}
	}
	return sec*1e9 + frac, true
}

// parseSlice reads the inside of a slice's brackets.
func parseSlice(s string) ([]sliceRange, error) {
	var out []sliceRange
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		var r sliceRange
		var err error
		switch {
		case part == "":
			return nil, fmt.Errorf("empty range")
		case strings.Contains(part, ":"):
			a, b, _ := strings.Cut(part, ":")
			if a != "" {
				if r.start, err = strconv.Atoi(a); err != nil {
					return nil, fmt.Errorf("%q is not an offset", a)
				}
			}
			if b == "" {
				r.toEnd = true
			} else if r.length, err = strconv.Atoi(b); err != nil || r.length < 0 {
				return nil, fmt.Errorf("%q is not a length", b)
			}
		case strings.Contains(part[1:], "-"):
			k := strings.Index(part[1:], "-") + 1
			start, err1 := strconv.Atoi(part[:k])
			end, err2 := strconv.Atoi(part[k+1:])
			if err1 != nil || err2 != nil || start < 0 || end < start {
				return nil, fmt.Errorf("%q is not a range start-end", part)
			}
			r.start, r.length = start, end-start+1
		default:
			if r.start, err = strconv.Atoi(part); err != nil {
				return nil, fmt.Errorf("%q is not an offset", part)
			}
			r.length = 1
		}
		out = append(out, r)
	}
	return out, nil
}
