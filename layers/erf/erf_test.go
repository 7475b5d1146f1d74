package erf

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// The public ERF capture: 43 InfiniBand records (ERF type 21) in a pcap
// of link type 197, as ibdump writes them.
const erfCapture = "../../testdata/pcaps/public/srinivaskoritala-rdma-softroce-demo-infiniband.pcap"

// writePcap writes records as a little-endian pcap of the given link type.
func writePcap(t testing.TB, linkType uint32, recs [][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h, 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 65535)
	binary.LittleEndian.PutUint32(h[20:], linkType)
	buf.Write(h)
	for i, r := range recs {
		rh := make([]byte, 16)
		binary.LittleEndian.PutUint32(rh, uint32(1700000000+i))
		binary.LittleEndian.PutUint32(rh[8:], uint32(len(r)))
		binary.LittleEndian.PutUint32(rh[12:], uint32(len(r)))
		buf.Write(rh)
		buf.Write(r)
	}
	p := filepath.Join(t.TempDir(), "erf.pcap")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tsharkFields runs tshark -T fields and splits its lines; it skips the
// test when tshark is not installed.
func tsharkFields(t *testing.T, path string, fields ...string) [][]string {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	args := []string{"-r", path, "-T", "fields", "-E", "separator=/t"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t"))
	}
	return rows
}

// TestFirstRecord decodes record 1 of the real capture, whose header bytes
// are (hex dump of the file at offset 0x28):
//
//	60 ea eb 7f ef 41 2b 48  timestamp, little-endian: 0x482b41ef7febea60
//	15                       type 21 (INFINIBAND), no extension header
//	05                       flags: interface 1, varying length
//	01 38                    rlen 312
//	00 00                    lctr 0
//	01 22                    wlen 290
//	f0 02 ff ff 00 48 ff ff  LRH: VL 15, LNH 2, DLID 0xffff, length 72 words, SLID 0xffff
//
// tshark -V shows the same, and the time 2008-05-14 19:47:59.499693535.
func TestFirstRecord(t *testing.T) {
	rec := pcaptest.Records(t, erfCapture)[0]
	var e ERF
	if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if e.Timestamp != 0x482b41ef7febea60 || e.Type != TypeInfiniBand || e.HasExtensions || e.Flags != 0x05 ||
		e.Flags.Interface() != 1 || e.Flags&FlagVarLen == 0 || e.RLen != 312 || e.LCtr != 0 || e.WLen != 290 {
		t.Errorf("header %+v", e)
	}
	if got := e.Time().Format("2006-01-02 15:04:05.000000000"); got != "2008-05-14 19:47:59.499693535" {
		t.Errorf("time %s", got)
	}
	if len(e.Contents) != 16 || len(e.Payload) != 290 || !bytes.HasPrefix(e.Payload, []byte{0xf0, 0x02, 0xff, 0xff, 0x00, 0x48, 0xff, 0xff}) {
		t.Errorf("contents %d bytes, payload %d bytes % x", len(e.Contents), len(e.Payload), e.Payload[:8])
	}
	if e.NextLayerType() != gopacket.LayerTypePayload || !e.Type.IsInfiniBand() || e.Type.IsEthernet() || e.Type.String() != "INFINIBAND" {
		t.Errorf("next %v, type %v", e.NextLayerType(), e.Type)
	}
}

// TestRealCapture compares every record's header with tshark's erf.*
// fields, its time with frame.time_epoch (Wireshark takes it from the ERF
// header), and the payload with the bytes tshark -x shows after the header.
func TestRealCapture(t *testing.T) {
	recs := pcaptest.Records(t, erfCapture)
	rows := tsharkFields(t, erfCapture, "erf.ts", "erf.types.type", "erf.types.ext_header", "erf.flags",
		"erf.flags.cap", "erf.rlen", "erf.lctr", "erf.wlen", "frame.time_epoch")
	if len(rows) != len(recs) || len(recs) != 43 {
		t.Fatalf("%d records, tshark %d", len(recs), len(rows))
	}
	var e ERF
	for i, rec := range recs {
		if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		ext := 0
		if e.HasExtensions {
			ext = 1
		}
		got := []string{fmt.Sprintf("0x%016x", e.Timestamp), strconv.Itoa(int(e.Type)), strconv.Itoa(ext),
			fmt.Sprintf("0x%02x", uint8(e.Flags)), strconv.Itoa(int(e.Flags.Interface())), strconv.Itoa(int(e.RLen)),
			strconv.Itoa(int(e.LCtr)), strconv.Itoa(int(e.WLen)),
			fmt.Sprintf("%d.%09d", e.Time().Unix(), e.Time().Nanosecond())}
		if fmt.Sprint(got) != fmt.Sprint(rows[i]) {
			t.Errorf("record %d:\n got %v\nwant %v", i+1, got, rows[i])
		}
		if len(e.Payload) != int(e.WLen) {
			t.Errorf("record %d: payload %d bytes, wlen %d", i+1, len(e.Payload), e.WLen)
		}
	}
	// The bytes after the header are the ones tshark dumps for frame 1.
	out, err := exec.Command("tshark", "-r", erfCapture, "-x", "-c", "1").Output()
	if err != nil {
		t.Fatal(err)
	}
	var dump []byte
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) > 6 && l[4:6] == "  " {
			b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(l[6:min(len(l), 54)]), " ", ""))
			if err != nil {
				t.Fatal(err)
			}
			dump = append(dump, b...)
		}
	}
	e.DecodeFromBytes(recs[0], gopacket.NilDecodeFeedback)
	if !bytes.Equal(e.Payload, dump) {
		t.Errorf("payload differs from tshark -x")
	}
}

