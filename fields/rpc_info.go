package fields

import (
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// rpcInfo appends the RPC-over-RDMA messages the packet completed to the
// summary line, e.g.
// "| RPCoRDMA RDMA_NOMSG xid=0x3cfb4714 reply-chunk=1 | RPC Reply NFS v4 proc 1".
func rpcInfo(p *dissect.Packet, b *infoBuf, start int) {
	for i := range p.RPC {
		r := &p.RPC[i]
		if b.Len() > start {
			b.WriteString(" | ")
		}
		recordInfo(r, b)
	}
}

func recordInfo(r *dissect.RPCRecord, b *infoBuf) {
	if r.HasHeader {
		b.WriteString("RPCoRDMA")
		switch {
		case !r.PrefixOK:
			b.printf(" [bad header: %v]", r.HeaderErr)
			return
		case r.HeaderErr != nil:
			b.printf(" xid=0x%08x [bad header: %v]", r.XID, r.HeaderErr)
			return
		}
		h := &r.Header
		b.printf(" %s xid=0x%08x", dissect.ProcName(h.Vers, headerProc(h)), h.XID())
		if h.Vers == rpcrdma.Version2 {
			b.WriteString(" v2")
		}
		ch := h.Chunks()
		if n := len(ch.ReadChunks); n > 0 {
			b.printf(" read-chunks=%d", n)
		}
		if h.Vers == rpcrdma.Version2 && len(h.V2.CallList) > 0 {
			b.WriteString(" call-chunk=1")
		}
		if n := len(ch.WriteList); n > 0 {
			b.printf(" write-chunks=%d", n)
		}
		if ch.HasReplyChunk {
			b.WriteString(" reply-chunk=1")
		}
		if h.Vers == rpcrdma.Version1 && h.V1.Proc == rpcrdma.RDMAError {
			b.printf(" %s", h.V1.Err)
		}
		if h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError {
			b.printf(" %s", h.V2.Err)
		}
		if r.Invalidate {
			b.printf(" inv=0x%08x", r.InvalidatedSTag)
		}
		if r.Truncated {
			b.WriteString(" [truncated]")
		}
		if r.Duplicate {
			b.WriteString(" [retransmission]")
		}
		if !r.HasRPC && !r.ReducedRPC {
			return
		}
		b.WriteString(" | ")
	}
	if r.RPCErr != nil {
		b.printf("RPC [bad header: %v]", r.RPCErr)
		return
	}
	h := &r.RPC
	u := &r.ULP
	kind := "Call"
	if h.MsgType != oncrpc.Call {
		kind = "Reply"
	}
	switch {
	case u.Procedure != "":
		// Named by the upper layer: "NFS V4 Reply COMPOUND EXCHANGE_ID".
		vers := h.Vers
		if h.MsgType != oncrpc.Call {
			vers = r.Version
		}
		b.printf("%s V%d %s %s", u.Protocol, vers, kind, u.Procedure)
		if len(u.Operations) > 0 {
			b.printf(" %s", strings.Join(u.Operations, ","))
		}
	case h.MsgType == oncrpc.Call:
		b.printf("RPC Call %s v%d proc %d", h.Prog, h.Vers, h.Proc)
	default:
		b.WriteString("RPC Reply")
		if r.HasProgram {
			b.printf(" %s v%d proc %d", oncrpc.Program(r.Program), r.Version, r.Procedure)
		}
	}
	if h.MsgType != oncrpc.Call {
		if h.ReplyStat != oncrpc.MsgAccepted {
			b.printf(" %s", h.ReplyStat)
		} else if h.AcceptStat != oncrpc.Success {
			b.printf(" %s", h.AcceptStat)
		}
	}
	switch {
	case r.ReducedRPC:
		b.WriteString(" (inline part; Read chunks follow)")
	case r.Rebuilt:
		b.printf(" (rebuilt from the %s chunk, %d bytes)", r.Source, r.RPCLength)
	}
	if r.Reply && r.CallPacket > 0 {
		b.printf(" (call in %d)", r.CallPacket)
	}
}

func headerProc(h *rpcrdma.Message) uint32 {
	if h.Vers == rpcrdma.Version2 {
		return uint32(h.V2.HType)
	}
	return uint32(h.V1.Proc)
}
