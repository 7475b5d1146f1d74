package dfilter

import (
	"strings"
)

// tokKind is the kind of a lexical token of a display filter.
type tokKind uint8

const (
	tokEOF      tokKind = iota
	tokWord             // a field name or an unquoted literal: ip.src, 10.0.0.1/8, aa:bb:cc, 0x1f
	tokString           // a double-quoted string, unescaped
	tokCharLit          // a character constant 'a', as a number
	tokLParen           // (
	tokRParen           // )
	tokLBrace           // {
	tokRBrace           // }
	tokComma            // ,
	tokRange            // .. in a set
	tokSlice            // [ ... ], the text between the brackets
	tokEq               // == eq any_eq
	tokAllEq            // === all_eq
	tokNe               // != ne all_ne
	tokAnyNe            // ~= any_ne
	tokLt               // < lt
	tokGt               // > gt
	tokLe               // <= le
	tokGe               // >= ge
	tokAnd              // and &&
	tokOr               // or ||
	tokXor              // xor ^^
	tokNot              // not !
	tokContains         // contains
	tokMatches          // matches ~
	tokIn               // in
	tokBitAnd           // & bitwise_and
	tokPlus             // +
	tokMinus            // - (a word of its own)
	tokMul              // *
	tokDiv              // / (a word of its own)
	tokMod              // %
)

var tokNames = [...]string{
	tokEOF: "end of filter", tokWord: "word", tokString: "string", tokCharLit: "character constant",
	tokLParen: `"("`, tokRParen: `")"`, tokLBrace: `"{"`, tokRBrace: `"}"`, tokComma: `","`,
	tokRange: `".."`, tokSlice: "slice", tokEq: `"=="`, tokAllEq: `"==="`, tokNe: `"!="`, tokAnyNe: `"~="`,
	tokLt: `"<"`, tokGt: `">"`, tokLe: `"<="`, tokGe: `">="`, tokAnd: `"and"`, tokOr: `"or"`,
	tokNot: `"not"`, tokContains: `"contains"`, tokMatches: `"matches"`, tokIn: `"in"`,
	tokBitAnd: `"&"`, tokPlus: `"+"`, tokMinus: `"-"`, tokMul: `"*"`, tokDiv: `"/"`, tokMod: `"%"`,
}

func (k tokKind) String() string {
	if int(k) < len(tokNames) {
		return tokNames[k]
	}
	return "token"
}

// token is one token and where it is in the filter (byte offsets).
type token struct {
	kind tokKind
	text string // the word, the unescaped string, the slice's inside
	raw  string // the token as written
	pos  int
	end  int
}

// keywords are the words that are operators (wireshark-filter(4)).
var keywords = map[string]tokKind{
	"eq": tokEq, "any_eq": tokEq, "all_eq": tokAllEq, "ne": tokNe, "all_ne": tokNe, "any_ne": tokAnyNe,
	"lt": tokLt, "gt": tokGt, "le": tokLe, "ge": tokGe,
	"and": tokAnd, "or": tokOr, "not": tokNot,
	"contains": tokContains, "matches": tokMatches, "in": tokIn, "bitwise_and": tokBitAnd,
}

// wordByte reports whether c can be part of an unquoted word: a field name
// (letters, digits, _ - .), or a literal (addresses with : and /, ranges of
// bytes with -).
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '/'
}

