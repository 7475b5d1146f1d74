package live

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// fakeSource hands out frames, then blocks until its deadline as a socket
// would, then returns err if set.
type fakeSource struct {
	frames []frame
	i      int
	err    error

	mu       sync.Mutex
	deadline time.Time
	wake     chan struct{}
}

func newFake(frames []frame) *fakeSource {
	return &fakeSource{frames: frames, wake: make(chan struct{}, 1)}
}

func (f *fakeSource) LinkType() layers.LinkType { return layers.LinkTypeEthernet }

func (f *fakeSource) SetDeadline(t time.Time) error {
	f.mu.Lock()
	f.deadline = t
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
	return nil
}

func (f *fakeSource) ReadPacket() ([]byte, Info, error) {
	if f.i < len(f.frames) {
		fr := f.frames[f.i]
		f.i++
		return fr.data, fr.info, nil
	}
	if f.err != nil {
		return nil, Info{}, f.err
	}
	for {
		f.mu.Lock()
		d := f.deadline
		f.mu.Unlock()
		if !d.IsZero() && !time.Now().Before(d) {
			return nil, Info{}, os.ErrDeadlineExceeded
		}
		var timer <-chan time.Time
		if !d.IsZero() {
			timer = time.After(time.Until(d))
		}
		select {
		case <-f.wake:
		case <-timer:
		}
	}
}

// fileEngine runs the file reader's loop over a capture.
func fileEngine(t *testing.T, name string, count int) *dissect.Engine {
	t.Helper()
	r, err := source.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{Count: count}, nil, nil))
	if err := eng.Run(r, nil); err != nil {
		t.Fatal(err)
	}
	return eng
}

// TestRunMatchesFileLoop: Run numbers, times and processes frames as the
// engine's own file loop does, saves them all, and stops when told.
func TestRunMatchesFileLoop(t *testing.T) {
	for _, name := range []string{"rxe-rping.pcap", "siw-rping.pcap", "rxe-nfs3.pcap"} {
		file := filepath.Join(pcaps, name)
		frames := readCapture(t, file)
		src := newFake(frames)
		eng := dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil))
		var saved bytes.Buffer
		save, err := NewSaver(&saved, SaverInfo{Interface: "fake", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet})
		if err != nil {
			t.Fatal(err)
		}
		var numbers []int
		var rel []time.Duration
		ctx, cancel := context.WithCancel(context.Background())
		res, err := testRun(ctx, src, eng, testConfig{
			Save: save,
			Each: func(p *dissect.Packet) error {
				numbers = append(numbers, p.Number)
				rel = append(rel, p.RelTime)
				if p.Number == len(frames) {
					cancel() // as Ctrl-C after the last frame
				}
				return nil
			},
		})
		if err != nil || res.Stop != StopInterrupted || res.Packets != uint64(len(frames)) {
			t.Fatalf("%s: Run = %+v, %v", name, res, err)
		}
		want := fileEngine(t, file, 0)
		if eng.Stats != want.Stats {
			t.Errorf("%s: stats\n%+v\nfile loop\n%+v", name, eng.Stats, want.Stats)
		}
		if g, w := len(eng.Conns.Connections()), len(want.Conns.Connections()); g != w || (g == 0 && name[:3] == "rxe") {
			t.Errorf("%s: %d connections, file loop %d", name, g, w)
		}
		for i := range numbers {
			if numbers[i] != i+1 || rel[i] != frames[i].info.Timestamp.Sub(frames[0].info.Timestamp) {
				t.Fatalf("%s: packet %d numbered %d at %v", name, i+1, numbers[i], rel[i])
			}
		}
		if err := save.Close(nil); err != nil {
			t.Fatal(err)
		}
		back, err := readBack(t, saved.Bytes())
		if err != nil || len(back) != len(frames) {
			t.Fatalf("%s: saved %d frames (%v), want %d", name, len(back), err, len(frames))
		}
		for i := range back {
			if !bytes.Equal(back[i].data, frames[i].data) {
				t.Fatalf("%s: saved frame %d differs", name, i+1)
			}
		}
	}
}

