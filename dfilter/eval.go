package dfilter

import (
	"bytes"
	"math"
	"net/netip"
	"regexp"
	"strings"
	"unsafe"
)

// node is a compiled part of a filter.
type node[P any] interface {
	eval(p P) bool
}

type andNode[P any] struct{ l, r node[P] }

func (n *andNode[P]) eval(p P) bool { return n.l.eval(p) && n.r.eval(p) }

type orNode[P any] struct{ l, r node[P] }

func (n *orNode[P]) eval(p P) bool { return n.l.eval(p) || n.r.eval(p) }

type notNode[P any] struct{ n node[P] }

func (n *notNode[P]) eval(p P) bool { return !n.n.eval(p) }

// op is the per-value predicate of a test.
type op uint8

const (
	opExists op = iota
	opEq
	opNe
	opLt
	opGt
	opLe
	opGe
	opContains
	opMatches
	opIn
	opBitAnd
)

// mode is how a test combines the predicate's verdicts on the occurrences.
type mode uint8

const (
	modeAny    mode = iota // some occurrence passes (==, <, contains, in, ...)
	modeAll                // every occurrence passes (===)
	modeNone               // the field occurs and no occurrence passes (!=, all_ne)
	modeNotAll             // some occurrence fails (~=, any_ne)
)

// sliceRange is one range of a slice [start:len], [start-end], [start],
// [:len] or [start:]; end is exclusive, toEnd says the range runs to the
// end of the value.
type sliceRange struct {
	start, length int
	toEnd         bool
}

// constant is one literal a test compares with: a value, an IP prefix
// (ip.addr == 10.0.0.0/8), or a range lo..hi in a set.
type constant struct {
	v       Value
	prefix  netip.Prefix // valid for an address with /bits
	isRange bool
	hi      Value
}

// test is a relation between a field and literals or another field.
type test[P any] struct {
	field  Field[P]
	typ    Type // the field's type, or TypeBytes once sliced
	slices []sliceRange
	op     op
	mode   mode
	consts []constant
	re     *regexp.Regexp
	other  *Field[P] // the right-hand field of field == field
	oslice []sliceRange

	// evaluation state, reused on every packet
	seen, hit, all bool
	emit           func(Value)
	collect        func(Value)
	others         []Value
	buf            []byte // the bytes of a multi-range slice
	obuf           []byte // the right-hand field's slice bytes, all values back to back
	scratch        [16]byte
}

func (t *test[P]) init() {
	t.emit = t.visit
	t.collect = t.keep
}

func (t *test[P]) eval(p P) bool {
	t.seen, t.hit, t.all = false, false, true
	if t.other != nil {
		t.others = t.others[:0]
		t.obuf = t.obuf[:0]
		t.other.Each(p, t.collect)
		if len(t.others) == 0 {
			return false
		}
	}
	t.field.Each(p, t.emit)
	if !t.seen {
		return false
	}
	switch t.mode {
	case modeAll:
		return t.all
	case modeNone:
		return !t.hit
	case modeNotAll:
		return !t.all
	}
	return t.hit
}

// keep collects the right-hand field's values (sliced when asked).
func (t *test[P]) keep(v Value) {
	if t.oslice != nil {
		start := len(t.obuf)
		var ok bool
		t.obuf, ok = appendSlice(t.obuf, valueBytes(v, t.other.Type, &t.scratch), t.oslice)
		if !ok {
			t.obuf = t.obuf[:start]
			return
		}
		// obuf may move as it grows: keep the offset and length, resolved in pred.
		v = Value{U: uint64(start)<<32 | uint64(len(t.obuf)-start)}
	}
	t.others = append(t.others, v)
}

func (t *test[P]) visit(v Value) {
	if t.slices != nil {
		var ok bool
		t.buf, ok = appendSlice(t.buf[:0], valueBytes(v, t.field.Type, &t.scratch), t.slices)
		if !ok {
			return
		}
		v = Value{B: t.buf}
	}
	t.seen = true
	switch t.pred(v) {
	case verdictTrue:
		t.hit = true
	case verdictFalse:
		t.all = false
	}
}

// verdict is a test's predicate on one occurrence: true, false, or no
// verdict when the values cannot be compared (a negative signed value
// against an unsigned field), which counts neither way.
type verdict uint8

const (
	verdictFalse verdict = iota
	verdictTrue
	verdictNone
)

func verdictOf(b bool) verdict {
	if b {
		return verdictTrue
	}
	return verdictFalse
}

// valueBytes is the bytes a slice of v is taken from; an address is
// copied into scratch.
func valueBytes(v Value, typ Type, scratch *[16]byte) []byte {
	switch typ {
	case TypeString:
		return unsafe.Slice(unsafe.StringData(v.S), len(v.S))
	case TypeIPv4:
		a := v.Addr.As4()
		return scratch[:copy(scratch[:], a[:])]
	case TypeIPv6:
		a := v.Addr.As16()
		return scratch[:copy(scratch[:], a[:])]
	}
	return v.B
}

