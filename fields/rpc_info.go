package fields

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// infoFuncs are the plug-ins' parts of the summary line (RegisterInfo).
var infoFuncs []func(p *dissect.Packet, dst []byte) []byte

// RegisterInfo adds a plug-in's part of the summary line (tshark's Info
// column): f appends what the packet's records of its ULP say
// (dissect.Packet.ULP), or nothing. The command's list of plug-ins calls it
// before any output is made.
func RegisterInfo(f func(p *dissect.Packet, dst []byte) []byte) { infoFuncs = append(infoFuncs, f) }

// rpcInfo appends the RPC-over-RDMA messages the packet completed to the
// summary line, e.g.
// "| RPCoRDMA RDMA_NOMSG xid=0x3cfb4714 reply-chunk=1 | RPC Reply NFS v4 proc 1".
func rpcInfo(p *dissect.Packet, b *infoBuf, start int) {
	for i := range rpcordma.Records(p) {
		r := &rpcordma.Records(p)[i]
		if b.Len() > start {
			b.WriteString(" | ")
		}
		recordInfo(r, b)
	}
}

func recordInfo(r *rpcordma.RPCRecord, b *infoBuf) {
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
		b.WriteByte(' ')
		b.WriteString(rpcordma.ProcName(h.Vers, headerProc(h)))
		b.WriteString(" xid=")
		b.hex(uint64(h.XID()), 8)
		if h.Vers == rpcrdma.Version2 {
			b.WriteString(" v2")
		}
		ch := h.Chunks()
		if n := len(ch.ReadChunks); n > 0 {
			b.WriteString(" read-chunks=")
			b.uint(uint64(n))
		}
		if h.Vers == rpcrdma.Version2 && len(h.V2.CallList) > 0 {
			b.WriteString(" call-chunk=1")
		}
		if n := len(ch.WriteList); n > 0 {
			b.WriteString(" write-chunks=")
			b.uint(uint64(n))
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
			b.WriteString(" inv=")
			b.hex(uint64(r.InvalidatedSTag), 8)
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
		b.WriteString(u.Protocol)
		b.WriteString(" V")
		b.uint(uint64(vers))
		b.WriteByte(' ')
		b.WriteString(kind)
		b.WriteByte(' ')
		b.WriteString(u.Procedure)
		for i, op := range u.Operations {
			if i == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(op)
		}
	case h.MsgType == oncrpc.Call:
		b.WriteString("RPC Call ")
		b.WriteString(h.Prog.String())
		b.WriteString(" v")
		b.uint(uint64(h.Vers))
		b.WriteString(" proc ")
		b.uint(uint64(h.Proc))
	default:
		b.WriteString("RPC Reply")
		if r.HasProgram {
			b.WriteByte(' ')
			b.WriteString(oncrpc.Program(r.Program).String())
			b.WriteString(" v")
			b.uint(uint64(r.Version))
			b.WriteString(" proc ")
			b.uint(uint64(r.Procedure))
		}
	}
	if h.MsgType != oncrpc.Call {
		if h.ReplyStat != oncrpc.MsgAccepted {
			b.WriteByte(' ')
			b.WriteString(h.ReplyStat.String())
		} else if h.AcceptStat != oncrpc.Success {
			b.WriteByte(' ')
			b.WriteString(h.AcceptStat.String())
		}
	}
	switch {
	case r.ReducedRPC:
		b.WriteString(" (inline part; Read chunks follow)")
	case r.Rebuilt:
		b.WriteString(" (rebuilt from the ")
		b.WriteString(r.Source.String())
		b.WriteString(" chunk, ")
		b.int(int64(r.RPCLength))
		b.WriteString(" bytes)")
	}
	if r.Reply && r.CallPacket > 0 {
		b.WriteString(" (call in ")
		b.int(int64(r.CallPacket))
		b.WriteByte(')')
	}
}

func headerProc(h *rpcrdma.Message) uint32 {
	if h.Vers == rpcrdma.Version2 {
		return uint32(h.V2.HType)
	}
	return uint32(h.V1.Proc)
}
