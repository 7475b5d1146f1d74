//go:build linux

package live

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/rdmashark/rdmashark/internal/netnstest"
)

// openIn opens a capture inside the pair's namespace.
func openIn(t *testing.T, p *netnstest.Pair, cfg Config) *Handle {
	t.Helper()
	var h *Handle
	if err := p.Do(func() (err error) { h, err = Open(cfg); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// openOnPair opens a capture on a new veth pair's capture end (cfg's
// Interface is set to it) and an injector on the other end; both close
// when the test ends.
func openOnPair(t *testing.T, cfg Config) (*Handle, *netnstest.Injector) {
	t.Helper()
	p := netnstest.New(t)
	cfg.Interface = netnstest.Capture
	h := openIn(t, p, cfg)
	in, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return h, in
}

// frameData is the bytes of each frame of a capture in testdata/pcaps.
func frameData(t *testing.T, name string) [][]byte {
	t.Helper()
	frames := readCapture(t, filepath.Join(pcaps, name))
	out := make([][]byte, len(frames))
	for i, f := range frames {
		out[i] = f.data
	}
	return out
}

// readN reads n frames, copying them, failing after a few seconds.
func readN(t *testing.T, h *Handle, n int) []frame {
	t.Helper()
	var out []frame
	if err := h.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	defer h.SetDeadline(time.Time{})
	for len(out) < n {
		data, info, err := h.ReadPacket()
		if err != nil {
			t.Fatalf("after %d of %d frames: %v", len(out), n, err)
		}
		out = append(out, frame{append([]byte{}, data...), info})
	}
	return out
}

// expectNothing fails if a frame arrives within d.
func expectNothing(t *testing.T, h *Handle, d time.Duration) {
	t.Helper()
	h.SetDeadline(time.Now().Add(d))
	defer h.SetDeadline(time.Time{})
	if data, _, err := h.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("unexpected frame (%d bytes) or error %v", len(data), err)
	}
}

// TestHandleCapturesReplay replays rxe-rping.pcap into one end of a veth
// pair, untagged, with an 802.1Q tag and with 802.1ad+802.1Q tags, and
// captures on the other end with the default filter: the frames the filter
// keeps (as x/net/bpf's VM runs it) arrive in order, byte for byte, with
// their lengths — tags the receiving kernel took off put back.
func TestHandleCapturesReplay(t *testing.T) {
	h, in := openOnPair(t, Config{})

	ins, _ := DefaultFilter(0).Instructions(DefaultSnapLen)
	vm, _ := bpf.NewVM(ins)
	var sent, want [][]byte
	for _, f := range readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap")) {
		for _, v := range [][]byte{f.data, tag(f.data, 0x8100, 0x2064), tag(f.data, 0x88a8, 0x0005, 0x8100, 0xe064)} {
			sent = append(sent, v)
			if n, _ := vm.Run(v); n > 0 {
				want = append(want, v)
			}
		}
	}
	if len(want) != 3*65 { // tshark: 65 frames of rxe-rping.pcap match the default filter
		t.Fatalf("%d frames to expect, want %d", len(want), 3*65)
	}
	if err := in.Replay(sent, 20); err != nil {
		t.Fatal(err)
	}
	got := readN(t, h, len(want))
	for i := range want {
		if !bytes.Equal(got[i].data, want[i]) {
			t.Fatalf("frame %d differs:\n got %x\nwant %x", i+1, got[i].data, want[i])
		}
		if got[i].info.Length != len(want[i]) || got[i].info.CaptureLength != len(want[i]) {
			t.Fatalf("frame %d: lengths %d/%d, want %d", i+1, got[i].info.CaptureLength, got[i].info.Length, len(want[i]))
		}
		if time.Since(got[i].info.Timestamp) > time.Minute || got[i].info.Timestamp.After(time.Now()) {
			t.Fatalf("frame %d: timestamp %v", i+1, got[i].info.Timestamp)
		}
	}
	expectNothing(t, h, 100*time.Millisecond)
	st, err := h.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets != uint64(len(want)) || st.Drops != 0 {
		t.Errorf("kernel counters %+v, want %d packets and no drops", st, len(want))
	}
}

// TestHandleSnapLen: the filter's return value cuts frames in the kernel;
// the length on the wire stays.
func TestHandleSnapLen(t *testing.T) {
	h, in := openOnPair(t, Config{SnapLen: 60, Filter: Filter{Terms: []Term{{Kind: TermAll}}}})
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))[:10]
	var sent [][]byte
	for _, f := range frames {
		sent = append(sent, f.data, tag(f.data, 0x8100, 7))
	}
	if err := in.Replay(sent, 20); err != nil {
		t.Fatal(err)
	}
	got := readN(t, h, len(sent))
	for i, g := range got {
		n := min(60, len(sent[i]))
		if !bytes.Equal(g.data, sent[i][:n]) || g.info.Length != len(sent[i]) {
			t.Fatalf("frame %d: %d bytes of %d kept, want %d of %d", i+1, len(g.data), g.info.Length, n, len(sent[i]))
		}
	}
}

