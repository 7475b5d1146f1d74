package dissect

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/source"
)

// copies writes a pcap of n copies of the records of the capture name
// after its file header, as bench/run.sh builds its large files: each
// copy's connections are new connections with the same addresses.
func copies(t *testing.T, name string, n int) string {
	t.Helper()
	b, err := os.ReadFile(capturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), b[:24]...)
	out = append(out, bytes.Repeat(b[24:], n)...)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestForgetReleased runs 60 copies of an rping capture (60 RoCE
// connections closed by DREQ/DREP; 60 iWARP ones closed by FINs) with and
// without Options.ForgetReleased: with it the table holds no more than the
// live connections and the grace window at any packet, and every summary
// is forgotten by the end but those still in the window; every packet
// gets the same connection ID and direction either way, and the counters
// agree.
func TestForgetReleased(t *testing.T) {
	const n = 60
	for _, name := range []string{"rxe-rping.pcap", "siw-rping.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := copies(t, name, n)
			type seen struct{ id, dir int }
			run := func(forget bool) (*Engine, []seen, int) {
				r, err := source.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				e := newEngine(Options{ForgetReleased: forget})
				var got []seen
				most := 0
				err = e.Run(r, func(p *Packet) error {
					s := seen{}
					if p.Conn != nil {
						s = seen{p.Conn.ID, int(p.Dir)}
					}
					got = append(got, s)
					most = max(most, len(e.Conns.Connections()))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return e, got, most
			}
			keep, kept, keepMost := run(false)
			forget, got, forgetMost := run(true)
			if len(kept) != len(got) {
				t.Fatalf("%d packets kept, %d forgetting", len(kept), len(got))
			}
			for i := range kept {
				if kept[i] != got[i] {
					t.Fatalf("packet %d: connection/direction %v keeping summaries, %v forgetting", i+1, kept[i], got[i])
				}
			}
			if keepMost != n {
				t.Errorf("keeping summaries, the table held at most %d connections, want all %d", keepMost, n)
			}
			if forgetMost > graceConns+2 {
				t.Errorf("forgetting, the table held %d connections at once, want at most the grace window (%d) and the live ones", forgetMost, graceConns)
			}
			if left := len(forget.Conns.Connections()); uint64(left)+forget.Conns.Forgotten != n || forget.Conns.Forgotten < n-graceConns-1 {
				t.Errorf("forgetting: %d summaries left, %d forgotten, of %d connections", left, forget.Conns.Forgotten, n)
			}
			if keep.Conns.Forgotten != 0 {
				t.Errorf("keeping summaries: %d forgotten", keep.Conns.Forgotten)
			}
			if keep.Stats.Packets != forget.Stats.Packets || keep.Reassembly != forget.Reassembly {
				t.Errorf("counters differ: %+v %+v / %+v %+v", keep.Stats, keep.Reassembly, forget.Stats, forget.Reassembly)
			}
		})
	}
}

// A full table whose released connections are all still in their grace
// window makes room for a new connection by retiring the oldest: with
// ForgetReleased, retiring it forgets it at once, and making room must not
// then look for it among the retired ones (the campaign found dissect -V
// --max-connections 1 panicking so, index out of range, on a damaged
// rxe-nfs3.pcap).
func TestForgetWhileRetiring(t *testing.T) {
	for _, forget := range []bool{false, true} {
		tab := NewConnTable()
		tab.Max, tab.forgetReleased = 1, forget
		var forgotten []int
		tab.forgotten = func(c *Connection) { forgotten = append(forgotten, c.ID) }
		p := &Packet{Number: 1}
		a := tab.newConn(TransportRoCE, p)
		tab.released(a) // in the grace window: not yet retired
		p.Number = 2
		b := tab.newConn(TransportRoCE, p)
		if b == nil || b.ID != 2 {
			t.Fatalf("forget %v: no room made for a second connection: %+v", forget, b)
		}
		if got := tab.Connections(); len(got) != 1 || got[0] != b {
			t.Errorf("forget %v: the table holds %d connections, want only the new one", forget, len(got))
		}
		if tab.Forgotten != 1 || len(forgotten) != 1 || forgotten[0] != a.ID {
			t.Errorf("forget %v: %d forgotten (%v), want connection %d once", forget, tab.Forgotten, forgotten, a.ID)
		}
	}
}
