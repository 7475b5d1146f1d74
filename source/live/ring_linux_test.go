//go:build linux

package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/netnstest"
	"github.com/rdmashark/rdmashark/source"
)

var filterAll = Filter{Terms: []Term{{Kind: TermAll}}}

// TestHandleLoopbackOnce: on lo the kernel shows a frame sent as it leaves
// (PACKET_OUTGOING) and as it comes back; the capture keeps it once, as
// libpcap does, in order.
func TestHandleLoopbackOnce(t *testing.T) {
	p := netnstest.New(t)
	if err := p.IP("link", "set", "lo", "up"); err != nil {
		t.Fatal(err)
	}
	h := openIn(t, p, Config{Interface: "lo", Filter: filterAll})
	if !h.Loopback() {
		t.Fatal("lo is not seen as loopback")
	}
	in, err := p.Injector("lo")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sent := frameData(t, "rxe-rping.pcap")
	if err := in.Replay(sent, 20); err != nil {
		t.Fatal(err)
	}
	got := readN(t, h, len(sent))
	for i := range sent {
		if !bytes.Equal(got[i].data, sent[i]) {
			t.Fatalf("frame %d differs from frame %d sent (a frame twice?)", i+1, i+1)
		}
	}
	expectNothing(t, h, 100*time.Millisecond)
	// The kernel counted both copies; the capture kept one of each.
	if st, err := h.Stats(); err != nil || st.Packets != 2*uint64(len(sent)) {
		t.Errorf("kernel counters %+v (%v), want %d packets: each frame seen twice", st, err, 2*len(sent))
	}
}

// heldWriter blocks in its first WritePacket until released, holding the
// ring's blocks, and keeps copies of what it is given.
type heldWriter struct {
	hold    chan struct{}
	holding chan struct{}
	once    sync.Once
	frames  [][]byte
	lost    []uint64 // LostBefore of each frame
	flushes int
}

func (w *heldWriter) WritePacket(info Info, data []byte) error {
	w.once.Do(func() { close(w.holding); <-w.hold })
	if info.CaptureLength != len(data) {
		return errors.New("capture length is not the data's")
	}
	w.frames = append(w.frames, append([]byte(nil), data...))
	w.lost = append(w.lost, info.LostBefore)
	return nil
}

func (w *heldWriter) Flush() error { w.flushes++; return nil }

// engineReader reads a Capture's engine side on a goroutine of its own,
// keeping copies of the frames, until it ends (done says how; its fields
// are the test's to read after that, but for n).
type engineReader struct {
	frames     [][]byte
	numbers    []uint64
	lostBefore uint64
	n          atomic.Uint64 // frames read so far
	done       chan error
}

func readEngine(c *Capture) *engineReader {
	r := &engineReader{done: make(chan error, 1)}
	go func() {
		defer c.EngineDone()
		for {
			data, info, err := c.ReadPacket()
			if err != nil {
				r.done <- err
				return
			}
			r.frames = append(r.frames, append([]byte(nil), data...))
			r.numbers = append(r.numbers, info.Number)
			r.lostBefore += info.LostBefore
			r.n.Add(1)
		}
	}()
	return r
}

