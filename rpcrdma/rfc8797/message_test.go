package rfc8797

import (
	"bytes"
	"errors"
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"strings"
	"testing"
)

// ident is the Format Identifier in network byte order (RFC 8797 section 4).
var ident = pdtest.Ident

var cat = pdtest.Cat

func TestDecode(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want Message
		err  error
	}{
		{"R=1 4096/4096", cat(ident, []byte{1, 0x01, 3, 3}), Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}, nil},
		{"R=0 1024/262144", cat(ident, []byte{1, 0x00, 0, 255}), Message{Version: 1, SendSize: 0, ReceiveSize: 255}, nil},
		// Reserved bits set: receivers MUST ignore them (section 4): the
		// message stays valid, Reserved reports them, R is bit 0 only.
		{"reserved all set, R=0", cat(ident, []byte{1, 0xfe, 1, 2}), Message{Version: 1, Reserved: 0x7f, SendSize: 1, ReceiveSize: 2}, nil},
		{"reserved 0x40, R=1", cat(ident, []byte{1, 0x81, 1, 2}), Message{Version: 1, Reserved: 0x40, RemoteInvalidate: true, SendSize: 1, ReceiveSize: 2}, nil},
		{"trailing octets ignored", cat(ident, []byte{1, 1, 3, 3, 0xff, 0xff}), Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}, nil},
		{"version 2", cat(ident, []byte{2, 1, 3, 3}), Message{Version: 2, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}, ErrUnknownVersion},
		{"version 0", cat(ident, []byte{0, 0, 0, 0}), Message{}, ErrUnknownVersion},
		{"version 2, 5 octets", cat(ident, []byte{2}), Message{Version: 2}, ErrUnknownVersion},
		{"identifier only", ident, Message{}, ErrTruncated},
		{"7 octets", cat(ident, []byte{1, 1, 3}), Message{Version: 1, RemoteInvalidate: true, SendSize: 3}, ErrTruncated},
		{"not at 0", cat([]byte{0}, ident, []byte{1, 1, 3, 3}), Message{}, ErrAbsent},
		{"3 octets of identifier", ident[:3], Message{}, ErrAbsent},
		{"empty", nil, Message{}, ErrAbsent},
	}
	for _, c := range cases {
		m, err := Decode(c.b)
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
		}
		if m != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, m, c.want)
		}
		var u Message
		if err2 := u.UnmarshalBinary(c.b); u != m || !errors.Is(err2, c.err) {
			t.Errorf("%s: UnmarshalBinary %+v %v", c.name, u, err2)
		}
	}
}

func TestFind(t *testing.T) {
	msg := cat(ident, []byte{1, 1, 3, 3})
	for _, off := range []int{0, 1, 2, 3, 5, 7, 13, 36, 37, 84} {
		b := cat(make([]byte, off), msg, make([]byte, 3))
		m, got, err := Find(b)
		if err != nil || got != off || m.SendSize != 3 || !m.RemoteInvalidate {
			t.Errorf("offset %d: found at %d, %+v, %v", off, got, m, err)
		}
	}
	// Identifier split at the end of the data: absent.
	for n := 1; n < 4; n++ {
		b := cat(make([]byte, 10), ident[:n])
		if _, off, err := Find(b); !errors.Is(err, ErrAbsent) || off != -1 {
			t.Errorf("split after %d octets: %d %v", n, off, err)
		}
	}
	// Truncated after the identifier at an odd offset: the message
	// overruns the buffer (section 5.2).
	_, off, err := Find(cat([]byte{9, 9, 9}, ident, []byte{1, 0}))
	if !errors.Is(err, ErrTruncated) || off != 3 {
		t.Errorf("truncated: %d %v", off, err)
	}
	if !strings.Contains(err.Error(), "version 1 at offset 3 needs 8 octets, private data ends at 9") {
		t.Errorf("truncated message: %q", err)
	}
	_, _, err = Find(cat([]byte{9}, ident))
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "identifier at offset 1, private data ends at 5 before the version octet") {
		t.Errorf("identifier at the end: %v", err)
	}
	// Unknown version: report what was found, where.
	m, off, err := Find(cat(make([]byte, 36), ident, []byte{2, 0, 7, 7}))
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrUnknownVersion) || off != 36 || m.Version != 2 || fe.Version != 2 || fe.Offset != 36 {
		t.Fatalf("unknown version: %+v %d %v", m, off, err)
	}
	if !strings.Contains(err.Error(), "version 2 at offset 36") {
		t.Errorf("unknown version message: %q", err)
	}
	// The first occurrence counts, even when a valid one follows.
	_, off, err = Find(cat(ident, []byte{2, 0, 0, 0}, msg))
	if !errors.Is(err, ErrUnknownVersion) || off != 0 {
		t.Errorf("first occurrence: %d %v", off, err)
	}
	// Overlapping near-matches do not hide the identifier.
	_, off, err = Find(cat([]byte{0xf6, 0xf6, 0xab, 0x0e}, ident, []byte{1, 0, 0, 0}))
	if err != nil || off != 4 {
		t.Errorf("near match: %d %v", off, err)
	}
	if _, off, err := Find(nil); !errors.Is(err, ErrAbsent) || off != -1 {
		t.Errorf("nil: %d %v", off, err)
	}
	if _, _, err := Find(make([]byte, 92)); err == nil || !strings.Contains(err.Error(), "not found in octets 0..92") {
		t.Errorf("absent message: %v", err)
	}
}

