package source

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

const pcapDir = "../testdata/pcaps"

// realCaptures: record counts and link types as capinfos 4.0.17 reports
// them ("Number of packets", "File encapsulation").
var realCaptures = []struct {
	file     string
	records  int
	linkType layers.LinkType
}{
	{"rxe-ib_send_bw.pcap", 1462, LinkTypeEthernet},
	{"rxe-ib_write_bw.pcap", 1504, LinkTypeEthernet},
	{"rxe-nfs3.pcap", 7245, LinkTypeEthernet},
	{"rxe-nfs41.pcap", 3656, LinkTypeEthernet},
	{"rxe-nfs42-small.pcap", 7201, LinkTypeEthernet},
	{"rxe-rping-any-sll2.pcap", 67, LinkTypeLinuxSLL2},
	{"rxe-rping.pcap", 77, LinkTypeEthernet},
	{"siw-ib_read_bw.pcap", 1557, LinkTypeEthernet},
	{"siw-ib_send_bw.pcap", 1556, LinkTypeEthernet},
	{"siw-nfs3.pcap", 5225, LinkTypeEthernet},
	{"siw-nfs41.pcap", 5062, LinkTypeEthernet},
	{"siw-nfs42-small.pcap", 6266, LinkTypeEthernet},
	{"siw-rping-any-sll.pcap", 57, LinkTypeLinuxSLL},
	{"siw-rping.pcap", 70, LinkTypeEthernet},
	{"public/montybeatnik-rdma-roce-lab-roce_capture_read-write-ecn.pcap", 12, LinkTypeEthernet},
	{"public/montybeatnik-rdma-roce-lab-test.pcap", 16, LinkTypeEthernet},
	{"public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap", 43, LinkTypeERF},
	{"public/tcpdump-tests-ipoib.pcap", 30, LinkTypeIPoIB},
}

// mixedPcapNG is testdata/mixed.pcapng, written by Wireshark 4.0.17's
// mergecap -F pcapng from rxe-rping-any-sll2.pcap, tcpdump-tests-ipoib.pcap
// and the ERF capture: one section, four interfaces (SLL2 and IPoIB in
// microseconds, two ERF ports in nanoseconds), 140 records in time order.
const mixedPcapNG = "testdata/mixed.pcapng"

type rec struct {
	Number   int
	Data     []byte
	CI       gopacket.CaptureInfo
	LinkType layers.LinkType
}

// readAll reads r to its end, copying each record. It stops at a final
// error and collects recoverable ones.
func readAll(t testing.TB, r *Reader) (recs []rec, skipped []*Error, final error) {
	t.Helper()
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("Next never ends")
		}
		rc, err := r.Next()
		if err == io.EOF {
			return recs, skipped, nil
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) && !e.Final {
				skipped = append(skipped, e)
				continue
			}
			return recs, skipped, err
		}
		if len(rc.Data) != rc.CI.CaptureLength {
			t.Fatalf("record %d: %d bytes of data, CaptureLength %d", rc.Number, len(rc.Data), rc.CI.CaptureLength)
		}
		recs = append(recs, rec{rc.Number, append([]byte(nil), rc.Data...), rc.CI, rc.LinkType})
	}
}

func readBytes(t testing.TB, b []byte, name string) ([]rec, []*Error, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), name)
	if err != nil {
		return nil, nil, err
	}
	return readAll(t, r)
}

func mustRead(t testing.TB, b []byte, name string) []rec {
	t.Helper()
	recs, skipped, err := readBytes(t, b, name)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("%s: %v (skipped %v)", name, err, skipped)
	}
	return recs
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawPcap is a record of a little-endian microsecond pcap, walked here
// independently of the Reader.
type rawPcap struct {
	off                        int
	sec, usec, caplen, origlen uint32
	data                       []byte
}

// walkPcap walks a microsecond pcap file of either byte order.
func walkPcap(t testing.TB, b []byte) (snaplen, linkType uint32, recs []rawPcap) {
	t.Helper()
	var o binary.ByteOrder
	switch binary.BigEndian.Uint32(b) {
	case 0xd4c3b2a1:
		o = binary.LittleEndian
	case 0xa1b2c3d4:
		o = binary.BigEndian
	default:
		t.Fatal("not a microsecond pcap")
	}
	snaplen, linkType = o.Uint32(b[16:]), o.Uint32(b[20:])
	for off := 24; off < len(b); {
		h := b[off : off+16]
		r := rawPcap{off: off, sec: o.Uint32(h), usec: o.Uint32(h[4:]), caplen: o.Uint32(h[8:]), origlen: o.Uint32(h[12:])}
		r.data = b[off+16 : off+16+int(r.caplen)]
		recs = append(recs, r)
		off += 16 + int(r.caplen)
	}
	return
}

