package live

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// InterfaceInfo is one network interface as `capture --list` shows it.
type InterfaceInfo struct {
	Name      string   `json:"name"`
	Index     int      `json:"index"`
	Up        bool     `json:"up"`      // administratively up
	Carrier   bool     `json:"carrier"` // up and running (has a carrier)
	MTU       int      `json:"mtu"`
	MAC       string   `json:"mac,omitempty"`
	Addresses []string `json:"addresses"`
	// RDMA lists the RDMA devices bound to this interface (rxe, siw, or
	// a hardware RoCE/iWARP device).
	RDMA []RDMADevice `json:"rdma,omitempty"`
}

// RDMADevice is an RDMA device of /sys/class/infiniband and the network
// interface it sends on.
type RDMADevice struct {
	Name string `json:"name"`
	// Driver is "rxe" (Soft-RoCE), "siw" (soft-iWARP), the kernel driver
	// of a hardware device (mlx5_core, irdma, ...), or "" when unknown.
	Driver string `json:"driver,omitempty"`
	// Transport is "RoCE", "iWARP" or "InfiniBand", or "" when unknown.
	Transport string `json:"transport,omitempty"`
	// Netdevs are the network interfaces of the device's ports.
	Netdevs []string `json:"netdevs,omitempty"`
}

// DefaultSysfs is where Interfaces and RDMADevices look.
const DefaultSysfs = "/sys"

// Interfaces lists the network interfaces of the current network namespace
// with the RDMA devices bound to each, found under sysfs (DefaultSysfs
// when empty). A system without RDMA devices, or without
// /sys/class/infiniband, lists interfaces without any.
func Interfaces(sysfs string) ([]InterfaceInfo, []RDMADevice, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, nil, err
	}
	devs, _ := RDMADevices(sysfs) // an unreadable sysfs only loses the marks
	out := make([]InterfaceInfo, 0, len(ifs))
	bound := map[string]bool{}
	for _, ifi := range ifs {
		info := InterfaceInfo{
			Name:      ifi.Name,
			Index:     ifi.Index,
			Up:        ifi.Flags&net.FlagUp != 0,
			Carrier:   ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0,
			MTU:       ifi.MTU,
			Addresses: []string{},
		}
		if len(ifi.HardwareAddr) > 0 {
			info.MAC = ifi.HardwareAddr.String()
		}
		if addrs, err := ifi.Addrs(); err == nil {
			for _, a := range addrs {
				info.Addresses = append(info.Addresses, a.String())
			}
		}
		for _, d := range devs {
			for _, n := range d.Netdevs {
				if n == ifi.Name {
					info.RDMA = append(info.RDMA, d)
					bound[d.Name] = true
				}
			}
		}
		out = append(out, info)
	}
	var unbound []RDMADevice
	for _, d := range devs {
		if !bound[d.Name] {
			unbound = append(unbound, d)
		}
	}
	return out, unbound, nil
}

// RDMADevices reads the RDMA devices under sysfs/class/infiniband (the
// kernel's Documentation/ABI/stable/sysfs-class-infiniband):
//
//   - parent: the network interface of a Soft-RoCE device (only rdma_rxe
//     has this attribute, drivers/infiniband/sw/rxe/rxe_verbs.c);
//   - ports/N/gid_attrs/ndevs/0: the network interface of GID 0 of port N,
//     for RoCE and (in recent kernels) iWARP devices; reading an empty GID
//     entry fails, which only means no name there;
//   - node_type: "1: CA" for InfiniBand and RoCE, "4: RNIC" for iWARP;
//   - ports/N/link_layer: "Ethernet" or "InfiniBand";
//   - device/driver: the driver of a hardware device (software devices
//     have no device link).
//
// Devices named rxe* or siw*, as `rdma link add` examples name them, are
// taken for Soft-RoCE and soft-iWARP when nothing else tells. No
// /sys/class/infiniband (no RDMA core loaded) is no devices and no error.
func RDMADevices(sysfs string) ([]RDMADevice, error) {
	if sysfs == "" {
		sysfs = DefaultSysfs
	}
	root := filepath.Join(sysfs, "class", "infiniband")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RDMADevice
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		d := RDMADevice{Name: e.Name()}
		seen := map[string]bool{}
		addNetdev := func(n string) {
			if n != "" && !seen[n] {
				seen[n] = true
				d.Netdevs = append(d.Netdevs, n)
			}
		}
		parent, hasParent := readAttr(filepath.Join(dir, "parent"))
		if hasParent {
			d.Driver = "rxe"
			addNetdev(parent)
		}
		ports, _ := os.ReadDir(filepath.Join(dir, "ports"))
		linkLayer := ""
		for _, p := range ports {
			pdir := filepath.Join(dir, "ports", p.Name())
			if n, ok := readAttr(filepath.Join(pdir, "gid_attrs", "ndevs", "0")); ok {
				addNetdev(n)
			} else {
				// GID 0 may be empty (IPv6 off, the address not yet
				// set): the first GID entry that names a netdev.
				for _, g := range gidEntries(filepath.Join(pdir, "gid_attrs", "ndevs")) {
					if n, ok := readAttr(g); ok {
						addNetdev(n)
						break
					}
				}
			}
			if ll, ok := readAttr(filepath.Join(pdir, "link_layer")); ok && linkLayer == "" {
				linkLayer = ll
			}
		}
		nodeType, _ := readAttr(filepath.Join(dir, "node_type"))
		switch {
		case strings.HasSuffix(nodeType, "RNIC") || strings.HasPrefix(nodeType, "4:"):
			d.Transport = "iWARP"
		case linkLayer == "Ethernet":
			d.Transport = "RoCE"
		case linkLayer == "InfiniBand":
			d.Transport = "InfiniBand"
		}
		if d.Driver == "" {
			if drv, err := os.Readlink(filepath.Join(dir, "device", "driver")); err == nil {
				d.Driver = filepath.Base(drv)
			}
		}
		if d.Driver == "" {
			switch {
			case strings.HasPrefix(d.Name, "rxe"):
				d.Driver = "rxe"
			case strings.HasPrefix(d.Name, "siw"):
				d.Driver = "siw"
			}
		}
		if d.Transport == "" {
			switch d.Driver {
			case "rxe":
				d.Transport = "RoCE"
			case "siw":
				d.Transport = "iWARP"
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// gidEntries lists the GID entries of a gid_attrs/ndevs directory in
// index order.
func gidEntries(dir string) []string {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return out[i] < out[j]
	})
	for i, n := range out {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// readAttr reads a one-line sysfs attribute; ok is false when it is
// missing, unreadable or empty.
func readAttr(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	s := strings.TrimSpace(string(b))
	return s, s != ""
}
