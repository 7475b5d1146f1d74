package fields

import (
	"fmt"
	"math/bits"
	"strconv"
)

// infoBuf builds the summary line's text: a byte slice that the common
// fields are appended to with strconv, and that fmt prints into for the
// rare ones (it is an io.Writer). report's summary writer appends a
// packet's line to its own reused buffer (AppendInfo), so that the
// text output of dissect does not go through fmt per packet.
type infoBuf struct{ b []byte }

func (w *infoBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *infoBuf) WriteString(s string) (int, error) {
	w.b = append(w.b, s...)
	return len(s), nil
}

func (w *infoBuf) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

func (w *infoBuf) String() string { return string(w.b) }
func (w *infoBuf) Len() int       { return len(w.b) }

// uint appends v in decimal (%d).
func (w *infoBuf) uint(v uint64) { w.b = strconv.AppendUint(w.b, v, 10) }

// int appends v in decimal (%d).
func (w *infoBuf) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

// hex appends v as 0x and at least digits lowercase hex digits (0x%0*x).
func (w *infoBuf) hex(v uint64, digits int) { w.b = AppendHex(w.b, v, digits) }

// AppendHex appends "0x" and v in lowercase hex, zero-padded to digits
// (fmt's "0x%0*x") without fmt: the value format of hexadecimal fields,
// the summary lines, and report's XIDs and STags.
func AppendHex(dst []byte, v uint64, digits int) []byte {
	return appendHex(append(dst, "0x"...), v, digits)
}

// appendHex appends v in lowercase hex, zero-padded to digits.
func appendHex(dst []byte, v uint64, digits int) []byte {
	const hexDigits = "0123456789abcdef"
	n := max((bits.Len64(v)+3)/4, digits, 1)
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[v>>(4*uint(i))&0xf]) // 0 past the 16th digit
	}
	return dst
}

// printf appends fmt's formatting (fmt.Appendf: w itself does not escape,
// as it would through fmt.Fprintf).
func (w *infoBuf) printf(format string, a ...any) { w.b = fmt.Appendf(w.b, format, a...) }
