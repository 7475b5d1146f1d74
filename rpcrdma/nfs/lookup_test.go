package nfs

import "testing"

// TestLookupAsTables: lookup and Known, which read the flattened
// versions and knownProgs, answer as a scan of the generated tables in
// their order does, for every program and version there, neighbours and
// numbers no table has.
func TestLookupAsTables(t *testing.T) {
	scan := func(prog, vers uint32) (*progVersion, bool) {
		known := false
		for _, tb := range tables {
			for i := range tb {
				if tb[i].prog == prog {
					known = true
					if tb[i].vers == vers {
						return &tb[i], true
					}
				}
			}
		}
		return nil, known
	}
	progs := []uint32{0, 1, 100000, 100004, 0x40000001, ^uint32(0)}
	n := 0
	for _, tb := range tables {
		for i := range tb {
			progs = append(progs, tb[i].prog, tb[i].prog+1)
			n++
		}
	}
	if n < 6 || len(versions) != n {
		t.Fatalf("%d versions flattened of %d", len(versions), n)
	}
	for _, p := range progs {
		for _, v := range []uint32{0, 1, 2, 3, 4, 5, ^uint32(0)} {
			gotPV, gotKnown := lookup(p, v)
			wantPV, wantKnown := scan(p, v)
			if gotPV != wantPV || gotKnown != wantKnown {
				t.Errorf("lookup(%d, %d) = %p %v, the tables say %p %v", p, v, gotPV, gotKnown, wantPV, wantKnown)
			}
			if v == 0 && Known(p) != wantKnown {
				t.Errorf("Known(%d) = %v, the tables say %v", p, Known(p), wantKnown)
			}
		}
	}
}