// TestCaptureDropsPlaced: a writer that stops taking frames holds the
// engine's two buffers, then the reader and every block of the smallest
// ring; the kernel drops what does not fit and the
// capture places the drops: the frames handed out plus the drops are the
// frames the kernel counted, the losses add up to its drop counter, each
// comes before a frame that exists, the engine and the writer got the same
// frames, in the order sent, with nothing copied twice or lost in between.
func TestCaptureDropsPlaced(t *testing.T) {
	h, in := openOnPair(t, Config{BufferSize: 1, Filter: filterAll})
	sent := frameData(t, "rxe-nfs3.pcap")
	w := &heldWriter{hold: make(chan struct{}), holding: make(chan struct{})}
	release := sync.OnceFunc(func() { close(w.hold) })
	defer release() // (a failure before: the reader must end)
	// Two buffers: the one the writer holds and one more; then the
	// reader waits for the writer, and the ring fills.
	c := StartCapture(context.Background(), h, CaptureConfig{Writer: w, EngineBlocks: 2})
	eng := readEngine(c)
	// Half the frames first, paced so that the first block is handed over
	// and the writer starts holding it; then everything else at once.
	if err := in.Replay(sent[:100], 20); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.holding:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer got no frame")
	}
	for _, f := range sent[100:] {
		if err := in.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	// Until the kernel has counted every frame sent (bounded wait, not a
	// timed assertion).
	var st Stats
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ = h.Stats(); st.Packets >= uint64(len(sent)) {
			break
		}
	}
	if st.Drops == 0 {
		t.Fatalf("no drops with the writer holding a %d-block ring: %+v", h.nblk, st)
	}
	release()
	// Then more frames, paced, after the drops: the first block they
	// fill says the kernel lost frames before it.
	tail := sent[:100]
	if err := in.Replay(tail, 20); err != nil {
		t.Fatal(err)
	}
	sent = append(sent, tail...)
	// Until the engine read every frame the kernel did not drop and the
	// analysis did not skip (the last block comes at its timeout; a
	// bounded wait).
	skipped := func() (n uint64) {
		for _, l := range c.Losses() {
			if l.Analysis {
				n += l.Dropped
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, _ = h.Stats()
		if st.Packets >= uint64(len(sent)) && eng.n.Load()+skipped()+st.Drops >= st.Packets {
			break
		}
	}
	c.Stop()
	if err := <-eng.done; !errors.Is(err, io.EOF) {
		t.Fatalf("engine side ended with %v", err)
	}
	res := c.Wait()
	st, _ = h.Stats()
	if res.Err != nil || res.WriteErr != nil {
		t.Fatalf("capture: %+v", res)
	}
	if st.Packets != uint64(len(sent)) || res.Frames+st.Drops != st.Packets {
		t.Fatalf("%d frames handed out + %d dropped, kernel counted %d of %d sent", res.Frames, st.Drops, st.Packets, len(sent))
	}
	if len(w.frames) != int(res.Frames) || uint64(len(eng.frames))+skipped() != res.Frames {
		t.Fatalf("engine got %d frames and skipped %d, writer %d, handed out %d", len(eng.frames), skipped(), len(w.frames), res.Frames)
	}
	var sum uint64
	losses := c.Losses()
	skippedAt := map[uint64]bool{}
	for _, l := range losses {
		if l.Dropped == 0 || l.Before < 1 || l.Before > res.Frames+1 || l.Time.IsZero() {
			t.Errorf("loss %+v out of place (%d frames)", l, res.Frames)
		}
		if l.Analysis {
			for n := l.Before; n < l.Before+l.Dropped; n++ {
				skippedAt[n] = true
			}
			continue
		}
		if l.Before < 2 {
			t.Errorf("kernel loss %+v before the first frame", l)
		}
		sum += l.Dropped
	}
	if sum != st.Drops {
		t.Errorf("losses %+v add up to %d, the kernel dropped %d", losses, sum, st.Drops)
	}
	// The writer is told of each kernel loss on the frame after it (the
	// file's epb_dropcount), of nothing else; drops after the last frame
	// are the statistics block's.
	for _, l := range losses {
		if l.Analysis {
			continue
		}
		if l.Before > uint64(len(w.lost)) {
			continue
		}
		if got := w.lost[l.Before-1]; got != l.Dropped {
			t.Errorf("writer's frame %d says %d lost before it, the loss there is %d", l.Before, got, l.Dropped)
		}
		w.lost[l.Before-1] = 0
	}
	for i, n := range w.lost {
		if n != 0 {
			t.Errorf("writer's frame %d says %d lost before it, where no kernel loss is", i+1, n)
		}
	}
	// What the engine was told it lost before its frames is every loss
	// but those after its last frame.
	var last uint64
	if len(eng.numbers) > 0 {
		last = eng.numbers[len(eng.numbers)-1]
	}
	var want uint64
	for _, l := range losses {
		switch {
		case !l.Analysis && l.Before <= last:
			want += l.Dropped
		case l.Analysis:
			for n := l.Before; n < l.Before+l.Dropped; n++ {
				if n < last {
					want++
				}
			}
		}
	}
	if eng.lostBefore != want || want == 0 {
		t.Errorf("the engine was told of %d frames lost before its frames, want %d (losses %+v)", eng.lostBefore, want, losses)
	}
	// The engine's frames are the writer's, by number, but for those the
	// analysis skipped.
	e := 0
	for n := uint64(1); n <= res.Frames; n++ {
		if skippedAt[n] {
			continue
		}
		if e >= len(eng.frames) || eng.numbers[e] != n || !bytes.Equal(eng.frames[e], w.frames[n-1]) {
			t.Fatalf("engine frame %d is not the writer's frame %d", e+1, n)
		}
		e++
	}
	// In order: the frames written are sent ones, in order, and the gaps
	// are where the losses say.
	j := 0
	gaps := map[uint64]bool{}
	for _, l := range losses {
		if !l.Analysis {
			gaps[l.Before] = true
		}
	}
	for i := range w.frames {
		k := j
		for k < len(sent) && !bytes.Equal(sent[k], w.frames[i]) {
			k++
		}
		if k == len(sent) {
			t.Fatalf("frame %d was not sent after frame %d", i+1, j)
		}
		if k > j && !gaps[uint64(i+1)] && !bytes.Equal(sent[j], w.frames[i]) {
			// rxe-nfs3 repeats some frames byte for byte (ACKs); only
			// a skip of a frame unlike this one is a gap.
			t.Errorf("frames %d..%d sent were skipped before frame %d, where no loss was placed", j+1, k, i+1)
		}
		j = k + 1
	}
}

// TestCaptureCountStops: with Count, the reader hands out exactly that
// many frames, the same to the engine and the writer, then says why it
// stopped.
func TestCaptureCountStops(t *testing.T) {
	h, in := openOnPair(t, Config{Filter: filterAll})
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))
	var saved bytes.Buffer
	save, err := NewSaver(&saved, SaverInfo{Interface: "cap0", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	c := StartCapture(context.Background(), h, CaptureConfig{Count: n, Writer: save})
	var sent [][]byte
	for _, f := range frames {
		sent = append(sent, f.data)
	}
	if err := in.Replay(sent, 20); err != nil {
		t.Fatal(err)
	}
	got := 0
	if err := h.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		data, _, err := c.ReadPacket()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, sent[got]) {
			t.Fatalf("frame %d differs", got+1)
		}
		got++
	}
	c.EngineDone()
	res := c.Wait()
	if got != n || res.Frames != n || res.Stop != StopCount || c.StopReason() != StopCount {
		t.Fatalf("engine read %d, result %+v, want %d and the count", got, res, n)
	}
	back, err := readBack(t, saved.Bytes())
	if err != nil || len(back) != n {
		t.Fatalf("the writer saved %d frames (%v), want %d", len(back), err, n)
	}
}

