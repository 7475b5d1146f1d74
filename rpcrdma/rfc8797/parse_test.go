package rfc8797

import (
	"errors"
	"strings"
	"testing"
)

func TestParseEdgeCases(t *testing.T) {
	hdr := rxeNFS3REQ(t)[:CMAHeaderLen]
	v1 := cat(ident, []byte{1, 1, 3, 3})
	cases := []struct {
		name   string
		pd     []byte
		prefix Prefix
		cmaErr error
		start  int
		offset int
		err    error
		reason string
	}{
		{"empty, none", nil, PrefixNone, nil, 0, -1, ErrAbsent, "not found in octets 0..0 of 0"},
		{"empty, CMA", nil, PrefixCMA, ErrCMATruncated, 0, -1, ErrAbsent, ""},
		{"empty, MPA", []byte{}, PrefixMPAv2, nil, 0, -1, ErrAbsent, ""},
		{"MPA 3 octets", []byte{0, 0x80, 0}, PrefixMPAv2, nil, 3, -1, ErrAbsent, ""},
		{"MPA IRD/ORD only", []byte{0, 0x80, 0, 0}, PrefixMPAv2, nil, 4, -1, ErrAbsent, ""},
		{"MPA truncated after identifier", cat([]byte{0, 0x80, 0, 0}, ident), PrefixMPAv2, nil, 4, 4, ErrTruncated,
			"identifier at offset 4, private data ends at 8"},
		{"CMA then message", cat(hdr, v1), PrefixCMA, nil, 36, 36, nil, ""},
		{"CMA then message at odd offset", cat(hdr, []byte{0, 0, 0}, v1), PrefixCMA, nil, 36, 39, nil, ""},
		// Unknown version after the CMA header: what a conformance check
		// reports as "version 2 at offset 36".
		{"CMA then version 2", cat(hdr, ident, []byte{2, 1, 3, 3}), PrefixCMA, nil, 36, 36, ErrUnknownVersion,
			"version 2 at offset 36"},
		{"CMA then truncated", cat(hdr, ident, []byte{1, 1}), PrefixCMA, nil, 36, 36, ErrTruncated,
			"version 1 at offset 36 needs 8 octets, private data ends at 42"},
		// The identifier split across the end of the header: the consumer
		// data starts at 36, so it is not there.
		{"identifier straddles header end", cat(hdr[:34], ident, []byte{1, 1, 3, 3}), PrefixCMA, nil, 36, -1, ErrAbsent, ""},
		{"identifier split at end", cat(hdr, make([]byte, 10), ident[:2]), PrefixCMA, nil, 36, -1, ErrAbsent,
			"not found in octets 36..48 of 48"},
		// AF_IB addressing: no header, message at 0 of a REQ under an IP
		// CM service ID: the header check fails, the search starts at 0.
		{"no header after all", cat(v1, make([]byte, 84)), PrefixCMA, ErrCMAVersion, 0, 0, nil, ""},
		// An identifier inside the header (here: src_addr) is not searched.
		{"identifier in address", cat(hdr[:4], ident, hdr[8:]), PrefixCMA, nil, 36, -1, ErrAbsent, ""},
		{"unknown prefix value", v1, Prefix(9), nil, 0, 0, nil, ""},
	}
	for _, c := range cases {
		r := Parse(c.pd, c.prefix)
		if !errors.Is(r.CMAErr, c.cmaErr) || (c.cmaErr == nil) != (r.CMAErr == nil) {
			t.Errorf("%s: CMAErr %v, want %v", c.name, r.CMAErr, c.cmaErr)
		}
		if r.Start != c.start || r.Offset != c.offset || r.Err != c.err || r.Len != len(c.pd) || r.Prefix != c.prefix {
			t.Errorf("%s: start %d offset %d err %v len %d, want %d %d %v %d", c.name, r.Start, r.Offset, r.Err, r.Len,
				c.start, c.offset, c.err, len(c.pd))
		}
		if r.Valid() != (c.err == nil) || (r.Peer() != nil) != (c.err == nil) {
			t.Errorf("%s: Valid %v Peer %v", c.name, r.Valid(), r.Peer())
		}
		if !strings.Contains(r.Reason(), c.reason) || (c.err == nil) != (r.Reason() == "") {
			t.Errorf("%s: reason %q, want %q", c.name, r.Reason(), c.reason)
		}
		if c.err != nil && !errors.Is(r.Problem(), c.err) {
			t.Errorf("%s: Problem %v", c.name, r.Problem())
		}
		if (c.cmaErr == nil) != (r.CMAProblem() == nil) {
			t.Errorf("%s: CMAProblem %v", c.name, r.CMAProblem())
		}
	}
	// Peer points at the Result's own message.
	r := Parse(cat(hdr, v1), PrefixCMA)
	if p := r.Peer(); p == nil || *p != r.Message {
		t.Errorf("Peer %v", p)
	}
	if r := Parse(hdr[:20], PrefixCMA); !strings.Contains(r.CMAProblem().Error(), "fewer than 36 octets (20 octets") {
		t.Errorf("CMAProblem %v", r.CMAProblem())
	}
}

func TestPrefixString(t *testing.T) {
	for p, s := range map[Prefix]string{PrefixNone: "none", PrefixCMA: "RDMA-CM IP header", PrefixMPAv2: "MPA v2 IRD/ORD", 7: "Prefix(7)"} {
		if p.String() != s {
			t.Errorf("%d: %q", p, p.String())
		}
	}
}

func TestParseKeepsNoReference(t *testing.T) {
	pd := rxeNFS3REQ(t)
	r := Parse(pd, PrefixCMA)
	want := r
	for i := range pd {
		pd[i] = 0xff
	}
	if r != want || r.Message.SendSize != 3 {
		t.Errorf("result changed with its input: %+v", r)
	}
}

func TestParseAllocs(t *testing.T) {
	inputs := [][]byte{rxeNFS3REQ(t), rxeNFS3REP(t), rxeRpingREQ(t), cat(rxeNFS3REQ(t)[:36], ident, []byte{2}), nil}
	for _, pd := range inputs {
		for _, prefix := range []Prefix{PrefixNone, PrefixCMA, PrefixMPAv2} {
			var r Result
			if n := testing.AllocsPerRun(100, func() { r = Parse(pd, prefix) }); n != 0 {
				t.Errorf("Parse(%x..., %v): %v allocations", pd[:min(8, len(pd))], prefix, n)
			}
			_ = r
		}
	}
}

var benchSink Result

func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		name   string
		pd     []byte
		prefix Prefix
	}{
		{"RoCE-REQ", rxeNFS3REQ(b), PrefixCMA},
		{"RoCE-REP", rxeNFS3REP(b), PrefixNone},
		{"MPA", siwNFS3MPAReq(b), PrefixMPAv2},
		{"rping-absent", rxeRpingREQ(b), PrefixCMA},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.pd)))
			for b.Loop() {
				benchSink = Parse(c.pd, c.prefix)
			}
		})
	}
}
