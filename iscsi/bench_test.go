package iscsi

import "testing"

// BenchmarkDecode: the Sends of rxe-iser.pcap, one after the other, into
// one reused Message.
func BenchmarkDecode(b *testing.B) {
	sends := captureSends(b)
	var m Message
	b.ReportAllocs()
	for b.Loop() {
		for i := range sends {
			_ = m.DecodeFromBytes(sends[i].data)
		}
	}
	b.ReportMetric(float64(len(sends)), "sends/op")
}
