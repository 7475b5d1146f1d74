package roce

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
)

// Fuzz tests, seeded with real packets: a few of every opcode from the
// RoCE captures and every packet of the native InfiniBand capture. Plain
// `go test` runs the seeds.

func roceSeeds(t testing.TB) []capRoCEFrame {
	var seeds []capRoCEFrame
	for _, name := range []string{"rxe-nfs3.pcap", "rxe-rping.pcap", "rxe-ib_write_bw.pcap", "public/montybeatnik-rdma-roce-lab-test.pcap"} {
		n := map[OpCode]int{}
		for _, f := range capRoCE(t, filepath.Join(capDir, name)) {
			if op := OpCode(f.bth[0]); n[op] < 3 {
				n[op]++
				seeds = append(seeds, f)
			}
		}
	}
	return seeds
}

// checkBTH decodes and checks what must hold for any input.
func checkBTH(t *testing.T, data []byte, wireLen int) {
	var b BTH
	var err error
	if wireLen < 0 {
		err = b.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	} else {
		err = b.DecodeWithLength(data, wireLen, gopacket.NilDecodeFeedback)
	}
	if err != nil {
		return
	}
	hdr := b.OpCode.HeaderLen()
	if len(data) < hdr || b.Ext != b.OpCode.ExtHeaders() {
		t.Fatalf("decoded %d bytes with %d header bytes", len(data), hdr)
	}
	if len(b.Payload) > 0 && &b.Payload[0] != &data[hdr] {
		t.Fatal("payload does not start after the headers")
	}
	if b.HasICRC == b.Truncated {
		t.Fatalf("HasICRC %v and Truncated %v", b.HasICRC, b.Truncated)
	}
	if !b.HasICRC {
		return
	}
	want := data
	if wireLen >= 0 {
		want = data[:wireLen]
	}
	if hdr+len(b.Payload)+int(b.PadCnt)+ICRCLen != len(want) || b.PayloadLen != len(b.Payload) {
		t.Fatalf("payload %d + pad %d + ICRC does not end the packet", len(b.Payload), b.PadCnt)
	}
	// A complete packet serializes back to its bytes.
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &b, gopacket.Payload(b.Payload)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("round trip\n got % x\nwant % x", buf.Bytes(), want)
	}
}

func FuzzBTH(f *testing.F) {
	for _, s := range roceSeeds(f) {
		f.Add(s.bth, -1)
		f.Add(s.bth[:len(s.bth)/2], len(s.bth))
	}
	for _, s := range capIB(f) {
		if LNH(s.data[1]&3) == LNHLocal {
			f.Add(s.data[LRHLen:len(s.data)-VCRCLen], -1)
		}
	}
	f.Add(handWriteImm, -1)
	f.Fuzz(func(t *testing.T, data []byte, wireLen int) {
		if wireLen < -1 {
			wireLen = -1
		}
		checkBTH(t, data, wireLen)
		// Truncation reported by the layer before.
		var b BTH
		p := gopacket.NewDecodingLayerParser(LayerTypeBTH, &b)
		p.SetTruncated()
		if b.DecodeFromBytes(data, p) == nil && (!b.Truncated || b.HasICRC || len(b.Payload) > len(data)) {
			t.Fatal("truncated input decoded as complete")
		}
		// The NewPacket decoder, with gopacket's panic recovery off.
		_ = gopacket.NewPacket(data, LayerTypeBTH, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	})
}

func FuzzLRH(f *testing.F) {
	for _, s := range capIB(f) {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var l LRH
		var df truncFlag
		_, _ = ICRCIB(data)
		_, _ = VCRC(data)
		if err := l.DecodeFromBytes(data, &df); err != nil {
			return
		}
		end := int(l.PktLen) * 4
		if len(l.Payload) != min(len(data), end)-LRHLen {
			t.Fatalf("payload %d bytes, PktLen %d, data %d", len(l.Payload), l.PktLen, len(data))
		}
		if l.HasVCRC {
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &l, gopacket.Payload(l.Payload)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), data[:end+VCRCLen]) {
				t.Fatal("round trip")
			}
		}
		switch l.LNH {
		case LNHLocal:
			checkBTH(t, l.Payload, -1)
		case LNHGlobal:
			var g GRH
			if g.DecodeFromBytes(l.Payload, &df) == nil && g.NxtHdr == NxtHdrIBA {
				checkBTH(t, g.Payload, -1)
			}
		}
	})
}

func FuzzGRH(f *testing.F) {
	for _, s := range capIB(f) {
		if LNH(s.data[1]&3) == LNHGlobal {
			f.Add(s.data[LRHLen : len(s.data)-VCRCLen])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g GRH
		var df truncFlag
		_, _ = ICRCv1(data)
		if err := g.DecodeFromBytes(data, &df); err != nil {
			return
		}
		if g.Truncated != bool(df) || len(g.Payload) > int(g.PayLen) {
			t.Fatalf("truncated %v/%v payload %d PayLen %d", g.Truncated, df, len(g.Payload), g.PayLen)
		}
		if !g.Truncated {
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &g, gopacket.Payload(g.Payload)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), data[:GRHLen+int(g.PayLen)]) {
				t.Fatal("round trip")
			}
		}
	})
}

func FuzzICRCv2(f *testing.F) {
	for _, s := range roceSeeds(f) {
		f.Add(s.ip)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		crc, err := ICRCv2(data)
		if err != nil {
			return
		}
		c := bytes.Clone(data)
		if err := FixICRCv2(c); err != nil {
			t.Fatal(err)
		}
		if got, err := ICRCv2(c); err != nil || got != crc {
			t.Fatalf("after Fix: 0x%08x %v, want 0x%08x", got, err, crc)
		}
	})
}
