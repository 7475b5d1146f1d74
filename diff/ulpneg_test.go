package diff

import (
	"fmt"
	"slices"
	"testing"
)

// TestISERMessage: an iSER Hello and HelloReply (RFC 7145 5.1.4: opcode
// in the high nibble of octet 0, MaxVer|MinVer or CurVer in octet 1, IRD
// or ORD in octets 2-3), made by hand — no iWARP iSER capture exists (LIO
// cannot serve iSER on siw) — and Login keys: the last value of a key
// kept, CHAP's left out, at most maxLoginKeys.
func TestISERMessage(t *testing.T) {
	c := NewCollector("x")
	s := &connState{}
	c.iserMessage(s, 0, []byte{0x20, 0xaa, 0x00, 0x10})
	c.iserMessage(s, 1, []byte{0x31, 0xaa, 0x00, 0x08}) // REJ set
	var got []Field
	neg := func(n string, v any) { got = append(got, Field{n, fmt.Sprint(v)}) }
	// An iSCSI Login Request (opcode 0x03) after the 28-octet iSER header
	// of a control message (RFC 7145 9.2, opcode 0x1): 48-octet BHS,
	// DataSegmentLength in octets 5-7 (RFC 7143 11.2), then the keys.
	login := func(keys string) []byte {
		b := make([]byte, 28+48)
		b[0] = 0x10
		b[28] = 0x03
		b[28+7] = byte(len(keys))
		return append(b, keys...)
	}
	c.iserMessage(s, 0, login("SessionType=Normal\x00CHAP_C=0x1234\x00MaxBurstLength=1\x00"))
	c.iserMessage(s, 0, login("MaxBurstLength=262144\x00"))
	ulpNegotiation(neg, ulpISER, s)
	want := []Field{{"iser.hello.max_version", "10"}, {"iser.hello.min_version", "10"}, {"iser.hello.ird", "16"},
		{"iser.hello_reply.max_version", "10"}, {"iser.hello_reply.reject", "true"}, {"iser.hello_reply.cur_version", "10"},
		{"iser.hello_reply.ord", "8"},
		{"iscsi.login.request.SessionType", "Normal"}, {"iscsi.login.request.MaxBurstLength", "262144"}}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for i := range 100 {
		c.iserMessage(s, 1, []byte{})
		b := login("K" + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "=1\x00")
		b[28] = 0x23 // Login Response
		c.iserMessage(s, 1, b)
	}
	if n := len(s.login[1]); n != maxLoginKeys {
		t.Errorf("%d keys kept, the bound is %d", n, maxLoginKeys)
	}
}

// FuzzISERMessage: whatever a Send of an iSER connection holds, keeping
// its Hello or Login keys never panics and keeps at most maxLoginKeys
// keys each way. Seeded with a Login Command built here after
// rxe-iser.pcap's frame 16 (an iSER control message, the BHS, the first
// two of its keys as tshark shows them) and a Hello and HelloReply as
// RFC 7145 5.1.4 lays them out.
func FuzzISERMessage(f *testing.F) {
	login := make([]byte, 28+48)
	login[0], login[28] = 0x10, 0x03
	keys := "InitiatorName=iqn.2026-11.lab:client\x00SessionType=Discovery\x00"
	login[28+7] = byte(len(keys))
	f.Add(append(login, keys...), uint8(0))
	f.Add([]byte{0x20, 0xaa, 0x00, 0x10}, uint8(0))
	f.Add([]byte{0x31, 0xaa, 0x00, 0x08}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, dir uint8) {
		c := NewCollector("fuzz")
		s := &connState{}
		d := int(dir & 1)
		for range 3 {
			c.iserMessage(s, d, data)
		}
		if len(s.login[d]) > maxLoginKeys {
			t.Fatalf("%d keys", len(s.login[d]))
		}
		ulpNegotiation(func(string, any) {}, ulpISER, s)
	})
}
