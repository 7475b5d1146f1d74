package archtest

import "testing"

// TestDiffImportRules: the capture comparison (diff/, issue 33) reads the
// engine's model, the checks' results and the wire packages; it imports
// no presentation (report, export, fields, dfilter), no command, no
// source and no plug-in, and only the command imports it — and a
// plug-in, to register its part of a profile (diff.Register, as
// ulp/rpcordma/present does).
func TestDiffImportRules(t *testing.T) {
	all := imports(t)
	if _, ok := all["diff"]; !ok {
		t.Fatal("the walk missed package diff")
	}
	for pkg, deps := range all {
		for _, d := range deps {
			if under(pkg, "diff") {
				for _, bad := range []string{"report", "export", "fields", "dfilter", "cmd", "ulp", "source", "internal"} {
					if under(d, bad) {
						t.Errorf("%s imports %s: diff compares the model, it presents and reads nothing itself", pkg, d)
					}
				}
			}
			if under(d, "diff") && !under(pkg, "diff") && !under(pkg, "cmd/rdmashark") && !under(pkg, "ulp") {
				t.Errorf("%s imports %s: only cmd/rdmashark runs the comparison", pkg, d)
			}
		}
	}
}
