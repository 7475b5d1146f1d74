package srp_test

import (
	"encoding/binary"
	"slices"
	"sort"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
	"github.com/rdmashark/rdmashark/layers/roce"
)

// Offsets in the RoCEv2 frames of rxe-srp.pcap (Ethernet, IPv4 without
// options, UDP, BTH): an RC packet's payload — a Send's IU, or an RDMA
// Write's RETH — starts at 54; a CM MAD after its 8-octet DETH at 62, the
// REP's private data (the SRP_LOGIN_RSP) 60 octets into it.
const (
	payloadOff = 14 + 20 + 8 + 12
	repOff     = payloadOff + 8 + 60
)

// Frames of rxe-srp.pcap the mutations touch (read with tshark:
// testdata/tshark/srp/*.tsv).
const (
	frameREQ        = 15  // CM REQ: the SRP_LOGIN_REQ
	frameREP        = 16  // CM REP: the SRP_LOGIN_RSP
	frameWriteInq   = 22  // RDMA Write Only: INQUIRY tag 0's 36 octets, R_Key 0x357
	frameWriteTag2  = 34  // RDMA Write Only: INQUIRY tag 2's 4 octets, R_Key 0x359
	frameImmWrite   = 148 // last packet of the first 4 KiB write with immediate data
	frameWrite48K   = 208 // SRP_CMD WRITE(10) tag 3, 48 KiB by a data-out descriptor
	frameWrite16K   = 209 // SRP_CMD WRITE(10) tag 4, 16 KiB, sent while tag 3 is outstanding
	frameLastRsp    = 869 // the last SRP_RSP (tag 3)
	inquiry1VA      = 0xff1dd256c2d0a600
	inquiry1RKey    = 0x358 // INQUIRY tag 1's (96 octets; answered at frame 29)
	immediateWrites = 8
)

// mutate writes a copy of rxe-srp.pcap with f applied to its frames (by
// number) and the ICRC of each frame it changed recomputed, and returns
// the rule IDs found (errors and warnings) with their packets.
func mutate(t *testing.T, f func(frame map[int][]byte)) map[string][]int {
	t.Helper()
	out, _ := mutateFindings(t, f)
	return out
}

// mutateFindings is mutate, with the findings themselves.
func mutateFindings(t *testing.T, f func(frame map[int][]byte)) (map[string][]int, []check.Finding) {
	t.Helper()
	lt, frames := pcaptest.Read(t, "../../testdata/pcaps/ulp/rxe-srp.pcap")
	byNum := map[int][]byte{}
	orig := map[int][]byte{}
	for i := range frames {
		byNum[frames[i].Num] = frames[i].Data
		orig[frames[i].Num] = slices.Clone(frames[i].Data)
	}
	f(byNum)
	for n, b := range byNum {
		if !slices.Equal(b, orig[n]) {
			if err := roce.FixICRCv2(b[14:]); err != nil {
				t.Fatalf("frame %d: %v", n, err)
			}
		}
	}
	_, _, res := run(t, pcaptest.Write(t, lt, frames))
	out := map[string][]int{}
	for _, fd := range res.Findings {
		if fd.Severity >= check.Warning {
			out[fd.Rule] = append(out[fd.Rule], fd.Packets...)
		}
	}
	for _, v := range out {
		sort.Ints(v)
	}
	return out, res.Findings
}

var be = binary.BigEndian

