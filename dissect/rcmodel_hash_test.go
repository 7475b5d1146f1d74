package dissect

import (
	"testing"

	"github.com/rdmashark/rdmashark/layers/roce"
)

// TestPacketHash: packetHash is the same for the same opcode, extension
// headers and payload, and differs when any of them differs (a byte of the
// payload, the RETH's fields, the opcode, the payload's length), so that
// RETRANS-DIFFERS tells a faithful resend from a different one.
func TestPacketHash(t *testing.T) {
	payload := make([]byte, 4096)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	mk := func() roce.BTH {
		var h roce.BTH
		h.OpCode = roce.OpRCRDMAWriteFirst
		h.Ext = roce.ExtRETH
		h.RETH.VA, h.RETH.RKey, h.RETH.DMALen = 0x1122334455667788, 0xabcd, 8192
		h.Payload = append([]byte(nil), payload...)
		return h
	}
	base := mk()
	want := packetHash(&base)
	again := mk()
	if got := packetHash(&again); got != want {
		t.Fatalf("same packet: %#x, then %#x", want, got)
	}
	again.PSN, again.DestQP = 99, 7 // not what a resend must repeat
	if got := packetHash(&again); got != want {
		t.Errorf("PSN and QP changed the hash")
	}
	for name, change := range map[string]func(h *roce.BTH){
		"first payload byte": func(h *roce.BTH) { h.Payload[0]++ },
		"middle byte":        func(h *roce.BTH) { h.Payload[2000] ^= 0x10 },
		"last byte":          func(h *roce.BTH) { h.Payload[4095]++ },
		"shorter payload":    func(h *roce.BTH) { h.Payload = h.Payload[:4095] },
		"no payload":         func(h *roce.BTH) { h.Payload = nil },
		"VA":                 func(h *roce.BTH) { h.RETH.VA++ },
		"R_Key":              func(h *roce.BTH) { h.RETH.RKey ^= 1 << 31 },
		"DMA length":         func(h *roce.BTH) { h.RETH.DMALen-- },
		"opcode":             func(h *roce.BTH) { h.OpCode = roce.OpRCRDMAWriteOnly },
		"no RETH":            func(h *roce.BTH) { h.Ext = 0 },
	} {
		h := mk()
		change(&h)
		if got := packetHash(&h); got>>16 == want>>16 {
			t.Errorf("%s: hash unchanged in the 48 bits histHash keeps (%#x)", name, got)
		}
	}
}

// BenchmarkPacketHash: one 4 KB RDMA Write First, as an NFS WRITE's data.
func BenchmarkPacketHash(b *testing.B) {
	var h roce.BTH
	h.OpCode, h.Ext = roce.OpRCRDMAWriteFirst, roce.ExtRETH
	h.Payload = make([]byte, 4096)
	b.SetBytes(int64(len(h.Payload)))
	var sink uint64
	for b.Loop() {
		sink += packetHash(&h)
	}
	_ = sink
}
