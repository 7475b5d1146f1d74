package check

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/source"
)

// runFile checks one capture with cfg, the way `rdmashark check` does.
func runFile(t testing.TB, name string, cfg Config) *Result {
	t.Helper()
	res, _ := runFileEngine(t, name, cfg)
	return res
}

// runFileEngine is runFile that also returns the engine.
func runFileEngine(t testing.TB, name string, cfg Config) (*Result, *dissect.Engine) {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := NewRunner(cfg)
	eng := dissect.NewEngine(RPCTest.With(dissect.Options{Observer: run}))
	if err := eng.Run(r, func(p *dissect.Packet) error { run.Packet(p); return nil }); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return run.Finish(eng.Conns.Connections()), eng
}

func realCaptures(t testing.TB) []string {
	var out []string
	for _, pat := range []string{"../testdata/pcaps/*.pcap", "../testdata/pcaps/public/*.pcap"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no captures found")
	}
	return out
}

// TestRealCaptures runs every rule on the kernel's captures. What it
// expects was checked outside rdmashark:
//   - every NFS capture: the server's CM REP / MPA Reply private data has
//     R=0 (tshark -x of the REP; analyze shows it), yet the server sends
//     Replies With Invalidate: tshark counts the SEND_*_WITH_INVALIDATE
//     packets (infiniband.bth.opcode 22/23) of the rxe captures — 14, 24,
//     747 — and the Send with Invalidate FPDUs (iwarp_rdma.opcode 0x04) of
//     the siw captures — 19, 35, 747. Each is an INV-NOT-NEGOTIATED error.
//     The two NFSv4 callback captures: 14 each (tshark, the same filters).
//   - rxe-nfs3.pcap: the server sent PSNs 1891992, 1892095 and 1892146
//     twice (frames 6524/6525 and the like; tshark shows both copies):
//     three PSN-GAP retransmission warnings.
//   - nothing else at warning or above.
func TestRealCaptures(t *testing.T) {
	want := map[string]struct {
		rules []string // rules with warnings or errors
		swi   int      // Replies sent With Invalidate
	}{
		// rxe-nfs3's 3 PSN-GAP findings are retransmissions the responder
		// acknowledged (tshark: PSN 1891992 sent in frames 6524 and 6525,
		// ACKed in 6526): recovered, info.
		"rxe-nfs3.pcap":         {[]string{"INV-NOT-NEGOTIATED"}, 14},
		"rxe-nfs41.pcap":        {[]string{"INV-NOT-NEGOTIATED"}, 24},
		"rxe-nfs42-small.pcap":  {[]string{"INV-NOT-NEGOTIATED"}, 747},
		"siw-nfs3.pcap":         {[]string{"INV-NOT-NEGOTIATED"}, 19},
		"siw-nfs41.pcap":        {[]string{"INV-NOT-NEGOTIATED"}, 35},
		"siw-nfs42-small.pcap":  {[]string{"INV-NOT-NEGOTIATED"}, 747},
		"rxe-nfs-callback.pcap": {[]string{"INV-NOT-NEGOTIATED"}, 14},
		"siw-nfs-callback.pcap": {[]string{"INV-NOT-NEGOTIATED"}, 14},
		// The Wireshark wiki's 2008 iWARP captures (public/README.md): its
		// Read Requests name memory its Read Responses do not carry
		// (-read packet 12: SrcSTag 0x01000000, size 262144; the
		// response STag 1, 1024 octets), and its markers sit 4 octets
		// late holding 02 02 02 02 (-mrkr packets 13, 44).
		"wireshark-wiki-iwarp_rdma-read.pcap":                     {[]string{"RDMA-READ-UNPAIRED"}, 0},
		"wireshark-wiki-iwarp_rdma-read_write_long_run.pcap":      {[]string{"RDMA-READ-UNPAIRED"}, 0},
		"wireshark-wiki-iwarp_rdma-read_write_long_run_mrkr.pcap": {[]string{"MPA-MARKER-BAD"}, 0},
	}
	for _, f := range realCaptures(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			res := runFile(t, f, Config{})
			var got []string
			count := map[string]int{}
			swi := 0
			for _, cr := range res.Connections {
				for _, ch := range cr.Checks {
					count[ch.Rule] += ch.Findings
					if ch.Findings > 0 && ch.Worst >= Warning && !slices.Contains(got, ch.Rule) {
						got = append(got, ch.Rule)
					}
				}
				if cr.Usage != nil {
					swi += cr.Usage.RepliesWithInvalidate
				}
			}
			slices.Sort(got)
			w := want[name]
			if !slices.Equal(got, w.rules) {
				t.Errorf("rules with warnings or errors: got %v, want %v", got, w.rules)
			}
			if swi != w.swi || count["INV-NOT-NEGOTIATED"] != w.swi {
				t.Errorf("Replies With Invalidate: %d counted, %d INV-NOT-NEGOTIATED findings, want %d", swi, count["INV-NOT-NEGOTIATED"], w.swi)
			}
			if name == "rxe-nfs3.pcap" && count["PSN-GAP"] != 3 {
				t.Errorf("PSN-GAP: %d findings, want 3 retransmissions", count["PSN-GAP"])
			}
			for _, cr := range res.Connections {
				for _, f := range cr.Findings() {
					if f.Rule == "PSN-GAP" && (f.Severity != Info || !strings.Contains(f.Message, "recovered: the responder acknowledged")) {
						t.Errorf("packet %v: %s %s: want a recovered retransmission (info)", f.Packets, f.Severity, f.Message)
					}
				}
			}
		})
	}
}

// TestRetransmissionNotAcknowledged: rxe-nfs3.pcap cut right after the
// server's retransmission of PSN 1891992 (frame 6525; tshark shows its ACK
// in frame 6526) leaves the resend unacknowledged: a PSN-GAP warning that
// says so. The whole capture reports it as recovered (TestRealCaptures).
func TestRetransmissionNotAcknowledged(t *testing.T) {
	lt, frames := pcaptest.Read(t, "../testdata/pcaps/rxe-nfs3.pcap")
	name := filepath.Join(t.TempDir(), "cut.pcap")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames[:6525] {
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	res := runFile(t, name, Config{})
	var got []Finding
	for _, cr := range res.Connections {
		for _, f := range cr.Findings() {
			if f.Rule == "PSN-GAP" {
				got = append(got, f)
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d PSN-GAP findings, want 1: %v", len(got), got)
	}
	f0 := got[0]
	if f0.Severity != Warning || !slices.Equal(f0.Packets, []int{6525}) ||
		!strings.Contains(f0.Message, "PSN 1891992") || !strings.Contains(f0.Message, "no response in the capture acknowledges") {
		t.Errorf("got %s %v %q; want a warning at packet 6525 that no response acknowledges PSN 1891992", f0.Severity, f0.Packets, f0.Message)
	}
}