// isbCounters reads the Interface Statistics Blocks of a pcapng image:
// isb_ifrecv and isb_ifdrop of each (pcapng §4.6), little-endian as
// NgWriter writes on this machine.
func isbCounters(t *testing.T, img []byte) (recv, drop []uint64) {
	t.Helper()
	for len(img) >= 12 {
		typ := binary.LittleEndian.Uint32(img)
		n := int(binary.LittleEndian.Uint32(img[4:]))
		if n < 12 || n > len(img) {
			t.Fatalf("bad block length %d", n)
		}
		if typ == 5 {
			opts := img[20 : n-4]
			for len(opts) >= 4 {
				code, l := binary.LittleEndian.Uint16(opts), int(binary.LittleEndian.Uint16(opts[2:]))
				if code == 0 {
					break
				}
				v := opts[4 : 4+l]
				switch code {
				case 4:
					recv = append(recv, binary.LittleEndian.Uint64(v))
				case 5:
					drop = append(drop, binary.LittleEndian.Uint64(v))
				}
				opts = opts[4+(l+3)&^3:]
			}
		}
		img = img[n:]
	}
	return recv, drop
}

// TestFileRing writes rxe-nfs3.pcap through a FileRing of 200 kB files,
// keeping 4: the files kept are the last ones written, each reads alone to
// its end, ends with the statistics block holding the kernel's counters at
// its rotation, and together they hold the last frames, byte for byte, in
// order.
func TestFileRing(t *testing.T) {
	frames := readCapture(t, filepath.Join(pcaps, "rxe-nfs3.pcap"))
	dir := t.TempDir()
	var calls uint64
	r, err := NewFileRing(FileRingConfig{
		Path: filepath.Join(dir, "ring.pcapng"), FileSize: 200_000, Files: 4,
		Info:  SaverInfo{Interface: "cap0", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet},
		Stats: func() Stats { calls++; return Stats{Packets: 1000 * calls, Drops: calls} },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := r.WritePacket(f.info, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	names := r.Files()
	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) != 4 || len(all) != 4 || calls < 5 {
		t.Fatalf("kept %v, on disk %v, %d rotations: want 4 files of more", names, all, calls)
	}
	var got []frame
	for i, name := range names {
		img, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := readBack(t, img)
		if err != nil || len(fs) == 0 {
			t.Fatalf("%s: %d frames, %v", name, len(fs), err)
		}
		if i < len(names)-1 && int64(len(img)) < 200_000 {
			t.Errorf("%s: %d bytes, rotated before 200 kB", name, len(img))
		}
		recv, drop := isbCounters(t, img)
		want := calls - uint64(len(names)-1-i)
		if len(recv) != 1 || recv[0] != 1000*want || drop[0] != want {
			t.Errorf("%s: statistics blocks received %v dropped %v, want %d and %d", name, recv, drop, 1000*want, want)
		}
		got = append(got, fs...)
	}
	tail := frames[len(frames)-len(got):]
	for i := range got {
		if !bytes.Equal(got[i].data, tail[i].data) || !got[i].info.Timestamp.Equal(tail[i].info.Timestamp) {
			t.Fatalf("frame %d of the files kept is not frame %d of the capture", i+1, len(frames)-len(got)+i+1)
		}
	}
	// (source.Open reads each file too: the project's reader.)
	for _, name := range names {
		rd, err := source.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := rd.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s: %v", name, err)
				}
				break
			}
		}
		rd.Close()
	}
}

