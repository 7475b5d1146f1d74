package rfc8797

import (
	"bytes"
	"errors"
	"testing"
)

// realSeeds returns the private data of the real captures plus the
// hand-built edge cases, with the prefix a tracker would use.
func realSeeds(t testing.TB) []struct {
	pd     []byte
	prefix Prefix
} {
	seeds := []struct {
		pd     []byte
		prefix Prefix
	}{
		{rxeNFS3REQ(t), PrefixCMA},
		{rxeNFS3REP(t), PrefixNone},
		{siwNFS3MPAReq(t), PrefixMPAv2},
		{siwNFS3MPARep(t), PrefixMPAv2},
		{rxeRpingREQ(t), PrefixCMA},
		{ipoibCMREQ(t), PrefixNone},
		{ipv6Header, PrefixCMA},
		{cat(ipv6Header, ident, []byte{2, 0xff, 0, 0}), PrefixCMA},
		{cat([]byte{0, 0x80, 0, 0}, ident, []byte{1}), PrefixMPAv2},
		{ident[:3], PrefixNone},
		{nil, PrefixCMA},
	}
	for _, f := range []string{"rxe-nfs41.pcap", "siw-nfs41.pcap", "siw-rping.pcap", "public/montybeatnik-rdma-roce-lab-test.pcap"} {
		for _, p := range readSetupPD(t, f) {
			seeds = append(seeds, struct {
				pd     []byte
				prefix Prefix
			}{p.PD, prefixFor(p)})
		}
	}
	return seeds
}

func FuzzParse(f *testing.F) {
	for _, s := range realSeeds(f) {
		f.Add(s.pd, uint8(s.prefix))
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
	for _, s := range realSeeds(f) {
		if _, off, _ := Find(s.pd); off >= 0 {
			f.Add(s.pd[off:])
		}
		f.Add(s.pd)
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
