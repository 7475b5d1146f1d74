package fields

import "testing"

// TestValueNamesFields checks that every table of names belongs to a field
// rdmashark registers with a type the names fit, and that a filter reads the
// names as tshark 4.0's do (the values checked are the specs': RFC 8166
// section 4.2.1 for RDMA_NOMSG = 1, RFC 5531 section 9 for Reply = 1).
func TestValueNamesFields(t *testing.T) {
	for name := range valueNames {
		f, ok := Registry.Lookup(name)
		if !ok {
			t.Errorf("valueNames: %s is not a field", name)
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
		{"rpcordma.msg_type", "RDMA_NOMSG", false, 1, true},
		{"rpcordma.msg_type", "rdma_nomsg", true, 1, true},
		{"rpc.msgtyp", "Reply", false, 1, true},
		{"rpc.msgtyp", "Repl", false, 0, false},
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
	if f, _ := Registry.Lookup("rpcordma.xid"); namesOf(f) != nil {
		t.Error("rpcordma.xid has names")
	}
}
