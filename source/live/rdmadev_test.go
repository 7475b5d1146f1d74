package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveInterface: an RDMA device name captures on the netdev sysfs
// binds it to (rxe: parent; siw and hardware: GID 0's ndev; GID 0 empty:
// the first GID entry that names one), a netdev name is itself, and an
// RDMA device without a netdev here is an error that says why. The fake
// sysfs is fakeSysfs; which netdevs "exist" is set by the test.
func TestResolveInterface(t *testing.T) {
	root := fakeSysfs(t)
	// A RoCE device whose GID 0 is empty and GID 3 names a VLAN netdev,
	// and one bound to a netdev that is not here.
	for rel, content := range map[string]string{
		"class/infiniband/mlx5_1/node_type":                 "1: CA\n",
		"class/infiniband/mlx5_1/ports/1/link_layer":        "Ethernet\n",
		"class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/3": "ens2.100\n",
		"class/infiniband/rxe9/parent":                      "veth-elsewhere\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	here := map[string]bool{"eth0": true, "eth1": true, "ens1f0np0": true, "ens2.100": true}
	old := interfaceExists
	interfaceExists = func(n string) bool { return here[n] }
	defer func() { interfaceExists = old }()

	for _, tc := range []struct {
		name, netdev, note, err string
	}{
		{"rxe0", "eth0", "rxe0 is an RDMA device (rxe, RoCE): capturing on its network interface eth0", ""},
		{"siw0", "eth1", "siw0 is an RDMA device (siw, iWARP): capturing on its network interface eth1", ""},
		{"mlx5_0", "ens1f0np0", "mlx5_0 is an RDMA device (mlx5_core, RoCE): capturing on its network interface ens1f0np0", ""},
		{"mlx5_1", "ens2.100", "capturing on its network interface ens2.100", ""},
		{"eth0", "eth0", "", ""},
		{"nosuch0", "nosuch0", "", ""},
		{"siw_lo", "", "", "siw_lo is an RDMA device with no network interface"},
		{"rxe9", "", "", "rxe9 is an RDMA device on veth-elsewhere, which is not a network interface here"},
	} {
		r, err := ResolveInterface(tc.name, root)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case r.Netdev != tc.netdev || !strings.Contains(r.Note(), tc.note) || (tc.note == "") != (r.Note() == ""):
			t.Errorf("%s: netdev %q note %q, want %q %q", tc.name, r.Netdev, r.Note(), tc.netdev, tc.note)
		}
	}
}