// TestCaptureWriterDoesNotHoldRing: the file's writer stops taking frames
// (a write(2) the kernel holds up, a slow disk) while the ring's reader
// goes on: the engine's buffers, not the ring, take the frames meanwhile,
// so a 1 MiB ring loses nothing to a writer that holds while more than
// four times that arrives; then the writer and the engine get every
// frame, in order.
func TestCaptureWriterDoesNotHoldRing(t *testing.T) {
	h, in := openOnPair(t, Config{BufferSize: 1 << 20, Filter: filterAll})
	sent := frameData(t, "rxe-nfs3.pcap")
	size := 0
	for _, f := range sent {
		size += len(f)
	}
	ring, _ := h.RingSize()
	if size < 4*ring {
		t.Fatalf("%d bytes of frames for a ring of %d: not enough to fill it", size, ring)
	}
	// Buffers for about twice the frames (blocks given back at their
	// timeout are not full).
	blocks := 2 * size / h.bsz
	w := &heldWriter{hold: make(chan struct{}), holding: make(chan struct{})}
	release := sync.OnceFunc(func() { close(w.hold) })
	defer release() // (a failure before: the reader must end)
	c := StartCapture(context.Background(), h, CaptureConfig{Writer: w, EngineBlocks: blocks})
	eng := readEngine(c)
	if err := in.Replay(sent[:100], 20); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.holding:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer got no frame")
	}
	// The rest, paced so that the reader keeps up (the ring holds some
	// 150 ms of it: a busy machine may keep the reader from it for less),
	// while the writer holds.
	if err := in.Replay(sent[100:], 10); err != nil {
		t.Fatal(err)
	}
	var st Stats
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ = h.Stats(); st.Packets >= uint64(len(sent)) {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // the last block's timeout
	if st, _ = h.Stats(); st.Drops != 0 {
		c.Stop()
		t.Fatalf("the kernel dropped %d frames while the writer held: the writer holds the ring (%d blocks, %d buffers)", st.Drops, h.nblk, blocks)
	}
	release()
	c.Stop()
	if err := <-eng.done; !errors.Is(err, io.EOF) {
		t.Fatalf("engine side ended with %v", err)
	}
	res := c.Wait()
	if res.Err != nil || res.WriteErr != nil || res.Frames != uint64(len(sent)) {
		t.Fatalf("capture: %+v, %d frames sent", res, len(sent))
	}
	if len(w.frames) != len(sent) || len(eng.frames) != len(sent) {
		t.Fatalf("writer got %d frames, engine %d, of %d sent", len(w.frames), len(eng.frames), len(sent))
	}
	for i := range sent {
		if !bytes.Equal(w.frames[i], sent[i]) || !bytes.Equal(eng.frames[i], sent[i]) {
			t.Fatalf("frame %d differs from the one sent", i+1)
		}
		if w.lost[i] != 0 {
			t.Fatalf("frame %d says %d frames were lost before it", i+1, w.lost[i])
		}
	}
}

// countWriter keeps copies of the frames it is given.
type countWriter struct{ frames [][]byte }

func (w *countWriter) WritePacket(info Info, data []byte) error {
	w.frames = append(w.frames, append([]byte(nil), data...))
	return nil
}
func (w *countWriter) Flush() error { return nil }

