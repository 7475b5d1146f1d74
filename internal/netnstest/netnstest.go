//go:build linux

// Package netnstest gives tests a network namespace with a veth pair in it,
// a way to run code inside the namespace, and an AF_PACKET injector that
// puts frames on one end exactly as given, so that a capture on the other
// end sees real captures replayed without any RDMA hardware.
//
// It needs root (CAP_SYS_ADMIN for the namespace, CAP_NET_ADMIN for the
// veth pair, CAP_NET_RAW for the sockets) and iproute2's ip. Without them
// New skips the test and says why; with RDMASHARK_NETNS_TESTS=require in
// the environment it fails it instead, so that CI cannot skip silently.
package netnstest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Interface names inside every namespace: frames go in at Inject and come
// out at Capture.
const (
	Inject  = "inj0"
	Capture = "cap0"
)

// EnvRequire, set to "require", turns New's skips into failures.
const EnvRequire = "RDMASHARK_NETNS_TESTS"

const prefix = "rdmashark-test-"

// Pair is a network namespace with a veth pair Inject–Capture, both up,
// IPv6 off (so the kernel sends nothing of its own), MTU 9000.
type Pair struct {
	// NS is the namespace's name (ip netns).
	NS string
}

var seq atomic.Int64

// New creates a namespace and its veth pair, and removes both when the
// test ends. It skips the test, saying why, without root or ip.
func New(t testing.TB) *Pair {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(EnvRequire) == "require" {
			t.Fatalf("%s (and %s=require)", msg, EnvRequire)
		}
		t.Skip(msg)
	}
	if os.Geteuid() != 0 {
		skip("needs root: the test creates a network namespace and a veth pair (CAP_SYS_ADMIN, CAP_NET_ADMIN) and opens AF_PACKET sockets (CAP_NET_RAW)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("needs iproute2's ip to create the network namespace and the veth pair: %v", err)
	}
	removeStale()
	p := &Pair{NS: fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), seq.Add(1))}
	if out, err := exec.Command("ip", "netns", "add", p.NS).CombinedOutput(); err != nil {
		skip("cannot create a network namespace here: ip netns add: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		// Deleting the namespace deletes the veth pair in it.
		if out, err := exec.Command("ip", "netns", "del", p.NS).CombinedOutput(); err != nil {
			t.Errorf("removing network namespace %s: %v: %s", p.NS, err, out)
		}
	})
	// No IPv6 in the namespace: no router solicitations or MLD reports
	// of the kernel's own among the frames under test.
	_ = p.Do(func() error {
		for _, f := range []string{"default", "all"} {
			_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+f+"/disable_ipv6", []byte("1"), 0)
		}
		return nil
	})
	steps := [][]string{
		{"link", "add", "name", Inject, "type", "veth", "peer", "name", Capture},
		{"link", "set", Inject, "mtu", "9000", "up"},
		{"link", "set", Capture, "mtu", "9000", "up"},
	}
	for _, s := range steps {
		if err := p.IP(s...); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for both ends to have a carrier.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var up int
		_ = p.Do(func() error {
			for _, n := range []string{Inject, Capture} {
				if ifi, err := net.InterfaceByName(n); err == nil && ifi.Flags&net.FlagRunning != 0 {
					up++
				}
			}
			return nil
		})
		if up == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("veth pair in %s did not come up", p.NS)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return p
}

// removeStale deletes namespaces left by test processes that died before
// their cleanup ran.
func removeStale() {
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = exec.Command("ip", "netns", "del", e.Name()).Run()
		}
	}
}

// IP runs ip -n NS args.
func (p *Pair) IP(args ...string) error {
	out, err := exec.Command("ip", append([]string{"-n", p.NS}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip -n %s %s: %v: %s", p.NS, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Do runs fn on an OS thread that has entered the namespace. Sockets fn
// opens stay in the namespace after it returns; goroutines fn starts run
// in the test's own namespace.
func (p *Pair) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer unix.Close(self)
		target, err := unix.Open(filepath.Join("/run/netns", p.NS), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", p.NS, err)
			return
		}
		err = fn()
		// Back to the test's namespace; a thread that cannot go back stays
		// locked and ends with this goroutine.
		if unix.Setns(self, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// Injector sends frames out of one interface of the namespace.
type Injector struct {
	fd      int
	ifindex int
}

// Injector opens an AF_PACKET socket on iface (Inject or Capture). It
// receives nothing (protocol 0).
func (p *Pair) Injector(iface string) (*Injector, error) {
	in := &Injector{fd: -1}
	err := p.Do(func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		in.fd, in.ifindex = fd, ifi.Index
		return nil
	})
	return in, err
}

// Send puts one frame on the wire, byte for byte.
func (in *Injector) Send(frame []byte) error {
	sa := &unix.SockaddrLinklayer{Ifindex: in.ifindex}
	for tries := 0; ; tries++ {
		err := unix.Sendto(in.fd, frame, 0, sa)
		if errors.Is(err, unix.ENOBUFS) && tries < 100 {
			time.Sleep(time.Millisecond)
			continue
		}
		return err
	}
}

// Replay sends frames in order, perMs of them every millisecond, so that a
// capture keeps up: the rate is the test's, not the original capture's.
func (in *Injector) Replay(frames [][]byte, perMs int) error {
	if perMs <= 0 {
		perMs = 1
	}
	start := time.Now()
	for i, f := range frames {
		if i > 0 && i%perMs == 0 {
			// Sleep until this batch's millisecond.
			if d := time.Until(start.Add(time.Duration(i/perMs) * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
		}
		if err := in.Send(f); err != nil {
			return fmt.Errorf("frame %d: %w", i+1, err)
		}
	}
	return nil
}

// Close closes the socket.
func (in *Injector) Close() error {
	if in.fd < 0 {
		return nil
	}
	err := unix.Close(in.fd)
	in.fd = -1
	return err
}