func TestRunStops(t *testing.T) {
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))

	eng := dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil))
	res, err := testRun(context.Background(), newFake(frames), eng, testConfig{Count: 10})
	if err != nil || res.Stop != StopCount || eng.Stats.Packets != 10 {
		t.Errorf("count 10: %+v, %v, engine saw %d", res, err, eng.Stats.Packets)
	}
	if want := fileEngine(t, filepath.Join(pcaps, "rxe-rping.pcap"), 10); eng.Stats != want.Stats {
		t.Errorf("count 10: stats differ from the file loop's with -c 10")
	}

	// Duration: the source runs dry and Run stops by itself, ticking
	// while it waits.
	ticks := 0
	res, err = testRun(context.Background(), newFake(frames), dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil)), testConfig{
		Duration:  150 * time.Millisecond,
		TickEvery: 20 * time.Millisecond,
		Tick:      func(time.Time) error { ticks++; return nil },
	})
	if err != nil || res.Stop != StopDuration || res.Packets != uint64(len(frames)) {
		t.Errorf("duration: %+v, %v", res, err)
	}
	if ticks < 2 {
		t.Errorf("duration: %d ticks while idle", ticks)
	}

	// The source fails (the interface went down): its error, and what
	// came before stays in the engine.
	src := newFake(frames[:5])
	src.err = &Error{Interface: "eth0", Kind: ErrInterfaceDown, Detail: "went down during the capture"}
	eng = dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil))
	res, err = testRun(context.Background(), src, eng, testConfig{})
	if !errors.Is(err, ErrInterfaceDown) || res.Stop != StopError || eng.Stats.Packets != 5 {
		t.Errorf("source error: %+v, %v, engine saw %d", res, err, eng.Stats.Packets)
	}

	// Each and Tick errors stop it.
	stop := errors.New("stop")
	_, err = testRun(context.Background(), newFake(frames), dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil)), testConfig{
		Each: func(p *dissect.Packet) error {
			if p.Number == 3 {
				return stop
			}
			return nil
		},
	})
	if !errors.Is(err, stop) {
		t.Errorf("each error: %v", err)
	}
	_, err = testRun(context.Background(), newFake(nil), dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil)), testConfig{
		TickEvery: time.Millisecond,
		Tick:      func(time.Time) error { return stop },
	})
	if !errors.Is(err, stop) {
		t.Errorf("tick error: %v", err)
	}

	// A context ended while the source is idle wakes the read.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(30 * time.Millisecond); cancel() }()
	res, err = testRun(ctx, newFake(nil), dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil)), testConfig{TickEvery: time.Hour})
	if err != nil || res.Stop != StopInterrupted {
		t.Errorf("cancel while idle: %+v, %v", res, err)
	}
}

// loopSource hands out the same frames forever.
type loopSource struct {
	frames []frame
	i      int
}

func (l *loopSource) LinkType() layers.LinkType   { return layers.LinkTypeEthernet }
func (l *loopSource) SetDeadline(time.Time) error { return nil }
func (l *loopSource) ReadPacket() ([]byte, Info, error) {
	f := l.frames[l.i%len(l.frames)]
	l.i++
	return f.data, f.info, nil
}

// BenchmarkRun measures the live loop around the engine: Run, the engine
// and the pcapng Saver per frame of rxe-nfs3.pcap, without the socket.
func BenchmarkRun(b *testing.B) {
	frames := readCapture(b, filepath.Join(pcaps, "rxe-nfs3.pcap"))
	var bytes int64
	for _, f := range frames {
		bytes += int64(len(f.data))
	}
	save, err := NewSaver(io.Discard, SaverInfo{Interface: "bench", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		b.Fatal(err)
	}
	eng := dissect.NewEngine(rpcordma.With(dissect.Options{}, nil, nil))
	src := &loopSource{frames: frames}
	b.SetBytes(bytes / int64(len(frames)))
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := testRun(context.Background(), src, eng, testConfig{Count: b.N, Save: save}); err != nil {
		b.Fatal(err)
	}
}
