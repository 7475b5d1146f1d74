package fields

import (
	"encoding/hex"
	"strconv"
)

// AppendFormat appends Format(v) to dst without allocating: dissect -T
// fields prints every value through it into one reused line.
func (f *Field) AppendFormat(dst []byte, v Value) []byte {
	return f.appendValue(dst, &v, false)
}

// AppendText appends Format(v) for a text output (-T fields): a string,
// which comes from the capture, escaped (AppendEscaped).
func (f *Field) AppendText(dst []byte, v Value) []byte {
	return f.appendValue(dst, &v, true)
}

// appendValue is AppendFormat, its strings escaped when escape is set. v
// is a pointer and both wrappers inline: -T fields prints every value of
// every packet through here, and the Value (88 octets) is not copied
// again per call.
func (f *Field) appendValue(dst []byte, v *Value, escape bool) []byte {
	switch f.Type {
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		if f.Base == BaseHex {
			return AppendHex(dst, v.U, f.Type.hexDigits())
		}
		return strconv.AppendUint(dst, v.U, 10)
	case FTBoolean:
		if v.U != 0 {
			return append(dst, '1')
		}
		return append(dst, '0')
	case FTBytes, FTProtocol:
		return hex.AppendEncode(dst, v.B)
	case FTIPv4, FTIPv6:
		if v.Addr.IsValid() {
			return v.Addr.AppendTo(dst)
		}
		return dst
	case FTEther:
		for i, c := range v.B {
			if i > 0 {
				dst = append(dst, ':')
			}
			dst = hex.AppendEncode(dst, []byte{c})
		}
		return dst
	case FTTime, FTRelTime:
		// formatSeconds: "%d.%09d" of the seconds and nanoseconds.
		dst = strconv.AppendUint(dst, v.U/1e9, 10)
		dst = append(dst, '.')
		return appendDecPadded(dst, v.U%1e9, 9)
	}
	if escape {
		return AppendEscaped(dst, v.S)
	}
	return append(dst, v.S...)
}

// AppendDisplay appends Display(v) to dst: the -V tree's form of v, its
// strings escaped (AppendText).
func (f *Field) AppendDisplay(dst []byte, v Value) []byte {
	n := len(dst)
	dst = f.AppendText(dst, v)
	if v.Text != "" {
		if len(dst) == n {
			return AppendEscaped(dst, v.Text)
		}
		dst = append(dst, " ("...)
		dst = AppendEscaped(dst, v.Text)
		dst = append(dst, ')')
	}
	return dst
}

// appendDecPadded appends v in decimal, zero-padded to digits.
func appendDecPadded(dst []byte, v uint64, digits int) []byte {
	var tmp [20]byte
	n := len(strconv.AppendUint(tmp[:0], v, 10))
	for ; n < digits; n++ {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, v, 10)
}
