package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const mod = "github.com/rdmashark/rdmashark/"

// imports maps each package directory of the module (relative, "/"
// separated) to the module packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (n == "testdata" || strings.HasPrefix(n, ".") || n == "duckdbtest") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		af, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		for _, is := range af.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			if strings.HasPrefix(path, mod) {
				out[rel] = append(out[rel], strings.TrimPrefix(path, mod))
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// samePlugin tells whether pkg and d are parts of one plug-in (ulp/NAME
// and its subpackages, such as ulp/rpcordma/present, its presentation).
func samePlugin(pkg, d string) bool {
	root := func(p string) string {
		if !under(p, "ulp") {
			return ""
		}
		parts := strings.SplitN(p, "/", 3)
		if len(parts) < 2 {
			return ""
		}
		return parts[0] + "/" + parts[1]
	}
	r := root(pkg)
	return r != "" && r == root(d)
}

// TestULPImportRules: the upper-layer-protocol seam's rules (issue 25).
// The engine imports no ULP package; nothing imports a plug-in (ulp/...)
// but the command's one registration list; a plug-in imports no other
// plug-in; the wire packages import nothing of the engine, the checks, the
// presentation or the plug-ins.
func TestULPImportRules(t *testing.T) {
	all := imports(t)
	if len(all["dissect"]) == 0 || len(all["ulp/nvmeof"]) == 0 {
		t.Fatalf("the walk missed packages: %v", all)
	}
	plugins, wire := 0, 0
	for pkg, deps := range all {
		for _, d := range deps {
			switch {
			case under(pkg, "dissect") && (under(d, "ulp") || d == "nvme" || d == "smbdirect" || d == "srp" || d == "iscsi" || d == "scsi" || under(d, "rpcrdma")):
				t.Errorf("%s imports the ULP package %s: the engine knows no protocol above the seam", pkg, d)
			case under(d, "ulp") && !under(pkg, "cmd/rdmashark") && !samePlugin(pkg, d):
				t.Errorf("%s imports the plug-in %s: only cmd/rdmashark registers plug-ins", pkg, d)
			}
		}
		if under(pkg, "ulp") {
			plugins++
		}
		for _, w := range []string{"layers", "nvme", "iscsi", "pvtdata", "rpcrdma", "scsi", "smbdirect", "srp"} {
			if !under(pkg, w) {
				continue
			}
			wire++
			for _, d := range deps {
				for _, bad := range []string{"dissect", "check", "fields", "report", "export", "dfilter", "cmd", "ulp", "source"} {
					if under(d, bad) {
						t.Errorf("wire package %s imports %s", pkg, d)
					}
				}
			}
		}
	}
	if plugins == 0 || wire < 7 {
		t.Fatalf("%d plug-in and %d wire packages seen", plugins, wire)
	}
}

// TestSamePlugin: a plug-in and its subpackages are one; two plug-ins are
// not.
func TestSamePlugin(t *testing.T) {
	if !samePlugin("ulp/rpcordma/present", "ulp/rpcordma") || !samePlugin("ulp/rpcordma", "ulp/rpcordma/present") ||
		samePlugin("ulp/nvmeof", "ulp/rpcordma") || samePlugin("report", "ulp/rpcordma") || samePlugin("ulp", "ulp") {
		t.Fatal("samePlugin")
	}
}

// TestUnder: the package-prefix test the rules stand on.
func TestUnder(t *testing.T) {
	if !under("ulp/nvmeof", "ulp") || under("ulpx", "ulp") || !under("dissect", "dissect") || under("dissectx/y", "dissect") {
		t.Fatal("under")
	}
}

// TestEngineParsesNoRFC8797: the engine decodes of the set-up only the
// generic framing (pvtdata: the RDMA-CM IP header, the MPA v2 IRD/ORD
// field); RFC 8797's message is RPC-over-RDMA's (rpcrdma/rfc8797, read by
// ulp/rpcordma). Neither dissect nor anything it imports, directly or not,
// is an RFC 8797 package, and pvtdata imports no rpcrdma package.
func TestEngineParsesNoRFC8797(t *testing.T) {
	all := imports(t)
	if _, ok := all["rpcrdma/rfc8797"]; !ok {
		t.Fatal("the walk missed rpcrdma/rfc8797")
	}
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, d := range all[pkg] {
			walk(d)
		}
	}
	walk("dissect")
	if !seen["pvtdata"] {
		t.Fatal("dissect no longer imports pvtdata: the walk is wrong")
	}
	for pkg := range seen {
		if under(pkg, "rpcrdma") || under(pkg, "ulp") {
			t.Errorf("dissect imports %s (directly or not): the engine parses no RFC 8797 message", pkg)
		}
	}
	for _, d := range all["pvtdata"] {
		if under(d, "rpcrdma") {
			t.Errorf("pvtdata imports %s: the generic framing is neutral", d)
		}
	}
}

// TestChecksAndFieldsKnowNoULP: the checks and the fields are
// protocol-neutral (issue 25): a ULP's rules and fields are its plug-in's,
// registered by the command, so neither imports a plug-in nor the wire
// packages of RPC-over-RDMA (rpcrdma and its RPC/NFS subpackages).
func TestChecksAndFieldsKnowNoULP(t *testing.T) {
	all := imports(t)
	for _, pkg := range []string{"check", "fields"} {
		deps, ok := all[pkg]
		if !ok {
			t.Fatalf("the walk missed package %s", pkg)
		}
		for _, d := range deps {
			if under(d, "ulp") || under(d, "rpcrdma") {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
}