// TestHandleDrops fills the smallest ring (2 blocks of 128 KiB) with the
// 3 MB of rxe-nfs3.pcap, nobody reading: the kernel's drop counter says how
// many frames it could not place, and the rest arrive.
func TestHandleDrops(t *testing.T) {
	h, in := openOnPair(t, Config{BufferSize: 1, Filter: Filter{Terms: []Term{{Kind: TermAll}}}})
	sent := frameData(t, "rxe-nfs3.pcap")
	for _, f := range sent { // no pacing, nobody reading
		if err := in.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	st, err := h.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets != uint64(len(sent)) || st.Drops == 0 || st.Drops >= st.Packets {
		t.Fatalf("kernel counters %+v after %d frames into a tiny queue", st, len(sent))
	}
	got := readN(t, h, int(st.Packets-st.Drops))
	if len(got) == 0 || !bytes.Equal(got[0].data, sent[0]) {
		t.Errorf("the first frame was not queued")
	}
	expectNothing(t, h, 50*time.Millisecond)
	// The counters add up across reads.
	st2, _ := h.Stats()
	if st2 != st {
		t.Errorf("counters changed with no traffic: %+v then %+v", st, st2)
	}
}

func TestHandleInterfaceErrors(t *testing.T) {
	p := netnstest.New(t)

	err := p.Do(func() error { _, err := Open(Config{Interface: "nosuch0"}); return err })
	var e *Error
	if !errors.Is(err, ErrNoInterface) || !errors.As(err, &e) {
		t.Fatalf("no such interface: %v", err)
	}
	msg := err.Error()
	for _, s := range []string{`no interface named "nosuch0"`, netnstest.Inject, netnstest.Capture, "lo"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q does not say %q", msg, s)
		}
	}

	err = p.Do(func() error { _, err := Open(Config{Interface: "lo"}); return err })
	if !errors.Is(err, ErrInterfaceDown) || !strings.Contains(err.Error(), "ip link set lo up") {
		t.Errorf("interface down (lo is down in a new namespace): %v", err)
	}

	// Without CAP_NET_RAW: drop it on one locked thread only (capabilities
	// are per thread; the thread dies with its goroutine) and open the
	// test's own loopback there.
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[0].Effective &^= 1 << unix.CAP_NET_RAW
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		_, err := Open(Config{Interface: "lo"})
		errc <- err
	}()
	if err := <-errc; !errors.Is(err, ErrPermission) || !strings.Contains(err.Error(), "CAP_NET_RAW") {
		t.Errorf("without CAP_NET_RAW: %v", err)
	}

	// The interface goes down during the capture.
	h := openIn(t, p, Config{Interface: netnstest.Capture})
	done := make(chan error, 1)
	go func() {
		h.SetDeadline(time.Now().Add(5 * time.Second))
		_, _, err := h.ReadPacket()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := p.IP("link", "set", netnstest.Capture, "down"); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, ErrInterfaceDown) || !strings.Contains(err.Error(), "went down during the capture") {
		t.Errorf("interface went down: %v", err)
	}
}

// TestHandleReadAllocs: reading a frame allocates nothing.
func TestHandleReadAllocs(t *testing.T) {
	h, in := openOnPair(t, Config{Filter: Filter{Terms: []Term{{Kind: TermAll}}}})
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))
	for range 3 {
		for _, f := range frames {
			if err := in.Send(f.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	var err2 error
	allocs := testing.AllocsPerRun(3*len(frames)-1, func() {
		if _, _, err := h.ReadPacket(); err != nil {
			err2 = err
		}
	})
	if err2 != nil {
		t.Fatal(err2)
	}
	if allocs != 0 {
		t.Errorf("ReadPacket allocates %.1f times per frame", allocs)
	}
}

// TestStatsAllocs: the ring's reader reads the kernel's counters once a
// block (Capture places drops that way): that allocates nothing.
func TestStatsAllocs(t *testing.T) {
	p := netnstest.New(t)
	h := openIn(t, p, Config{Interface: netnstest.Capture, Filter: filterAll})
	var err error
	if a := testing.AllocsPerRun(1000, func() { _, err = h.Stats() }); a != 0 || err != nil {
		t.Errorf("Stats allocates %.2f times a call (err %v)", a, err)
	}
}
