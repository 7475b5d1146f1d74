package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// errorRules returns the rules with error findings.
func errorRules(res *Result) []string {
	var ids []string
	for _, f := range res.Findings {
		if f.Severity == Error && !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestLossyCapturesNoNewErrors: the lossy captures (Linux rxe and siw under
// netem loss, every workload completed) show no error the loss-free capture
// of the same workload lacks: go-back-N replays are not RDMA after the
// Reply, not second messages, not differing retransmissions; every NAK
// PSN sequence error was recovered.
func TestLossyCapturesNoNewErrors(t *testing.T) {
	pairs := [][2]string{
		{"lossy/rxe-nfs3-lossy.pcap", "rxe-nfs3.pcap"},
		{"lossy/rxe-ib_write_bw-lossy.pcap", "rxe-ib_write_bw.pcap"},
		{"lossy/rxe-ib_read_bw-lossy.pcap", ""}, // no loss-free rxe ib_read_bw: no error at all
		{"lossy/siw-nfs3-lossy.pcap", "siw-nfs3.pcap"},
		{"lossy/siw-ib_write_bw-lossy.pcap", ""},
		// The lab's reordering, duplication and 5% loss (testdata/pcaps/README.md).
		{"lossy/rxe-ib_read_bw-loss5.pcap", ""},
		{"lossy/rxe-ib_read_bw-dup.pcap", ""},
		{"lossy/rxe-ib_write_bw-reorder.pcap", "rxe-ib_write_bw.pcap"},
		{"lossy/rxe-nfs3-lossreorder.pcap", "rxe-nfs3.pcap"},
		{"lossy/siw-ib_write_bw-reorder.pcap", ""},
		// The third round (docs/loss.md): netem "corrupt 1%".
		{"lossy/rxe-nfs3-corrupt.pcap", "rxe-nfs3.pcap"},
		{"lossy/siw-nfs3-reorder.pcap", "siw-nfs3.pcap"},
		{"lossy/rxe-nfs3-loss5.pcap", "rxe-nfs3.pcap"},
		{"lossy/siw-nfs3-corrupt.pcap", "siw-nfs3.pcap"},
		{"lossy/rxe-nfs41-loss3.pcap", "rxe-nfs41.pcap"},
		{"lossy/rxe-nfs3-dup.pcap", "rxe-nfs3.pcap"},
		{"lossy/rxe-ib_send_bw-loss3.pcap", "rxe-ib_send_bw.pcap"},
		{"lossy/siw-ib_read_bw-loss2.pcap", "siw-ib_read_bw.pcap"},
		{"lossy/rxe-nfs3-mixed.pcap", "rxe-nfs3.pcap"},
		{"lossy/siw-nfs41-loss2.pcap", "siw-nfs41.pcap"},
		{"lossy/siw-ib_write_bw-corrupt.pcap", ""},
	}
	for _, p := range pairs {
		lossy := runFile(t, "../testdata/pcaps/"+p[0], Config{})
		var base []string
		if p[1] != "" {
			base = errorRules(runFile(t, "../testdata/pcaps/"+p[1], Config{}))
		}
		var frames []pcaptest.Frame
		for _, id := range errorRules(lossy) {
			if !slices.Contains(base, id) {
				if id == "ICRC-BAD" {
					// On the wire (netem corrupted the frames): allowed
					// on exactly the frames whose ICRC is bad by hand.
					if frames == nil {
						_, frames = pcaptest.Read(t, "../testdata/pcaps/"+p[0])
					}
					checkICRCBadByHand(t, p[0], lossy, frames)
					continue
				}
				if id == "TCP-CHECKSUM-BAD" {
					// On the wire as well: allowed on exactly the frames
					// tshark finds a bad checksum in.
					checkTCPBadAsTshark(t, p[0], lossy)
					continue
				}
				for _, f := range lossy.Findings {
					if f.Rule == id && id == "RETRANS-DIFFERS" && f.Severity == Error {
						// Allowed only where the wire says so: read the two
						// frames by hand.
						if frames == nil {
							_, frames = pcaptest.Read(t, "../testdata/pcaps/"+p[0])
						}
						if ok, why := rawResendDiffers(frames, f.Packets); !ok {
							t.Errorf("%s: RETRANS-DIFFERS %v not borne out by the raw frames: %s", p[0], f.Packets, why)
						} else {
							t.Logf("%s: RETRANS-DIFFERS %v is on the wire: %s", p[0], f.Packets, why)
						}
						continue
					}
					if f.Rule == id {
						t.Errorf("%s: %s error the loss-free capture lacks: %v %s", p[0], id, f.Packets, f.Message)
						break
					}
				}
			}
		}
		recovered := 0
		for _, f := range lossy.Findings {
			if f.Rule != "NAK" || !strings.Contains(f.Message, "PSN sequence error") {
				continue
			}
			switch {
			case strings.Contains(f.Message, "; recovered") && f.Severity == Info:
				recovered++
			default:
				t.Errorf("%s: NAK not recovered: %v %s", p[0], f.Packets, f.Message)
			}
		}
		if strings.HasPrefix(p[0], "lossy/rxe-ib_write_bw") && recovered == 0 {
			t.Errorf("%s: no recovered NAK", p[0])
		}
		t.Logf("%s: errors %v (loss-free: %v), %d NAKs recovered", p[0], errorRules(lossy), base, recovered)
	}
}

// rawResendDiffers tells whether frames pk[0] and pk[1] are the same RC
// request (destination QP and PSN) with a different opcode or different
// bytes after the BTH: a retransmission that differs, read without the
// engine. (lossy/rxe-ib_read_bw-loss5.pcap, packets 28 and 33: perftest's
// control Send, resent after a timeout, carries 0x0000 where the original
// carried 0x3300 — rxe rebuilds a resend from the Send's buffer, which the
// application had reused for the Receive of packet 29 before the Send
// completed: a consumer must leave a posted work request's buffers alone
// until it completes (IBA Vol 1 ch. 10, work request processing). The
// rule is right to flag it.)
func rawResendDiffers(frames []pcaptest.Frame, pk []int) (bool, string) {
	if len(pk) < 2 {
		return false, "fewer than two packets"
	}
	var ops [2]byte
	var qps, psns [2]uint32
	var rests [2][]byte
	for i, n := range pk[:2] {
		if n < 1 || n > len(frames) {
			return false, "no such packet"
		}
		r, ok := pcaptest.ParseRoCEv2(frames[n-1].Data)
		if !ok || len(r.BTH) < 16 || len(r.BTH) != r.UDPLength-8 {
			return false, "not a whole RoCEv2 packet over IPv4"
		}
		ops[i], qps[i], psns[i], rests[i] = r.OpCode, r.DestQP, r.PSN, r.AfterBTH()
	}
	switch {
	case qps[0] != qps[1] || psns[0] != psns[1]:
		return false, "not the same QP and PSN"
	case ops[0] == ops[1] && bytes.Equal(rests[0], rests[1]):
		return false, "identical"
	}
	return true, "same QP and PSN, different opcode or bytes after the BTH"
}

// checkICRCBadByHand: the ICRC-BAD findings of res name exactly the frames
// whose invariant CRC, recomputed without the engine
// (pcaptest.RoCE.ICRCGood), does not match.
func checkICRCBadByHand(t *testing.T, name string, res *Result, frames []pcaptest.Frame) {
	t.Helper()
	var want, got []int
	for _, fr := range frames {
		if r, ok := pcaptest.ParseRoCEv2(fr.Data); ok && !r.ICRCGood() {
			want = append(want, fr.Num)
		}
	}
	for _, f := range res.Findings {
		if f.Rule == "ICRC-BAD" {
			got = append(got, f.Packets[0]) // then the packet that told whose damage it was
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("%s: ICRC-BAD on packets %v, bad ICRC by hand %v", name, got, want)
	}
}

// TestLossyReadResponseGapsRecovered: on every RoCE lossy capture whose
// wire shows every RDMA Read answered in full — each PSN of each Read
// Request's span (ceil(length / PMTU) PSNs, IBA Vol 1 9.7.1.1) has a Read
// Response of its flow somewhere in the capture, found by hand — no PSN-GAP
// finding says Read responses are missing (a warning): the re-issued Reads
// sent them again. lossy/rxe-nfs3-loss5.pcap had ten response gaps open at
// once; the oldest two (packets 119 and 138, answered in 250 and 269) were
// pushed out of an 8-gap list and reported missing.
func TestLossyReadResponseGapsRecovered(t *testing.T) {
	for _, name := range []string{"lossy/rxe-ib_read_bw-lossy.pcap", "lossy/rxe-nfs3-lossy.pcap", "lossy/rxe-ib_read_bw-loss5.pcap",
		"lossy/rxe-ib_read_bw-dup.pcap", "lossy/rxe-nfs3-lossreorder.pcap", "lossy/rxe-nfs3-corrupt.pcap", "lossy/rxe-nfs3-loss5.pcap",
		"lossy/rxe-nfs41-loss3.pcap", "lossy/rxe-nfs3-dup.pcap", "lossy/rxe-nfs3-mixed.pcap"} {
		path := "../testdata/pcaps/" + name
		_, frames := pcaptest.Read(t, path)
		var rs []pcaptest.RoCE
		pmtu := 0
		for _, fr := range frames {
			r, ok := pcaptest.ParseRoCEv2(fr.Data)
			if !ok || !r.RC() || !r.ICRCGood() {
				continue
			}
			if r.Middle() {
				pmtu = max(pmtu, r.PayloadLength())
			}
			rs = append(rs, r)
		}
		// Responses go to the requester's QP, which a Read Request does not
		// carry: keyed by PSN alone (the QPs of these captures start their
		// PSN spaces millions apart).
		answered := map[uint32]bool{}
		for _, r := range rs {
			if r.OpCode >= 0x0d && r.OpCode <= 0x10 {
				answered[r.PSN] = true
			}
		}
		reads, missing := 0, 0
		for _, r := range rs {
			if r.OpCode != 0x0c {
				continue
			}
			reads++
			n, _ := r.DMALength()
			span := max(1, (n+uint32(pmtu)-1)/uint32(pmtu))
			for i := uint32(0); i < span; i++ {
				if !answered[(r.PSN+i)&psnMask] {
					missing++
				}
			}
		}
		if reads == 0 || missing != 0 {
			t.Fatalf("%s: %d Read Requests, %d of their PSNs never answered on the wire: not a capture for this test", name, reads, missing)
		}
		res := runFile(t, path, Config{})
		for _, f := range res.Findings {
			if f.Rule == "PSN-GAP" && f.Severity == Warning && strings.Contains(f.Message, "response packets of an RDMA Read are missing") {
				t.Errorf("%s: %v %s", name, f.Packets, f.Message)
			}
		}
	}
}

// TestRNRNAKAcknowledgesNothing: stalled/rxe-ib_send_bw-rnr.pcap is a lab
// run that did not complete (perftest ib_send_bw -r 1, netem "delay 1ms
// loss 1%"): the client's SEND_ONLY at PSN 14227412 was answered by 5,479
// RNR NAKs and resent as often, never accepted, until the run was stopped.
// An RNR NAK refuses the request at its PSN (IBA Vol 1 9.7.5.2.8: the
// requester sends it again); it acknowledges at most the ones before. Read
// by hand, the capture holds RNR NAKs for that PSN and no ACK at or past
// it, so no PSN-GAP finding may say the responder acknowledged it, and the
// retransmissions are a warning: nothing acknowledges them.
func TestRNRNAKAcknowledgesNothing(t *testing.T) {
	const path = "../testdata/pcaps/stalled/rxe-ib_send_bw-rnr.pcap"
	_, frames := pcaptest.Read(t, path)
	const stuck = 14227412
	rnr, acked := 0, 0
	for _, fr := range frames {
		r, ok := pcaptest.ParseRoCEv2(fr.Data)
		if !ok || !r.RC() {
			continue
		}
		syn, ok := r.Syndrome()
		if !ok || r.OpCode != 0x11 {
			continue
		}
		switch {
		case syn>>5 == 1 && r.PSN == stuck: // RNR NAK (AETH syndrome 01x xxxx)
			rnr++
		case syn>>5 == 0 && psnDiff(r.PSN, stuck) >= 0 && psnDiff(r.PSN, stuck) < 1<<20: // ACK
			acked++
		}
	}
	if rnr < 1000 || acked != 0 {
		t.Fatalf("by hand: %d RNR NAKs for PSN %d, %d ACKs at or past it", rnr, stuck, acked)
	}
	res := runFile(t, path, Config{})
	warned := false
	for _, f := range res.Findings {
		if f.Rule != "PSN-GAP" {
			continue
		}
		if strings.Contains(f.Message, fmt.Sprintf("acknowledged PSN %d", stuck)) || strings.Contains(f.Message, "recovered") {
			t.Errorf("%v %s", f.Packets, f.Message)
		}
		if f.Severity == Warning && strings.Contains(f.Message, "no response in the capture acknowledges") {
			warned = true
		}
	}
	if !warned {
		t.Error("no PSN-GAP warning for the retransmissions nothing acknowledged")
	}
}

// checkTCPBadAsTshark: TCP-CHECKSUM-BAD names exactly the frames tshark
// 4.0 finds a bad IPv4 or TCP checksum in
// (testdata/tshark/NAME.tcp-badsum.txt, gen-tcp-analysis.sh), each an
// error only when its sender resent the octets (damaged on the wire).
func checkTCPBadAsTshark(t *testing.T, name string, res *Result) {
	t.Helper()
	base := strings.TrimSuffix(filepath.Base(name), ".pcap")
	data, err := os.ReadFile("../testdata/tshark/" + base + ".tcp-badsum.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []int
	for _, l := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want = append(want, n)
	}
	for _, f := range res.Findings {
		if f.Rule != "TCP-CHECKSUM-BAD" {
			continue
		}
		got = append(got, f.Packets[0])
		if f.Severity == Info && !strings.Contains(f.Message, "capture damage") {
			t.Errorf("%s: %v info without the capture's damage: %s", name, f.Packets, f.Message)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("%s: TCP-CHECKSUM-BAD on packets %v, tshark's bad checksums %v", name, got, want)
	}
}
