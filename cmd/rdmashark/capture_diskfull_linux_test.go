package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/mountnstest"
	"github.com/rdmashark/rdmashark/internal/netnstest"
	"github.com/rdmashark/rdmashark/source/live"
)

// TestCaptureDiskFull (issue 29 point 5): capture -w on a disk that fills
// up left a half-written last block, which every reader of the file then
// reported as a truncated record. The file now ends with its last whole
// block: read to its end without an error, and capture says why it
// stopped writing. rxe-nfs3's frames are captured onto a 1.5 MiB tmpfs (a Saver writes up to 1 MiB at once) in a
// private mount namespace, from a veth pair in a network namespace.
func TestCaptureDiskFull(t *testing.T) {
	dir, inside := mountnstest.Tmpfs(t, "size=1536k")
	if !inside {
		return
	}
	p := netnstest.New(t)
	inj, err := p.Injector(netnstest.Inject)
	if err != nil {
		t.Fatal(err)
	}
	defer inj.Close()
	frames := keptBy(t, live.DefaultFilter(0), readPcap(t, filepath.Join(pcapDir, "rxe-nfs3.pcap")))
	written := filepath.Join(dir, "live.pcapng")
	wait := startCapture(t, p, "capture", "-i", netnstest.Capture, "-q", "-c", strconv.Itoa(len(frames)), "--duration", "15s", "-w", written)
	all := make([][]byte, len(frames))
	for i, f := range frames {
		all[i] = f.data
	}
	if err := inj.Replay(all, 20); err != nil {
		t.Fatal(err)
	}
	r := wait()
	if r.code != 2 || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("capture on a full disk: exit %d, want 2 and ENOSPC\n%s", r.code, r.stderr)
	}
	fi, err := os.Stat(written)
	if err != nil {
		t.Fatal(err)
	}
	n := countRecords(written)
	if n == 0 || n >= len(frames) {
		t.Fatalf("%s holds %d of %d frames in %d bytes: the disk did not fill part-way", written, n, len(frames), fi.Size())
	}
	code, out, errs := runCmd(t, "analyze", written)
	if code != 0 || strings.Contains(errs, "truncated") {
		t.Errorf("the file capture left (%d bytes, %d frames) does not read to its end: exit %d\n%s%s", fi.Size(), n, code, out, errs)
	}
}
