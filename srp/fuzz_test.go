package srp

import "testing"

// FuzzDecode: whatever the bytes, no decoder panics, and what they return
// points inside the input. Seeded with the real capture's login and IUs.
func FuzzDecode(f *testing.F) {
	sends, req, rep := capture(f)
	f.Add(req)
	f.Add(rep)
	for _, fr := range []int{20, 23, 148, 208} {
		f.Add(sends[fr].data)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if err := m.DecodeFromBytes(b); FixedOK(err) && len(b) > 0 {
			_ = m.Opcode.String() + m.Response.Status.String() + m.Response.Flags.String() + m.Reason.String() +
				m.TaskManagement.Function.String() + m.LoginReject.Reason.String() + m.Login.Flags.String()
			c := &m.Command
			if m.Opcode == OpCmd {
				if c.Len > len(b) {
					t.Fatalf("descriptors end at %d of %d", c.Len, len(b))
				}
				for _, bf := range []*Buffer{&c.DataOut, &c.DataIn} {
					for i := 0; i < bf.List.Len(); i++ {
						_ = bf.List.At(i)
					}
					_ = bf.Length()
					_ = bf.Format.String()
				}
				for _, off := range []uint16{0, 68, uint16(len(b))} {
					if d, ok := c.ImmediateData(b, off); ok && len(d) > len(b)-int(off) {
						t.Fatalf("immediate data of %d octets at %d in %d", len(d), off, len(b))
					}
				}
			}
			if m.Opcode == OpRsp && len(m.Response.ResponseData)+len(m.Response.SenseData) > len(b) {
				t.Fatal("response data beyond the IU")
			}
		}
		var l LoginRequest
		if l.DecodeRDMACM(b) == nil {
			_ = l.Plausible()
		}
		_ = l.DecodeFromBytes(b)
		var r LoginResponse
		if r.DecodeFromBytes(b) == nil {
			_ = r.Flags.String() + r.SupportedBufferFormats.String()
		}
	})
}
