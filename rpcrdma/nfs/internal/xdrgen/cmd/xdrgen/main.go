// Command xdrgen generates XDR walkers for package nfs from an .x file.
//
//	go run ./internal/xdrgen/cmd/xdrgen -pkg nfs -prefix v4 -roots nfs_argop4,nfs_resop4 -o zz_nfs4.go xdr/nfs4.x
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmashark/rdmashark/rpcrdma/nfs/internal/xdrgen"
)

func main() {
	pkg := flag.String("pkg", "nfs", "Go package name")
	prefix := flag.String("prefix", "x", "prefix of the generated walker methods")
	roots := flag.String("roots", "", "comma-separated types to emit walkers for besides the procedures'")
	out := flag.String("o", "", "output file (default standard output)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: xdrgen [flags] file.x")
		os.Exit(2)
	}
	src, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var rs []string
	if *roots != "" {
		rs = strings.Split(*roots, ",")
	}
	code, err := xdrgen.File(string(src), xdrgen.Options{Package: *pkg, Prefix: *prefix, Source: filepath.ToSlash(flag.Arg(0)), Roots: rs})
	if err != nil {
		fmt.Fprintf(os.Stderr, "xdrgen: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(code)
		return
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
