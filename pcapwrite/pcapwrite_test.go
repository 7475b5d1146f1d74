package pcapwrite

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdmashark/rdmashark/source"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.pcapng")

// sample is what TestSample writes: two interfaces of different link types,
// packets with zero, one and two comments, one cut to a snap length.
type samplePacket struct {
	iface    int
	ts       time.Time
	data     []byte
	origLen  int
	comments []string
}

func samplePackets() []samplePacket {
	t0 := time.Date(2026, 11, 21, 23, 41, 2, 626940123, time.UTC)
	eth := make([]byte, 60)
	for i := range eth {
		eth[i] = byte(i)
	}
	sll2 := make([]byte, 45) // not a multiple of 4: the block is padded
	for i := range sll2 {
		sll2[i] = byte(0xff - i)
	}
	return []samplePacket{
		{0, t0, eth, 60, nil},
		{1, t0.Add(1500 * time.Microsecond), sll2, 45, []string{"one comment"}},
		{0, t0.Add(2*time.Second + 7), eth[:33], 1514, []string{"first", "second, with ünïcode"}},
	}
}

func writeSample(t testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "rdmashark test")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := w.AddInterface(Interface{LinkType: 1, SnapLen: 65535, Name: "eth0", Description: "Soft-RoCE rxe0 netdev"}); err != nil || id != 0 {
		t.Fatal(id, err)
	}
	if id, err := w.AddInterface(Interface{LinkType: 276}); err != nil || id != 1 {
		t.Fatal(id, err)
	}
	for _, p := range samplePackets() {
		if err := w.WritePacket(p.iface, p.ts, p.data, p.origLen, p.comments...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WritePacket(2, time.Time{}, nil, 0); err == nil {
		t.Error("a packet on interface 2 of 2 was written")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadBack reads what the writer wrote with rdmashark's own reader.
func TestReadBack(t *testing.T) {
	b := writeSample(t)
	r, err := source.NewReader(bytes.NewReader(b), "sample")
	if err != nil {
		t.Fatal(err)
	}
	if r.Format() != source.FormatPcapNG {
		t.Fatalf("format %v", r.Format())
	}
	for i, want := range samplePackets() {
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		if !bytes.Equal(rec.Data, want.data) || !rec.CI.Timestamp.Equal(want.ts) || rec.CI.Length != want.origLen ||
			rec.CI.InterfaceIndex != want.iface {
			t.Errorf("packet %d: %d bytes at %v, %d on the wire, interface %d; want %d at %v, %d, %d", i+1,
				len(rec.Data), rec.CI.Timestamp, rec.CI.Length, rec.CI.InterfaceIndex, len(want.data), want.ts, want.origLen, want.iface)
		}
		var got []string
		for _, c := range rec.Comments {
			got = append(got, string(c))
		}
		if strings.Join(got, "\x00") != strings.Join(want.comments, "\x00") {
			t.Errorf("packet %d: comments %q, want %q", i+1, got, want.comments)
		}
		if lt := []int{1, 276}[want.iface]; int(rec.LinkType) != lt {
			t.Errorf("packet %d: link type %d, want %d", i+1, rec.LinkType, lt)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last packet: %v", err)
	}
	ifs := r.Interfaces()
	if len(ifs) != 2 || ifs[0].Name != "eth0" || ifs[0].Description != "Soft-RoCE rxe0 netdev" || ifs[0].SnapLen != 65535 ||
		ifs[1].Name != "" || ifs[1].SnapLen != 0 {
		t.Errorf("interfaces read back: %+v", ifs)
	}
}

// TestSample requires the writer to write testdata/sample.pcapng byte for
// byte, and checks tshark's reading of that file (sample.tshark.txt,
// made by testdata/gen.sh) against the packets written.
func TestSample(t *testing.T) {
	b := writeSample(t)
	if *update {
		if err := os.WriteFile("testdata/sample.pcapng", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/sample.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatal("the writer no longer writes testdata/sample.pcapng: check it with tshark and rerun with -update and testdata/gen.sh")
	}
	ts, err := os.ReadFile("testdata/sample.tshark.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(ts), "\n"), "\n")
	pkts := samplePackets()
	if len(lines) != len(pkts) {
		t.Fatalf("tshark read %d packets, %d written", len(lines), len(pkts))
	}
	for i, p := range pkts {
		// frame.number frame.interface_id frame.time_epoch frame.len frame.cap_len frame.comment
		want := fmt.Sprintf("%d\t%d\t%d.%09d\t%d\t%d\t%s", i+1, p.iface, p.ts.Unix(), p.ts.Nanosecond(),
			p.origLen, len(p.data), strings.Join(p.comments, ","))
		if lines[i] != want {
			t.Errorf("tshark read packet %d as\n%q, wrote\n%q", i+1, lines[i], want)
		}
	}
	info, err := os.ReadFile("testdata/sample.capinfos.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pcapng", "Number of packets:   3", "Number of interfaces in file: 2",
		"Encapsulation = Ethernet (1 - ether)", "Encapsulation = Linux cooked-mode capture v2 (210 - linux-sll2)",
		"Time precision = nanoseconds (9)", "Capture application: rdmashark test", "Name = eth0",
		"Description = Soft-RoCE rxe0 netdev", "Capture length = 65535"} {
		if !strings.Contains(string(info), s) {
			t.Errorf("capinfos says no %q", s)
		}
	}
}

func BenchmarkWritePacket(b *testing.B) {
	w, _ := NewWriter(io.Discard, "")
	w.AddInterface(Interface{LinkType: 1})
	data := make([]byte, 1024)
	ts := time.Unix(1, 0)
	comments := []string{"a finding"}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w.WritePacket(0, ts, data, len(data), comments...)
	}
}