func TestRealCaptures(t *testing.T) {
	_, capinfosErr := exec.LookPath("capinfos")
	for _, c := range realCaptures {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(pcapDir, c.file)
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			recs, skipped, err := readAll(t, r)
			if err != nil || len(skipped) > 0 {
				t.Fatalf("%v, skipped %v", err, skipped)
			}
			if len(recs) != c.records {
				t.Errorf("%d records, capinfos counts %d", len(recs), c.records)
			}
			if capinfosErr == nil {
				if n := capinfosCount(t, path); n != len(recs) {
					t.Errorf("%d records, capinfos now says %d", len(recs), n)
				}
			}
			for i, rc := range recs {
				if rc.Number != i+1 || rc.LinkType != c.linkType {
					t.Fatalf("record %d: Number %d, link type %d", i+1, rc.Number, rc.LinkType)
				}
			}
			if lt := r.LinkTypes(); len(lt) != 1 || lt[0] != c.linkType || r.Format() != FormatPcap || r.Compressed() || r.Name() != path {
				t.Errorf("LinkTypes %v, Format %v, Compressed %v, Name %q", lt, r.Format(), r.Compressed(), r.Name())
			}
			// The records are those of an independent walk of the file.
			_, _, raw := walkPcap(t, readFile(t, path))
			for i, rc := range recs {
				w := raw[i]
				if !bytes.Equal(rc.Data, w.data) || rc.CI.Length != int(w.origlen) ||
					!rc.CI.Timestamp.Equal(time.Unix(int64(w.sec), int64(w.usec)*1000)) {
					t.Fatalf("record %d differs from the file", rc.Number)
				}
			}
		})
	}
}

func capinfosCount(t *testing.T, path string) int {
	out, err := exec.Command("capinfos", "-c", "-M", path).Output()
	if err != nil {
		t.Fatalf("capinfos: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.SplitN(l, ":", 2); len(f) == 2 && strings.TrimSpace(f[0]) == "Number of packets" {
			n, err := strconv.Atoi(strings.TrimSpace(f[1]))
			if err != nil {
				t.Fatalf("capinfos: %q", l)
			}
			return n
		}
	}
	t.Fatalf("capinfos: no packet count in %q", out)
	return 0
}

// tsharkFrames returns, per frame, tshark's interface id, epoch time,
// original and captured lengths, and the bytes -x dumps.
type tsharkFrame struct {
	iface          int
	epoch          string
	length, caplen int
	data           []byte
}

func tsharkFrames(t *testing.T, path string) []tsharkFrame {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.interface_id",
		"-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var frames []tsharkFrame
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("tshark line %q", l)
		}
		var fr tsharkFrame
		fr.iface, _ = strconv.Atoi(f[0])
		fr.epoch = f[1]
		fr.length, _ = strconv.Atoi(f[2])
		fr.caplen, _ = strconv.Atoi(f[3])
		frames = append(frames, fr)
	}
	out, err = exec.Command("tshark", "-r", path, "-x").Output()
	if err != nil {
		t.Fatalf("tshark -x: %v", err)
	}
	// Frames are separated by blank lines; a frame with several data
	// sources names each ("Frame (60 bytes):"): keep the first.
	i, source := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "":
			if source > 0 || (i < len(frames) && len(frames[i].data) > 0) {
				i++
			}
			source = 0
		case len(l) > 6 && l[4:6] == "  ":
			if source > 1 || i >= len(frames) {
				continue
			}
			end := min(len(l), 6+48)
			b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(l[6:end]), " ", ""))
			if err != nil {
				t.Fatalf("tshark -x line %q: %v", l, err)
			}
			frames[i].data = append(frames[i].data, b...)
		default:
			source++
		}
	}
	return frames
}

func epoch(ts time.Time) string { return fmt.Sprintf("%d.%09d", ts.Unix(), ts.Nanosecond()) }

// compareTshark checks every record against tshark: time to the
// nanosecond, lengths, interface, and bytes. tshark leaves the ERF header
// out of lengths and bytes; withERF gives its length for a record.
func compareTshark(t *testing.T, path string, recs []rec) {
	t.Helper()
	frames := tsharkFrames(t, path)
	if len(recs) == 0 || len(frames) != recs[len(recs)-1].Number {
		t.Fatalf("%d records, tshark shows %d frames", len(recs), len(frames))
	}
	for _, rc := range recs {
		fr := frames[rc.Number-1]
		hdr := 0
		if rc.LinkType == LinkTypeERF {
			hdr = 16 // no extension headers in these captures
		}
		if got := epoch(rc.CI.Timestamp); got != fr.epoch && !(fr.epoch == "" && rc.CI.Timestamp.IsZero()) {
			t.Errorf("record %d: time %s, tshark %s", rc.Number, got, fr.epoch)
		}
		if rc.CI.Length-hdr != fr.length || rc.CI.CaptureLength-hdr != fr.caplen || rc.CI.InterfaceIndex != fr.iface {
			t.Errorf("record %d: len %d caplen %d iface %d, tshark %d %d %d", rc.Number,
				rc.CI.Length-hdr, rc.CI.CaptureLength-hdr, rc.CI.InterfaceIndex, fr.length, fr.caplen, fr.iface)
		}
		if !bytes.Equal(rc.Data[hdr:], fr.data) {
			t.Errorf("record %d: bytes differ from tshark -x", rc.Number)
		}
	}
}

