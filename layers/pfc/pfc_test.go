package pfc

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
)

// A PFC frame as IEEE 802.3 Annex 31D lays it out:
// opcode 0x0101, priority-enable vector 0x0009 (priorities 0 and 3),
// eight 2-octet times.
var pfcFrame = []byte{0x01, 0x01, 0x00, 0x09,
	0xff, 0xff, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0, 0}

func TestDecodePFC(t *testing.T) {
	var m MACControl
	if err := m.DecodeFromBytes(pfcFrame, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if m.Opcode != OpPFC || m.ClassEnable != 0x09 || m.Quanta[0] != 0xffff || m.Quanta[3] != 0x10 || m.Quanta[1] != 0 {
		t.Errorf("%+v", m)
	}
	if p := m.Paused(); !p[0] || p[1] || !p[3] || p[7] {
		t.Errorf("paused %v", p)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), pfcFrame) {
		t.Errorf("serialised % x", buf.Bytes())
	}
	for n := 0; n < len(pfcFrame); n++ {
		if err := m.DecodeFromBytes(pfcFrame[:n], gopacket.NilDecodeFeedback); err == nil {
			t.Errorf("%d octets decoded", n)
		}
	}
}

func TestDecodePause(t *testing.T) {
	var m MACControl
	if err := m.DecodeFromBytes([]byte{0x00, 0x01, 0x12, 0x34}, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if m.Opcode != OpPause || m.Quanta[0] != 0x1234 || !m.Paused()[5] {
		t.Errorf("%+v", m)
	}
}

func FuzzMACControl(f *testing.F) {
	f.Add(pfcFrame)
	f.Fuzz(func(t *testing.T, b []byte) {
		var m MACControl
		_ = m.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
	})
}
