package roce

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func TestLRHHandBytes(t *testing.T) {
	// LRH of frame 11 of the ERF capture (RC ACK), tshark: VL 0x00, LVer 0,
	// SL 0, LNH 0x02, DLID 4, PktLen 7, SLID 1; but with VL 0xF, LVer 1,
	// SL 3 and the reserved bits set so that every field is exercised.
	in := []byte{
		0xF1,       // 0: VL 0xF, LVer 1
		0x36,       // 1: SL 3, Rsv2 1, LNH 2
		0x00, 0x04, // 2-3: DLID 4
		0x08, 0x07, // 4-5: Rsv5 1, PktLen 7 words = 28 bytes
		0x00, 0x01, // 6-7: SLID 1
	}
	in = append(in, make([]byte, 20)...) // BTH + AETH + ICRC
	in = append(in, 0xAB, 0xCD)          // VCRC
	var l LRH
	if err := l.DecodeFromBytes(in, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if l.VL != 0xF || l.LVer != 1 || l.SL != 3 || l.Rsv2 != 1 || l.LNH != LNHLocal || l.DLID != 4 ||
		l.Rsv5 != 1 || l.PktLen != 7 || l.SLID != 1 || !l.HasVCRC || l.VCRC != 0xABCD || l.Truncated {
		t.Errorf("%+v", l)
	}
	if len(l.Payload) != 20 || l.NextLayerType() != LayerTypeBTH {
		t.Errorf("payload %d next %v", len(l.Payload), l.NextLayerType())
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &l, gopacket.Payload(l.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), in) {
		t.Errorf("round trip % x", buf.Bytes())
	}
	// VCRC missing: payload complete, HasVCRC false; no truncation reported.
	var df truncFlag
	if err := l.DecodeFromBytes(in[:28], &df); err != nil || l.HasVCRC || !l.Truncated || len(l.Payload) != 20 || bool(df) {
		t.Errorf("no VCRC: %v %+v %v", err, l, df)
	}
	// Cut before the end of the ICRC: truncated, reported.
	if err := l.DecodeFromBytes(in[:20], &df); err != nil || !l.Truncated || len(l.Payload) != 12 || !bool(df) {
		t.Errorf("cut: %v %+v", err, l)
	}
	if err := l.DecodeFromBytes(in[:7], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTooShort) {
		t.Errorf("7 bytes: %v", err)
	}
	bad := bytes.Clone(in)
	bad[5] = 1 // PktLen 1 word
	if err := l.DecodeFromBytes(bad, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Errorf("PktLen 1: %v", err)
	}
	for lnh, want := range map[LNH]gopacket.LayerType{LNHRaw: gopacket.LayerTypePayload, LNHIPv6: layers.LayerTypeIPv6, LNHGlobal: LayerTypeGRH} {
		l.LNH = lnh
		if l.NextLayerType() != want {
			t.Errorf("LNH %v: next %v", lnh, l.NextLayerType())
		}
	}
}

type truncFlag bool

func (f *truncFlag) SetTruncated() { *f = true }

func TestGRHHandBytes(t *testing.T) {
	in := []byte{
		0x6A,             // 0: IPVer 6, TClass high nibble 0xA
		0xB1, 0x23, 0x45, // 1-3: TClass low nibble 0xB, FlowLabel 0x12345
		0x00, 0x10, // 4-5: PayLen 16
		0x1B, // 6: NxtHdr IBA
		0x40, // 7: HopLmt 64
	}
	sgid := net.ParseIP("fe80::2:c903:0:1f2d").To16()
	dgid := net.ParseIP("::ffff:192.0.2.1").To16()
	in = append(in, sgid...)
	in = append(in, dgid...)
	in = append(in, make([]byte, 16)...) // BTH + ICRC
	in = append(in, 0, 0)                // Ethernet padding beyond PayLen
	var g GRH
	if err := g.DecodeFromBytes(in, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if g.IPVer != 6 || g.TClass != 0xAB || g.FlowLabel != 0x12345 || g.PayLen != 16 || g.NxtHdr != 0x1B || g.HopLmt != 64 {
		t.Errorf("%+v", g)
	}
	if g.SrcGID().String() != "fe80::2:c903:0:1f2d" || g.DstGID().String() != "::ffff:192.0.2.1" {
		t.Errorf("GIDs %v %v", g.SrcGID(), g.DstGID())
	}
	if len(g.Payload) != 16 || g.Truncated || g.NextLayerType() != LayerTypeBTH {
		t.Errorf("payload %d", len(g.Payload))
	}
	if f := g.NetworkFlow(); f.Src().String() != "fe80::2:c903:0:1f2d" {
		t.Errorf("flow %v", f)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &g, gopacket.Payload(g.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), in[:56]) {
		t.Errorf("round trip % x", buf.Bytes())
	}
	var df truncFlag
	if err := g.DecodeFromBytes(in[:50], &df); err != nil || !g.Truncated || len(g.Payload) != 10 || !bool(df) {
		t.Errorf("cut: %v %+v", err, g)
	}
	if err := g.DecodeFromBytes(in[:39], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTooShort) {
		t.Errorf("39 bytes: %v", err)
	}
	g.NxtHdr = 0x11
	if g.NextLayerType() != gopacket.LayerTypePayload {
		t.Error("NxtHdr 0x11")
	}
}

// Real native IB packets taken apart with NewPacket and serialized again
// with ComputeChecksums: the recomputed ICRC and VCRC must reproduce the
// captured bytes exactly, for LRH-only and LRH+GRH packets.
func TestNativeIBSerializeRealPackets(t *testing.T) {
	for _, f := range capIB(t) {
		p := gopacket.NewPacket(f.data, LinkTypeInfiniBand, gopacket.Default)
		l, _ := p.Layer(LayerTypeLRH).(*LRH)
		b, _ := p.Layer(LayerTypeBTH).(*BTH)
		if l == nil || b == nil {
			t.Fatalf("frame %d: %v", f.num, p.Layers())
		}
		sl := []gopacket.SerializableLayer{l}
		if g, ok := p.Layer(LayerTypeGRH).(*GRH); ok {
			sl = append(sl, g)
		}
		vcrc := l.VCRC
		b.ICRC, l.VCRC = 0, 0 // must be recomputed
		sl = append(sl, b, gopacket.Payload(b.Payload))
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, sl...); err != nil {
			t.Fatalf("frame %d: %v", f.num, err)
		}
		if !bytes.Equal(buf.Bytes(), f.data) {
			t.Errorf("frame %d: serialized\n got % x\nwant % x", f.num, buf.Bytes(), f.data)
		}
		if l.VCRC != vcrc {
			t.Errorf("frame %d: VCRC field 0x%04x, want 0x%04x", f.num, l.VCRC, vcrc)
		}
	}
}

// RoCEv1: Ethernet with EtherType 0x8915, GRH, BTH. No capture has it, so
// build one with gopacket (GRH computes the ICRC), decode it through the
// EtherType registration, and check the ICRC with ICRCv1.
func TestRoCEv1BuildAndDecode(t *testing.T) {
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: EthernetTypeRoCEv1}
	g := &GRH{IPVer: 6, TClass: 0x20, FlowLabel: 7, NxtHdr: NxtHdrIBA, HopLmt: 1}
	copy(g.SGID[:], net.ParseIP("fe80::1").To16())
	copy(g.DGID[:], net.ParseIP("fe80::2").To16())
	b := &BTH{OpCode: OpRCSendOnlyWithImmediate, PKey: 0xFFFF, DestQP: 0x42, PSN: 1000, AckReq: true}
	b.ImmDt.Data = 0x01020304
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, g, b, gopacket.Payload("abcdefg")); err != nil {
		t.Fatal(err)
	}
	p := gopacket.NewPacket(buf.Bytes(), layers.LinkTypeEthernet, gopacket.Default)
	dg, _ := p.Layer(LayerTypeGRH).(*GRH)
	db, _ := p.Layer(LayerTypeBTH).(*BTH)
	if dg == nil || db == nil || p.Layer(LayerTypeImmDt) == nil || p.ErrorLayer() != nil {
		t.Fatalf("layers %v", p.Layers())
	}
	if dg.PayLen != 12+4+7+1+4 || db.PadCnt != 1 || string(db.Payload) != "abcdefg" || db.ImmDt.Data != 0x01020304 {
		t.Errorf("GRH PayLen %d, PadCnt %d, payload %q", dg.PayLen, db.PadCnt, db.Payload)
	}
	icrc, err := ICRCv1(buf.Bytes()[14:])
	if err != nil || icrc != db.ICRC || icrc == 0 {
		t.Errorf("ICRCv1 0x%08x, BTH.ICRC 0x%08x, %v", icrc, db.ICRC, err)
	}
	if p.NetworkLayer() != dg {
		t.Error("GRH is not the network layer")
	}
}