func TestSizes(t *testing.T) {
	for _, c := range []struct {
		enc   uint8
		bytes int
	}{{0, 1024}, {1, 2048}, {3, 4096}, {31, 32768}, {255, 262144}} {
		if got := DecodeSize(c.enc); got != c.bytes {
			t.Errorf("DecodeSize(%d) = %d, want %d", c.enc, got, c.bytes)
		}
		if got, ok := EncodeSize(c.bytes); !ok || got != c.enc {
			t.Errorf("EncodeSize(%d) = %d %v", c.bytes, got, ok)
		}
	}
	m := Message{SendSize: 7, ReceiveSize: 255}
	if m.SendBytes() != 8192 || m.ReceiveBytes() != MaxSize {
		t.Errorf("SendBytes %d ReceiveBytes %d", m.SendBytes(), m.ReceiveBytes())
	}
	// "dividing its actual buffer size, in octets, by 1024 and
	// subtracting one": a 2047-octet buffer can only promise 1024.
	if got, ok := EncodeSize(2047); !ok || got != 0 {
		t.Errorf("EncodeSize(2047) = %d %v", got, ok)
	}
	for _, n := range []int{-1, 0, 1023, 256*1024 + 1024} {
		if _, ok := EncodeSize(n); ok {
			t.Errorf("EncodeSize(%d) accepted", n)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Version: 1},
		{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3},
		{Version: 1, Reserved: 0x7f, SendSize: 255, ReceiveSize: 0},
		{Version: 1, Reserved: 0x15, RemoteInvalidate: true, SendSize: 0x80, ReceiveSize: 0x7f},
	} {
		b, err := m.MarshalBinary()
		if err != nil || len(b) != MessageLen || !bytes.Equal(b[:4], ident) {
			t.Fatalf("%+v: %x %v", m, b, err)
		}
		got, err := Decode(b)
		if err != nil || got != m {
			t.Errorf("round trip %+v -> %x -> %+v %v", m, b, got, err)
		}
	}
	// The real client message encodes to the capture's octets.
	b, _ := (Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}).AppendBinary([]byte{0xee})
	if !bytes.Equal(b, []byte{0xee, 0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3}) {
		t.Errorf("AppendBinary = %x", b)
	}
	// Unknown versions encode as given (for building test data).
	b, _ = (Message{Version: 2}).MarshalBinary()
	if b[4] != 2 {
		t.Errorf("version 2 encoded as %x", b)
	}
	if _, err := (Message{Version: 1, Reserved: 0x80}).MarshalBinary(); err == nil {
		t.Error("8-bit Reserved encoded")
	}
	if s := (Message{Version: 1, RemoteInvalidate: true, SendSize: 3, ReceiveSize: 3}).String(); s != "v1 R=1 send=4096 recv=4096" {
		t.Errorf("String = %q", s)
	}
	if s := (Message{Version: 1, Reserved: 1}).String(); s != "v1 R=0 send=1024 recv=1024 reserved=0x01" {
		t.Errorf("String = %q", s)
	}
}
