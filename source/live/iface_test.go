package live

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fakeSysfs lays out /sys/class/infiniband as the kernel does for an rxe
// device (parent attribute, rxe_verbs.c), a siw device (RNIC node type, GID
// 0 bound to its netdev, no parent), a hardware RoCE device with a device
// link, and a device whose GID table cannot be read.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ib := "class/infiniband/"
	write(ib+"rxe0/parent", "eth0\n")
	write(ib+"rxe0/node_type", "1: CA\n")
	write(ib+"rxe0/ports/1/link_layer", "Ethernet\n")
	write(ib+"rxe0/ports/1/gid_attrs/ndevs/0", "eth0\n")
	write(ib+"siw0/node_type", "4: RNIC\n")
	write(ib+"siw0/ports/1/link_layer", "Ethernet\n")
	write(ib+"siw0/ports/1/gid_attrs/ndevs/0", "eth1\n")
	write(ib+"mlx5_0/node_type", "1: CA\n")
	write(ib+"mlx5_0/ports/1/link_layer", "Ethernet\n")
	write(ib+"mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1f0np0\n")
	write("bus/pci/drivers/mlx5_core/.keep", "")
	if err := os.MkdirAll(filepath.Join(root, ib, "mlx5_0/device"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "bus/pci/drivers/mlx5_core"), filepath.Join(root, ib, "mlx5_0/device/driver")); err != nil {
		t.Fatal(err)
	}
	// An empty GID entry: the kernel fails the read; here, no file.
	write(ib+"siw_lo/node_type", "4: RNIC\n")
	if err := os.MkdirAll(filepath.Join(root, ib, "siw_lo/ports/1/gid_attrs/ndevs"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRDMADevices(t *testing.T) {
	got, err := RDMADevices(fakeSysfs(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []RDMADevice{
		{Name: "mlx5_0", Driver: "mlx5_core", Transport: "RoCE", Netdevs: []string{"ens1f0np0"}},
		{Name: "rxe0", Driver: "rxe", Transport: "RoCE", Netdevs: []string{"eth0"}},
		{Name: "siw0", Driver: "siw", Transport: "iWARP", Netdevs: []string{"eth1"}},
		{Name: "siw_lo", Driver: "siw", Transport: "iWARP"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RDMADevices =\n%+v\nwant\n%+v", got, want)
	}
}

func TestRDMADevicesAbsent(t *testing.T) {
	got, err := RDMADevices(t.TempDir()) // no class/infiniband at all
	if err != nil || got != nil {
		t.Errorf("no RDMA core: %v, %v; want nothing and no error", got, err)
	}
	ifs, unbound, err := Interfaces(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) == 0 || unbound != nil {
		t.Errorf("Interfaces without RDMA: %d interfaces, unbound %v", len(ifs), unbound)
	}
	for _, i := range ifs {
		if len(i.RDMA) != 0 {
			t.Errorf("%s marked with %v", i.Name, i.RDMA)
		}
	}
}

// TestInterfacesMarks binds the fake devices to this machine's loopback
// interface by name.
func TestInterfacesMarks(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "class/infiniband/rxe_lo")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "parent"), []byte("lo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "class/infiniband/siw_gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	ifs, unbound, err := Interfaces(root)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, i := range ifs {
		if i.Name == "lo" {
			found = true
			if len(i.RDMA) != 1 || i.RDMA[0].Name != "rxe_lo" || i.RDMA[0].Driver != "rxe" {
				t.Errorf("lo: RDMA %+v", i.RDMA)
			}
		}
	}
	if !found {
		t.Skip("no interface named lo here")
	}
	if len(unbound) != 1 || unbound[0].Name != "siw_gone" {
		t.Errorf("unbound = %+v", unbound)
	}
}

// TestResolveInterfaceNumber: -i N, as tcpdump's and tshark's, is the
// interface capture --list shows as number N (Interfaces' order, from 1);
// a number past the list is an error saying how many there are, and an
// interface whose name is a number is itself.
func TestResolveInterfaceNumber(t *testing.T) {
	ifs, _, err := Interfaces("")
	if err != nil || len(ifs) == 0 {
		t.Skipf("no interfaces to number: %v", err)
	}
	for n, want := range ifs {
		r, err := ResolveInterface(strconv.Itoa(n+1), "")
		if err != nil || r.Netdev != want.Name || r.Number != n+1 || !strings.Contains(r.Note(), want.Name) {
			t.Errorf("-i %d: %+v, %v; want %s", n+1, r, err, want.Name)
		}
	}
	if _, err := ResolveInterface(strconv.Itoa(len(ifs)+1), ""); err == nil || !strings.Contains(err.Error(), strconv.Itoa(len(ifs))) {
		t.Errorf("-i %d: %v, want an error naming the %d interfaces", len(ifs)+1, err, len(ifs))
	}
	saved := interfaceExists
	defer func() { interfaceExists = saved }()
	interfaceExists = func(name string) bool { return name == "2" }
	if r, err := ResolveInterface("2", ""); err != nil || r.Netdev != "2" || r.Number != 0 {
		t.Errorf("an interface named 2: %+v, %v", r, err)
	}
}
