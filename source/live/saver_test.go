package live

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/internal/pcaptest"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rdmashark/rdmashark/source"
)

type frame struct {
	data []byte
	info Info
}

func readCapture(t testing.TB, name string) []frame {
	t.Helper()
	_, frames := pcaptest.Read(t, name)
	out := make([]frame, len(frames))
	for i, f := range frames {
		out[i] = frame{f.Data, Info{Timestamp: f.CI.Timestamp, CaptureLength: f.CI.CaptureLength, Length: f.CI.Length}}
	}
	return out
}

// readBack reads a pcapng image with the project's reader.
func readBack(t testing.TB, img []byte) ([]frame, error) {
	t.Helper()
	r, err := source.NewReader(bytes.NewReader(img), "saved.pcapng")
	if err != nil {
		return nil, err
	}
	var out []frame
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, frame{append([]byte{}, rec.Data...), Info{Timestamp: rec.CI.Timestamp, CaptureLength: rec.CI.CaptureLength, Length: rec.CI.Length}})
	}
}

// TestSaverAlwaysReadable writes a real capture through a Saver and, after
// every packet, reads what reached the file: a whole pcapng file holding
// exactly the packets flushed so far, byte for byte, as a killed capture
// would leave it.
func TestSaverAlwaysReadable(t *testing.T) {
	frames := readCapture(t, filepath.Join(pcaps, "rxe-rping.pcap"))
	var file bytes.Buffer
	s, err := NewSaver(&file, SaverInfo{Interface: "eth0", Filter: "udp 4791", SnapLen: DefaultSnapLen, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readBack(t, file.Bytes()); err != nil || len(got) != 0 {
		t.Fatalf("after the headers: %d packets, %v", len(got), err)
	}
	flushed := 0
	for i, f := range frames {
		if err := s.WritePacket(f.info, f.data); err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 { // as Run's ticks do, now and then
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
			flushed = i + 1
		}
		got, err := readBack(t, file.Bytes())
		if err != nil {
			t.Fatalf("after packet %d: the file does not read: %v", i+1, err)
		}
		if len(got) != flushed {
			t.Fatalf("after packet %d: %d packets in the file, want %d", i+1, len(got), flushed)
		}
	}
	if err := s.Close(&Stats{Packets: uint64(len(frames)) + 3, Drops: 3}); err != nil {
		t.Fatal(err)
	}
	got, err := readBack(t, file.Bytes())
	if err != nil {
		t.Fatalf("with the statistics block: %v", err)
	}
	if len(got) != len(frames) || s.Packets() != uint64(len(frames)) {
		t.Fatalf("%d packets read back, %d written, want %d", len(got), s.Packets(), len(frames))
	}
	for i := range frames {
		if !bytes.Equal(got[i].data, frames[i].data) || got[i].info.Length != frames[i].info.Length ||
			!got[i].info.Timestamp.Equal(frames[i].info.Timestamp) {
			t.Fatalf("packet %d differs", i+1)
		}
	}
	// gopacket's own reader sees the interface and the statistics.
	ng, err := pcapgo.NewNgReader(bytes.NewReader(file.Bytes()), pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := ng.ReadPacketData(); err != nil {
			break
		}
	}
	intf, err := ng.Interface(0)
	if err != nil {
		t.Fatal(err)
	}
	if intf.Name != "eth0" || intf.Comment != "rdmashark capture filter: udp 4791" || intf.LinkType != layers.LinkTypeEthernet {
		t.Errorf("interface block: %+v", intf)
	}
	if intf.Statistics.PacketsDropped != 3 || intf.Statistics.PacketsReceived != uint64(len(frames))+3 {
		t.Errorf("statistics block: %+v", intf.Statistics)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(b []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(b), nil
}

func TestSaverWriteErrorSticks(t *testing.T) {
	s, err := NewSaver(&failWriter{n: 1}, SaverInfo{Interface: "x", SnapLen: 100, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	info := Info{Timestamp: time.Unix(1, 0), CaptureLength: 60, Length: 60}
	if err := s.WritePacket(info, make([]byte, 60)); err != nil {
		t.Fatal(err) // held, not written yet
	}
	if err := s.Flush(); err == nil {
		t.Fatal("flush to a failing writer succeeded")
	}
	if err := s.WritePacket(info, make([]byte, 60)); err == nil {
		t.Fatal("write after a failure succeeded")
	}
}

// BenchmarkSaverWritePacket: the writer's cost per frame, which the ring's
// reader pays before it gives a block back (rxe-nfs3's frames, to a
// discarding file); no allocation per frame.
func BenchmarkSaverWritePacket(b *testing.B) {
	frames := readCapture(b, filepath.Join(pcaps, "rxe-nfs3.pcap"))
	s, err := NewSaver(io.Discard, SaverInfo{Interface: "cap0", SnapLen: 262144, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		b.Fatal(err)
	}
	var bytes int64
	for _, f := range frames {
		bytes += int64(len(f.data))
	}
	b.SetBytes(bytes / int64(len(frames)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		f := &frames[i%len(frames)]
		if err := s.WritePacket(f.info, f.data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendEPB: the Saver's own Enhanced Packet Blocks are byte for byte
// those gopacket's pcapgo.NgWriter writes for the same frames (every frame
// of rxe-nfs3, most cut short by 1 to 3 bytes as a snap length would, so
// that every padding occurs).
func TestAppendEPB(t *testing.T) {
	frames := readCapture(t, filepath.Join(pcaps, "rxe-nfs3.pcap"))
	var buf bytes.Buffer
	ng, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, SnapLength: 262144, TimestampResolution: 9}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	pads := map[int]bool{}
	for i, f := range frames {
		length := f.info.Length
		f.data = f.data[:len(f.data)-i%4]
		if err := ng.Flush(); err != nil {
			t.Fatal(err)
		}
		mark := buf.Len()
		ci := gopacket.CaptureInfo{Timestamp: f.info.Timestamp, CaptureLength: len(f.data), Length: length}
		if err := ng.WritePacket(ci, f.data); err != nil {
			t.Fatal(err)
		}
		if err := ng.Flush(); err != nil {
			t.Fatal(err)
		}
		want := buf.Bytes()[mark:]
		if got := appendEPB(nil, f.info.Timestamp, f.data, length); !bytes.Equal(got, want) {
			t.Fatalf("frame %d (%d bytes): EPB\n%x\npcapgo writes\n%x", i+1, len(f.data), got, want)
		}
		pads[len(f.data)%4] = true
	}
	if len(pads) != 4 {
		t.Errorf("frame lengths modulo 4 covered: %v", pads)
	}
}
