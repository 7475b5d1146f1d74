//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/rdmashark/rdmashark/internal/netnstest"
	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/source/live"
)

// The live-capture proof: real captures replayed into one end of a veth
// pair in a network namespace, `rdmashark capture` on the other end. No
// RDMA hardware, but root (the test skips, saying so, without it).

var pcapDir = filepath.Join("..", "..", "testdata", "pcaps")

type pcapFrame struct {
	data []byte
	ci   gopacket.CaptureInfo
}

func readPcap(t *testing.T, name string) []pcapFrame {
	t.Helper()
	_, frames := pcaptest.Read(t, name)
	out := make([]pcapFrame, len(frames))
	for i, f := range frames {
		out[i] = pcapFrame{f.Data, f.CI}
	}
	return out
}

// keptBy returns the frames the filter keeps, run in x/net/bpf's VM (the
// program the kernel runs; source/live's tests check it against gopacket
// decoding and tshark).
func keptBy(t *testing.T, f live.Filter, frames []pcapFrame) []pcapFrame {
	t.Helper()
	ins, err := f.Instructions(live.DefaultSnapLen)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	var out []pcapFrame
	for _, fr := range frames {
		if n, _ := vm.Run(fr.data); n > 0 {
			out = append(out, fr)
		}
	}
	return out
}

func writePcap(t *testing.T, name string, frames []pcapFrame) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(live.DefaultSnapLen, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if err := w.WritePacket(fr.ci, fr.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readyWriter collects a command's standard error and closes ready when
// the capture says it listens.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func newReadyWriter() *readyWriter { return &readyWriter{ready: make(chan struct{})} }

func (w *readyWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if strings.Contains(w.buf.String(), "listening on") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(b), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

type runResult struct {
	code           int
	stdout, stderr string
}

// startCapture runs `rdmashark args...` in the namespace and returns once
// the capture listens; wait returns its outcome (bounded).
func startCapture(t *testing.T, p *netnstest.Pair, args ...string) (wait func() runResult) {
	t.Helper()
	stderr := newReadyWriter()
	var stdout bytes.Buffer
	done := make(chan runResult, 1)
	go func() {
		var code int
		err := p.Do(func() error {
			code = run(args, strings.NewReader(""), &stdout, stderr)
			return nil
		})
		if err != nil {
			code = -1
			fmt.Fprintln(stderr, "test: entering the namespace:", err)
		}
		done <- runResult{code, stdout.String(), stderr.String()}
	}()
	select {
	case <-stderr.ready:
	case r := <-done:
		t.Fatalf("rdmashark %s ended before listening: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	case <-time.After(5 * time.Second):
		t.Fatalf("rdmashark %s does not listen after 5 s: %s", strings.Join(args, " "), stderr.String())
	}
	return func() runResult {
		select {
		case r := <-done:
			return r
		case <-time.After(20 * time.Second):
			t.Fatalf("rdmashark %s still running after 20 s: %s", strings.Join(args, " "), stderr.String())
		}
		return runResult{}
	}
}

// startListening starts cmd, a capture run as a process of its own whose
// standard error is stderr, and waits until it says it listens (10 s at
// most); the channel gets cmd.Wait's result. what prefixes the failures.
func startListening(t *testing.T, what string, cmd *exec.Cmd, stderr *readyWriter) <-chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-stderr.ready:
	case err := <-exited:
		t.Fatalf("%s ended before listening: %v\n%s", what, err, stderr.String())
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s does not listen: %s", what, stderr.String())
	}
	return exited
}

// analysisOf parses an analyze or capture JSON document without the keys
// that name the input and describe the capture.
func analysisOf(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	delete(m, "file")
	delete(m, "capture")
	// A replay's packets keep their order, not their times: the transport
	// health's times are the replay's.
	conns, _ := m["connections"].([]any)
	for _, c := range conns {
		th, _ := c.(map[string]any)["transport_health"].(map[string]any)
		for _, d := range th {
			dm, ok := d.(map[string]any)
			if !ok {
				continue
			}
			for _, k := range []string{"ack_latency", "read_latency", "episode_duration", "ce_to_cnp_delay", "throughput", "episode_list"} {
				delete(dm, k)
			}
		}
	}
	flows, _ := m["ud_flows"].([]any)
	for _, f := range flows {
		if th, ok := f.(map[string]any)["transport_health"].(map[string]any); ok {
			delete(th, "throughput")
		}
	}
	return m
}

// sameAnalysis fails with the first differing line of the two documents.
func sameAnalysis(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.MarshalIndent(got, "", "  ")
	w, _ := json.MarshalIndent(want, "", "  ")
	gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s: analyses differ at line %d:\n live: %s\n file: %s", what, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: analyses differ in length (%d and %d lines)", what, len(gl), len(wl))
}

func analyzeJSON(t *testing.T, file string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"analyze", "--format", "json", file}, nil, &out, &errb); code != 0 {
		t.Fatalf("analyze %s: exit %d: %s", file, code, errb.String())
	}
	return out.String()
}

