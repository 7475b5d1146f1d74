package check

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// severe returns the rules with error or warning findings.
func severe(res *Result) []string {
	var ids []string
	for _, f := range res.Findings {
		if f.Severity >= Warning && !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestCaptureLossIsNoProtocolError is issue 28's proof on NFS: real
// captures (RoCE and iWARP, clean and lossy — every workload completed)
// thinned by removing a few percent of their frames at random, alone or
// in bursts, as a capture that dropped them. check reports no error or
// warning rule that the whole capture lacks: missing evidence makes a rule
// not evaluated (or a PSN gap information), never a protocol error.
func TestCaptureLossIsNoProtocolError(t *testing.T) {
	caps := []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-nfs41.pcap", "siw-nfs41.pcap",
		"lossy/rxe-nfs3-lossy.pcap", "lossy/siw-nfs3-lossy.pcap", "lossy/rxe-nfs3-loss5.pcap", "lossy/rxe-nfs41-loss3.pcap"}
	if testing.Short() {
		caps = caps[:2]
	}
	for _, name := range caps {
		src := "../testdata/pcaps/" + name
		base := severe(runFile(t, src, Config{}))
		for _, v := range []struct {
			pct   float64
			burst int
		}{{3, 1}, {5, 1}, {5, 200}} {
			for seed := uint64(1); seed <= 2; seed++ {
				path, n := pcaptest.Thin(t, src, v.pct, seed, v.burst)
				res := runFile(t, path, Config{})
				for _, id := range severe(res) {
					if slices.Contains(base, id) {
						continue
					}
					for _, f := range res.Findings {
						if f.Rule == id && f.Severity >= Warning {
							t.Errorf("%s less %d frames (%v%%, bursts of up to %d, seed %d): %s %s: %s", name, n, v.pct, v.burst, seed, f.Severity, id, f.Message)
							break
						}
					}
				}
			}
		}
	}
}

// flip writes a copy of the capture at src with one byte of frame n
// (1-based) flipped at offset off from the frame's start, checksums and
// CRCs left as they were: a frame the capture damaged.
func flip(t *testing.T, src string, n, off int) string {
	t.Helper()
	lt, frames := pcaptest.Read(t, src)
	for i := range frames {
		if frames[i].Num == n {
			frames[i].Data[off] ^= 0x40
		}
	}
	return pcaptest.Write(t, lt, frames)
}

// TestCaptureDamageIsNamedNotAnError: one byte of one frame flipped in a
// real capture, the peer having acknowledged the frame with no resend
// (what the capture holds of the wire: the receiver got good bytes). The
// frame is named, as capture damage, at information level, and nothing
// else is reported that the whole capture lacks. The frames: siw-nfs3
// packet 391, a 1448-octet segment of an RDMA Read Response, acknowledged
// in 407 (tshark: tcp.ack 4097073035 covers its Seq+Len); rxe-nfs3 packet
// 1670, an RDMA_WRITE_MIDDLE (opcode 7) at PSN 11816480, acknowledged by
// the ACK of PSN 11816491 in packet 1704.
func TestCaptureDamageIsNamedNotAnError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		frame    int
		rule     string
		ackedBy  int
		baseline string
	}{
		{"siw-nfs3.pcap", 391, "TCP-CHECKSUM-BAD", 407, ""},
		{"rxe-nfs3.pcap", 1670, "ICRC-BAD", 1704, ""},
	} {
		src := "../testdata/pcaps/" + tc.name
		base := severe(runFile(t, src, Config{}))
		res := runFile(t, flip(t, src, tc.frame, 200), Config{})
		named := false
		for _, f := range res.Findings {
			if f.Rule == tc.rule {
				named = f.Severity == Info && slices.Equal(f.Packets, []int{tc.frame, tc.ackedBy}) &&
					strings.Contains(f.Message, "capture damage")
				if !named {
					t.Errorf("%s: %s %v %s: %s", tc.name, f.Severity, f.Packets, f.Rule, f.Message)
				}
				continue
			}
			if f.Severity >= Warning && !slices.Contains(base, f.Rule) {
				t.Errorf("%s with packet %d damaged: %s %s %v: %s", tc.name, tc.frame, f.Severity, f.Rule, f.Packets, f.Message)
			}
		}
		if !named {
			t.Errorf("%s: packet %d's damage not named", tc.name, tc.frame)
		}
	}
}

// TestKernelDropsInPcapng: a capture that says where it lost frames — a
// pcapng whose Enhanced Packet Blocks carry epb_dropcount, as
// rdmashark capture -w writes where the kernel dropped frames — is read
// with those drops as stretches every connection lacks: a caveat gives
// their count on every connection, and no error or warning appears that
// the whole capture lacks. Made from rxe-nfs3 and siw-nfs3 by removing
// runs of 1-40 frames (a few percent in all), each run counted on the
// frame after it.
func TestKernelDropsInPcapng(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap"} {
		src := "../testdata/pcaps/" + name
		base := severe(runFile(t, src, Config{}))
		lt, frames := pcaptest.Read(t, src)
		path := filepath.Join(t.TempDir(), "drops.pcapng")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := pcapgo.NewNgWriter(f, lt)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 7))
		var run, pending, total uint64
		for i, fr := range frames {
			if run == 0 && i > 12 && r.Float64() < 0.003 {
				run = uint64(1 + r.IntN(40))
			}
			if run > 0 {
				run--
				pending++
				continue
			}
			var opts pcapgo.NgPacketOptions
			if pending > 0 {
				n := pending
				opts.DropCount = &n
				total += pending
				pending = 0
			}
			if err := w.WritePacketWithOptions(fr.CI, fr.Data, opts); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if total == 0 {
			t.Fatal("nothing dropped")
		}
		res, eng := runFileEngine(t, path, Config{})
		if eng.Stats.Dropped != total {
			t.Errorf("%s: %d frames dropped by epb_dropcount, the engine counted %d", name, total, eng.Stats.Dropped)
		}
		res.NoteLoss(eng.Stats.Dropped, eng.Stats.Skipped)
		want := fmt.Sprintf("%d packets were dropped by the kernel during this capture", total)
		for _, cr := range res.Connections {
			if cr.ID != 0 && !slices.ContainsFunc(cr.Caveats, func(c string) bool { return strings.HasPrefix(c, want) }) {
				t.Errorf("%s: connection %d caveats %q, want %q", name, cr.ID, cr.Caveats, want)
			}
		}
		for _, f := range res.Findings {
			if f.Severity >= Warning && !slices.Contains(base, f.Rule) {
				t.Errorf("%s less %d frames counted as kernel drops: %s %s %v: %s", name, total, f.Severity, f.Rule, f.Packets, f.Message)
			}
		}
	}
}
