package dfilter

import (
	"strconv"
	"unsafe"
)

// Functions (wireshark-filter(4), "Functions", as tshark 4.0 has them):
//
//	len(field)       the byte length of each occurrence (an integer's
//	                 width, 0 for booleans and times)
//	count(field)     how many times the field occurs
//	upper(field)     each occurrence of a string field in upper case
//	lower(field)     ... in lower case
//	string(field)    each occurrence of an integer or address as text
//	max(f, ...)      the largest of every occurrence of every argument
//	min(f, ...)      the smallest
//	abs(field)       each occurrence's absolute value
//
// A call is compiled into a Field whose Each computes the results, so a
// test treats a call as it treats a field; like a field, a call whose
// arguments do not occur has no value and fails every test.

type fnKind uint8

const (
	fnLen fnKind = iota
	fnCount
	fnUpper
	fnLower
	fnString
	fnMax
	fnMin
	fnAbs
)

var functions = map[string]fnKind{
	"len": fnLen, "count": fnCount, "upper": fnUpper, "lower": fnLower,
	"string": fnString, "max": fnMax, "min": fnMin, "abs": fnAbs,
}

// call is a compiled function call and its state, reused on every packet.
type call[P any] struct {
	kind   fnKind
	args   []*Field[P] // the fields among the arguments
	consts []Value     // max() and min()'s literal arguments
	argTyp Type        // the (first) argument's type
	argLen int         // its Size
	emit   func(Value)
	visit  func(Value) // made once: passing c.visit allocates nothing
	n      uint64
	best   Value
	have   bool
	buf    []byte // the text of upper(), lower() and string() results
}

func (c *call[P]) each(p P, emit func(Value)) {
	c.emit = emit
	c.n, c.have, c.buf = 0, false, c.buf[:0]
	for _, a := range c.args {
		a.Each(p, c.visit)
	}
	switch c.kind {
	case fnCount:
		if c.n > 0 {
			emit(Value{U: c.n})
		}
	case fnMax, fnMin:
		if c.have {
			for _, k := range c.consts {
				c.pick(k)
			}
			emit(c.best)
		} else if len(c.consts) > 0 {
			// tshark: a literal argument is a value even when no field
			// argument occurs.
			c.best, c.have = c.consts[0], true
			for _, k := range c.consts[1:] {
				c.pick(k)
			}
			emit(c.best)
		}
	}
	c.emit = nil
}

func (c *call[P]) pick(v Value) {
	if !c.have {
		c.best, c.have = v, true
		return
	}
	d := compare(c.argTyp, v, c.best)
	if c.kind == fnMax && d > 0 || c.kind == fnMin && d < 0 {
		c.best = v
	}
}

// one handles one occurrence of an argument.
func (c *call[P]) one(v Value) {
	switch c.kind {
	case fnCount:
		c.n++
	case fnMax, fnMin:
		c.pick(v)
	case fnAbs:
		c.emit(v) // unsigned integers and times are their own absolute values
	case fnLen:
		c.emit(Value{U: uint64(valueLen(v, c.argTyp, c.argLen))})
	case fnUpper, fnLower:
		start := len(c.buf)
		for i := 0; i < len(v.S); i++ {
			b := v.S[i]
			if c.kind == fnUpper && b >= 'a' && b <= 'z' {
				b -= 'a' - 'A'
			} else if c.kind == fnLower && b >= 'A' && b <= 'Z' {
				b += 'a' - 'A'
			}
			c.buf = append(c.buf, b)
		}
		c.emit(Value{S: c.text(start)})
	case fnString:
		start := len(c.buf)
		switch c.argTyp {
		case TypeUint:
			c.buf = strconv.AppendUint(c.buf, v.U, 10)
		case TypeIPv4, TypeIPv6:
			c.buf = v.Addr.AppendTo(c.buf)
		case TypeEther:
			for i, b := range v.B {
				if i > 0 {
					c.buf = append(c.buf, ':')
				}
				c.buf = append(c.buf, "0123456789abcdef"[b>>4], "0123456789abcdef"[b&15])
			}
		}
		c.emit(Value{S: c.text(start)})
	}
}

// text is the bytes of buf from start as a string, without copying: it
// is valid until the next packet, as every value a test sees. (An earlier
// result keeps the array it was written in if buf grows.)
func (c *call[P]) text(start int) string {
	b := c.buf[start:]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// valueLen is len() of one occurrence: the bytes of a byte string, string
// or address, an integer's width (Field.Size), 0 for booleans and times, as
// tshark 4.0 gives them.
func valueLen(v Value, typ Type, size int) int {
	switch typ {
	case TypeBytes, TypeEther:
		return len(v.B)
	case TypeString:
		return len(v.S)
	case TypeIPv4:
		return 4
	case TypeIPv6:
		return 16
	case TypeUint:
		return size
	}
	return 0
}
