package rpcordma

import (
	"fmt"
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// AppendInfo is RPC-over-RDMA's part of the summary line
// (fields.RegisterInfo): the messages the packet completed, joined by
// " | ", e.g.
// "RPCoRDMA RDMA_NOMSG xid=0x3cfb4714 reply-chunk=1 | RPC Reply NFS v4 proc 1".
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	b := infoBuf{dst}
	for i := range Records(p) {
		if i > 0 {
			b.WriteString(" | ")
		}
		recordInfo(&Records(p)[i], &b)
	}
	return b.b
}

// appendMessageInfo appends message i's part of the summary line
// (fields.Messages.Info: one line per iWARP FPDU).
func appendMessageInfo(p *dissect.Packet, i int, dst []byte) []byte {
	b := infoBuf{dst}
	recordInfo(&Records(p)[i], &b)
	return b.b
}

// AppendKey writes the key of an RPC exchange, its XID, as the dissector,
// tshark's rpc.xid and `transactions` print it: 0x and eight hex digits
// (fields.RegisterExchangeKey).
func AppendKey(dst []byte, key uint64) []byte { return fields.AppendHex(dst, key, 8) }

// infoBuf builds the summary line's text (fields' own, for the methods
// recordInfo writes with): a byte slice the common parts are appended to
// with strconv, and fmt prints into for the rare ones.
type infoBuf struct{ b []byte }

func (w *infoBuf) WriteString(s string)   { w.b = append(w.b, s...) }
func (w *infoBuf) WriteByte(c byte) error { w.b = append(w.b, c); return nil }

// uint appends v in decimal (%d).
func (w *infoBuf) uint(v uint64) { w.b = strconv.AppendUint(w.b, v, 10) }

// int appends v in decimal (%d).
func (w *infoBuf) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

// hex appends v as 0x and at least digits lowercase hex digits (0x%0*x).
func (w *infoBuf) hex(v uint64, digits int) { w.b = fields.AppendHex(w.b, v, digits) }

// printf appends fmt's formatting.
func (w *infoBuf) printf(format string, a ...any) { w.b = fmt.Appendf(w.b, format, a...) }

func recordInfo(r *RPCRecord, b *infoBuf) {
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
		b.WriteString(ProcName(h.Vers, headerProc(h)))
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
