package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
)

// EngineCounters are the engine-wide counters of the Analysis document
// ("engine"): what IB/RoCE Send reassembly and RDMA operation tracking did
// and what their limits cut (dissect.ReassemblyStats), and what the
// RPC-over-RDMA layer saw (its plug-in's RPCCounters, ULP.Counters). iWARP's counters are per
// connection ("iwarp"). `transactions --format json` has the same numbers
// under other names in its "counters".
type EngineCounters struct {
	Reassembly ReassemblyCounters `json:"reassembly"`
	RPC        RPCCounters        `json:"rpc"`
}

// ReassemblyCounters is dissect.ReassemblyStats (IB/RoCE only).
type ReassemblyCounters struct {
	// Sends handed up, and of them those cut short (a hole, the snap
	// length, no LAST) or at the message size limit.
	Sends          uint64 `json:"sends"`
	SendsTruncated uint64 `json:"sends_truncated"`
	SendsTooLong   uint64 `json:"sends_too_long"`
	// OrphanPackets: packets of messages whose FIRST was never seen.
	OrphanPackets uint64 `json:"orphan_packets"`
	// DuplicatePackets: request packets with an already consumed PSN and
	// repeated Read Responses (IBA 9.7.5.1.2).
	DuplicatePackets uint64 `json:"duplicate_packets"`
	// PSNGaps: forward PSN jumps; MissingPSNs: the PSNs they skipped.
	PSNGaps     uint64 `json:"psn_gaps"`
	MissingPSNs uint64 `json:"missing_psns"`
	RDMAWrites  uint64 `json:"rdma_writes"`
	RDMAReads   uint64 `json:"rdma_reads"`
	// RDMAOpsIncomplete: operations handed up without every byte;
	// RDMAOpDataCut: operations whose data was kept only up to the
	// message size limit; ReadsEvicted: Read Requests given up at the
	// outstanding-reads limit; UnmatchedReadResponses: Read Response
	// packets of no Read Request in the capture.
	RDMAOpsIncomplete      uint64 `json:"rdma_ops_incomplete"`
	RDMAOpDataCut          uint64 `json:"rdma_op_data_cut"`
	ReadsEvicted           uint64 `json:"reads_evicted"`
	UnmatchedReadResponses uint64 `json:"unmatched_read_responses"`
	// BufferBudgetCuts: messages and RDMA operations in progress (IB,
	// RoCE and iWARP) handed up unfinished because all reassembly buffers
	// together reached the buffer budget (--max-buffered);
	// MaxBufferedBytesHeld: the most those buffers held at once.
	BufferBudgetCuts     uint64 `json:"buffer_budget_cuts"`
	MaxBufferedBytesHeld int    `json:"max_buffered_bytes_held"`
}

// RPCCounters is the RPC-over-RDMA plug-in's RPCCounters (filled by its
// presentation, ULP.Counters).
type RPCCounters struct {
	// Sends and RDMA operations both transports handed up.
	Sends             uint64 `json:"sends"`
	RDMAReads         uint64 `json:"rdma_reads"`
	RDMAWrites        uint64 `json:"rdma_writes"`
	RDMAOpsIncomplete uint64 `json:"rdma_ops_incomplete"`
	// Messages on RPC-over-RDMA connections; NotRPC on connections not
	// recognised as RPC-over-RDMA.
	Messages uint64 `json:"messages"`
	NotRPC   uint64 `json:"not_rpc"`
	// BadHeaders: transport headers that did not decode.
	BadHeaders uint64 `json:"bad_headers"`
	// RetransmittedSends: Sends decoded for display only (their PSN was
	// consumed already).
	RetransmittedSends uint64 `json:"retransmitted_sends"`
	Calls              uint64 `json:"calls"`
	Replies            uint64 `json:"replies"`
	// Transactions handed out, and how the unanswered ones ended.
	Transactions           uint64 `json:"transactions"`
	TransactionsEvicted    uint64 `json:"transactions_evicted"`
	TransactionsSuperseded uint64 `json:"transactions_superseded"`
	CallsWithoutReply      uint64 `json:"calls_without_reply"`
	RepliesWithoutCall     uint64 `json:"replies_without_call"`
	// UnattachedRDMAOps: RDMA operations no advertised segment explains;
	// UnattachedByReason counts the recorded ones by reason, and
	// Unattached lists them (at most the plug-in's MaxUnattachedRecorded).
	UnattachedRDMAOps  uint64            `json:"unattached_rdma_ops"`
	UnattachedByReason map[string]uint64 `json:"unattached_by_reason"`
	Unattached         []UnattachedOp    `json:"unattached"`
	// Rebuilt: RPC messages put together from chunks; RebuiltBad: those
	// that did not decode as RPC; RebuildSkipped: chunk data not kept at
	// the limits; MaxRebuildBytesHeld: the most chunk data held at once.
	Rebuilt             uint64 `json:"rebuilt"`
	RebuiltBad          uint64 `json:"rebuilt_bad"`
	RebuildSkipped      uint64 `json:"rebuild_skipped"`
	MaxRebuildBytesHeld int    `json:"max_rebuild_bytes_held"`
}

