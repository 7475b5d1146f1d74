package present

import (
	"strings"

	"github.com/rdmashark/rdmashark/diff"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// diffULP is RPC-over-RDMA's part of diff's profile.
var diffULP = diff.ULP{ExchangeName: diffExchangeName, Chunks: diffChunks, Behaviour: diffBehaviour}

// diffExchangeName names an NFSv4 COMPOUND with its operations
// ("COMPOUND SEQUENCE,PUTFH,GETATTR").
func diffExchangeName(x *dissect.Exchange) (string, bool) {
	if t, ok := x.Detail.(*rpcordma.Transaction); ok && len(t.Operations) > 0 {
		return x.Name + " " + strings.Join(t.Operations, ","), true
	}
	return "", false
}

// diffChunks reads the chunks of a transaction's Call and whether its
// Reply was an RDMA_NOMSG.
func diffChunks(x *dissect.Exchange) (diff.Chunks, bool) {
	t, ok := x.Detail.(*rpcordma.Transaction)
	if !ok {
		return diff.Chunks{}, false
	}
	var out diff.Chunks
	if t.Call != nil {
		for i := range t.Call.Chunks {
			ch := &t.Call.Chunks[i]
			switch ch.Kind {
			case rpcordma.ChunkRead:
				if ch.Position == 0 {
					out.LongCall = true
				} else {
					out.ReadChunk = true
				}
			case rpcordma.ChunkWrite:
				out.WriteChunk = true
			case rpcordma.ChunkReply:
				out.ReplyChunk = true
			}
		}
		if len(t.Call.Chunks) > 0 {
			if _, one := OneHandle(t.Call.Chunks); one {
				out.OneHandle = true
			} else {
				out.MultiHandle = true
			}
		}
	}
	if t.Reply != nil && strings.Contains(t.Reply.ProcName(), "NOMSG") {
		out.LongReply = true
	}
	return out, true
}

// OneHandle tells whether every segment of the chunks has the same
// handle, and returns it: the condition on which Linux's svcrdma sends a
// Reply With Invalidate (svc_rdma_get_inv_rkey).
func OneHandle(chunks []rpcordma.Chunk) (uint32, bool) {
	var h uint32
	n := 0
	for i := range chunks {
		for _, s := range chunks[i].Segments {
			if n > 0 && s.Handle != h {
				return 0, false
			}
			h = s.Handle
			n++
		}
	}
	return h, n > 0
}

// dirNames are diff's names of the two directions.
var dirNames = [2]string{"c2s", "s2c"}

// diffBehaviour adds a connection's RPC-over-RDMA counters.
func diffBehaviour(conn *dissect.Connection, met func(string, diff.Kind, uint64)) {
	r := rpcordma.Stats(conn)
	if r == nil {
		return
	}
	for d := range 2 {
		p := dirNames[d] + " RPC-over-RDMA "
		met(p+"Calls", diff.KindCount, r.Calls[d])
		met(p+"Replies", diff.KindCount, r.Replies[d])
		met(p+"RDMA_ERRORs", diff.KindCount, r.Errors[d])
		met(p+"short messages", diff.KindCount, r.Short[d])
		met(p+"chunked messages", diff.KindCount, r.Chunked[d])
		met(p+"long messages", diff.KindCount, r.Long[d])
		met(p+"largest credits requested", diff.KindExact, uint64(r.MaxCreditsRequested[d]))
		met(p+"largest credits granted", diff.KindExact, uint64(r.MaxCreditsGranted[d]))
	}
	met("RPC-over-RDMA Replies With Invalidate", diff.KindCount, r.RepliesWithInvalidate)
	met("RPC-over-RDMA Replies without Invalidate", diff.KindCount, r.RepliesWithoutInvalidate)
	met("RPC-over-RDMA Calls without Reply", diff.KindCount, r.CallsWithoutReply)
}