// appendSlice appends the ranges rs of b to dst; ok is false when a range
// falls outside b (Wireshark then drops the occurrence).
func appendSlice(dst, b []byte, rs []sliceRange) ([]byte, bool) {
	n := len(b)
	for _, r := range rs {
		start := r.start
		if start < 0 {
			start += n
		}
		if start < 0 || start > n {
			return dst, false
		}
		end := n
		if !r.toEnd {
			end = start + r.length
		}
		if end > n || end < start {
			return dst, false
		}
		dst = append(dst, b[start:end]...)
	}
	return dst, true
}

func (t *test[P]) pred(v Value) verdict {
	switch t.op {
	case opExists:
		return verdictTrue
	case opMatches:
		if t.typ == TypeString {
			return verdictOf(t.re.MatchString(v.S))
		}
		return verdictOf(t.re.Match(v.B))
	case opBitAnd:
		if t.typ == TypeBytes {
			// Bytes against a mask (tcp[13] & 02): some bit set in both.
			m := t.consts[0].v.B
			for i := 0; i < len(v.B) && i < len(m); i++ {
				if v.B[i]&m[i] != 0 {
					return verdictTrue
				}
			}
			return verdictFalse
		}
		return verdictOf(v.U&t.consts[0].v.U != 0)
	}
	if t.other != nil {
		for i := range t.others {
			o := t.others[i]
			if t.oslice != nil {
				off, n := o.U>>32, o.U&0xffffffff
				o = Value{B: t.obuf[off : off+n]}
			}
			if comparable(t.typ, v, o) && t.relate(v, o, netip.Prefix{}) {
				return verdictTrue
			}
		}
		return verdictFalse
	}
	if t.op == opIn {
		for i := range t.consts {
			c := &t.consts[i]
			if !comparable(t.typ, v, c.v) {
				continue
			}
			if c.isRange {
				if compare(t.typ, v, c.v) >= 0 && compare(t.typ, v, c.hi) <= 0 {
					return verdictTrue
				}
			} else if equal(t.typ, v, c.v, c.prefix) {
				return verdictTrue
			}
		}
		return verdictFalse
	}
	c := &t.consts[0]
	if !comparable(t.typ, v, c.v) {
		return verdictNone
	}
	return verdictOf(t.relate(v, c.v, c.prefix))
}

// comparable reports whether tshark 4.0 compares integers v and c: a
// negative signed value on the right of an unsigned one, or an unsigned
// value beyond int64 on the right of a signed one, cannot be.
func comparable(typ Type, v, c Value) bool {
	if typ != TypeUint {
		return true
	}
	if !v.Neg && c.Neg && int64(c.U) < 0 {
		return false
	}
	if v.Neg && !c.Neg && c.U > math.MaxInt64 {
		return false
	}
	return true
}

// relate applies the test's relation to a value and one operand.
func (t *test[P]) relate(v, c Value, prefix netip.Prefix) bool {
	switch t.op {
	case opEq:
		return equal(t.typ, v, c, prefix)
	case opNe:
		return !equal(t.typ, v, c, prefix)
	case opLt:
		return compare(t.typ, v, c) < 0
	case opGt:
		return compare(t.typ, v, c) > 0
	case opLe:
		return compare(t.typ, v, c) <= 0
	case opGe:
		return compare(t.typ, v, c) >= 0
	case opContains:
		if t.typ == TypeString {
			return strings.Contains(v.S, c.S)
		}
		return bytes.Contains(v.B, c.B)
	}
	return false
}

func equal(typ Type, v, c Value, prefix netip.Prefix) bool {
	switch typ {
	case TypeIPv4, TypeIPv6:
		if prefix.IsValid() {
			return prefix.Contains(v.Addr)
		}
		return v.Addr == c.Addr
	case TypeBytes, TypeEther:
		return bytes.Equal(v.B, c.B)
	case TypeString:
		return v.S == c.S
	}
	return v.U == c.U
}

func compare(typ Type, v, c Value) int {
	switch typ {
	case TypeIPv4, TypeIPv6:
		return v.Addr.Compare(c.Addr)
	case TypeBytes, TypeEther:
		return bytes.Compare(v.B, c.B)
	case TypeString:
		return strings.Compare(v.S, c.S)
	}
	if typ == TypeTime || v.Neg {
		// Times and signed values compare as int64.
		a, b := int64(v.U), int64(c.U)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	switch {
	case v.U < c.U:
		return -1
	case v.U > c.U:
		return 1
	}
	return 0
}