// UnattachedOp is an RDMA operation attached to no segment.
type UnattachedOp struct {
	Connection  int    `json:"connection"`
	Kind        string `json:"kind"`
	FirstPacket int    `json:"first_packet"`
	LastPacket  int    `json:"last_packet"`
	STag        string `json:"stag"`
	Offset      string `json:"offset"`
	Length      uint32 `json:"length"`
	// Reason: "no segment", or "after reply" (its Call was over).
	Reason string `json:"reason"`
}

// engineCounters copies the engine's counters; the registered ULPs fill
// theirs (ULP.Counters: RPC-over-RDMA's "rpc").
func engineCounters(e *dissect.Snapshot) *EngineCounters {
	r := &e.Reassembly
	out := &EngineCounters{
		Reassembly: ReassemblyCounters{
			Sends: r.Messages, SendsTruncated: r.Truncated, SendsTooLong: r.TooLong, OrphanPackets: r.Orphans,
			DuplicatePackets: r.Duplicates, PSNGaps: r.Gaps, MissingPSNs: r.MissingPSNs, RDMAWrites: r.Writes,
			RDMAReads: r.Reads, RDMAOpsIncomplete: r.OpsIncomplete, RDMAOpDataCut: r.OpDataCut,
			ReadsEvicted: r.ReadsEvicted, UnmatchedReadResponses: r.UnmatchedResponses,
			BufferBudgetCuts: r.BudgetCuts, MaxBufferedBytesHeld: r.MaxBufferedHeld,
		},
	}
	for i := range ulps {
		if f := ulps[i].Counters; f != nil {
			f(e, out)
		}
	}
	return out
}

// writeEngineLines prints one line for reassembly and one for the
// RPC-over-RDMA layer, each only when something on it is not zero.
func writeEngineLines(w io.Writer, e *EngineCounters) {
	if e == nil {
		return
	}
	var parts []string
	// add writes n and what, its noun in the singular when n is 1 (what
	// names the singular before a "|", "bad header|bad headers").
	add := func(n uint64, what string) {
		if n == 0 {
			return
		}
		one, many, ok := strings.Cut(what, "|")
		if !ok {
			one, many = what, what
		}
		if n == 1 {
			many = one
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, many))
	}
	r := &e.Reassembly
	add(r.SendsTruncated, "Send truncated|Sends truncated")
	add(r.SendsTooLong, "Send too long|Sends too long")
	add(r.OrphanPackets, "orphan packet|orphan packets")
	add(r.DuplicatePackets, "duplicate packet|duplicate packets")
	if r.PSNGaps > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s missing)", Plural(int(r.PSNGaps), "PSN gap"), Plural(int(r.MissingPSNs), "PSN")))
	}
	add(r.RDMAOpsIncomplete, "RDMA operation incomplete|RDMA operations incomplete")
	add(r.RDMAOpDataCut, "RDMA operation's data cut|RDMA operations' data cut")
	add(r.ReadsEvicted, "Read Request evicted|Read Requests evicted")
	add(r.UnmatchedReadResponses, "unmatched Read Response|unmatched Read Responses")
	add(r.BufferBudgetCuts, "message or RDMA operation cut by the buffer budget|messages or RDMA operations cut by the buffer budget")
	if len(parts) > 0 {
		fmt.Fprintf(w, "Reassembly (IB/RoCE): %s\n", strings.Join(parts, ", "))
	}
	parts = parts[:0]
	c := &e.RPC
	add(c.BadHeaders, "bad header|bad headers")
	add(c.RetransmittedSends, "retransmitted Send|retransmitted Sends")
	add(c.CallsWithoutReply, "Call without Reply|Calls without Reply")
	add(c.RepliesWithoutCall, "Reply without Call|Replies without Call")
	add(c.TransactionsEvicted, "transaction evicted|transactions evicted")
	add(c.TransactionsSuperseded, "transaction superseded|transactions superseded")
	if c.UnattachedRDMAOps > 0 {
		var rs []string
		reasons := make([]string, 0, len(c.UnattachedByReason))
		for reason := range c.UnattachedByReason {
			reasons = append(reasons, reason)
		}
		sort.Strings(reasons)
		for _, reason := range reasons {
			rs = append(rs, fmt.Sprintf("%s: %d", reason, c.UnattachedByReason[reason]))
		}
		s := Plural(int(c.UnattachedRDMAOps), "RDMA operation") + " unattached"
		if len(rs) > 0 {
			s += " (" + strings.Join(rs, ", ") + ")"
		}
		parts = append(parts, s)
	}
	add(c.RebuiltBad, "rebuilt message not valid RPC|rebuilt messages not valid RPC")
	add(c.RebuildSkipped, "chunk not rebuilt (limits)|chunks not rebuilt (limits)")
	if len(parts) > 0 {
		fmt.Fprintf(w, "RPC-over-RDMA: %s\n", strings.Join(parts, ", "))
	}
}