func TestAgainstTshark(t *testing.T) {
	for _, f := range []string{
		filepath.Join(pcapDir, "rxe-rping.pcap"),
		filepath.Join(pcapDir, "siw-rping-any-sll.pcap"),
		filepath.Join(pcapDir, "rxe-rping-any-sll2.pcap"),
		filepath.Join(pcapDir, "public/tcpdump-tests-ipoib.pcap"),
		mixedPcapNG,
	} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			compareTshark(t, f, mustRead(t, readFile(t, f), f))
		})
	}
}

func TestMixedPcapNG(t *testing.T) {
	r, err := Open(mixedPcapNG)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, skipped, err := readAll(t, r)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	// capinfos: 43 ERF, 30 IPoIB, 67 SLL2 records.
	n := map[layers.LinkType]int{}
	for _, rc := range recs {
		n[rc.LinkType]++
	}
	if len(recs) != 140 || n[LinkTypeERF] != 43 || n[LinkTypeIPoIB] != 30 || n[LinkTypeLinuxSLL2] != 67 || r.Format() != FormatPcapNG {
		t.Errorf("%d records by link type %v, format %v", len(recs), n, r.Format())
	}
	want := []Interface{
		{ID: 0, LinkType: LinkTypeLinuxSLL2, SnapLen: 262144, Resolution: gopacket.TimestampResolution{Base: 10, Exponent: -6}},
		{ID: 1, LinkType: LinkTypeIPoIB, SnapLen: 262144, Resolution: gopacket.TimestampResolution{Base: 10, Exponent: -6}},
		{ID: 2, LinkType: LinkTypeERF, SnapLen: 65535, Name: "Port B (ERF Interface 1)", Description: "Port B (ERF Interface 1)", Resolution: gopacket.TimestampResolution{Base: 10, Exponent: -9}},
		{ID: 3, LinkType: LinkTypeERF, SnapLen: 65535, Name: "Port A (ERF Interface 0)", Description: "Port A (ERF Interface 0)", Resolution: gopacket.TimestampResolution{Base: 10, Exponent: -9}},
	}
	got := r.Interfaces()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Interfaces\n got %v\nwant %v", got, want)
	}
	if lt := r.LinkTypes(); fmt.Sprint(lt) != fmt.Sprint([]layers.LinkType{LinkTypeLinuxSLL2, LinkTypeIPoIB, LinkTypeERF}) {
		t.Errorf("LinkTypes %v", lt)
	}
}

// TestNanosecondPcap rewrites a real capture with the nanosecond magic and
// checks the extra precision arrives.
func TestNanosecondPcap(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	snap, lt, raw := walkPcap(t, orig)
	p := newPcap(binary.LittleEndian, true, snap, lt)
	for i, w := range raw {
		p.record(w.sec, w.usec*1000+uint32(i), w.caplen, w.origlen, w.data)
	}
	recs := mustRead(t, p.buf.Bytes(), "nano.pcap")
	if len(recs) != len(raw) {
		t.Fatalf("%d records, want %d", len(recs), len(raw))
	}
	for i, rc := range recs {
		want := time.Unix(int64(raw[i].sec), int64(raw[i].usec)*1000+int64(i))
		if !rc.CI.Timestamp.Equal(want) || !bytes.Equal(rc.Data, raw[i].data) {
			t.Fatalf("record %d: %v, want %v", rc.Number, rc.CI.Timestamp, want)
		}
	}
	path := writeTemp(t, "nano.pcap", p.buf.Bytes())
	compareTshark(t, path, recs)
}

// TestBigEndianPcap swaps a real capture's file and record headers.
func TestBigEndianPcap(t *testing.T) {
	for _, nano := range []bool{false, true} {
		orig := readFile(t, filepath.Join(pcapDir, "siw-rping-any-sll.pcap"))
		snap, lt, raw := walkPcap(t, orig)
		p := newPcap(binary.BigEndian, nano, snap, lt)
		for _, w := range raw {
			frac := w.usec
			if nano {
				frac *= 1000
			}
			p.record(w.sec, frac, w.caplen, w.origlen, w.data)
		}
		want := mustRead(t, orig, "le.pcap")
		got := mustRead(t, p.buf.Bytes(), "be.pcap")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("nano %v: big-endian records differ from the little-endian original", nano)
		}
		if nano {
			compareTshark(t, writeTemp(t, "be.pcap", p.buf.Bytes()), got)
		}
	}
}

