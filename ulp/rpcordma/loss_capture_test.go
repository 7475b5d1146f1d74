package rpcordma

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/pcaptest"
)

// The lossy captures (testdata/pcaps/lossy: Linux 6.1 rxe and siw under
// netem loss; every workload completed, perftest and NFS said so) are the
// ground truth for loss and recovery: whatever the requester resent, every
// operation is complete, every response matched, every transaction paired.

// The first five are netem loss only; the lab added (testdata/pcaps/README.md)
// reordering, duplication, 5% loss on RDMA Reads, NFS under loss and
// reordering, and soft-iWARP under reordering.
var lossyCaptures = append(slices.Clone(rxeLossyCaptures), "lossy/siw-ib_write_bw-lossy.pcap", "lossy/siw-nfs3-lossy.pcap",
	"lossy/siw-ib_write_bw-reorder.pcap", "lossy/siw-nfs3-reorder.pcap", "lossy/siw-nfs3-corrupt.pcap",
	"lossy/siw-ib_read_bw-loss2.pcap", "lossy/siw-nfs41-loss2.pcap", "lossy/siw-ib_write_bw-corrupt.pcap")

// rxeLossyCaptures are the RoCEv2 ones, which the raw PSN reader reads.
var rxeLossyCaptures = []string{"lossy/rxe-ib_read_bw-lossy.pcap", "lossy/rxe-ib_write_bw-lossy.pcap",
	"lossy/rxe-nfs3-lossy.pcap", "lossy/rxe-ib_read_bw-loss5.pcap", "lossy/rxe-ib_read_bw-dup.pcap",
	"lossy/rxe-ib_write_bw-reorder.pcap", "lossy/rxe-nfs3-lossreorder.pcap",
	// The lab's third round (docs/loss.md): netem "corrupt 1%", "loss 5%",
	// NFSv4.1 under "loss 3%", "duplicate 3%", multi-packet Sends under
	// "loss 3%", and all four at once with reordering.
	"lossy/rxe-nfs3-corrupt.pcap", "lossy/rxe-nfs3-loss5.pcap", "lossy/rxe-nfs41-loss3.pcap", "lossy/rxe-nfs3-dup.pcap",
	"lossy/rxe-ib_send_bw-loss3.pcap", "lossy/rxe-nfs3-mixed.pcap"}

// rawFlow names one direction of a RoCEv2 QP: the sender's address and the
// destination QP.
type rawFlow struct {
	src  netip.Addr
	dqpn uint32
}

// rawRetransmissions reads a RoCEv2 capture by hand — Ethernet, IPv4, UDP
// 4791, BTH, RETH, from the pcap bytes, without the engine — and counts per
// flow the RC request packets whose PSN an earlier request of that flow
// already consumed (an RDMA Read Request consuming ceil(length/PMTU) PSNs,
// IBA 9.7.1.1) and the Read Responses whose PSN was already seen. The PMTU
// is the largest payload of a MIDDLE packet (9.4.1: MIDDLE packets carry
// exactly one PMTU). A frame whose ICRC, recomputed by hand, does not match
// is no packet of the flow: its receiver discards it (IBA Vol 1 7.8.1), and
// the flipped bit may be in any field.
func rawRetransmissions(t *testing.T, path string) (map[rawFlow]int, int) {
	t.Helper()
	_, frames := pcaptest.Read(t, path)
	type pkt struct {
		f        rawFlow
		op       byte
		psn      uint32
		dmaLen   uint32
		payload  int
		frameNum int
	}
	var pkts []pkt
	pmtu := 0
	for _, fr := range frames {
		r, ok := pcaptest.ParseRoCEv2(fr.Data)
		if !ok || !r.RC() || !r.ICRCGood() {
			continue
		}
		p := pkt{f: rawFlow{r.Src, r.DestQP}, op: r.OpCode, psn: r.PSN, frameNum: fr.Num, payload: r.PayloadLength()}
		p.dmaLen, _ = r.DMALength()
		if r.Middle() {
			pmtu = max(pmtu, p.payload)
		}
		pkts = append(pkts, p)
	}
	if pmtu == 0 {
		t.Fatalf("%s: no MIDDLE packet tells the PMTU", path)
	}
	out := map[rawFlow]int{}
	consumed := map[rawFlow]map[uint32]bool{}
	responded := map[rawFlow]map[uint32]bool{}
	seen := func(m map[rawFlow]map[uint32]bool, f rawFlow) map[uint32]bool {
		if m[f] == nil {
			m[f] = map[uint32]bool{}
		}
		return m[f]
	}
	for _, p := range pkts {
		switch {
		case p.op >= 0x0d && p.op <= 0x10: // RDMA Read Responses
			s := seen(responded, p.f)
			if s[p.psn] {
				out[p.f]++
			}
			s[p.psn] = true
		case p.op == 0x11 || p.op == 0x12: // ACKs
		case p.op <= 0x17:
			s := seen(consumed, p.f)
			if s[p.psn] {
				out[p.f]++
			}
			n := uint32(1)
			if p.op == 0x0c {
				n = max(1, (p.dmaLen+uint32(pmtu)-1)/uint32(pmtu))
			}
			for i := uint32(0); i < n; i++ {
				s[(p.psn+i)&0xffffff] = true
			}
		}
	}
	return out, pmtu
}

