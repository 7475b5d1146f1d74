package fields

import (
	"strings"
	"testing"
)

// TestValueNamesFields checks that every table of names belongs to a field
// rdmashark registers with a type the names fit, and that a filter reads the
// names as tshark 4.0's do (IEEE 802.1Q's priority names; RPC-over-RDMA's
// fields are checked in ulp/rpcordma).
func TestValueNamesFields(t *testing.T) {
	for name := range valueNames {
		f, ok := Registry.Lookup(name)
		if !ok {
			// A plug-in's field (tshark's table lists them with the
			// rest): RPC-over-RDMA's tests check those
			// (ulp/rpcordma/fields_nfs_test.go).
			if p, _, _ := strings.Cut(name, "."); !pluginProtocols[p] {
				t.Errorf("valueNames: %s is not a field", name)
			}
		} else if FilterType(f.Type) != FilterType(FTUint32) {
			t.Errorf("valueNames: %s is a %s", name, f.Type)
		}
	}
	for name := range boolNames {
		if f, ok := Registry.Lookup(name); !ok || f.Type != FTBoolean {
			t.Errorf("boolNames: %s is not a boolean field", name)
		}
	}
	cases := []struct {
		field, name string
		quoted      bool
		v           uint64
		ok          bool
	}{
		{"tcp.flags.syn", "not set", true, 0, true},
		{"tcp.flags.syn", "True", true, 0, false},
		{"infiniband.bth.se", "true", true, 1, true},
		{"vlan.priority", "Background", true, 1, true},
		{"vlan.priority", "Background", false, 0, false},
	}
	for _, c := range cases {
		f, ok := Registry.Lookup(c.field)
		if !ok {
			t.Fatalf("no field %s", c.field)
		}
		names := namesOf(f)
		if names == nil {
			t.Errorf("%s: no names", c.field)
			continue
		}
		v, ok := names(c.name, c.quoted)
		if v != c.v || ok != c.ok {
			t.Errorf("%s == %q (quoted %v): %d %v, want %d %v", c.field, c.name, c.quoted, v, ok, c.v, c.ok)
		}
	}
	if f, _ := Registry.Lookup("infiniband.bth.destqp"); namesOf(f) != nil {
		t.Error("infiniband.bth.destqp has names")
	}
}

// pluginProtocols are the protocols of the plug-ins' fields that tshark's
// value names list (RPC-over-RDMA's).
var pluginProtocols = map[string]bool{"rpcordma": true, "rpc": true, "nfs": true, "nfsacl": true, "mount": true}
