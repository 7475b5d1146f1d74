package main

import (
	"bytes"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// rawLoss is what a hand reader of a RoCEv2 RC capture sees without the
// engine: by frame number, the requests whose PSN an earlier request of the
// same flow already consumed (retransmitted), the PSNs skipped just before
// a request (gaps), and the NAKs (AETH syndrome 01 RNR NAK or 11 NAK, IBA
// 9.7.5.2.2; not 00, ACK).
type rawLoss struct {
	retrans map[int]bool
	gaps    map[int]uint32
	naks    map[int]bool
}

// readRawLoss parses Ethernet, IPv4, UDP 4791, BTH (RETH for the length of
// RDMA Read Requests, which consume ceil(length/PMTU) PSNs, IBA 9.7.1.1,
// the PMTU being the largest MIDDLE payload, 9.4.1; AETH for the syndrome)
// from the pcap bytes.
func readRawLoss(t *testing.T, path string) rawLoss {
	t.Helper()
	_, frames := pcaptest.Read(t, path)
	type flow struct {
		src  netip.Addr
		dqpn uint32
	}
	type pkt struct {
		num    int
		f      flow
		op     byte
		psn    uint32
		dmaLen uint32
		syn    byte
		aeth   bool
	}
	var pkts []pkt
	pmtu := 0
	for _, fr := range frames {
		r, ok := pcaptest.ParseRoCEv2(fr.Data)
		if !ok || !r.RC() {
			continue
		}
		p := pkt{num: fr.Num, f: flow{r.Src, r.DestQP}, op: r.OpCode, psn: r.PSN}
		var aeth bool
		p.dmaLen, _ = r.DMALength()
		p.syn, aeth = r.Syndrome()
		p.aeth = aeth
		if r.Middle() { // one PMTU
			pmtu = max(pmtu, r.PayloadLength())
		}
		pkts = append(pkts, p)
	}
	if pmtu == 0 {
		t.Fatalf("%s: no MIDDLE packet tells the PMTU", path)
	}
	const mask, half = 1<<24 - 1, 1 << 23
	out := rawLoss{retrans: map[int]bool{}, gaps: map[int]uint32{}, naks: map[int]bool{}}
	consumed := map[flow]map[uint32]bool{}
	next := map[flow]uint32{}
	for _, p := range pkts {
		switch {
		case p.op >= 0x0d && p.op <= 0x12: // Read Responses, ACKs, Atomic ACKs
			if p.aeth && (p.syn>>5 == 1 || p.syn>>5 == 3) {
				out.naks[p.num] = true
			}
		case p.op <= 0x17:
			s := consumed[p.f]
			if s == nil {
				s = map[uint32]bool{}
				consumed[p.f] = s
				next[p.f] = p.psn
			}
			if s[p.psn] {
				out.retrans[p.num] = true
			}
			n := uint32(1)
			if p.op == 0x0c {
				n = max(1, (p.dmaLen+uint32(pmtu)-1)/uint32(pmtu))
			}
			if fwd := (p.psn - next[p.f]) & mask; fwd < half {
				if fwd > 0 {
					out.gaps[p.num] = fwd
				}
				next[p.f] = (p.psn + n) & mask
			}
			for i := range n {
				s[(p.psn+i)&mask] = true
			}
		}
	}
	return out
}

// TestLossFilters runs display filters on the loss fields
// (rdmashark.analysis.*, dissect/fields_analysis.go) with `rdmashark
// dissect -Y` on a lossy capture and requires exactly the frames (and gap
// sizes) a hand reader of the PSNs finds.
func TestLossFilters(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "pcaps", "lossy", "rxe-ib_write_bw-lossy.pcap")
	raw := readRawLoss(t, path)
	lines := func(nums []int, value func(int) string) []string {
		slices.Sort(nums)
		out := make([]string, len(nums))
		for i, n := range nums {
			out[i] = fmt.Sprint(n)
			if value != nil {
				out[i] += "\t" + value(n)
			}
		}
		return out
	}
	var freshGaps []int
	for n := range raw.gaps {
		if !raw.retrans[n] {
			freshGaps = append(freshGaps, n)
		}
	}
	for _, tc := range []struct {
		filter string
		field  string
		want   []string
	}{
		{"rdmashark.analysis.retransmission", "", lines(slices.Collect(maps.Keys(raw.retrans)), nil)},
		{"rdmashark.analysis.nak", "", lines(slices.Collect(maps.Keys(raw.naks)), nil)},
		{"rdmashark.analysis.lost_segment > 0", "rdmashark.analysis.lost_segment",
			lines(slices.Collect(maps.Keys(raw.gaps)), func(n int) string { return fmt.Sprint(raw.gaps[n]) })},
		{"rdmashark.analysis.lost_segment && !rdmashark.analysis.retransmission", "", lines(freshGaps, nil)},
	} {
		if len(tc.want) == 0 {
			t.Fatalf("%q: the hand reader selects nothing: the capture shows no loss", tc.filter)
		}
		args := []string{"dissect", "-Y", tc.filter, "-T", "fields", "-e", "frame.number"}
		if tc.field != "" {
			args = append(args, "-e", tc.field)
		}
		var out, errOut bytes.Buffer
		if code := run(append(args, path), nil, &out, &errOut); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.filter, code, errOut.String())
		}
		got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %d frames selected, the hand reader finds %d\n got %.300q\nwant %.300q", tc.filter, len(got), len(tc.want), got, tc.want)
		} else {
			t.Logf("%q: %d frames", tc.filter, len(got))
		}
	}
}