// lex splits the filter into tokens.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		if i >= len(src) {
			toks = append(toks, token{kind: tokEOF, pos: len(src), end: len(src)})
			return toks, nil
		}
		start := i
		op := func(k tokKind, n int) {
			toks = append(toks, token{kind: k, raw: src[start : start+n], pos: start, end: start + n})
			i = start + n
		}
		c := src[i]
		next := byte(0)
		if i+1 < len(src) {
			next = src[i+1]
		}
		switch {
		case c == '(':
			op(tokLParen, 1)
		case c == ')':
			op(tokRParen, 1)
		case c == '{':
			op(tokLBrace, 1)
		case c == '}':
			op(tokRBrace, 1)
		case c == ',':
			op(tokComma, 1)
		case c == '=' && next == '=':
			if i+2 < len(src) && src[i+2] == '=' {
				op(tokAllEq, 3)
			} else {
				op(tokEq, 2)
			}
		case c == '!' && next == '=':
			op(tokNe, 2)
		case c == '!':
			op(tokNot, 1)
		case c == '~' && next == '=':
			op(tokAnyNe, 2)
		case c == '~':
			op(tokMatches, 1)
		case c == '<' && next == '=':
			op(tokLe, 2)
		case c == '<':
			op(tokLt, 1)
		case c == '>' && next == '=':
			op(tokGe, 2)
		case c == '>':
			op(tokGt, 1)
		case c == '&' && next == '&':
			op(tokAnd, 2)
		case c == '&':
			op(tokBitAnd, 1)
		case c == '|' && next == '|':
			op(tokOr, 2)
		case c == '.' && next == '.':
			op(tokRange, 2)
		case c == '+':
			op(tokPlus, 1)
		case c == '*':
			op(tokMul, 1)
		case c == '%':
			op(tokMod, 1)
		case c == '[':
			j := strings.IndexByte(src[i:], ']')
			if j < 0 {
				return nil, &Error{Filter: src, Pos: i, End: len(src), Msg: `"[" without "]"`}
			}
			toks = append(toks, token{kind: tokSlice, text: src[i+1 : i+j], raw: src[i : i+j+1], pos: i, end: i + j + 1})
			i += j + 1
		case c == '"':
			s, n, err := unquote(src[i:])
			if err != "" {
				return nil, &Error{Filter: src, Pos: i + n, End: i + n + 1, Msg: err}
			}
			toks = append(toks, token{kind: tokString, text: s, raw: src[i : i+n], pos: i, end: i + n})
			i += n
		case c == '\'':
			v, n, err := charConst(src[i:])
			if err != "" {
				return nil, &Error{Filter: src, Pos: i, End: i + max(n, 1), Msg: err}
			}
			toks = append(toks, token{kind: tokCharLit, text: v, raw: src[i : i+n], pos: i, end: i + n})
			i += n
		case wordByte(c):
			j := i
			for j < len(src) && wordByte(src[j]) {
				// ".." ends a word: 1..5 is a range in a set.
				if src[j] == '.' && j+1 < len(src) && src[j+1] == '.' && j > i {
					break
				}
				j++
			}
			w := src[i:j]
			k := tokWord
			if kw, ok := keywords[w]; ok {
				k = kw
			}
			// "-" and "/" alone are arithmetic (wireshark-filter(4): "A-B"
			// is one word; write "A - B").
			switch w {
			case "-":
				k = tokMinus
			case "/":
				k = tokDiv
			}
			toks = append(toks, token{kind: k, text: w, raw: w, pos: i, end: j})
			i = j
		default:
			return nil, &Error{Filter: src, Pos: i, End: i + 1, Msg: "unexpected character " + quoteByte(c)}
		}
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return `"` + string(rune(c)) + `"`
	}
	return "0x" + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}

// unquote reads a double-quoted string at the start of s, with C escapes
// (\" \\ \n \t \r \xhh \ooo), and returns it and the length read. On error
// it returns the offset of the fault and a message.
func unquote(s string) (string, int, string) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, ""
		case c == '\\':
			if i+1 >= len(s) {
				return "", i, "unterminated string"
			}
			e := s[i+1]
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '0', '1', '2', '3', '4', '5', '6', '7':
				v, n := 0, 0
				for n < 3 && i+1+n < len(s) && s[i+1+n] >= '0' && s[i+1+n] <= '7' {
					v = v*8 + int(s[i+1+n]-'0')
					n++
				}
				if v > 255 {
					return "", i, "octal escape out of range"
				}
				b.WriteByte(byte(v))
				i += 1 + n
				continue
			case 'x':
				v, n := 0, 0
				for n < 2 && i+2+n < len(s) && hexVal(s[i+2+n]) >= 0 {
					v = v*16 + hexVal(s[i+2+n])
					n++
				}
				if n == 0 {
					return "", i, `"\x" without hex digits`
				}
				b.WriteByte(byte(v))
				i += 2 + n
				continue
			default:
				b.WriteByte(e) // \" \\ and any other escaped character stand for themselves
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, "unterminated string"
}

// charConst reads a character constant 'c', '\n', '\x41' and returns its
// value as decimal text.
func charConst(s string) (string, int, string) {
	end := 1
	for end < len(s) && s[end] != '\'' {
		if s[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(s) {
		return "", len(s), "unterminated character constant"
	}
	body := s[1:end]
	v, _, err := unquote(`"` + body + `"`)
	if err != "" || len(v) != 1 {
		return "", end + 1, "a character constant holds one character"
	}
	return itoa(int(v[0])), end + 1, ""
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
