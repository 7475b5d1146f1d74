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
