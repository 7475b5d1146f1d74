package dfilter

import "math"

// Arithmetic (wireshark-filter(4), "Arithmetic operators", as tshark 4.0
// has it): + - * / % on integer fields (and the results of len() and
// count()), + and - on times, a unary minus, and { } to group:
//
//	udp.dstport >= udp.srcport + 1
//	tcp.dstport >= 4 * {tcp.srcport + 3}
//
// "-" and "/" must stand apart from the words around them ("A-B" is one
// word, as in Wireshark). Each operator combines every occurrence of its
// left operand with every occurrence of its right one. Integers are
// computed in 64 bits: unsigned while they stay at or above zero, signed
// (Value.Neg) once a subtraction goes below it or a value is negated, as
// tshark 4.0 computes them; a division by zero has no value. An
// expression alone is a test that holds when its value is not zero.

// expr is a parsed arithmetic expression, typed when compiled.
type expr[P any] struct {
	op       tokKind // tokPlus ... tokMod; tokMinus with r == nil negates l; tokEOF: an atom
	l, r     *expr[P]
	atom     operand[P]
	pos, end int
}

// sum parses expr = product { ("+" | "-") product }.
func (ps *parser[P]) sum(want string) (*expr[P], error) {
	l, err := ps.product(want)
	if err != nil {
		return nil, err
	}
	for {
		t := ps.peek()
		var r *expr[P]
		switch {
		case t.kind == tokPlus || t.kind == tokMinus:
			ps.next()
			if r, err = ps.product("a value or a field"); err != nil {
				return nil, err
			}
		case t.kind == tokWord && len(t.text) > 1 && t.text[0] == '-':
			// "a -1": a subtraction, the "-" glued to the operand.
			ps.next()
			rest := token{kind: tokWord, text: t.text[1:], raw: t.raw[1:], pos: t.pos + 1, end: t.end}
			if r, err = ps.atomExpr(rest); err != nil {
				return nil, err
			}
			t.kind = tokMinus
		default:
			return l, nil
		}
		l = &expr[P]{op: t.kind, l: l, r: r, pos: l.pos, end: r.end}
	}
}

// product parses product = unary { ("*" | "/" | "%") unary }.
func (ps *parser[P]) product(want string) (*expr[P], error) {
	l, err := ps.unaryExpr(want)
	if err != nil {
		return nil, err
	}
	for {
		t := ps.peek()
		if t.kind != tokMul && t.kind != tokDiv && t.kind != tokMod {
			return l, nil
		}
		ps.next()
		r, err := ps.unaryExpr("a value or a field")
		if err != nil {
			return nil, err
		}
		l = &expr[P]{op: t.kind, l: l, r: r, pos: l.pos, end: r.end}
	}
}

// unaryExpr parses unary = "-" unary | "{" expr "}" | operand.
func (ps *parser[P]) unaryExpr(want string) (*expr[P], error) {
	switch t := ps.peek(); {
	case t.kind == tokMinus:
		ps.next()
		x, err := ps.unaryExpr(want)
		if err != nil {
			return nil, err
		}
		return &expr[P]{op: tokMinus, l: x, pos: t.pos, end: x.end}, nil
	case t.kind == tokWord && len(t.text) > 1 && t.text[0] == '-' && !isNumber(t.text[1:]):
		// "-field": a negation ("-1" stays a literal).
		ps.next()
		x, err := ps.atomExpr(token{kind: tokWord, text: t.text[1:], raw: t.raw[1:], pos: t.pos + 1, end: t.end})
		if err != nil {
			return nil, err
		}
		return &expr[P]{op: tokMinus, l: x, pos: t.pos, end: x.end}, nil
	case t.kind == tokLBrace:
		ps.next()
		x, err := ps.sum("a value or a field")
		if err != nil {
			return nil, err
		}
		if c := ps.next(); c.kind != tokRBrace {
			return nil, ps.unexpected(c, `"}"`)
		}
		return x, nil
	}
	o, err := ps.operand(want)
	if err != nil {
		return nil, err
	}
	return &expr[P]{op: tokEOF, atom: o, pos: o.tok.pos, end: o.tok.end}, nil
}

// atomExpr reads an operand from a word already taken from the input.
func (ps *parser[P]) atomExpr(t token) (*expr[P], error) {
	o, err := ps.wordOperand(t)
	if err != nil {
		return nil, err
	}
	return &expr[P]{op: tokEOF, atom: o, pos: o.tok.pos, end: o.tok.end}, nil
}

func isNumber(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.')
}

// arithOperand parses an operand that may be an arithmetic expression: a
// plain field, call or literal is returned as it is; an expression is
// returned with arith set, compiled later against the type it meets.
func (ps *parser[P]) arithOperand(want string) (operand[P], error) {
	x, err := ps.sum(want)
	if err != nil {
		return operand[P]{}, err
	}
	if x.op == tokEOF {
		return x.atom, nil
	}
	span := ps.src[x.pos:x.end]
	return operand[P]{tok: token{kind: tokWord, text: span, raw: span, pos: x.pos, end: x.end}, arith: x}, nil
}