// ethFrame is frame 1 of rxe-rping.pcap, an ARP request (42 bytes).
var ethFrame, _ = hex.DecodeString("ffffffffffff52540000020208060001080006040001525400000202c0000202000000000000c0000201")

// handRecords are ERF records built from the field layout; tshark reads
// them back in TestHandRecordsTshark.
func handRecords() [][]byte {
	// Ethernet (type 2) with two extension headers, flags: interface 5
	// (bits 0-1 = 01, bit 6 set), truncated, rx error.
	eth := []byte{
		0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x65, // ts: 0x65000000_80000000 = 1694498816.5 s
		0x82,       // type 2 | extension header present
		0x59,       // flags 0x40|0x10|0x08|0x01
		0x00, 0x4c, // rlen 76 = 16 + 2*8 + 2 + 42
		0x00, 0x07, // lctr 7
		0x00, 0x2a, // wlen 42
		0x84, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x00, // ext: more | InterceptID 0x1234
		0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, // ext: Classification, seqnum 9
		0x00, 0x00, // offset 0, pad 0
	}
	eth = append(eth, ethFrame...)
	// InfiniBand (type 21), time 16 s, rlen 32, wlen 12: 4 bytes of record
	// padding follow the 12-byte packet (LRH and 4 bytes).
	ib := []byte{0, 0, 0, 0, 0x10, 0, 0, 0, 0x15, 0x04, 0x00, 0x20, 0x00, 0x00, 0x00, 0x0c}
	ib = append(ib, 0xf0, 0x02, 0xff, 0xff, 0x00, 0x03, 0xff, 0xff, 0xaa, 0xbb, 0xcc, 0xdd, 0, 0, 0, 0)
	return [][]byte{eth, ib}
}

