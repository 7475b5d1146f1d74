package rfc8797

import (
	"bytes"
	"errors"
	"github.com/rdmashark/rdmashark/internal/pdtest"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range pdtest.Seeds(f, pcapDir) {
		f.Add(s.PD, s.Prefix)
	}
	f.Fuzz(func(t *testing.T, pd []byte, prefix uint8) {
		in := bytes.Clone(pd)
		r := Parse(pd, Prefix(prefix%4))
		if !bytes.Equal(in, pd) {
			t.Fatal("Parse modified its input")
		}
		if r.Start < 0 || r.Start > len(pd) || r.Len != len(pd) {
			t.Fatalf("start %d len %d of %d", r.Start, r.Len, len(pd))
		}
		switch {
		case r.Err == nil:
			if r.Offset < r.Start || r.Offset+MessageLen > len(pd) {
				t.Fatalf("valid message at %d (start %d) in %d octets", r.Offset, r.Start, len(pd))
			}
			// The message re-encodes to the octets it came from.
			b, err := r.Message.MarshalBinary()
			if err != nil || !bytes.Equal(b, pd[r.Offset:r.Offset+MessageLen]) {
				t.Fatalf("re-encoded %x, input %x (%v)", b, pd[r.Offset:r.Offset+MessageLen], err)
			}
			if r.Message.Version != Version1 || r.Peer() == nil {
				t.Fatalf("valid message of version %v", r.Message.Version)
			}
		case errors.Is(r.Err, ErrAbsent):
			if r.Offset != -1 || bytes.Contains(pd[r.Start:], ident) {
				t.Fatalf("absent, but offset %d", r.Offset)
			}
		case errors.Is(r.Err, ErrTruncated), errors.Is(r.Err, ErrUnknownVersion):
			if r.Offset < r.Start || !bytes.Equal(pd[r.Offset:r.Offset+4], ident) {
				t.Fatalf("%v at %d", r.Err, r.Offset)
			}
			if errors.Is(r.Err, ErrTruncated) && len(pd)-r.Offset >= MessageLen {
				t.Fatalf("truncated with %d octets after the identifier", len(pd)-r.Offset)
			}
		default:
			t.Fatalf("unexpected error %v", r.Err)
		}
		if r.Err != nil && (r.Reason() == "" || r.Peer() != nil) {
			t.Fatal("problem without reason, or with a peer")
		}
		// The identifier found is the first one after Start.
		if r.Offset >= 0 && bytes.Index(pd[r.Start:], ident)+r.Start != r.Offset {
			t.Fatalf("offset %d is not the first occurrence", r.Offset)
		}
		// Find agrees with Parse when there is no prefix.
		if Prefix(prefix%4) == PrefixNone {
			m, off, err := Find(pd)
			if off != r.Offset || m != r.Message || !errors.Is(err, r.Err) && (err != nil || r.Err != nil) {
				t.Fatalf("Find %+v %d %v, Parse %+v %d %v", m, off, err, r.Message, r.Offset, r.Err)
			}
		}
		_ = r.CMAProblem()
		_ = Negotiate(r.Peer(), &r.Message)
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range pdtest.Seeds(f, pcapDir) {
		if _, off, _ := Find(s.PD); off >= 0 {
			f.Add(s.PD[off:])
		}
		f.Add(s.PD)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := m.MarshalBinary()
		if err != nil || !bytes.Equal(enc, b[:MessageLen]) {
			t.Fatalf("re-encoded %x, input %x (%v)", enc, b[:min(len(b), MessageLen)], err)
		}
	})
}