// firstField is the first field (or call) of x, left to right.
func firstField[P any](x *expr[P]) *operand[P] {
	if x == nil {
		return nil
	}
	if x.op == tokEOF {
		if x.atom.field != nil {
			return &x.atom
		}
		return nil
	}
	if f := firstField(x.l); f != nil {
		return f
	}
	return firstField(x.r)
}

// compileArith types x as typ (TypeUint or TypeTime, size bytes wide when
// known) and makes it a Field whose occurrences are its values.
func (ps *parser[P]) compileArith(x *expr[P], typ Type, size int, fname string) (*Field[P], error) {
	n, err := ps.arithNode(x, typ, size, fname)
	if err != nil {
		return nil, err
	}
	return &Field[P]{Name: ps.src[x.pos:x.end], Type: typ, Size: size, Each: n.each}, nil
}

func (ps *parser[P]) arithNode(x *expr[P], typ Type, size int, fname string) (*arith[P], error) {
	a := &arith[P]{op: x.op, time: typ == TypeTime}
	a.collect = a.keep
	if x.op == tokEOF {
		o := x.atom
		switch {
		case o.slices != nil:
			return nil, ps.errAt(o.tok, "a slice cannot take part in arithmetic")
		case o.field != nil:
			ft := o.field.Type
			if ft != TypeUint && ft != TypeTime {
				return nil, ps.errAt(o.tok, "%s is a %s: only integers and times take part in arithmetic", o.field.Name, ft)
			}
			if ft != typ {
				return nil, ps.errAt(o.tok, "%s is a %s: it cannot be combined with a %s", o.field.Name, ft, typ)
			}
			a.field = o.field
		default:
			if o.tok.kind != tokWord {
				return nil, ps.errAt(o.tok, "%s is not a valid arithmetic operand", o.tok.raw)
			}
			c, err := ps.literal(o.tok, typ, fname, size, nil, false)
			if err != nil {
				return nil, err
			}
			a.konst, a.isConst = c.v, true
		}
		return a, nil
	}
	if typ == TypeTime && (x.op == tokMul || x.op == tokDiv || x.op == tokMod) {
		return nil, ps.errAt(token{pos: x.pos, end: x.end}, "times can only be added and subtracted")
	}
	var err error
	if a.l, err = ps.arithNode(x.l, typ, size, fname); err != nil {
		return nil, err
	}
	if x.r != nil {
		if a.r, err = ps.arithNode(x.r, typ, size, fname); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// arith is a compiled arithmetic expression and its values on the
// current packet, reused on every packet.
type arith[P any] struct {
	op      tokKind
	l, r    *arith[P]
	field   *Field[P]
	konst   Value
	isConst bool
	time    bool
	out     []Value
	collect func(Value)
}

func (a *arith[P]) keep(v Value) { a.out = append(a.out, v) }

func (a *arith[P]) each(p P, emit func(Value)) {
	for _, v := range a.eval(p) {
		emit(v)
	}
}

func (a *arith[P]) eval(p P) []Value {
	a.out = a.out[:0]
	switch {
	case a.field != nil:
		a.field.Each(p, a.collect)
	case a.isConst:
		a.out = append(a.out, a.konst)
	case a.r == nil:
		for _, x := range a.l.eval(p) {
			a.out = append(a.out, Value{U: uint64(-int64(x.U)), Neg: !a.time})
		}
	default:
		ls, rs := a.l.eval(p), a.r.eval(p)
		for _, x := range ls {
			for _, y := range rs {
				if z, ok := a.apply(x, y); ok {
					a.out = append(a.out, z)
				}
			}
		}
	}
	return a.out
}

// apply computes x op y, as tshark 4.0 does (see the top of the file).
func (a *arith[P]) apply(x, y Value) (Value, bool) {
	signed := a.time || x.Neg
	if !signed {
		if y.Neg {
			if int64(y.U) < 0 {
				return Value{}, false // an unsigned value and a negative one
			}
		}
		switch a.op {
		case tokPlus:
			return Value{U: x.U + y.U}, true
		case tokMinus:
			if x.U >= y.U {
				return Value{U: x.U - y.U}, true
			}
			return Value{U: uint64(-int64(y.U - x.U)), Neg: true}, true
		case tokMul:
			return Value{U: x.U * y.U}, true
		case tokDiv:
			if y.U == 0 {
				return Value{}, false
			}
			return Value{U: x.U / y.U}, true
		case tokMod:
			if y.U == 0 {
				return Value{}, false
			}
			return Value{U: x.U % y.U}, true
		}
		return Value{}, false
	}
	if !a.time && !y.Neg && y.U > math.MaxInt64 {
		return Value{}, false
	}
	xi, yi := int64(x.U), int64(y.U)
	var r int64
	switch a.op {
	case tokPlus:
		r = xi + yi
	case tokMinus:
		r = xi - yi
	case tokMul:
		r = xi * yi
	case tokDiv, tokMod:
		if yi == 0 || xi == math.MinInt64 && yi == -1 {
			return Value{}, false
		}
		if a.op == tokDiv {
			r = xi / yi
		} else {
			r = xi % yi
		}
	default:
		return Value{}, false
	}
	return Value{U: uint64(r), Neg: !a.time}, true
}