// handmadeNG is a pcapng of two sections in both byte orders, with
// interfaces of four link types and three timestamp resolutions, every
// packet block kind, and blocks the reader skips.
func handmadeNG(t testing.TB) (*ngFile, []rec) {
	eth := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	_, _, raw := walkPcap(t, eth)
	w := &ngFile{}
	var want []rec
	add := func(lt layers.LinkType, iface int, ts time.Time, data []byte, origlen int) {
		want = append(want, rec{len(want) + 1, data, gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: origlen, InterfaceIndex: iface}, lt})
	}
	ib := bytes.Repeat([]byte{0xf0, 0x02, 0x12, 0x34}, 15) // 60 bytes
	w.shb(binary.LittleEndian, 0, w.opt(4, []byte("rdmashark test")))
	w.idb(1, 0)                                                   // 0: Ethernet, microseconds (default)
	w.idb(247, 4096, w.opt(9, u8(9)), w.opt(2, []byte("mlx5_0"))) // 1: InfiniBand, nanoseconds
	w.idb(242, 0, w.opt(9, u8(0x80|20)), w.opt(14, w.u64(100)))   // 2: IPoIB, 2^-20 s, +100 s
	w.epb(0, 1700000000*1e6+123456, raw[0].data, raw[0].origlen)  // µs
	add(LinkTypeEthernet, 0, time.Unix(1700000000, 123456000), raw[0].data, int(raw[0].origlen))
	w.block(5, make([]byte, 12))                   // ISB: skipped
	w.block(4, []byte{0, 0, 0, 0})                 // NRB: skipped
	w.block(0xbad, []byte{1, 2, 3, 4, 5, 6, 7, 8}) // custom: skipped, but numbered as Wireshark does
	want = append(want, rec{Number: 2})
	w.epb(1, 1700000001*1e9+987654321, ib, 60, w.opt(1, []byte("a comment"))) // ns, with an option
	add(LinkTypeInfiniBand, 1, time.Unix(1700000001, 987654321), ib, 60)
	w.epb(2, 5<<20|1<<19, ib[:45], 61) // 5.5 units of 2^-20 s... plus 100 s
	add(LinkTypeIPoIB, 2, time.Unix(105, 5e8), ib[:45], 61)
	w.pb(0, 1700000002*1e6+1, raw[1].data, raw[1].origlen) // obsolete Packet Block
	add(LinkTypeEthernet, 0, time.Unix(1700000002, 1000), raw[1].data, int(raw[1].origlen))
	w.spb(uint32(len(raw[2].data)), raw[2].data) // no timestamp, interface 0
	add(LinkTypeEthernet, 0, time.Time{}, raw[2].data, len(raw[2].data))
	w.block(0x12345678, make([]byte, 20)) // unknown: skipped

	w.shb(binary.BigEndian, 2)     // version 1.2, read as 1.0
	w.idb(101, 0, w.opt(9, u8(3))) // 0: raw IP, milliseconds
	w.idb(247, 128)                // 1: InfiniBand, snap length 128
	w.epb(0, 1700000003*1e3+7, raw[3].data[14:], raw[3].origlen-14)
	add(LinkTypeRaw, 0, time.Unix(1700000003, 7e6), raw[3].data[14:], int(raw[3].origlen-14))
	w.epb(1, 0, ib[:33], 60)
	add(LinkTypeInfiniBand, 1, time.Unix(0, 0), ib[:33], 60)
	return w, slices.DeleteFunc(want, func(r rec) bool { return r.Data == nil })
}

func TestPcapNGHandmade(t *testing.T) {
	w, want := handmadeNG(t)
	r, err := NewReader(bytes.NewReader(w.buf.Bytes()), "handmade.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	got, skipped, err := readAll(t, r)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Number != w.Number || g.LinkType != w.LinkType || !bytes.Equal(g.Data, w.Data) || !g.CI.Timestamp.Equal(w.CI.Timestamp) ||
			g.CI.CaptureLength != w.CI.CaptureLength || g.CI.Length != w.CI.Length || g.CI.InterfaceIndex != w.CI.InterfaceIndex {
			t.Errorf("record %d:\n got %v %v %+v\nwant %v %v %+v", i+1, g.Number, g.LinkType, g.CI, w.Number, w.LinkType, w.CI)
		}
	}
	ifs := r.Interfaces()
	if len(ifs) != 5 || ifs[1].Name != "mlx5_0" || ifs[2].Resolution != (gopacket.TimestampResolution{Base: 2, Exponent: -20}) ||
		ifs[3].Section != 1 || ifs[3].ID != 0 || ifs[3].LinkType != LinkTypeRaw || ifs[4].SnapLen != 128 {
		t.Errorf("Interfaces %+v", ifs)
	}
	// Wireshark reads the same records with the same times (the Simple
	// Packet Block's missing timestamp aside: tshark shows 0 too).
	path := writeTemp(t, "handmade.pcapng", w.buf.Bytes())
	compareTshark(t, path, got)
}

func TestGzip(t *testing.T) {
	w, _ := handmadeNG(t)
	for name, b := range map[string][]byte{
		"rxe-rping.pcap.gz":  readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap")),
		"mixed.pcapng.gz":    readFile(t, mixedPcapNG),
		"handmade.pcapng.gz": w.buf.Bytes(),
	} {
		want := mustRead(t, b, name)
		gz := gzipped(t, b)
		r, err := Open(writeTemp(t, name, gz))
		if err != nil {
			t.Fatal(err)
		}
		got, skipped, err := readAll(t, r)
		r.Close()
		if err != nil || len(skipped) > 0 || !r.Compressed() {
			t.Fatalf("%s: %v %v compressed %v", name, err, skipped, r.Compressed())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: records differ from the uncompressed file", name)
		}
	}
}