// TestCaptureEqualsFileAnalysis replays real captures frame by frame into
// the veth pair and captures them with the default filter or -f: the live
// analysis (connections, negotiated thresholds, counts, protocols) equals
// analyze's on the frames the filter keeps, the kernel drops nothing, and
// the pcapng written with -w holds those frames byte for byte and analyses
// the same again.
func TestCaptureEqualsFileAnalysis(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	cases := []struct {
		file   string
		filter string // "" for the default
		kept   int    // tshark -Y with the same condition counts these
	}{
		{"rxe-rping.pcap", "all", 77},
		{"rxe-nfs3.pcap", "", 7128},        // udp.port==4791 or tcp.port==20049 or eth.type==0x8915
		{"siw-nfs3.pcap", "", 5108},        // the same
		{"siw-rping.pcap", "tcp 7174", 55}, // tcp.port==7174
		{"rxe-ib_write_bw.pcap", "", 1492}, // udp.port==4791 or tcp.port==20049 or eth.type==0x8915
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".pcap"), func(t *testing.T) {
			dir := t.TempDir()
			frames := readPcap(t, filepath.Join(pcapDir, c.file))
			filter := live.DefaultFilter(0, dissect.ULPPorts(newULPs())...)
			args := []string{"capture", "-i", netnstest.Capture, "--format", "json", "--duration", "15s"}
			if c.filter != "" {
				filter, err = live.ParseFilter(c.filter)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, "-f", c.filter)
			}
			kept := keptBy(t, filter, frames)
			if len(kept) != c.kept {
				t.Fatalf("%d frames pass the filter, tshark says %d", len(kept), c.kept)
			}
			expected := filepath.Join(dir, "expected.pcap")
			writePcap(t, expected, kept)
			want := analysisOf(t, analyzeJSON(t, expected))

			written := filepath.Join(dir, "live.pcapng")
			args = append(args, "-c", strconv.Itoa(len(kept)), "-w", written)
			wait := startCapture(t, p, args...)
			all := make([][]byte, len(frames))
			for i, f := range frames {
				all[i] = f.data
			}
			// Every frame goes in; the kernel's filter keeps its share.
			if err := inj.Replay(all, 20); err != nil {
				t.Fatal(err)
			}
			r := wait()
			// capture's verdict is check's on the same frames: 1 on the
			// NFS captures (Linux's server uses Send With Invalidate with
			// its R bit clear, INV-NOT-NEGOTIATED), 0 on the others.
			var checkOut, checkErr bytes.Buffer
			// (--allow-empty: capture has no gate assertions, and rping
			// and perftest carry no RPC-over-RDMA for check's gate.)
			wantCode := run([]string{"check", "--allow-empty", expected}, nil, &checkOut, &checkErr)
			if wantCode != 0 && wantCode != 1 {
				t.Fatalf("check %s: exit %d: %s", expected, wantCode, checkErr.String())
			}
			if r.code != wantCode {
				t.Fatalf("capture: exit %d, check on the same frames %d\n%s", r.code, wantCode, r.stderr)
			}
			var doc struct {
				Packets uint64      `json:"packets"`
				Capture captureInfo `json:"capture"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			ci := doc.Capture
			if ci.Packets != uint64(len(kept)) || ci.KernelPackets != uint64(len(kept)) || ci.KernelDrops != 0 || ci.Stop != "count reached" || ci.Filter != filter.String() {
				t.Fatalf("capture facts %+v, want %d packets, none dropped, stopped by the count", ci, len(kept))
			}
			sameAnalysis(t, "live capture", analysisOf(t, r.stdout), want)

			// The pcapng re-reads identically.
			rd, err := source.Open(written)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			n := 0
			for {
				rec, err := rd.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", written, err)
				}
				if n >= len(kept) || !bytes.Equal(rec.Data, kept[n].data) || rec.CI.Length != kept[n].ci.Length {
					t.Fatalf("%s: frame %d differs from frame %d kept of %s", written, n+1, n+1, c.file)
				}
				n++
			}
			if n != len(kept) {
				t.Fatalf("%s holds %d frames, want %d", written, n, len(kept))
			}
			sameAnalysis(t, "written pcapng", analysisOf(t, analyzeJSON(t, written)), want)
		})
	}
}

// TestCapturePacketLines: without --format json, a line per packet as
// dissect prints it for the file (all but the time column), then the
// report, with the kernel's drop count.
func TestCapturePacketLines(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	file := filepath.Join(pcapDir, "rxe-rping.pcap")
	frames := readPcap(t, file)
	kept := keptBy(t, live.DefaultFilter(0, dissect.ULPPorts(newULPs())...), frames)
	expected := filepath.Join(t.TempDir(), "expected.pcap")
	writePcap(t, expected, kept)
	var want, errb bytes.Buffer
	if code := run([]string{"dissect", expected}, nil, &want, &errb); code != 0 {
		t.Fatalf("dissect: %d %s", code, errb.String())
	}

	wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "-c", strconv.Itoa(len(kept)))
	for _, f := range frames {
		if err := inj.Send(f.data); err != nil {
			t.Fatal(err)
		}
	}
	r := wait()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	t.Logf("rdmashark capture -i %s -c %d (rxe-rping.pcap replayed):\n%s%s", netnstest.Capture, len(kept), r.stderr, r.stdout)
	timeCol := regexp.MustCompile(`^(\s*\d+)\s+\d+\.\d{6}`)
	strip := func(s string) string { return timeCol.ReplaceAllString(s, "$1 T") }
	wantLines := strings.Split(strings.TrimSuffix(want.String(), "\n"), "\n")
	gotLines := strings.Split(r.stdout, "\n")
	if len(gotLines) < len(wantLines) {
		t.Fatalf("%d lines, want at least %d:\n%s", len(gotLines), len(wantLines), r.stdout)
	}
	for i, w := range wantLines {
		if strip(gotLines[i]) != strip(w) {
			t.Fatalf("line %d:\n live: %s\n file: %s", i+1, gotLines[i], w)
		}
	}
	rest := strings.Join(gotLines[len(wantLines):], "\n")
	for _, s := range []string{fmt.Sprintf("live:%s: %d packets", netnstest.Capture, len(kept)), "0 packets dropped by the kernel", "count reached"} {
		if !strings.Contains(rest, s) {
			t.Errorf("report does not say %q:\n%s", s, rest)
		}
	}
}

// TestCaptureInterfaceErrors: one line and exit status 2 for each.
func TestCaptureInterfaceErrors(t *testing.T) {
	p := netnstest.New(t)
	runIn := func(args ...string) runResult {
		var out, errb bytes.Buffer
		var code int
		if err := p.Do(func() error { code = run(args, nil, &out, &errb); return nil }); err != nil {
			t.Fatal(err)
		}
		return runResult{code, out.String(), errb.String()}
	}
	check := func(what string, r runResult, says ...string) {
		t.Helper()
		if r.code != exitUsage {
			t.Errorf("%s: exit %d, want %d", what, r.code, exitUsage)
		}
		if strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: not one line: %q", what, r.stderr)
		}
		for _, s := range says {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("%s: %q does not say %q", what, r.stderr, s)
			}
		}
	}
	check("no such interface", runIn("capture", "-i", "eth9"), `no interface named "eth9"`, "interfaces: lo", netnstest.Capture, netnstest.Inject)
	check("interface down", runIn("capture", "-i", "lo"), "interface lo is down", "ip link set lo up")
	check("no -i", runIn("capture"), "give one with -i")
	// ("-f udp" is a pcap-filter expression now: every UDP frame.)
	check("bad filter", runIn("capture", "-i", netnstest.Capture, "-f", "udp 4791 4792"), "-f", "exactly one value")
	check("bad snap length", runIn("capture", "-i", netnstest.Capture, "-s", "0"), "-s must be")

	// Without CAP_NET_RAW, on one thread that keeps its lowered
	// capabilities until it ends (capabilities are per thread).
	res := make(chan runResult, 1)
	go func() {
		runtime.LockOSThread() // never unlocked
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			res <- runResult{-1, "", err.Error()}
			return
		}
		data[0].Effective &^= 1 << unix.CAP_NET_RAW
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			res <- runResult{-1, "", err.Error()}
			return
		}
		var out, errb bytes.Buffer
		code := run([]string{"capture", "-i", "lo"}, nil, &out, &errb)
		res <- runResult{code, out.String(), errb.String()}
	}()
	check("not permitted", <-res, "not permitted", "CAP_NET_RAW", "root")

	// The interface goes down during the capture: the report of what came
	// before, then the error, exit 2.
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "-q", "--duration", "15s")
	frames := readPcap(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	for _, f := range frames[:20] {
		if err := inj.Send(f.data); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := p.IP("link", "set", netnstest.Capture, "down"); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if r.code != exitUsage || !strings.Contains(r.stderr, "interface cap0 went down during the capture") {
		t.Errorf("went down: exit %d, %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "reading stopped early: interface cap0 went down") || !strings.Contains(r.stdout, "packets in") {
		t.Errorf("went down: no report of what came before:\n%s", r.stdout)
	}
}

// TestCaptureList: the namespace's interfaces, and an rxe device bound to
// one of them (from a sysfs laid out as rdma_rxe does: parent attribute).
func TestCaptureList(t *testing.T) {
	p := netnstest.New(t)
	sysfs := t.TempDir()
	dev := filepath.Join(sysfs, "class", "infiniband", "rxe0")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dev, "parent"), []byte(netnstest.Capture+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	var code int
	_ = p.Do(func() error {
		code = run([]string{"capture", "--list", "--sysfs", sysfs}, nil, &out, &errb)
		return nil
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	t.Logf("rdmashark capture --list:\n%s", out.String())
	// -D, dumpcap's letter, is --list.
	var outD bytes.Buffer
	_ = p.Do(func() error {
		run([]string{"capture", "-D", "--sysfs", sysfs}, nil, &outD, &errb)
		return nil
	})
	if outD.String() != out.String() {
		t.Errorf("capture -D:\n%s\ncapture --list:\n%s", outD.String(), out.String())
	}
	lines := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		// "N NAME …": the number -i N takes, then the name.
		f := strings.Fields(sc.Text())
		if len(f) > 1 {
			lines[f[1]] = sc.Text()
		}
	}
	if l := lines[netnstest.Capture]; !strings.Contains(l, " up ") || !strings.Contains(l, "rxe0 → "+netnstest.Capture+" (Soft-RoCE)") {
		t.Errorf("%s: %q", netnstest.Capture, l)
	}
	if l := lines[netnstest.Inject]; !strings.Contains(l, " up ") || strings.Contains(l, "rxe0") {
		t.Errorf("%s: %q", netnstest.Inject, l)
	}
	if l := lines["lo"]; !strings.Contains(l, " down ") {
		t.Errorf("lo: %q", l)
	}

	// No RDMA core at all.
	out.Reset()
	_ = p.Do(func() error {
		code = run([]string{"capture", "--list", "--sysfs", t.TempDir()}, nil, &out, &errb)
		return nil
	})
	if code != 0 || !strings.Contains(out.String(), "no RDMA devices") {
		t.Errorf("without /sys/class/infiniband: exit %d\n%s", code, out.String())
	}
}

// TestCaptureSignals runs the built binary: Ctrl-C (SIGINT) ends the
// capture with the report and exit 0; a killed capture (SIGKILL) leaves a
// pcapng file that reads to its last flushed packet.
func TestCaptureSignals(t *testing.T) {
	p := netnstest.New(t)
	bin := filepath.Join(t.TempDir(), "rdmashark")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	frames := readPcap(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	kept := keptBy(t, live.DefaultFilter(0, dissect.ULPPorts(newULPs())...), frames)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		written := filepath.Join(t.TempDir(), "live.pcapng")
		cmd := exec.Command("ip", "netns", "exec", p.NS, bin, "capture", "-i", netnstest.Capture, "-q", "-w", written, "--duration", "30s")
		var stdout bytes.Buffer
		stderr := newReadyWriter()
		cmd.Stdout, cmd.Stderr = &stdout, stderr
		exited := startListening(t, sig.String()+": capture", cmd, stderr)
		for _, f := range frames {
			if err := inj.Send(f.data); err != nil {
				t.Fatal(err)
			}
		}
		// Wait (bounded) until the file holds every kept frame: the
		// capture flushes it within a fraction of a second.
		deadline := time.Now().Add(10 * time.Second)
		for countRecords(written) < len(kept) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		// ip netns exec execs the binary: the process is rdmashark.
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		var err error
		select {
		case err = <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: capture did not end", sig)
		}
		if n := countRecords(written); n != len(kept) {
			t.Errorf("%v: %s reads %d frames, want %d", sig, written, n, len(kept))
		}
		if sig == syscall.SIGINT {
			if err != nil {
				t.Errorf("SIGINT: %v\n%s", err, stderr.String())
			}
			for _, s := range []string{fmt.Sprintf("live:%s: %d packets", netnstest.Capture, len(kept)), "(interrupted); 0 packets dropped by the kernel"} {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("SIGINT: the report does not say %q:\n%s", s, stdout.String())
				}
			}
		}
	}
}

// countRecords reads a pcapng file as far as it goes.
func countRecords(name string) int {
	r, err := source.Open(name)
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			return n
		}
		n++
	}
}

// TestCaptureSummary: capture --summary, its output not a terminal, prints
// the connections table when packets came in the second before, then the
// final report. rxe-rping replayed 20 times (20 connections, each released
// once 16 more closed) with the spill taking every released connection:
// the table printed after the first 20 copies leaves out the 4 released
// connections the spill took and says so; the final report, with 6 more
// copies, is analyze's of the frames kept, every connection whole.
func TestCaptureSummary(t *testing.T) {
	defer report.SpillConnsAfter(report.SpillConnsAfter(0))
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	rping, err := os.ReadFile(filepath.Join(pcapDir, "rxe-rping.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copies := func(name string, n int) []pcapFrame {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, append(slices.Clone(rping), bytes.Repeat(rping[24:], n-1)...), 0o644); err != nil {
			t.Fatal(err)
		}
		return readPcap(t, path)
	}
	first, all := copies("x20.pcap", 20), copies("x26.pcap", 26)
	kept := keptBy(t, live.DefaultFilter(0, dissect.ULPPorts(newULPs())...), all)
	expected := filepath.Join(dir, "expected.pcap")
	writePcap(t, expected, kept)
	var want, errb bytes.Buffer
	// --wide on both: analyze's tables, which capture's summary and final
	// report then print (without it both fit the terminal, as analyze's
	// text does).
	if code := run([]string{"analyze", "--wide", expected}, nil, &want, &errb); code != 0 {
		t.Fatalf("analyze: %d %s", code, errb.String())
	}

	wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "--wide", "--summary", "-c", strconv.Itoa(len(kept)))
	send := func(frames []pcapFrame) {
		data := make([][]byte, len(frames))
		for i, f := range frames {
			data[i] = f.data
		}
		if err := inj.Replay(data, 20); err != nil {
			t.Fatal(err)
		}
	}
	send(first)
	time.Sleep(2500 * time.Millisecond) // a table or two in between
	send(all[len(first):])
	r := wait()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	live, final, ok := strings.Cut(r.stdout, "--- final ---\n")
	if !ok {
		t.Fatalf("no final report:\n%s", r.stdout)
	}
	// The last table printed before the rest came: 20 connections, 4 of
	// them released and spilled.
	tables := strings.Split(live, "--- live:")
	mid := tables[len(tables)-1]
	if !strings.Contains(mid, "(4 closed connections not shown: they are in the final report)") {
		t.Errorf("the table after 20 copies does not count the 4 spilled connections:\n%s", mid)
	}
	for id := 1; id <= 20; id++ {
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^│ %d +│`, id))
		if shown := row.MatchString(mid); shown != (id > 4) {
			t.Errorf("connection %d shown %v in the table after 20 copies:\n%s", id, shown, mid)
		}
	}
	// The final report is analyze's, whole, but for its first line (the
	// name), the capture's own lines after it, and the latencies of the
	// transport health: the frames were replayed at other times than they
	// were captured (the health table's cells are compared with every
	// time in them masked, its borders not: their widths follow the
	// times').
	_, wantBody, _ := strings.Cut(want.String(), "\n")
	_, gotBody, _ := strings.Cut(final, "\n")
	times := regexp.MustCompile(`\d+(\.\d+)? (ns|µs|ms|s)\b`)
	norm := func(s string) string {
		var out []string
		health := false
		for _, l := range strings.Split(s, "\n") {
			switch {
			case strings.HasPrefix(l, "Transport health"):
				health = true
			case l == "":
				health = false
			case health && strings.HasPrefix(l, "│"):
				cells := strings.Split(l, "│")
				for i, c := range cells {
					cells[i] = times.ReplaceAllString(strings.TrimSpace(c), "T")
				}
				l = strings.Join(cells, "|")
			case health:
				continue // a border
			}
			out = append(out, l)
		}
		return strings.Join(out, "\n")
	}
	if !strings.HasPrefix(norm(gotBody), norm(wantBody)) {
		t.Errorf("final report:\n%s\nanalyze of the frames kept:\n%s", gotBody, wantBody)
	}
}