func TestLossyCapturesRetransmissionsCounted(t *testing.T) {
	for _, name := range rxeLossyCaptures {
		raw, pmtu := rawRetransmissions(t, capturePath(name))
		e, _ := runCapture(t, name, Options{}, nil)
		got := map[rawFlow]int{}
		total := 0
		for _, c := range e.Conns.Connections() {
			if c.Health == nil {
				continue
			}
			for d, side := range [2]struct {
				src  string
				dqpn uint32
			}{{c.Client.Address, c.Server.QPN}, {c.Server.Address, c.Client.QPN}} {
				a, err := netip.ParseAddr(side.src)
				if err != nil {
					t.Fatal(err)
				}
				if n := int(c.Health.Dir[d].RetransmittedPackets); n > 0 {
					got[rawFlow{a, side.dqpn}] = n
					total += n
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(raw) {
			t.Errorf("%s: engine counts retransmissions %v, the raw PSN reader %v", name, got, raw)
		}
		if total == 0 {
			t.Errorf("%s: no retransmission: not a lossy capture?", name)
		}
		t.Logf("%s: PMTU %d, retransmitted packets per flow %v", name, pmtu, raw)
	}
}

func TestLossyCapturesRecovered(t *testing.T) {
	for _, name := range lossyCaptures {
		e, txns := runCapture(t, name, Options{}, nil)
		st := e.Reassembly
		if st.OpsIncomplete+st.UnmatchedResponses+st.Orphans+st.Truncated+st.HeldCut+st.ReadsEvicted != 0 {
			t.Errorf("%s: reassembly %+v", name, st)
		}
		if e.Ops.RDMAOpsIncomplete+e.RPC.RebuildSkipped+e.RPC.RebuiltBad+e.RPC.Unattached+e.RPC.NoReply+e.RPC.ReplyNoCall != 0 {
			t.Errorf("%s: RPC layer %+v", name, e.RPC)
		}
		for _, c := range e.Conns.Connections() {
			if r := Stats(c); r != nil && (r.RebuildIncomplete != 0 || r.CallsWithoutReply+r.RepliesWithoutCall != 0) {
				t.Errorf("%s: connection %d: %d rebuilds incomplete, %d Calls without Reply, %d Replies without Call",
					name, c.ID, r.RebuildIncomplete, r.CallsWithoutReply, r.RepliesWithoutCall)
			}
		}
		for _, tx := range txns {
			if tx.Outcome != TxnReplied {
				t.Errorf("%s: transaction XID %#x %s", name, tx.XID, tx.Outcome)
			}
		}
		if st.Reads+st.Writes == 0 && e.Ops.RDMAReads+e.Ops.RDMAWrites == 0 && !strings.Contains(name, "send_bw") {
			// (ib_send_bw moves its data by Send only.)
			t.Errorf("%s: no RDMA operation at all", name)
		}
		t.Logf("%s: %d Sends, %d Writes, %d Reads, %d RDMA ops (RPC layer), %d transactions, %d retransmitted packets dropped",
			name, st.Messages, st.Writes, st.Reads, e.Ops.RDMAReads+e.Ops.RDMAWrites, len(txns), st.Duplicates)
	}
}

func (f rawFlow) String() string { return fmt.Sprintf("%s→QP %#x", f.src, f.dqpn) }

// TestIWARPTCPAnalysisMatchesTshark: on the lossy soft-iWARP captures the
// TCP segments flagged as retransmitted, as out of order, and the duplicate
// ACKs are the frames tshark's tcp.analysis flags
// (testdata/tshark/gen-tcp-analysis.sh), and the health counts them; the
// segments discarded from the iWARP stream are the frames whose IPv4 header
// or TCP checksum tshark finds bad (siw-nfs3-corrupt: netem "corrupt 1%"),
// none elsewhere.
func TestIWARPTCPAnalysisMatchesTshark(t *testing.T) {
	read := func(name string) []int {
		b, err := os.ReadFile(filepath.Join("../../testdata/tshark", name))
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, l := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}
	for _, b := range []string{"siw-nfs3-lossy", "siw-ib_write_bw-lossy", "siw-ib_write_bw-reorder", "siw-nfs3-reorder",
		"siw-nfs3-corrupt", "siw-ib_read_bw-loss2", "siw-nfs41-loss2", "siw-ib_write_bw-corrupt"} {
		var retrans, ooo, dup, discarded []int
		var counted, countedOOO uint64
		e, _ := runCapture(t, "lossy/"+b+".pcap", Options{}, func(p *dissect.Packet) {
			if p.Analysis.Retransmission {
				retrans = append(retrans, p.Number)
			}
			if p.Analysis.OutOfOrder {
				ooo = append(ooo, p.Number)
			}
			if p.Analysis.Duplicate {
				dup = append(dup, p.Number)
			}
			if p.TCPDiscarded {
				discarded = append(discarded, p.Number)
			}
		})
		for _, c := range e.Conns.Connections() {
			if c.Health != nil {
				for _, dh := range c.Health.Dir {
					counted += dh.RetransmittedPackets
					countedOOO += dh.OutOfOrderPackets
				}
			}
		}
		if want := read(b + ".tcp-retrans.txt"); !slices.Equal(retrans, want) || len(want) == 0 || counted != uint64(len(want)) {
			t.Errorf("%s: retransmissions %v (%d counted), tshark %v", b, retrans, counted, want)
		}
		// Reordering, not loss: the reorder capture has more of it than
		// retransmissions (tshark 274 to 179).
		if want := read(b + ".tcp-ooo.txt"); !slices.Equal(ooo, want) || countedOOO != uint64(len(want)) {
			t.Errorf("%s: out of order %v (%d counted), tshark %v", b, ooo, countedOOO, want)
		}
		if want := read(b + ".tcp-dupack.txt"); !slices.Equal(dup, want) || len(want) == 0 {
			t.Errorf("%s: duplicate ACKs %d, tshark %d", b, len(dup), len(want))
		}
		if want := read(b + ".tcp-badsum.txt"); !slices.Equal(discarded, want) {
			t.Errorf("%s: segments discarded %v, tshark's bad checksums %v", b, discarded, want)
		}
		t.Logf("%s: %d retransmitted segments, %d out of order, %d duplicate ACKs, as tshark", b, len(retrans), len(ooo), len(dup))
	}
}

// TestLossyAnalysisFields: the per-packet fields say what the health
// counts — rdmashark.analysis.retransmission on exactly the packets counted
// as retransmitted, the summary line tagged on each.
func TestLossyAnalysisFields(t *testing.T) {
	const retrans = "rdmashark.analysis.retransmission"
	if _, ok := Present.Values(retrans, new(dissect.Packet), nil); !ok {
		t.Fatal("rdmashark.analysis.retransmission is not registered")
	}
	for _, name := range rxeLossyCaptures {
		flagged, tagged := 0, 0
		var vals []string
		e, _ := runCapture(t, name, Options{}, func(p *dissect.Packet) {
			vals, _ = Present.Values(retrans, p, vals[:0])
			if len(vals) == 1 && vals[0] == "1" {
				flagged++
				if s := summary(p); strings.Contains(s, "[Retransmission]") || strings.Contains(s, "[Duplicate]") || strings.Contains(s, "[Re-issued Read]") {
					tagged++
				}
			}
		})
		var counted uint64
		for _, c := range e.Conns.Connections() {
			if c.Health != nil {
				counted += c.Health.Dir[0].RetransmittedPackets + c.Health.Dir[1].RetransmittedPackets
			}
		}
		if uint64(flagged) != counted || tagged != flagged || flagged == 0 {
			t.Errorf("%s: %d packets flagged, %d tagged, %d counted", name, flagged, tagged, counted)
		}
	}
}

// TestLossyNetworkDuplicates: on lossy/rxe-ib_read_bw-dup.pcap (netem
// "duplicate 2%") and lossy/rxe-nfs3-dup.pcap ("duplicate 3%": 42 requests
// repeated, 19 SEND_ONLY and 23 RDMA Write packets) the requests flagged
// NetworkDuplicate are exactly the RC request frames that repeat an earlier
// frame byte for byte (IPv4 Identification and ICRC included), found by
// hand; none opens a retransmission episode, and each is still counted as
// retransmitted (its PSN was seen: the raw PSN reader counts it too).
func TestLossyNetworkDuplicates(t *testing.T) {
	for _, name := range []string{"lossy/rxe-ib_read_bw-dup.pcap", "lossy/rxe-nfs3-dup.pcap"} {
		testNetworkDuplicates(t, name)
	}
}

func testNetworkDuplicates(t *testing.T, name string) {
	_, frames := pcaptest.Read(t, capturePath(name))
	seen := map[string]bool{}
	var want []int
	for _, fr := range frames {
		k := string(fr.Data)
		// RoCEv2 RC requests: BTH opcode below the responses (0x0d) or
		// from 0x13 (Atomics and later), not an ACK.
		if r, ok := pcaptest.ParseRoCEv2(fr.Data); ok && r.RC() && (r.OpCode < 0x0d || r.OpCode > 0x12) && seen[k] {
			want = append(want, fr.Num)
		}
		seen[k] = true
	}
	var got []int
	episodes := 0
	e, _ := runCapture(t, name, Options{}, func(p *dissect.Packet) {
		if p.Analysis.NetworkDuplicate {
			got = append(got, p.Number)
			if !p.Analysis.Retransmission || !p.Analysis.Duplicate || p.Analysis.Episode != 0 {
				t.Errorf("packet %d: network duplicate with analysis %+v", p.Number, p.Analysis)
			}
		}
	})
	for _, c := range e.Conns.Connections() {
		if c.Health != nil {
			for d := range c.Health.Dir {
				for _, n := range c.Health.Dir[d].EpisodesByTrigger {
					episodes += int(n)
				}
			}
		}
	}
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("network duplicates %v, byte-identical request frames %v", got, want)
	}
	if episodes != 0 {
		t.Errorf("%d retransmission episodes: the requester never resent (every repeat is the network's)", episodes)
	}
	t.Logf("%s: network duplicates %v", name, got)
}

// TestLossyCorruptFramesDiscarded: on lossy/rxe-nfs3-corrupt.pcap (netem
// "corrupt 1%" each way; NFS read every file back intact) the frames whose
// ICRC, recomputed by hand, is bad are exactly the packets the engine calls
// CRCFailed (24: ACKs, Read Responses, Write MIDDLEs, Sends); a receiver
// discards them (IBA Vol 1 7.8.1), so none gets a verdict of the requester
// model, none opens a connection — packet 3013, an ACK whose IP source
// address is the flipped part, made a third one — and every connection is
// one of the two the CM set up. The Sends resent after a corrupted original
// are the only copies of their RPC messages: every transaction is paired
// (TestLossyCapturesRecovered), none decoded from corrupted bytes.
func TestLossyCorruptFramesDiscarded(t *testing.T) {
	const name = "lossy/rxe-nfs3-corrupt.pcap"
	_, frames := pcaptest.Read(t, capturePath(name))
	var want []int
	for _, fr := range frames {
		if r, ok := pcaptest.ParseRoCEv2(fr.Data); ok && !r.ICRCGood() {
			want = append(want, fr.Num)
		}
	}
	var got []int
	e, _ := runCapture(t, name, Options{}, func(p *dissect.Packet) {
		if p.CRCFailed() {
			got = append(got, p.Number)
			if !p.CRCDiscarded {
				t.Errorf("packet %d: bad ICRC from a sender whose ICRCs were right before, yet not discarded", p.Number)
			}
			if p.Analysis.Valid {
				t.Errorf("packet %d: bad ICRC, yet the requester model judged it: %+v", p.Number, p.Analysis)
			}
		}
	})
	if !slices.Equal(got, want) || len(want) != 24 {
		t.Errorf("packets with a bad ICRC %v, by hand %v", got, want)
	}
	conns := e.Conns.Connections()
	if len(conns) != 2 {
		t.Errorf("%d connections, want the 2 the CM set up", len(conns))
	}
	for _, c := range conns {
		if c.State == dissect.StateNoSetup {
			t.Errorf("connection %d has no set-up: made by a corrupted frame?", c.ID)
		}
	}
}

// TestLossyMultiPacketSends: on lossy/rxe-ib_send_bw-loss3.pcap (perftest
// ib_send_bw, 20 Sends of 64 KiB, netem "loss 3%"; every iteration
// completed) the multi-packet Sends handed up are the ones a hand reader
// builds from the wire: per flow, each PSN's payload (BTH to ICRC less the
// pad, IBA Vol 1 9.2, 9.4.1), from every SEND_FIRST through the
// consecutive PSNs to its SEND_LAST (9.4.1: a message's packets carry
// consecutive PSNs), whichever transmission carried each. Several of the
// Sends lost two or more MIDDLE packets, each resent after the part that
// followed it.
func TestLossyMultiPacketSends(t *testing.T) {
	const name = "lossy/rxe-ib_send_bw-loss3.pcap"
	_, frames := pcaptest.Read(t, capturePath(name))
	type flowPSN struct {
		f   rawFlow
		psn uint32
	}
	payload := map[flowPSN][]byte{}
	opAt := map[flowPSN]byte{}
	var firsts []flowPSN
	for _, fr := range frames {
		r, ok := pcaptest.ParseRoCEv2(fr.Data)
		if !ok || !r.RC() || !r.ICRCGood() || r.OpCode > 0x02 {
			continue // SEND_FIRST, SEND_MIDDLE, SEND_LAST only
		}
		k := flowPSN{rawFlow{r.Src, r.DestQP}, r.PSN}
		if _, seen := payload[k]; seen {
			continue
		}
		pad := int(r.BTH[1]>>4) & 3
		payload[k] = r.BTH[12 : len(r.BTH)-4-pad]
		opAt[k] = r.OpCode
		if r.OpCode == 0x00 {
			firsts = append(firsts, k)
		}
	}
	var want []string
	for _, k := range firsts {
		var m []byte
		for psn := k.psn; ; psn = (psn + 1) & 0xffffff {
			kk := flowPSN{k.f, psn}
			b, ok := payload[kk]
			if !ok {
				t.Fatalf("PSN %d of the Send from %d is nowhere on the wire", psn, k.psn)
			}
			m = append(m, b...)
			if opAt[kk] == 0x02 {
				break
			}
		}
		want = append(want, string(m))
	}
	var got []string
	obs := observerFunc(func(m *dissect.Message) {
		if len(m.Packets) > 1 {
			if m.Truncated {
				t.Errorf("Send of packets %d..%d truncated", m.Packets[0], m.Packets[len(m.Packets)-1])
			}
			got = append(got, string(m.Data))
		}
	})
	e, _ := runCapture(t, name, Options{Observer: obs}, nil)
	slices.Sort(want)
	slices.Sort(got)
	if len(want) != 20 || !slices.Equal(got, want) {
		t.Errorf("%d multi-packet Sends handed up, %d by hand, equal: %v", len(got), len(want), slices.Equal(got, want))
	}
	if st := e.Reassembly; st.Orphans+st.Truncated != 0 {
		t.Errorf("reassembly %+v", st)
	}
}