// RoCEv2: a real packet decoded with NewPacket and serialized again layer
// by layer gives the captured bytes back (the ICRC is carried, and
// FixICRCv2 over the result leaves it unchanged).
func TestRoCEv2SerializeRealPacket(t *testing.T) {
	for _, f := range capRoCE(t, capDir+"/rxe-rping.pcap") {
		p := gopacket.NewPacket(f.data, layers.LinkTypeEthernet, gopacket.Default)
		eth := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp := p.Layer(layers.LayerTypeUDP).(*layers.UDP)
		b := p.Layer(LayerTypeBTH).(*BTH)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, eth, ip, udp, b, gopacket.Payload(b.Payload)); err != nil {
			t.Fatal(err)
		}
		out := buf.Bytes()
		if !bytes.Equal(out, f.data[:len(out)]) || len(out) != len(f.l2)+len(f.ip) {
			t.Fatalf("frame %d: round trip differs", f.num)
		}
		before := binary.BigEndian.Uint32(out[len(out)-4:])
		if err := FixICRCv2(out[len(f.l2):]); err != nil || binary.BigEndian.Uint32(out[len(out)-4:]) != before {
			t.Fatalf("frame %d: FixICRCv2 changed a valid ICRC: %v", f.num, err)
		}
	}
}