// finalErr checks that err is a final *Error with the given record number
// and message, wrapping kind.
func finalErr(t *testing.T, err error, kind error, packet int, msg string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if !e.Final || e.Packet != packet || !errors.Is(err, kind) || err.Error() != msg {
		t.Errorf("got  %q (final %v, packet %d, is %v: %v)\nwant %q", err, e.Final, e.Packet, kind, errors.Is(err, kind), msg)
	}
	return e
}

func TestTruncated(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	_, _, raw := walkPcap(t, orig)
	last := raw[len(raw)-1]
	t.Run("last record", func(t *testing.T) {
		b := orig[:last.off+16+100]
		recs, _, err := readBytes(t, b, "capture.pcap")
		if len(recs) != len(raw)-1 {
			t.Errorf("%d records before the error, want %d", len(recs), len(raw)-1)
		}
		e := finalErr(t, err, ErrTruncated, 77, fmt.Sprintf("capture.pcap: packet 77: truncated record: header says %d bytes, 100 present", last.caplen))
		if e.Offset != int64(last.off) {
			t.Errorf("offset %d, want %d", e.Offset, last.off)
		}
		if !errors.Is(err, ErrTruncated) || errors.Is(err, ErrBadLength) {
			t.Error("errors.Is")
		}
	})
	t.Run("record header", func(t *testing.T) {
		recs, _, err := readBytes(t, orig[:last.off+7], "capture.pcap")
		if len(recs) != 76 {
			t.Errorf("%d records", len(recs))
		}
		finalErr(t, err, ErrTruncated, 77, "capture.pcap: packet 77: truncated record header: 7 of 16 bytes present")
	})
	t.Run("file header", func(t *testing.T) {
		_, _, err := readBytes(t, orig[:20], "capture.pcap")
		finalErr(t, err, ErrTruncated, 0, "capture.pcap: truncated file header: 20 of the pcap file header's 24 bytes present")
	})
	t.Run("header only", func(t *testing.T) {
		recs, _, err := readBytes(t, orig[:24], "capture.pcap")
		if err != nil || len(recs) != 0 {
			t.Errorf("%d records, %v", len(recs), err)
		}
	})
	t.Run("pcapng", func(t *testing.T) {
		w, want := handmadeNG(t)
		b := w.buf.Bytes()
		// Cut the last block, an EPB with 33 bytes of data (68 bytes).
		recs, _, err := readBytes(t, b[:len(b)-30], "capture.pcapng")
		if len(recs) != len(want)-1 {
			t.Errorf("%d records", len(recs))
		}
		n := want[len(want)-1].Number
		e := finalErr(t, err, ErrTruncated, n, fmt.Sprintf("capture.pcapng: packet %d: truncated block: Enhanced Packet Block header says 68 bytes, 38 present", n))
		if e.Offset != int64(len(b)-68) {
			t.Errorf("offset %d, want %d", e.Offset, len(b)-68)
		}
	})
	t.Run("gzip stream cut", func(t *testing.T) {
		gz := gzipped(t, orig)
		recs, _, err := readBytes(t, gz[:len(gz)/2], "capture.pcap.gz")
		var e *Error
		if len(recs) == 0 || len(recs) >= len(raw) || !errors.As(err, &e) || !e.Final || e.Packet != len(recs)+1 {
			t.Fatalf("%d records, then %v", len(recs), err)
		}
		if !errors.Is(err, ErrTruncated) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut gzip stream: %v", err)
		}
		for i, rc := range recs {
			if !bytes.Equal(rc.Data, raw[i].data) {
				t.Fatalf("record %d differs", i+1)
			}
		}
	})
	t.Run("gzip checksum", func(t *testing.T) {
		gz := gzipped(t, orig)
		gz[len(gz)-8] ^= 0xff // CRC-32 (RFC 1952 2.3.1)
		recs, _, err := readBytes(t, gz, "capture.pcap.gz")
		var e *Error
		if len(recs) != len(raw) || !errors.As(err, &e) || !e.Final || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%d records, then %v", len(recs), err)
		}
	})
}

