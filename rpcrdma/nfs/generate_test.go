package nfs_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/rpcrdma/nfs/internal/xdrgen"
)

// TestGeneratedUpToDate runs the generator as generate.go's go:generate
// lines say and checks that the committed zz_*.go files are its output:
// the walkers are reproducible from xdr/*.x.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "//go:generate go run ./internal/xdrgen/cmd/xdrgen "
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		n++
		fs := flag.NewFlagSet("xdrgen", flag.ContinueOnError)
		pkg := fs.String("pkg", "nfs", "")
		pfx := fs.String("prefix", "x", "")
		roots := fs.String("roots", "", "")
		out := fs.String("o", "", "")
		if err := fs.Parse(strings.Fields(strings.TrimPrefix(line, prefix))); err != nil || fs.NArg() != 1 || *out == "" {
			t.Fatalf("bad go:generate line %q: %v", line, err)
		}
		x, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			t.Fatal(err)
		}
		var rs []string
		if *roots != "" {
			rs = strings.Split(*roots, ",")
		}
		want, err := xdrgen.File(string(x), xdrgen.Options{Package: *pkg, Prefix: *pfx, Source: fs.Arg(0), Roots: rs})
		if err != nil {
			t.Fatalf("%s: %v", fs.Arg(0), err)
		}
		got, err := os.ReadFile(*out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what xdrgen makes from %s: run go generate ./rpcrdma/nfs", *out, fs.Arg(0))
		}
	}
	if n != 3 {
		t.Errorf("found %d go:generate lines, want 3", n)
	}
}
