package live

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Resolved says which network interface a capture name stands for.
type Resolved struct {
	// Netdev is the network interface to capture on.
	Netdev string
	// RDMA is the RDMA device the name named, when it named one (rxe0,
	// siw0, mlx5_0) rather than a network interface.
	RDMA *RDMADevice
	// Number is the interface's number in capture --list (1-based), when
	// the name was that number (tcpdump's and tshark's -i N).
	Number int
}

// Note says, for people, which netdev an RDMA device name chose ("" when
// the name was a network interface).
func (r Resolved) Note() string {
	if r.Number > 0 {
		return fmt.Sprintf("-i %d is %s (capture --list's number %d)", r.Number, r.Netdev, r.Number)
	}
	if r.RDMA == nil {
		return ""
	}
	s := fmt.Sprintf("%s is an RDMA device (%s", r.RDMA.Name, orUnknown(r.RDMA.Driver))
	if r.RDMA.Transport != "" {
		s += ", " + r.RDMA.Transport
	}
	s += fmt.Sprintf("): capturing on its network interface %s", r.Netdev)
	if len(r.RDMA.Netdevs) > 1 {
		s += fmt.Sprintf(" (it has %d: %s; give -i one of them to choose)", len(r.RDMA.Netdevs), strings.Join(r.RDMA.Netdevs, ", "))
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "driver unknown"
	}
	return s
}

// interfaceExists is net.InterfaceByName, replaceable in tests.
var interfaceExists = func(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// ResolveInterface maps what a user gives to -i to the network interface
// to capture on: a network interface is itself; an RDMA device of
// sysfs/class/infiniband (DefaultSysfs when empty) is the network
// interface its ports send on, as `rdma link` shows it (the rxe parent
// attribute, then ports/N/gid_attrs/ndevs/*; RDMADevices). A name that is
// neither is returned as it is, for Open to report. An RDMA device without
// a network interface here (native InfiniBand, or its netdev in another
// network namespace) is an error that says so.
//
// A number that names no interface is the interface of that number in
// capture --list (1-based, in the kernel's order), as tcpdump -D and
// tshark -D number them for -i.
func ResolveInterface(name, sysfs string) (Resolved, error) {
	if name == "" || interfaceExists(name) {
		return Resolved{Netdev: name}, nil
	}
	if n, err := strconv.Atoi(name); err == nil && n > 0 && name[0] != '0' {
		ifs, _, err := Interfaces(sysfs)
		if err != nil {
			return Resolved{}, err
		}
		if n > len(ifs) {
			return Resolved{}, fmt.Errorf("no interface number %d: capture --list shows %d", n, len(ifs))
		}
		return Resolved{Netdev: ifs[n-1].Name, Number: n}, nil
	}
	devs, err := RDMADevices(sysfs)
	if err != nil {
		return Resolved{Netdev: name}, nil
	}
	for i := range devs {
		d := &devs[i]
		if d.Name != name {
			continue
		}
		for _, n := range d.Netdevs {
			if interfaceExists(n) {
				return Resolved{Netdev: n, RDMA: d}, nil
			}
		}
		if len(d.Netdevs) == 0 {
			return Resolved{}, fmt.Errorf("%s is an RDMA device with no network interface (native InfiniBand has none to capture on: use ibdump)", name)
		}
		return Resolved{}, fmt.Errorf("%s is an RDMA device on %s, which is not a network interface here (another network namespace?)", name, strings.Join(d.Netdevs, ", "))
	}
	return Resolved{Netdev: name}, nil
}
