package srp

import "testing"

// BenchmarkDecode decodes the capture's SRP_CMD (immediate data write)
// and SRP_RSP.
func BenchmarkDecode(b *testing.B) {
	sends, _, _ := capture(b)
	cmd, rsp := sends[148].data, sends[23].data
	var m Message
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = m.DecodeFromBytes(cmd)
		_ = m.DecodeFromBytes(rsp)
	}
}
