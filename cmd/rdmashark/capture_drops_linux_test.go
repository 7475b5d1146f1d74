//go:build linux

package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/internal/netnstest"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/source/live"
)

// TestCaptureDropsCheck (issues 28 and 30): a live capture whose file
// stops taking bytes — -w into a FIFO the test does not read yet — holds
// the writer, then (with two hand-off buffers, --handoff-blocks 2) the
// ring's reader, and with the smallest ring (-B 256) the kernel drops
// most of what is sent meanwhile: the first 4,000 frames of rxe-nfs3.
// Then the test drains the FIFO and sends the rest. The pcapng written
// carries the drops: the kernel's count in the statistics block, and
// epb_dropcount on the frame after each loss the capture placed before a
// frame (the JSON's losses); and `check` on it reports no error or
// warning that `check` on the whole capture (rxe-nfs3.pcap) does not: what
// the drops took is capture loss, not a protocol violation.
//
// Not yet so for the rules issue 28 names (openIssue28): the test
// tolerates those, logs them, and fails on any other.
func TestCaptureDropsCheck(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	whole := filepath.Join(pcapDir, "rxe-nfs3.pcap")
	frames := readPcap(t, whole)
	const split = 4000
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Open for reading first (without waiting for a writer), so that the
	// capture's open for writing does not wait either.
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	written := filepath.Join(dir, "dropped.pcapng")
	wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "--format", "json", "-q", "-B", "256", "--handoff-blocks", "2", "-a", "duration:4", "-w", fifo)
	for _, f := range frames[:split] {
		if err := inj.Send(f.data); err != nil {
			t.Fatal(err)
		}
	}
	out, err := os.Create(written)
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, rd)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		drained <- err
	}()
	// Until the write that held the reader went through (bounded: the
	// capture writes a MiB at a time), then the rest, paced.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(written); err == nil && st.Size() >= live.FlushBytes {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	rest := make([][]byte, 0, len(frames)-split)
	for _, f := range frames[split:] {
		rest = append(rest, f.data)
	}
	if err := inj.Replay(rest, 20); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	ci := parseCaptureDoc(t, r)
	t.Logf("%d kept, %d dropped by the kernel, %d analysed, %d not analysed, losses %+v", ci.KernelPackets, ci.KernelDrops, ci.Packets, ci.NotAnalysed, ci.Losses)
	if ci.KernelDrops == 0 {
		t.Fatalf("no kernel drops with the reader held by a full FIFO:\n%s", r.stderr)
	}

	// The file: its frames and the drops are what the kernel counted;
	// each loss placed before a frame is that frame's epb_dropcount, and
	// the statistics block has the total.
	src, err := source.Open(written)
	if err != nil {
		t.Fatal(err)
	}
	lostAt := map[uint64]uint64{}
	var n uint64
	for {
		rec, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if rec.LostBefore > 0 {
			lostAt[n] = rec.LostBefore
		}
	}
	src.Close()
	if n+ci.KernelDrops != ci.KernelPackets {
		t.Fatalf("file %d + dropped %d != kernel %d", n, ci.KernelDrops, ci.KernelPackets)
	}
	want := map[uint64]uint64{}
	for _, l := range ci.Losses {
		if l.By == "kernel" && l.BeforeFrame <= n {
			want[l.BeforeFrame] += l.Dropped
		}
	}
	if len(want) == 0 {
		t.Fatalf("no kernel loss placed before a frame: %+v", ci.Losses)
	}
	if !mapsEqual(lostAt, want) {
		t.Errorf("epb_dropcount by frame %v, the JSON's kernel losses before frames %v", lostAt, want)
	}
	if recv, drop := isbCounters(t, written); len(recv) != 1 || recv[0] != ci.KernelPackets || drop[0] != ci.KernelDrops {
		t.Errorf("statistics block: received %v dropped %v; JSON %d and %d", recv, drop, ci.KernelPackets, ci.KernelDrops)
	}

	// check: nothing at error or warning that the whole capture lacks.
	wholeRules, _ := checkRules(t, whole)
	droppedRules, doc := checkRules(t, written)
	var extra []string
	for rule := range droppedRules {
		if !wholeRules[rule] {
			extra = append(extra, rule)
		}
	}
	// (Issue 28's rules here — CHUNK-LONG-CALL, CREDIT-OVERRUN,
	// RDMA-BY-REQUESTER, RDMA-*-UNADVERTISED, RDMA-AFTER-REPLY — came from
	// drops that took a connection's CM exchange: its roles reversed. The
	// engine now settles them on the first packet a ULP can read
	// (dissect/orient.go; TestNoSetupConnectionFirstPacketAnACK), and they
	// are no longer tolerated here.)
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("check on the capture with %d kernel drops reports %v at error or warning, which check on the whole capture does not:\n%s", ci.KernelDrops, extra, doc)
	}
	// And it says why evidence is missing.
	if !strings.Contains(doc, "dropped") {
		t.Errorf("check does not mention the drops:\n%s", doc)
	}
}

func mapsEqual(a, b map[uint64]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