// TestCaptureAnalysisSkips: an engine that does not read holds at most
// its buffers' worth of copies (here 2 blocks'); the writer goes on
// getting every frame, the blocks past that are skipped by the analysis
// and counted as such (Loss.Analysis), and the frames the engine then
// reads carry their numbers in the capture.
func TestCaptureAnalysisSkips(t *testing.T) {
	h, in := openOnPair(t, Config{BufferSize: 4 << 20, Filter: filterAll})
	sent := frameData(t, "rxe-nfs3.pcap")
	w := &countWriter{}
	c := StartCapture(context.Background(), h, CaptureConfig{Writer: w, EngineBlocks: 2})
	if c.engLimit != 2 {
		t.Fatalf("engine may hold %d blocks' copies, want 2", c.engLimit)
	}
	for _, f := range sent {
		if err := in.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	var st Stats
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, _ = h.Stats(); st.Packets >= uint64(len(sent)) {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // the last block's timeout
	c.Stop()
	var numbers []uint64
	for {
		_, info, err := c.ReadPacket()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		numbers = append(numbers, info.Number)
	}
	c.EngineDone()
	res := c.Wait()
	st, _ = h.Stats()
	var skipped uint64
	skippedAt := map[uint64]bool{}
	for _, l := range c.Losses() {
		if l.Analysis {
			skipped += l.Dropped
			for n := l.Before; n < l.Before+l.Dropped; n++ {
				skippedAt[n] = true
			}
		}
	}
	if skipped == 0 || uint64(len(w.frames)) != res.Frames || res.Frames+st.Drops != st.Packets || uint64(len(numbers))+skipped != res.Frames {
		t.Fatalf("engine read %d, skipped %d; writer %d; handed out %d; kernel %+v", len(numbers), skipped, len(w.frames), res.Frames, st)
	}
	e := 0
	for n := uint64(1); n <= res.Frames; n++ {
		if !skippedAt[n] {
			if numbers[e] != n {
				t.Fatalf("engine frame %d numbered %d, want %d", e+1, numbers[e], n)
			}
			e++
		}
	}
}

// TestCaptureReadAllocs: the engine's side of a Capture hands out frames
// without allocating, block changes included.
func TestCaptureReadAllocs(t *testing.T) {
	h, in := openOnPair(t, Config{BufferSize: 4 << 20, Filter: filterAll})
	c := StartCapture(context.Background(), h, CaptureConfig{})
	defer func() { c.EngineDone(); c.Wait() }()
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))
	var sent [][]byte
	for range 4 {
		for _, f := range frames {
			sent = append(sent, f.data)
		}
	}
	// Sent before counting (the injector allocates), paced so that they
	// fill several blocks, each handed over at its timeout.
	for i := 0; i < len(sent); i += 100 {
		if err := in.Replay(sent[i:min(i+100, len(sent))], 20); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	var err2 error
	allocs := testing.AllocsPerRun(len(sent)-1, func() {
		if _, _, err := c.ReadPacket(); err != nil {
			err2 = err
		}
	})
	if err2 != nil {
		t.Fatal(err2)
	}
	if allocs != 0 {
		t.Errorf("Capture.ReadPacket allocates %.2f times per frame", allocs)
	}
}

// TestFileRingDuration: with duration:S a file that was open that long
// and holds a frame is closed before the next frame (here S is 1 ns: one
// frame a file), and Flush moves on too.
func TestFileRingDuration(t *testing.T) {
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))[:5]
	dir := t.TempDir()
	r, err := NewFileRing(FileRingConfig{
		Path: filepath.Join(dir, "d"), Duration: time.Nanosecond,
		Info: SaverInfo{Interface: "cap0", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := r.WritePacket(f.info, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Flush(); err != nil { // the fifth file's time is up too
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	names := r.Files()
	if len(names) != 6 || filepath.Ext(names[0]) != ".pcapng" {
		t.Fatalf("files %v, want 6 .pcapng files", names)
	}
	for i, name := range names {
		img, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := readBack(t, img)
		want := 1
		if i == 5 {
			want = 0
		}
		if err != nil || len(fs) != want || (want == 1 && !bytes.Equal(fs[0].data, frames[i].data)) {
			t.Errorf("%s: %d frames (%v), want frame %d alone", name, len(fs), err, i+1)
		}
	}
}

// TestEngineBuffers: the engine's copies hold a quarter of the ring and at
// least 8 MiB, whatever -B is, unless configured.
func TestEngineBuffers(t *testing.T) {
	for _, tc := range []struct{ kib, want int }{
		{256, 64},    // 2 blocks of 128 KiB: 8 MiB
		{2048, 32},   // libpcap's default, 8 blocks of 256 KiB: 8 MiB
		{32768, 8},   // the default, 32 blocks of 1 MiB: a quarter
		{131072, 32}, // 128 blocks of 1 MiB: a quarter
	} {
		bsz, n := ringGeometry(tc.kib << 10)
		if got := engineBuffers(n, bsz, 0); got != tc.want || got*bsz < min(engineBufferMin, n*bsz/4) {
			t.Errorf("-B %d (%d blocks of %d KiB): %d engine buffers, want %d", tc.kib, n, bsz>>10, got, tc.want)
		}
	}
	if got := engineBuffers(8, 256<<10, 3); got != 3 {
		t.Errorf("configured 3: %d", got)
	}
}
