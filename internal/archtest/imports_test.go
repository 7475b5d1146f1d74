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
			case under(d, "ulp") && !under(pkg, "cmd/rdmashark") && !(under(pkg, "ulp") && under(d, pkg)) && !rpcPresentation(pkg, d):
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

// rpcPresentation is the one exception to "only cmd/rdmashark imports a
// plug-in" (issue 25, step 4's first part): RPC-over-RDMA left the engine
// for ulp/rpcordma, but its report tables and export columns do not
// register through the seam yet, so the reports (text and HTML), export
// and diff read its model (Transaction, RPCRecord, RPCStats, RPCCounters)
// from the plug-in directly. (Its rules, fields, Info text and exchange
// key register through the seam: check and fields import no plug-in.) The remaining step moves them into ulp/rpcordma as NVMe's
// are, and removes this exception. No other plug-in, and no other package.
func rpcPresentation(pkg, d string) bool {
	if d != "ulp/rpcordma" {
		return false
	}
	switch pkg {
	case "report", "report/html", "export", "diff":
		return true
	}
	return false
}

// TestRPCPresentationException: the exception names one plug-in and the
// presentation packages alone (no longer check or fields).
func TestRPCPresentationException(t *testing.T) {
	if !rpcPresentation("report", "ulp/rpcordma") || rpcPresentation("report", "ulp/nvmeof") ||
		rpcPresentation("check", "ulp/rpcordma") || rpcPresentation("fields", "ulp/rpcordma") ||
		rpcPresentation("dissect", "ulp/rpcordma") || rpcPresentation("source/live", "ulp/rpcordma") {
		t.Fatal("rpcPresentation")
	}
}

// TestUnder: the package-prefix test the rules stand on.
func TestUnder(t *testing.T) {
	if !under("ulp/nvmeof", "ulp") || under("ulpx", "ulp") || !under("dissect", "dissect") || under("dissectx/y", "dissect") {
		t.Fatal("under")
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
