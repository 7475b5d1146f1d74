package dissect

import (
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/internal/synth"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/source"
)

// TestIdleRelease: connection A (server QPN 0x100) starts a Send at t=0
// and goes quiet; B (0x200) sends a SEND_ONLY every minute for 30
// minutes. With a 10-minute IdleTimeout A is released between 10 and
// 10×9/8 minutes (plus one packet's spacing) after its packet: its Send
// handed up truncated, the observer told ConnectionDone, Idle set, its
// reassembly gone; B stays live to the end. Without the timeout nothing is
// released.
func TestIdleRelease(t *testing.T) {
	start := time.Unix(1700000000, 0)
	s := &synth.Sequence{Start: start, Step: time.Minute}
	cl, sv := synth.Client(), synth.Server()
	s.Packet(cl, sv, synth.Send(roce.OpRCSendFirst, 0x100, 0x10), make([]byte, 1024))
	for i := 0; i < 30; i++ {
		s.Packet(cl, sv, synth.Send(roce.OpRCSendOnly, 0x200, 0x20+uint32(i)), []byte("still here"))
	}
	frames := synthFrames(t, s)
	for _, timeout := range []time.Duration{10 * time.Minute, 0} {
		obs := &idleObserver{}
		e := newEngine(Options{IdleTimeout: timeout, Observer: obs})
		var a *Connection
		releasedAt := 0
		relRun(e, frames, func(p *Packet) {
			if p.Number == 1 {
				a = p.Conn
			}
			if releasedAt == 0 && a != nil && a.rel.state != relLive {
				releasedAt = p.Number
				if got := holds(e, a); len(got) != 0 {
					t.Errorf("released A still held in %v", got)
				}
				// B's SEND_ONLYs are whole: the one truncated is A's.
				if obs.truncated != 1 || len(obs.done) != 0 {
					t.Errorf("at release %d Sends truncated, %d connections done; want A's Send, none done (A is in the grace window)", obs.truncated, len(obs.done))
				}
			}
		})
		conns := e.Conns.Connections()
		if len(conns) != 2 {
			t.Fatalf("timeout %v: %d connections, want 2", timeout, len(conns))
		}
		b := conns[1]
		if timeout == 0 {
			if releasedAt != 0 || a.Idle || a.Released() {
				t.Errorf("no timeout: A released at packet %d", releasedAt)
			}
			continue
		}
		// Packet n is at n-1 minutes; A's packet at 0.
		at := time.Duration(releasedAt-1) * time.Minute
		if releasedAt == 0 || at < timeout || at > timeout*9/8+time.Minute {
			t.Fatalf("A released at packet %d (%v after its last packet), want within [%v, %v]", releasedAt, at, timeout, timeout*9/8+time.Minute)
		}
		if !a.Idle || b.Idle || a.State != StateNoSetup {
			t.Errorf("A idle %v state %v, B idle %v", a.Idle, a.State, b.Idle)
		}
		// A left the grace window only if 16 more closed; it is still
		// reachable, but told done at Finish at the latest.
		if b.rel.state != relLive && !b.Released() {
			t.Errorf("B released: %v", b.rel.state)
		}
		if e.idle.scans == 0 {
			t.Error("no idle scan")
		}
	}
}

type idleObserver struct {
	msgCounter
	done []*Connection
}

func (o *idleObserver) ConnectionDone(c *Connection) { o.done = append(o.done, c) }

// TestIdleReleaseCaptures: every real capture with an idle timeout so
// short that connections are released between their own packets (1 ms)
// runs without a panic, releases some connection idle, and holds no
// reassembly or RPC state of a released connection; its buffers' total
// stays exact.
func TestIdleReleaseCaptures(t *testing.T) {
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "rxe-ib_write_bw.pcap", "siw-ib_read_bw.pcap", "rxe-rping.pcap", "siw-rping.pcap"} {
		t.Run(name, func(t *testing.T) {
			r, err := source.Open(capturePath(name))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			e := newEngine(Options{IdleTimeout: time.Millisecond})
			if err := e.Run(r, func(p *Packet) error {
				if got := heldNow(e); got != e.Retained().BufferedBytes {
					t.Fatalf("packet %d: buffers hold %d bytes, the engine counts %d", p.Number, got, e.Retained().BufferedBytes)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			idle := 0
			for _, c := range e.Conns.Connections() {
				if c.Idle {
					idle++
					if c.rel.state == relLive {
						t.Errorf("connection %d idle but live", c.ID)
					}
					if got := holds(e, c); len(got) != 0 {
						t.Errorf("idle connection %d still held in %v", c.ID, got)
					}
				}
			}
			if idle == 0 {
				t.Error("no connection released idle")
			}
			t.Logf("%d connections, %d idle, %d scans", len(e.Conns.Connections()), idle, e.idle.scans)
		})
	}
}
