package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/netnstest"
	"github.com/rdmashark/rdmashark/source/live"
)

// captureChildren lists the processes whose parent is pid and that are
// capture processes (their command line starts with captureChildArg).
func captureChildren(t *testing.T, pid int) []int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		t.Fatalf("the process's children: %v", err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		child, _ := strconv.Atoi(f)
		if isCaptureProcess(child) {
			out = append(out, child)
		}
	}
	// Children of other threads of the process.
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, task := range tasks {
		if task.Name() == strconv.Itoa(pid) {
			continue
		}
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
		for _, f := range strings.Fields(string(b)) {
			child, _ := strconv.Atoi(f)
			if isCaptureProcess(child) {
				out = append(out, child)
			}
		}
	}
	return out
}

func isCaptureProcess(pid int) bool {
	cl, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(cl), "\x00")
	return len(args) > 1 && args[1] == captureChildArg
}

// TestCaptureProcessEqualsAnalyze: with the reader in a capture process
// (--reader process, the frames reaching the analysis through the pipe as
// the frame stream) and in this process (--reader in-process), the live
// analysis of rxe-nfs3 replayed is `analyze`'s of the file the capture
// wrote, and the capture's facts are the same both ways. While the
// capture runs, the capture process is a child of this one with
// --reader process and there is none with --reader in-process.
func TestCaptureProcessEqualsAnalyze(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	frames := readPcap(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	kept := keptBy(t, live.DefaultFilter(0, dissect.ULPPorts(newULPs())...), frames)
	all := make([][]byte, len(frames))
	for i, f := range frames {
		all[i] = f.data
	}
	for _, reader := range []string{readerProcess, readerInProcess} {
		t.Run(reader, func(t *testing.T) {
			written := filepath.Join(t.TempDir(), "live.pcapng")
			wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "--reader", reader, "--format", "json",
				"-c", strconv.Itoa(len(kept)), "--duration", "15s", "-w", written)
			children := captureChildren(t, os.Getpid())
			if want := map[string]int{readerProcess: 1, readerInProcess: 0}[reader]; len(children) != want {
				t.Errorf("--reader %s: %d capture processes run, want %d", reader, len(children), want)
			}
			if err := inj.Replay(all, 20); err != nil {
				t.Fatal(err)
			}
			r := wait()
			if r.code != 0 && r.code != 1 {
				t.Fatalf("capture: exit %d\n%s", r.code, r.stderr)
			}
			var doc struct {
				Capture captureInfo `json:"capture"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			ci := doc.Capture
			if ci.Packets != uint64(len(kept)) || ci.KernelPackets != uint64(len(kept)) || ci.KernelDrops != 0 || ci.NotAnalysed != 0 || ci.Stop != "count reached" {
				t.Fatalf("capture facts %+v, want %d packets, none dropped or skipped, stopped by the count", ci, len(kept))
			}
			if n := countRecords(written); n != len(kept) {
				t.Fatalf("%s holds %d frames, want %d", written, n, len(kept))
			}
			sameAnalysis(t, "live capture against analyze of its file", analysisOf(t, r.stdout), analysisOf(t, analyzeJSON(t, written)))
			if left := captureChildren(t, os.Getpid()); len(left) != 0 {
				t.Errorf("capture processes %v still run after the capture ended", left)
			}
		})
	}
}

// TestCaptureProcessDiesWithParent: a capture (this test binary, run as
// rdmashark) killed with SIGKILL leaves no capture process behind: the
// kernel sends it SIGTERM (Pdeathsig) and it stops, its file whole.
func TestCaptureProcessDiesWithParent(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	written := filepath.Join(t.TempDir(), "live.pcapng")
	a, _ := json.Marshal([]string{"capture", "-i", netnstest.Capture, "-q", "-w", written, "--duration", "30s"})
	cmd := exec.Command("ip", "netns", "exec", p.NS, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(a))
	var stdout bytes.Buffer
	stderr := newReadyWriter()
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	exited := startListening(t, "capture", cmd, stderr)
	// ip netns exec execs the binary: the process is the capture.
	children := captureChildren(t, cmd.Process.Pid)
	if len(children) != 1 {
		cmd.Process.Kill()
		t.Fatalf("%d capture processes under the capture, want 1", len(children))
	}
	frames := readPcap(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	for _, f := range frames {
		if err := inj.Send(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed capture's output is still open after 10 s: its capture process holds it")
	}
	child := children[0]
	deadline := time.Now().Add(5 * time.Second)
	for isCaptureProcess(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if isCaptureProcess(child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("capture process %d still runs 5 s after its parent was killed", child)
	}
	code, out, errs := runCmd(t, "analyze", written)
	if code != 0 || strings.Contains(errs, "truncated") {
		t.Errorf("the file the capture process left does not read to its end: exit %d\n%s%s", code, out, errs)
	}
}

// TestCaptureProcessToStdout: with -w - the capture process writes the
// pcapng to rdmashark's standard output (a file here), and the report goes
// to standard error: the file reads back with the frames kept.
func TestCaptureProcessToStdout(t *testing.T) {
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	frames := readPcap(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	kept := keptBy(t, live.DefaultFilter(0, dissect.ULPPorts(newULPs())...), frames)
	written := filepath.Join(t.TempDir(), "stdout.pcapng")
	out, err := os.Create(written)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	a, _ := json.Marshal([]string{"capture", "-i", netnstest.Capture, "-q", "-w", "-", "-c", strconv.Itoa(len(kept)), "--duration", "15s"})
	cmd := exec.Command("ip", "netns", "exec", p.NS, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(a))
	stderr := newReadyWriter()
	cmd.Stdout, cmd.Stderr = out, stderr
	exited := startListening(t, "capture", cmd, stderr)
	if n := len(captureChildren(t, cmd.Process.Pid)); n != 1 {
		t.Errorf("%d capture processes under the capture, want 1", n)
	}
	for _, f := range frames {
		if err := inj.Send(f.data); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("capture: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("capture did not stop at %d packets: %s", len(kept), stderr.String())
	}
	if n := countRecords(written); n != len(kept) {
		t.Errorf("standard output reads as %d frames, want %d\n%s", n, len(kept), stderr.String())
	}
	if !strings.Contains(stderr.String(), "written to -") {
		t.Errorf("the report is not on standard error:\n%s", stderr.String())
	}
}