func TestHandRecords(t *testing.T) {
	recs := handRecords()
	var e ERF
	if err := e.DecodeFromBytes(recs[0], gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	want := ERF{Timestamp: 0x6500000080000000, Type: TypeEth, HasExtensions: true, Flags: 0x59, RLen: 76, LCtr: 7, WLen: 42,
		Extensions: []ExtensionHeader{{ExtInterceptID, true, 0x8400123400000000}, {ExtClassification, false, 0x0300000000000009}}}
	if e.Timestamp != want.Timestamp || e.Type != want.Type || !e.HasExtensions || e.Flags != want.Flags || e.RLen != 76 ||
		e.LCtr != 7 || e.WLen != 42 || fmt.Sprint(e.Extensions) != fmt.Sprint(want.Extensions) {
		t.Errorf("got %+v", e)
	}
	if e.Flags.Interface() != 5 || e.Flags&FlagTruncated == 0 || e.Flags&FlagRxError == 0 || e.Flags&FlagDSError != 0 {
		t.Errorf("flags %#x: interface %d", e.Flags, e.Flags.Interface())
	}
	if len(e.Contents) != 16+16+2 || !bytes.Equal(e.Payload, ethFrame) || e.NextLayerType() != layers.LayerTypeEthernet {
		t.Errorf("contents %d, payload % x, next %v", len(e.Contents), e.Payload, e.NextLayerType())
	}
	if got := e.Time().Format("15:04:05.000000000"); got != "06:06:56.500000000" {
		t.Errorf("time %s", got)
	}
	// Record padding beyond wlen is not part of the packet.
	if err := e.DecodeFromBytes(recs[1], gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if len(e.Payload) != 12 || len(e.Extensions) != 0 {
		t.Errorf("payload %d bytes, %d extensions", len(e.Payload), len(e.Extensions))
	}
}

// TestHandRecordsTshark: Wireshark reads the hand-built records the same.
func TestHandRecordsTshark(t *testing.T) {
	path := writePcap(t, 197, handRecords())
	rows := tsharkFields(t, path, "erf.types.type", "erf.types.ext_header", "erf.ehdr.types", "erf.ehdr.int.intid",
		"erf.ehdr.class.seqnum", "erf.flags.trunc", "erf.flags.rxe", "erf.flags.dse", "erf.lctr", "erf.wlen",
		"erf.eth.off", "erf.eth.pad", "eth.src", "arp.src.proto_ipv4", "frame.time_epoch", "frame.cap_len")
	// Wireshark shows extension types without the More bit, the intercept
	// ID (0x1234) in decimal, and cuts the InfiniBand packet to wlen (12
	// bytes captured), as DecodeFromBytes does.
	want := [][]string{
		{"2", "1", "4,3", "4660", "9", "1", "1", "0", "7", "42", "0", "0x00", "52:54:00:00:02:02", "192.0.2.2", "1694498816.500000000", "42"},
		{"21", "0", "", "", "", "0", "0", "0", "0", "12", "", "", "", "", "16.000000000", "12"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("tshark\n got %q\nwant %q", rows, want)
	}
	// Our decode of the same: the extension types without their More bit.
	var e ERF
	e.DecodeFromBytes(handRecords()[0], gopacket.NilDecodeFeedback)
	if e.Extensions[0].Type != 4 || e.Extensions[1].Type != 3 || e.Extensions[0].Raw>>32&0xffff != 4660 || e.Extensions[1].Raw != 9|3<<56 {
		t.Errorf("extension types %v", e.Extensions)
	}
}

func TestNewPacket(t *testing.T) {
	p := gopacket.NewPacket(handRecords()[0], LayerTypeERF, gopacket.Default)
	if p.ErrorLayer() != nil {
		t.Fatal(p.ErrorLayer().Error())
	}
	var got []string
	for _, l := range p.Layers() {
		got = append(got, l.LayerType().String())
	}
	if fmt.Sprint(got) != "[ERF Ethernet ARP]" {
		t.Errorf("layers %v", got)
	}
	// An engine that knows the InfiniBand layers names the one to use.
	saved := InfiniBandLayerType
	defer func() { InfiniBandLayerType = saved }()
	InfiniBandLayerType = layers.LayerTypeEthernet // any registered layer
	var e ERF
	e.DecodeFromBytes(handRecords()[1], gopacket.NilDecodeFeedback)
	if e.NextLayerType() != layers.LayerTypeEthernet {
		t.Errorf("InfiniBandLayerType not used: %v", e.NextLayerType())
	}
}

func TestTruncated(t *testing.T) {
	rec := handRecords()[0]
	for _, c := range []struct {
		n   int
		msg string
	}{
		{0, "ERF record truncated: 0 bytes, the header needs 16"},
		{15, "ERF record truncated: 15 bytes, the header needs 16"},
		{20, "ERF record truncated: extension header 1 at byte 16 needs 8 bytes, 4 left"},
		{31, "ERF record truncated: extension header 2 at byte 24 needs 8 bytes, 7 left"},
		{33, "ERF record truncated: the Ethernet offset and pad at byte 32 need 2 bytes, 1 left"},
	} {
		var e ERF
		df := &feedback{}
		err := e.DecodeFromBytes(rec[:c.n], df)
		if err == nil || !errors.Is(err, ErrTruncated) || err.Error() != c.msg || !df.truncated {
			t.Errorf("%d bytes: %v (truncated %v)", c.n, err, df.truncated)
		}
	}
	// A record cut inside the packet keeps what it has.
	var e ERF
	if err := e.DecodeFromBytes(rec[:40], gopacket.NilDecodeFeedback); err != nil || len(e.Payload) != 6 {
		t.Errorf("cut packet: %v, %d bytes", err, len(e.Payload))
	}
}

type feedback struct{ truncated bool }

func (f *feedback) SetTruncated() { f.truncated = true }

func TestManyExtensions(t *testing.T) {
	rec := make([]byte, 16, 16+8*20+4)
	rec[8] = 0x80 | uint8(TypeIPv4)
	for i := range 20 {
		x := []byte{uint8(ExtPacketID) | 0x80, 0, 0, 0, 0, 0, 0, uint8(i)}
		if i == 19 {
			x[0] &^= 0x80
		}
		rec = append(rec, x...)
	}
	rec = append(rec, 0x45, 0, 0, 4)
	var e ERF
	if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if len(e.Extensions) != MaxExtensions || e.ExtraExtensions != 4 || len(e.Payload) != 4 || e.NextLayerType() != layers.LayerTypeIPv4 {
		t.Errorf("%d extensions + %d, payload %d, next %v", len(e.Extensions), e.ExtraExtensions, len(e.Payload), e.NextLayerType())
	}
}

func TestSerializeRoundTrip(t *testing.T) {
	// The real first record's header serialises back to its own bytes.
	rec := pcaptest.Records(t, erfCapture)[0]
	var e ERF
	e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &e, gopacket.Payload(e.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), rec) {
		t.Errorf("re-serialised record differs")
	}
	// FixLengths sets lengths and More bits.
	out := ERF{Timestamp: 1 << 32, Type: TypeColorEth, LCtr: 3, EthOffset: 0, EthPad: 0,
		Extensions: []ExtensionHeader{{Type: ExtHostID, More: false, Raw: 0xabcdef}, {Type: ExtFlowID, More: true, Raw: 0x12}}}
	buf = gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &out, gopacket.Payload(ethFrame)); err != nil {
		t.Fatal(err)
	}
	var in ERF
	if err := in.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if in.RLen != 16+16+2+42 || in.WLen != 42 || !in.HasExtensions || len(in.Extensions) != 2 || !in.Extensions[0].More ||
		in.Extensions[1].More || in.Extensions[0].Type != ExtHostID || in.Extensions[0].Raw != 0x91<<56|0xabcdef ||
		in.LCtr != 3 || in.Type != TypeColorEth || !bytes.Equal(in.Payload, ethFrame) {
		t.Errorf("round trip %+v", in)
	}
}

func TestNames(t *testing.T) {
	for typ, name := range map[Type]string{TypeEth: "ETH", TypeInfiniBand: "INFINIBAND", TypeInfiniBandLink: "INFINIBAND_LINK",
		TypeIPv6: "IPV6", TypeMeta: "META", TypePad: "PAD", 40: "INTERNAL8", 26: "Type(26)", 100: "Type(100)"} {
		if typ.String() != name {
			t.Errorf("%d: %q, want %q", typ, typ.String(), name)
		}
	}
	for _, typ := range []Type{TypeEth, TypeColorEth, TypeDSMColorEth, TypeColorHashEth} {
		if !typ.IsEthernet() {
			t.Errorf("%v is Ethernet", typ)
		}
	}
	if TypeInfiniBandLink.IsInfiniBand() || ExtType(17).String() != "Host ID" || Flags(0x43).Interface() != 7 {
		t.Error("IsInfiniBand, ExtType or Interface")
	}
}

func FuzzERF(f *testing.F) {
	for _, r := range pcaptest.Records(f, erfCapture) {
		f.Add(r)
	}
	for _, r := range handRecords() {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var e ERF
		if err := e.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			return
		}
		if len(e.Contents)+len(e.Payload) > len(b) || len(e.Extensions) > MaxExtensions {
			t.Fatalf("contents %d + payload %d > %d", len(e.Contents), len(e.Payload), len(b))
		}
		_ = e.NextLayerType()
		_ = e.Time()
		buf := gopacket.NewSerializeBuffer()
		if len(b) < 0xffff {
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &e, gopacket.Payload(e.Payload)); err != nil {
				t.Fatal(err)
			}
		}
		gopacket.NewPacket(b, LayerTypeERF, gopacket.Default)
	})
}

func BenchmarkDecode(b *testing.B) {
	rec := pcaptest.Records(b, erfCapture)[0]
	var e ERF
	b.ReportAllocs()
	for b.Loop() {
		if err := e.DecodeFromBytes(rec, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}