func TestLyingLengths(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	_, _, raw := walkPcap(t, orig)
	t.Run("pcap impossible", func(t *testing.T) {
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint32(b[raw[4].off+8:], 0xffffffff)
		recs, _, err := readBytes(t, b, "capture.pcap")
		if len(recs) != 4 {
			t.Errorf("%d records", len(recs))
		}
		// rxe-rping.pcap's header gives snap length 65535 (capinfos: "Packet size limit: file hdr: 65535 bytes").
		finalErr(t, err, ErrBadLength, 5, "capture.pcap: packet 5: impossible record length: captured length 4294967295 exceeds the maximum of 262144 (snap length 65535)")
	})
	t.Run("pcap above original length", func(t *testing.T) {
		// Record 3 claims fewer original bytes than it holds: skipped,
		// and reading goes on with record 4.
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint32(b[raw[2].off+12:], 10)
		recs, skipped, err := readBytes(t, b, "capture.pcap")
		if err != nil || len(recs) != len(raw)-1 || len(skipped) != 1 {
			t.Fatalf("%d records, %v, %v", len(recs), skipped, err)
		}
		e := skipped[0]
		want := fmt.Sprintf("capture.pcap: packet 3: captured length %d is larger than the original length 10; record skipped", raw[2].caplen)
		if e.Final || e.Packet != 3 || !errors.Is(e, ErrBadLength) || e.Error() != want || e.Offset != int64(raw[2].off) {
			t.Errorf("got %q final %v, want %q", e, e.Final, want)
		}
		if recs[2].Number != 4 || !bytes.Equal(recs[2].Data, raw[3].data) {
			t.Errorf("after the skipped record: record %d", recs[2].Number)
		}
	})
	t.Run("pcap above snap length", func(t *testing.T) {
		// tcpdump and Wireshark read records longer than the snap length.
		p := newPcap(binary.LittleEndian, false, 64, 1)
		p.record(1, 2, 100, 100, make([]byte, 100))
		recs := mustRead(t, p.buf.Bytes(), "snap.pcap")
		if len(recs) != 1 || len(recs[0].Data) != 100 {
			t.Errorf("%d records", len(recs))
		}
	})

	// pcapng: the handmade file's first section, then one damaged block,
	// then a good packet.
	ng := func(damage func(w *ngFile)) []byte {
		w := &ngFile{}
		w.shb(binary.LittleEndian, 0)
		w.idb(1, 0)
		w.epb(0, 1, raw[0].data, raw[0].origlen)
		damage(w)
		w.epb(0, 2, raw[1].data, raw[1].origlen)
		return w.buf.Bytes()
	}
	epb := func(w *ngFile, caplen, origlen uint32, iface uint32) {
		w.epb(iface, 1, make([]byte, 40), 40)
		b := w.buf.Bytes()
		n := len(b) - 4 - 40 - 20 + 12 // caplen field
		binary.LittleEndian.PutUint32(b[n-8:], iface)
		binary.LittleEndian.PutUint32(b[n:], caplen)
		binary.LittleEndian.PutUint32(b[n+4:], origlen)
	}
	for _, c := range []struct {
		name   string
		damage func(w *ngFile)
		final  bool
		kind   error
		msg    string
	}{
		{"caplen beyond block", func(w *ngFile) { epb(w, 41, 100, 0) }, false, ErrBadLength,
			"x.pcapng: packet 2: impossible record length: captured length 41 does not fit in a 72-byte Enhanced Packet Block; record skipped"},
		{"caplen impossible", func(w *ngFile) { epb(w, 1<<31, 1<<31, 0) }, false, ErrBadLength,
			"x.pcapng: packet 2: impossible record length: captured length 2147483648 exceeds the maximum of 262144; record skipped"},
		{"caplen above origlen", func(w *ngFile) { epb(w, 40, 39, 0) }, false, ErrBadLength,
			"x.pcapng: packet 2: captured length 40 is larger than the original length 39; record skipped"},
		{"unknown interface", func(w *ngFile) { epb(w, 40, 40, 3) }, false, ErrBadBlock,
			"x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block names interface 3, but its section describes 1; record skipped"},
		{"option overrun", func(w *ngFile) {
			w.epb(0, 1, make([]byte, 40), 40, w.opt(1, []byte("abcd")))
			b := w.buf.Bytes()
			binary.LittleEndian.PutUint16(b[len(b)-14:], 200) // the comment's length
		}, false, ErrBadBlock,
			"x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block: option 1 of 200 bytes at byte 68 overruns the block; record skipped"},
		{"length not a multiple of 4", func(w *ngFile) {
			w.buf.Write([]byte{6, 0, 0, 0, 33, 0, 0, 0})
			w.buf.Write(make([]byte, 40))
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block: block length 33 is not a multiple of 4"},
		{"length too small", func(w *ngFile) {
			w.buf.Write([]byte{6, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0})
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block: block length 8 is less than the minimum of 32"},
		{"trailing length differs", func(w *ngFile) {
			w.epb(0, 1, make([]byte, 40), 40)
			b := w.buf.Bytes()
			binary.LittleEndian.PutUint32(b[len(b)-4:], 76)
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block: block length 72 at its start and 76 at its end differ"},
		{"packet block too large", func(w *ngFile) {
			w.buf.Write([]byte{6, 0, 0, 0, 0, 0, 0x10, 0})
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Enhanced Packet Block: block length 1048576 exceeds the maximum of 327680 for this block type"},
		{"any block too large", func(w *ngFile) {
			w.buf.Write([]byte{4, 0, 0, 0, 0xfc, 0xff, 0xff, 0xff})
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Name Resolution Block: block length 4294967292 exceeds the maximum of 16777216"},
		{"bad byte-order magic", func(w *ngFile) {
			w.buf.Write([]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4})
		}, true, ErrBadBlock, "x.pcapng: packet 2: bad pcapng block: Section Header Block: byte-order magic 0x01020304 is not 0x1a2b3c4d in either byte order"},
		{"bad tsresol", func(w *ngFile) { w.idb(1, 0, w.opt(9, u8(25))) }, true, ErrBadBlock,
			"x.pcapng: packet 2: bad pcapng block: Interface Description Block: timestamp resolution 10^-25 is out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs, skipped, err := readBytes(t, ng(c.damage), "x.pcapng")
			if c.final {
				if len(recs) != 1 || len(skipped) != 0 {
					t.Errorf("%d records, skipped %v", len(recs), skipped)
				}
				finalErr(t, err, c.kind, 2, c.msg)
				return
			}
			if err != nil || len(skipped) != 1 || len(recs) != 2 || recs[1].Number != 3 {
				t.Fatalf("%d records, skipped %v, %v", len(recs), skipped, err)
			}
			e := skipped[0]
			if e.Final || e.Packet != 2 || !errors.Is(e, c.kind) || e.Error() != c.msg {
				t.Errorf("got  %q (final %v)\nwant %q", e, e.Final, c.msg)
			}
		})
	}
	t.Run("large skipped block", func(t *testing.T) {
		// A Name Resolution Block larger than the buffer is skipped in a
		// stream; cut short, it is a truncated block.
		big := ng(func(w *ngFile) { w.block(4, make([]byte, 1<<20)) })
		recs := mustRead(t, big, "x.pcapng")
		if len(recs) != 2 {
			t.Errorf("%d records", len(recs))
		}
		// The last block is an EPB of 32+44 bytes (raw[1] has 42 bytes):
		// cutting 200000 bytes leaves 1048588-(200000-76) of the NRB.
		cut := big[:len(big)-200000]
		recs, _, err := readBytes(t, cut, "x.pcapng")
		if len(recs) != 1 {
			t.Errorf("%d records", len(recs))
		}
		finalErr(t, err, ErrTruncated, 2, fmt.Sprintf("x.pcapng: packet 2: truncated block: Name Resolution Block header says 1048588 bytes, %d present", 1048588-(200000-(32+44))))
	})
}

func TestNotCapture(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		kind error
		msg  string
	}{
		{"empty", nil, ErrNotCapture, "f: not a pcap or pcapng file (empty)"},
		{"short", []byte{0xd4, 0xc3, 0xb2}, ErrNotCapture, "f: not a pcap or pcapng file (only 3 bytes)"},
		{"text", []byte("hello, world\n"), ErrNotCapture, "f: not a pcap or pcapng file (magic 0x68656c6c)"},
		{"garbage", []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, ErrNotCapture,
			"f: not a pcap or pcapng file (magic 0xdeadbeef)"},
		{"gzip of text", gzipped(t, []byte("hello, world\n")), ErrNotCapture, "f: not a pcap or pcapng file (magic 0x68656c6c after gzip decompression)"},
		{"gzip of nothing", gzipped(t, nil), ErrNotCapture, "f: not a pcap or pcapng file (empty after gzip decompression)"},
		{"pcap 2.3", func() []byte {
			b := newPcap(binary.LittleEndian, false, 65535, 1).buf.Bytes()
			b[6] = 3
			return b
		}(), ErrUnsupported, "f: pcap version 2.3 is not supported (only 2.4 is)"},
		{"pcapng 2.0", func() []byte {
			w := &ngFile{}
			w.shb(binary.BigEndian, 0)
			w.buf.Bytes()[12+1] = 2
			return w.buf.Bytes()
		}(), ErrUnsupported, "f: pcapng version 2.0 is not supported (only 1.0)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(c.data), "f")
			if r != nil {
				t.Fatal("a Reader for a bad file")
			}
			finalErr(t, err, c.kind, 0, c.msg)
		})
	}
	if _, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), "f"); err == nil || !strings.HasPrefix(err.Error(), "f: gzip: ") {
		t.Errorf("bad gzip header: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestStdin(t *testing.T) {
	path := filepath.Join(pcapDir, "siw-rping.pcap")
	want := mustRead(t, readFile(t, path), path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	r, err := Open("-")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readAll(t, r)
	if err != nil || r.Name() != "<stdin>" || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stdin: %d records, %v, name %q", len(got), err, r.Name())
	}
	r.Close()
	if _, err := f.Stat(); err != nil {
		t.Error("Close closed standard input")
	}
	// Errors name standard input.
	os.Stdin, _ = os.Open(os.DevNull)
	if _, err := Open("-"); err == nil || err.Error() != "<stdin>: not a pcap or pcapng file (empty)" {
		t.Errorf("empty stdin: %v", err)
	}
}

// TestFinalErrorSticks: after a final error, Next keeps returning it.
func TestFinalErrorSticks(t *testing.T) {
	orig := readFile(t, filepath.Join(pcapDir, "rxe-rping.pcap"))
	r, err := NewReader(bytes.NewReader(orig[:200]), "x")
	if err != nil {
		t.Fatal(err)
	}
	var first error
	for range 10 {
		_, err := r.Next()
		if err != nil && first == nil {
			first = err
		}
		if first != nil && err != first {
			t.Fatalf("error changed from %v to %v", first, err)
		}
	}
	r, _ = NewReader(bytes.NewReader(orig[:24]), "x")
	for range 3 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after EOF: %v", err)
		}
	}
}

// TestNoAllocs: in steady state Next allocates nothing.
func TestNoAllocs(t *testing.T) {
	for name, b := range map[string][]byte{
		"pcap":   readFile(t, filepath.Join(pcapDir, "rxe-nfs3.pcap")),
		"pcapng": manyEPB(t, 3000),
		"gzip":   gzipped(t, readFile(t, filepath.Join(pcapDir, "rxe-nfs3.pcap"))),
	} {
		r, err := NewReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(2000, func() {
			if _, err := r.Next(); err != nil && err != io.EOF {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per record", name, allocs)
		}
	}
}

// manyEPB is a pcapng of n Enhanced Packet Blocks with the Ethernet frames
// of rxe-nfs3.pcap, on a Linux SLL2 and an Ethernet interface.
func manyEPB(t testing.TB, n int) []byte {
	_, _, raw := walkPcap(t, readFile(t, filepath.Join(pcapDir, "rxe-nfs3.pcap")))
	w := &ngFile{}
	w.shb(binary.LittleEndian, 0)
	w.idb(1, 0, w.opt(9, u8(9)))
	w.idb(276, 0)
	for i := range n {
		r := raw[i%len(raw)]
		w.epb(uint32(i%2), uint64(r.sec)*1e9+uint64(r.usec)*1e3, r.data, r.origlen)
	}
	return w.buf.Bytes()
}

func TestLinkTypes(t *testing.T) {
	for lt, name := range map[layers.LinkType]string{
		1: "ETHERNET", 101: "RAW", 113: "LINUX_SLL", 197: "ERF", 228: "IPV4", 229: "IPV6",
		242: "IPOIB", 247: "INFINIBAND", 276: "LINUX_SLL2",
	} {
		if LinkTypeName(lt) != name || Supported(lt) != nil {
			t.Errorf("%d: %q, %v", lt, LinkTypeName(lt), Supported(lt))
		}
	}
	err := Supported(127)
	if err == nil || !errors.Is(err, ErrUnsupportedLinkType) || err.Error() !=
		"link type 127 (IEEE802_11_RADIOTAP) is not supported: rdmashark reads Ethernet, Linux SLL/SLL2, raw IP, InfiniBand, ERF and IPoIB captures" {
		t.Errorf("127: %v", err)
	}
	if err := Supported(9999); err == nil || !strings.HasPrefix(err.Error(), "link type 9999 (unknown) is not supported") {
		t.Errorf("9999: %v", err)
	}
}

// FuzzReader: no input panics, Next always ends, records are consistent.
// Memory is bounded by construction: the Reader allocates only its fixed
// buffers and never sizes anything by a length field.
func FuzzReader(f *testing.F) {
	for _, c := range realCaptures {
		b := readFile(f, filepath.Join(pcapDir, c.file))
		f.Add(b[:min(len(b), 2048)])
	}
	mixed := readFile(f, mixedPcapNG)
	f.Add(mixed[:2048])
	w, _ := handmadeNG(f)
	f.Add(w.buf.Bytes())
	f.Add(gzipped(f, mixed[:1024]))
	f.Add(zstdFrame(f, mixed[:1024]))
	f.Add(lz4Frame(f, mixed[:1024]))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), "fuzz")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) && !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		last := 0
		for i := 0; ; i++ {
			// Each record takes at least 16 bytes of the stream, so
			// Next ends; a compressed stream may hold many more
			// records than it has bytes (a few KB of zstd can stand for
			// gigabytes), and the first 1<<16 of them will do.
			if r.Compressed() && i > 1<<16 {
				return
			}
			if i > len(b)+10 && !r.Compressed() {
				t.Fatal("Next does not end")
			}
			rc, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("untyped error %v", err)
				}
				if e.Final {
					if _, again := r.Next(); again != err {
						t.Fatal("final error not repeated")
					}
					return
				}
				if e.Packet <= last {
					t.Fatalf("skipped record %d after %d", e.Packet, last)
				}
				last = e.Packet
				continue
			}
			// Numbers grow by 1, or more past pcapng custom blocks.
			if rc.Number <= last || len(rc.Data) != rc.CI.CaptureLength || len(rc.Data) > MaxRecordLength || rc.CI.CaptureLength > rc.CI.Length {
				t.Fatalf("record %d after %d: %d bytes, %+v", rc.Number, last, len(rc.Data), rc.CI)
			}
			last = rc.Number
		}
	})
}

func BenchmarkReadPcap(b *testing.B) {
	data := readFile(b, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	benchRead(b, data)
}

func BenchmarkReadPcapNG(b *testing.B) {
	benchRead(b, manyEPB(b, 7245))
}

func BenchmarkReadPcapGzip(b *testing.B) {
	data := readFile(b, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	gz := gzipped(b, data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(gz), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

// benchRead reads a whole capture per iteration; allocs/op is the Reader's
// fixed set-up (its buffers), not per record.
func benchRead(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), "bench")
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
	}
	b.ReportMetric(float64(n), "records/op")
}

// BenchmarkNext is the cost of one record in steady state.
func BenchmarkNext(b *testing.B) {
	data := readFile(b, filepath.Join(pcapDir, "rxe-nfs3.pcap"))
	r, _ := NewReader(bytes.NewReader(data), "bench")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Next(); err == io.EOF {
			b.StopTimer()
			r, _ = NewReader(bytes.NewReader(data), "bench")
			b.StartTimer()
		}
	}
}
