package fields

import "unicode/utf8"

// Text from a capture — AUTH_SYS machine names, NFS file names, pcapng
// comments and interface names, anything a string field holds — and the
// names of the captures themselves are printed in text outputs escaped as
// tshark escapes them (issue 29 point 9), so that no byte of a capture
// reaches a terminal raw: an escape sequence cannot retitle the window,
// clear the screen or make the terminal type into the shell, and a newline
// or a tab cannot forge a -T fields row or column.
//
//   - printable ASCII, backslash included, and valid UTF-8 are kept;
//   - newline, carriage return and tab are \n, \r and \t;
//   - the other C0 controls and DEL are \xNN (ESC is \x1b, NUL \x00);
//   - each byte that is not part of valid UTF-8 is \xNN;
//   - the C1 controls (U+0080–U+009F: U+009B is a CSI to some terminals)
//     and the invisible controls that reorder or hide text (bidi overrides
//     and isolates U+202A–U+202E, U+2066–U+2069, marks U+200E, U+200F,
//     U+061C, line and paragraph separators U+2028, U+2029) are \uNNNN.
//
// JSON, JUnit XML and SARIF escape by their own rules and show the string
// as it is.

// AppendEscaped appends s to dst escaped for a text output.
func AppendEscaped[T ~string | ~[]byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			dst = append(dst, c)
			i++
			continue
		case c == '\n':
			dst = append(dst, `\n`...)
			i++
			continue
		case c == '\r':
			dst = append(dst, `\r`...)
			i++
			continue
		case c == '\t':
			dst = append(dst, `\t`...)
			i++
			continue
		case c < 0x80:
			dst = appendHexByte(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && n <= 1:
			dst = appendHexByte(dst, c)
			i++
		case hiddenRune(r):
			dst = append(dst, `\u`...)
			dst = appendHex4(dst, uint32(r))
			i += n
		default:
			dst = append(dst, s[i:i+n]...)
			i += n
		}
	}
	return dst
}

// Escape returns s escaped for a text output (AppendEscaped); s itself
// when nothing needs escaping.
func Escape(s string) string {
	if !NeedsEscape(s) {
		return s
	}
	return string(AppendEscaped(nil, s))
}

// NeedsEscape reports whether AppendEscaped would change s.
func NeedsEscape[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			return true
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if (r == utf8.RuneError && n <= 1) || hiddenRune(r) {
			return true
		}
		i += n
	}
	return false
}

// hiddenRune reports the valid runes escaped as \uNNNN: C1 controls and
// the format characters that reorder or break lines of text.
func hiddenRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func appendHexByte(dst []byte, c byte) []byte {
	const digits = "0123456789abcdef"
	return append(dst, '\\', 'x', digits[c>>4], digits[c&0xf])
}

func appendHex4(dst []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	return append(dst, digits[v>>12&0xf], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf])
}
