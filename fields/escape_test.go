package fields

import (
	"testing"
	"unicode/utf8"
)

// TestAppendEscaped (issue 29 point 9): capture text in text outputs is
// escaped as tshark escapes it: \n, \r, \t, \xNN for the other controls
// and for bytes that are not UTF-8; bidi and C1 controls as \uNNNN.
func TestAppendEscaped(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain host-1.example", "plain host-1.example"},
		{"a\\b", "a\\b"}, // tshark leaves a backslash as it is
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"\x1b[6n", `\x1b[6n`},
		{"row\nforged\tcol\r", `row\nforged\tcol\r`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"bad\xff\xfeutf8", `bad\xff\xfeutf8`},
		{"cut\xc3", `cut\xc3`},
		{"\xe2\x80", `\xe2\x80`},
		{"caf\u00e9 \u65e5\u672c", "caf\u00e9 \u65e5\u672c"},
		{"\u202eevil\u2066", `\u202eevil\u2066`},
		{"c1\u009b2J", `c1\u009b2J`},
		{"", ""},
	} {
		got := string(AppendEscaped([]byte("x|"), c.in))
		if got != "x|"+c.want {
			t.Errorf("AppendEscaped(%q) = %q, want %q", c.in, got[2:], c.want)
		}
		if got := string(AppendEscaped(nil, []byte(c.in))); got != c.want {
			t.Errorf("AppendEscaped([]byte %q) = %q, want %q", c.in, got, c.want)
		}
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q", c.in, got)
		}
		if NeedsEscape(c.in) != (c.in != c.want) {
			t.Errorf("NeedsEscape(%q) = %v", c.in, NeedsEscape(c.in))
		}
	}
}

// FuzzAppendEscaped: the output is valid UTF-8 without a control
// character, whatever the input.
func FuzzAppendEscaped(f *testing.F) {
	f.Add([]byte("\x1b[2J\n\xff\u202e"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := AppendEscaped(nil, b)
		if !utf8.Valid(out) {
			t.Fatalf("%q escaped to invalid UTF-8 %q", b, out)
		}
		for _, r := range string(out) {
			if r < 0x20 || r == 0x7f || hiddenRune(r) {
				t.Fatalf("%q escaped to %q, which holds %U", b, out, r)
			}
		}
	})
}

func BenchmarkAppendEscaped(b *testing.B) {
	in := []byte("NFS V3 LOOKUP Call, DH: 0x12345678/some-file-name.txt")
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEscaped(buf[:0], in)
	}
}
