package iscsi

import "testing"

// FuzzMessage: seeded with every distinct Send of rxe-iser.pcap (cut to
// 1 KiB); no input panics, and what the decoder hands back stays inside
// its input.
func FuzzMessage(f *testing.F) {
	seen := map[string]bool{}
	for _, s := range captureSends(f) {
		b := s.data
		if len(b) > 1024 {
			b = b[:1024]
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if m.DecodeFromBytes(b) != nil {
			return
		}
		p := &m.PDU
		if m.ISER.Opcode != ISERControl {
			return
		}
		if len(p.AHS)+len(p.Data) > len(b) {
			t.Fatalf("AHS %d + data %d from %d octets", len(p.AHS), len(p.Data), len(b))
		}
		_, _ = p.BidiReadDataLength()
		_, _ = p.RejectedITT()
		_, _ = p.SenseLength()
		_, _, _ = p.CDB().LBA()
		_ = p.CDB().Name()
		for _, _, rest, ok := p.KeyValues().Next(); ok; _, _, rest, ok = rest.Next() {
		}
	})
}
