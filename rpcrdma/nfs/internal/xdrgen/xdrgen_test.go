package xdrgen

import (
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"struct a { int x }", "line 1: want \";\""},
		{"const A = 1;\nunion u switch (int d) { case B: int x; };", "unknown constant \"B\""},
		{"struct a {\n%ddp ItemX\n int x; };", "line 3: %ddp on a declaration that is not opaque<> or string<>"},
		{"typedef foo bar;", "unknown type \"foo\""},
		{"struct a { int x; };\nstruct a { int y; };", "a defined twice"},
		{"/* open", "unterminated comment"},
	} {
		_, err := File(tc.src, Options{Package: "p", Prefix: "x", Roots: rootsOf(tc.src)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}

// rootsOf makes every struct/union/typedef of a small test source a root.
func rootsOf(src string) []string {
	spec, err := Parse(src)
	if err != nil {
		return nil
	}
	var r []string
	for _, d := range spec.Defs {
		if d.Kind == "struct" || d.Kind == "union" || d.Kind == "typedef" {
			r = append(r, d.Name)
		}
	}
	return r
}

// TestGenerateShapes checks the code shapes the walkers rely on: fixed
// fields merged into one skip, a self-referencing list walked by a loop,
// unions without default failing on unknown discriminants, %ddp calls,
// bounded arrays.
func TestGenerateShapes(t *testing.T) {
	src := `
const MAX = 4;
typedef unsigned hyper u64;
enum color { RED = 1, BLUE = 0x2 };
struct fixed { int a; u64 b; opaque c[3]; color d; };
struct node { int v; string name<8>; node *next; };
union pick switch (color c) { case RED: fixed f; case BLUE: void; };
struct data {
%ddp ItemX
	opaque payload<>;
	node list<MAX>;
	fixed arr<>;
};
%export color Color -
`
	code, err := File(src, Options{Package: "p", Prefix: "t", Roots: []string{"pick", "data"}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(code)
	for _, want := range []string{
		"func (d *decoder) t_fixed() error {\n\tif err := d.skip(20); err != nil", // 4+8+4+4 merged
		"\tfor {\n",                              // node is a loop
		"return d.in(\"pick\", d.badDisc(disc))", // no default arm
		"d.ddp(ItemX, 0xffffffff)",
		"d.count(4, 12)",               // node: int, string, optional: 12 bytes at least
		"d.fixedArray(0xffffffff, 20)", // fixed-size elements skipped at once
		"case RED:\n\t\treturn \"RED\"",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("generated code lacks %q:\n%s", want, s)
		}
	}
}
