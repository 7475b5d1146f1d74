package smbdirect

import "testing"

// FuzzDecode: whatever the bytes, no decoder panics, and what they return
// points inside the input.
func FuzzDecode(f *testing.F) {
	for fr := range realSends {
		f.Add(send(f, fr))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var q NegotiateRequest
		var r NegotiateResponse
		var d DataTransfer
		_ = q.DecodeFromBytes(b)
		_ = r.DecodeFromBytes(b)
		_ = LooksLikeNegotiateRequest(b)
		if d.DecodeFromBytes(b) == nil && uint32(len(d.Data)) != d.DataLength {
			t.Fatalf("data %d, DataLength %d", len(d.Data), d.DataLength)
		}
		for _, in := range [][]byte{b, d.Data} {
			var h Header
			ch := NewChain(in)
			for i := 0; ch.Next(&h) && i < 1000; i++ {
				var rw ReadWrite
				_ = rw.DecodeRead(&h)
				for j := 0; j < rw.ChannelInfo.Len(); j++ {
					_ = rw.ChannelInfo.At(j)
				}
				_ = rw.DecodeWrite(&h)
				_ = rw.ChannelInfo.Total()
				_, _ = SessionSetupChannel(&h)
				_, _ = ReadResponseDataLength(&h)
				_ = h.Command.String() + h.Status.String() + h.Flags.String()
			}
		}
	})
}