// TestRulesFindWhatBreaksThem: each rule against the real capture with
// one thing changed that breaks it; the rule names the packets that show
// it, and (but where a change breaks several rules at once, listed) no
// other rule finds anything.
func TestRulesFindWhatBreaksThem(t *testing.T) {
	cases := []struct {
		name   string
		rule   string
		f      func(frame map[int][]byte)
		want   []int    // packets the rule must name (all of them)
		others []string // other rules the change breaks too
	}{
		{"the REP grants a larger IU than the REQ asked", "SRP-LOGIN", func(fr map[int][]byte) {
			be.PutUint32(fr[frameREP][repOff+16:], 9000) // MAXIMUM INITIATOR TO TARGET IU LENGTH
		}, []int{frameREQ, frameREP}, nil},
		{"the REP's tag is not the REQ's", "SRP-LOGIN", func(fr map[int][]byte) {
			fr[frameREP][repOff+8] = 0x55
		}, []int{frameREQ, frameREP}, nil},
		{"the REP grants 4096-octet IUs: the immediate-data writes are longer", "SRP-IU-LENGTH", func(fr map[int][]byte) {
			be.PutUint32(fr[frameREP][repOff+16:], 4096)
		}, nil, nil},
		{"the REP grants one credit: the second of two writes goes beyond it", "SRP-REQUEST-LIMIT", func(fr map[int][]byte) {
			be.PutUint32(fr[frameREP][repOff+4:], 1) // REQUEST LIMIT DELTA
		}, []int{frameWrite16K}, nil},
		{"the REP does not say IMMEDIATE DATA SUPPORTED", "SRP-BUFFER-FORMAT", func(fr map[int][]byte) {
			fr[frameREP][repOff+26] = 0
		}, []int{frameImmWrite}, nil},
		{"an RDMA Write 16 octets past the INQUIRY's descriptor", "SRP-RDMA-BOUNDS", func(fr map[int][]byte) {
			b := fr[frameWriteInq][payloadOff:]
			be.PutUint64(b, be.Uint64(b)+16)
		}, []int{frameWriteInq}, nil},
		{"an RDMA Write into the memory of an INQUIRY already answered", "SRP-RDMA-AFTER-RESPONSE", func(fr map[int][]byte) {
			b := fr[frameWriteTag2][payloadOff:]
			be.PutUint64(b, inquiry1VA)
			be.PutUint32(b[8:], inquiry1RKey)
		}, []int{29, frameWriteTag2}, nil},
		{"the last SRP_RSP carries a tag no command has", "SRP-RESPONSE-UNMATCHED", func(fr map[int][]byte) {
			fr[frameLastRsp][payloadOff+8] = 0x7f
		}, []int{frameLastRsp}, nil},
		// The second write taking the first's tag also leaves the
		// first's RDMA Read after its "end" and the second's response
		// without its command.
		{"a write reuses the tag of the one still outstanding", "SRP-TAG-IN-USE", func(fr map[int][]byte) {
			fr[frameWrite16K][payloadOff+8] = 0x03
		}, []int{frameWrite48K, frameWrite16K}, []string{"SRP-RDMA-AFTER-RESPONSE", "SRP-RESPONSE-UNMATCHED"}},
	}
	for _, tc := range cases {
		got := mutate(t, tc.f)
		pk, ok := got[tc.rule]
		if !ok {
			t.Errorf("%s: no %s finding; findings %v", tc.name, tc.rule, got)
			continue
		}
		for _, p := range tc.want {
			if !slices.Contains(pk, p) {
				t.Errorf("%s: %s names packets %v, not %d", tc.name, tc.rule, pk, p)
			}
		}
		for r := range got {
			if r != tc.rule && !slices.Contains(tc.others, r) {
				t.Errorf("%s: %s found too: %v", tc.name, r, got[r])
			}
		}
	}
	// SRP-IU-LENGTH names every Send of the immediate-data writes (five
	// packets each).
	got := mutate(t, func(fr map[int][]byte) { be.PutUint32(fr[frameREP][repOff+16:], 4096) })
	if n := len(got["SRP-IU-LENGTH"]); n != immediateWrites*5 {
		t.Errorf("SRP-IU-LENGTH: %d packets, want %d", n, immediateWrites*5)
	}
}

// TestAfterResponseNamesTheCommand: the finding of an RDMA Write into
// the memory of a command already answered names that command by its tag
// (the INQUIRY with tag 1, answered at packet 29).
func TestAfterResponseNamesTheCommand(t *testing.T) {
	_, fs := mutateFindings(t, func(fr map[int][]byte) {
		b := fr[frameWriteTag2][payloadOff:]
		be.PutUint64(b, inquiry1VA)
		be.PutUint32(b[8:], inquiry1RKey)
	})
	for _, f := range fs {
		if f.Rule == "SRP-RDMA-AFTER-RESPONSE" {
			if f.Exchange != "tag:0x0100000000000000" {
				t.Errorf("exchange %q: %s", f.Exchange, f.Message)
			}
			return
		}
	}
	t.Error("no SRP-RDMA-AFTER-RESPONSE finding")
}

// TestHealthyCaptureUnchangedByMutate: the harness itself (ICRCs
// recomputed, the frames written back) finds nothing on an unchanged
// capture.
func TestHealthyCaptureUnchangedByMutate(t *testing.T) {
	if got := mutate(t, func(map[int][]byte) {}); len(got) != 0 {
		t.Errorf("findings: %v", got)
	}
}
