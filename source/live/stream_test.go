package live

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// streamFrames are rxe-rping's frames with numbers and losses as a
// capture process gives them: frame 5 after 3 frames the kernel dropped,
// frames 10 to 19 skipped for the analysis (frame 20 carries their 10).
func streamFrames(t testing.TB) ([][]byte, []Info) {
	_, frames := pcaptest.Read(t, filepath.Join("..", "..", "testdata", "pcaps", "rxe-rping.pcap"))
	var data [][]byte
	var infos []Info
	num := uint64(0)
	for i, f := range frames {
		num++
		info := Info{Timestamp: f.CI.Timestamp, CaptureLength: len(f.Data), Length: f.CI.Length}
		switch {
		case i == 4:
			info.LostBefore = 3
		case num == 10:
			num += 10
			info.LostBefore = 10
		}
		info.Number = num
		data = append(data, f.Data)
		infos = append(infos, info)
	}
	return data, infos
}

func encodeStream(data [][]byte, infos []Info) []byte {
	b := AppendStreamHeader(nil, layers.LinkTypeEthernet, DefaultSnapLen)
	for i := range data {
		b = AppendStreamPacket(b, infos[i], data[i])
	}
	return b
}

// TestStreamRoundTrip: the frames a capture process writes reach the
// analysing process through a pipe with their bytes, times, lengths,
// numbers and losses; the stream's end asks the capture process why it
// stopped; and pcapgo's NgReader, an independent pcapng reader, reads the
// same frames, lengths and drop counts from the stream.
func TestStreamRoundTrip(t *testing.T) {
	data, infos := streamFrames(t)
	stream := encodeStream(data, infos)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		// In pieces, as a pipe delivers them.
		for b := stream; len(b) > 0; {
			n := min(len(b), 1000)
			if _, err := w.Write(b[:n]); err != nil {
				break
			}
			b = b[n:]
		}
		w.Close()
	}()
	ended := 0
	src := NewStreamSource(r, layers.LinkTypeEthernet, func() (StopReason, error) { ended++; return StopCount, nil })
	for i := range data {
		got, info, err := src.ReadPacket()
		if err != nil {
			t.Fatalf("frame %d: %v", i+1, err)
		}
		want := infos[i]
		if !bytes.Equal(got, data[i]) || !info.Timestamp.Equal(want.Timestamp) || info.Length != want.Length ||
			info.CaptureLength != want.CaptureLength || info.Number != want.Number || info.LostBefore != want.LostBefore {
			t.Fatalf("frame %d: %+v (%d bytes), want %+v", i+1, info, len(got), want)
		}
	}
	if _, _, err := src.ReadPacket(); !errors.Is(err, io.EOF) || ended != 1 || src.StopReason() != StopCount {
		t.Fatalf("after the last frame: %v, end called %d times, stop %v", err, ended, src.StopReason())
	}

	ng, err := pcapgo.NewNgReader(bytes.NewReader(stream), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		got, ci, err := ng.ReadPacketData()
		if err != nil {
			t.Fatalf("NgReader, frame %d: %v", i+1, err)
		}
		if !bytes.Equal(got, data[i]) || ci.Length != infos[i].Length || !ci.Timestamp.Equal(infos[i].Timestamp) {
			t.Fatalf("NgReader, frame %d differs", i+1)
		}
	}
	if _, _, err := ng.ReadPacketData(); !errors.Is(err, io.EOF) {
		t.Fatalf("NgReader after the last frame: %v", err)
	}
}

// TestStreamSourceAllocs: reading a frame allocates nothing.
func TestStreamSourceAllocs(t *testing.T) {
	data, infos := streamFrames(t)
	one := encodeStream(data[:1], infos[:1])
	head := len(AppendStreamHeader(nil, layers.LinkTypeEthernet, DefaultSnapLen))
	pkt := one[head:]
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	src := NewStreamSource(r, layers.LinkTypeEthernet, func() (StopReason, error) { return StopInterrupted, nil })
	if _, err := w.Write(one); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.ReadPacket(); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := w.Write(pkt); err != nil {
			t.Fatal(err)
		}
		if _, _, err := src.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a frame", allocs)
	}
}

// TestStreamSourceDeadline: past its deadline a read waiting on the pipe
// returns os.ErrDeadlineExceeded, and the stream goes on after it.
func TestStreamSourceDeadline(t *testing.T) {
	data, infos := streamFrames(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	src := NewStreamSource(r, layers.LinkTypeEthernet, func() (StopReason, error) { return StopInterrupted, nil })
	if err := src.SetDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := src.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("an empty pipe past the deadline: %v", err)
	}
	_ = src.SetDeadline(time.Time{})
	if _, err := w.Write(encodeStream(data[:2], infos[:2])); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got, _, err := src.ReadPacket(); err != nil || !bytes.Equal(got, data[i]) {
			t.Fatalf("frame %d after the deadline: %v", i+1, err)
		}
	}
}

// FuzzStreamSource: whatever the pipe carries, the reader returns frames
// or an error, and never panics. Seeded with rxe-rping's frames as the
// stream carries them.
func FuzzStreamSource(f *testing.F) {
	data, infos := streamFrames(f)
	f.Add(encodeStream(data[:8], infos[:8]))
	f.Add(encodeStream(data[18:22], infos[18:22]))
	f.Fuzz(func(t *testing.T, b []byte) {
		name := filepath.Join(t.TempDir(), "stream")
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		src := NewStreamSource(fh, layers.LinkTypeEthernet, func() (StopReason, error) { return StopInterrupted, nil })
		for range 1000 {
			if _, _, err := src.ReadPacket(); err != nil {
				return
			}
		}
	})
}
