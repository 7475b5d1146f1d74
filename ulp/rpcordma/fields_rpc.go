package rpcordma

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// The RPC-over-RDMA and ONC RPC fields, named, typed and printed as
// Wireshark 4.0's packet-rpcrdma.c and packet-rpc.c name them, from the
// packet's RPC records (Packet.RPC): the transport header on the packet
// that ends its Send, the RPC message on the packet where it is whole.
// Handles, lengths and offsets list the (version 2) Call chunk, the Read
// list, the Write list, then the Reply chunk, as tshark does for version 1.

// headerAt returns record i of p when its transport header decoded (at
// least its four common words when prefixOnly), else nil.
func headerAt(p *dissect.Packet, i int, prefixOnly bool) *RPCRecord {
	r := &Records(p)[i]
	if !r.HasHeader || !r.PrefixOK || (!prefixOnly && r.HeaderErr != nil) {
		return nil
	}
	return r
}

// rpcAt returns record i of p when it holds a whole RPC message whose
// header decoded, else nil.
func rpcAt(p *dissect.Packet, i int) *RPCRecord {
	if r := &Records(p)[i]; r.HasRPC && r.RPCErr == nil {
		return r
	}
	return nil
}

// The RPC-over-RDMA, RPC and NFS fields repeat per record of Packet.RPC
// (an iWARP segment can complete several Sends).
func rpcordmaField(name, label string, t fields.FieldType, b fields.Base, prefixOnly bool, get func(r *RPCRecord, emit func(fields.Value))) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: t, Base: b, Parent: "rpcordma", Per: "rpc",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := headerAt(p, i, prefixOnly); r != nil {
				get(r, emit)
			}
		}}
}

func rpcField(name, label string, t fields.FieldType, b fields.Base, get func(r *RPCRecord, h *oncrpc.Header, emit func(fields.Value))) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: t, Base: b, Parent: "rpc", Per: "rpc",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := rpcAt(p, i); r != nil {
				get(r, &r.RPC, emit)
			}
		}}
}

// hasLists tells whether the header carries the three chunk lists (tshark
// shows the counts only then).
func hasLists(r *RPCRecord) bool {
	h := &r.Header
	if h.Vers == rpcrdma.Version2 {
		switch h.V2.HType {
		case rpcrdma.HTypeCallExternal, rpcrdma.HTypeCallMiddle, rpcrdma.HTypeCallInline,
			rpcrdma.HTypeReplyExternal, rpcrdma.HTypeReplyMiddle, rpcrdma.HTypeReplyInline:
			return true
		}
		return false
	}
	switch h.V1.Proc {
	case rpcrdma.RDMAMsg, rpcrdma.RDMANoMsg, rpcrdma.RDMAMsgp:
		return true
	}
	return false
}

// listsOf tells which chunk lists r's header type has in its XDR. Version
// 1's RDMA_MSG, RDMA_NOMSG and RDMA_MSGP have all three; in version 2
// (draft-07) CALL_EXTERNAL and CALL_INLINE have rdma_reads,
// rdma_provisional_writes and rdma_provisional_reply, REPLY_EXTERNAL
// rdma_writes and rdma_reply, REPLY_INLINE rdma_writes only, and the
// *_MIDDLE types none: a list a type lacks has no count to show.
func listsOf(r *RPCRecord) (reads, writes, reply bool) {
	if !hasLists(r) {
		return false, false, false
	}
	h := &r.Header
	if h.Vers != rpcrdma.Version2 {
		return true, true, true
	}
	switch h.V2.HType {
	case rpcrdma.HTypeCallExternal, rpcrdma.HTypeCallInline:
		return true, true, true
	case rpcrdma.HTypeReplyExternal:
		return false, true, true
	case rpcrdma.HTypeReplyInline:
		return false, true, false
	}
	return false, false, false
}

// eachSegment calls f for every segment in tshark's order.
func eachSegment(r *RPCRecord, f func(sg rpcrdma.Segment)) {
	if !hasLists(r) {
		return
	}
	h := &r.Header
	if h.Vers == rpcrdma.Version2 {
		for _, rs := range h.V2.CallList {
			f(rs.Segment)
		}
	}
	c := h.Chunks()
	for _, rs := range c.ReadList {
		f(rs.Segment)
	}
	for _, wc := range c.WriteList {
		for _, sg := range wc.Segments {
			f(sg)
		}
	}
	if c.HasReplyChunk {
		for _, sg := range c.ReplyChunk.Segments {
			f(sg)
		}
	}
}

// FieldTable is RPC-over-RDMA's part of the field registry
// (fields.RegisterTable): the NFS, MOUNT and NFSACL fields, the
// RPC-over-RDMA and ONC RPC fields (tshark 4.0's names, and rdmashark's
// own under rdmashark.rpcordma and rdmashark.rpc), and the messages a
// packet completed for frame.protocols and the one-line-per-FPDU summary.
func FieldTable() *fields.Table {
	t := new(fields.Table)
	nfsTable(t)
	nfsMoreTable(t)
	rpcTable(t)
	t.Messages(fields.Messages{
		Count:         func(p *dissect.Packet) int { return len(Records(p)) },
		Info:          appendMessageInfo,
		ProtocolNames: protocolNames[:],
		Protocols:     messageProtocols,
		// A Call rebuilt from a Read chunk has no transport header of
		// its own: the Read Response that brought its last bytes
		// completes it.
		ByRead: func(p *dissect.Packet, i int) bool { return !Records(p)[i].HasHeader },
	})
	return t
}

func u(v uint64) fields.Value { return fields.Value{U: v} }

func boolValue(b bool) fields.Value {
	if b {
		return fields.Value{U: 1}
	}
	return fields.Value{}
}

// The protocols of frame.protocols an RPC-over-RDMA message holds, as
// tshark 4.0 names them (fields.Messages.ProtocolNames).
const (
	protoRPCoRDMA = iota
	protoRPC
	protoNFS
	protoNFSACL
	protoMount
	protoPortmap
	numProtocols
)

var protocolNames = [numProtocols]string{
	protoRPCoRDMA: "rpcordma", protoRPC: "rpc", protoNFS: "nfs", protoNFSACL: "nfsacl",
	protoMount: "mount", protoPortmap: "portmap",
}

// The lists messageProtocols returns (read only).
var (
	protosHeader  = []int{protoRPCoRDMA}
	protosRPC     = []int{protoRPCoRDMA, protoRPC}
	protosProgram = [numProtocols][]int{
		protoNFS:     {protoRPCoRDMA, protoRPC, protoNFS},
		protoNFSACL:  {protoRPCoRDMA, protoRPC, protoNFSACL},
		protoMount:   {protoRPCoRDMA, protoRPC, protoMount},
		protoPortmap: {protoRPCoRDMA, protoRPC, protoPortmap},
	}
)

// messageProtocols lists what message i of p holds: "rpcordma", then
// "rpc" when an RPC message is whole, then its program's protocol, except
// for the NULL procedure, which tshark leaves to RPC.
func messageProtocols(p *dissect.Packet, i int) []int {
	r := &Records(p)[i]
	if !r.HasRPC {
		return protosHeader
	}
	prog, _, proc, ok := rpcProgram(r, &r.RPC)
	if !ok || proc == 0 {
		return protosRPC
	}
	switch oncrpc.Program(prog) {
	case oncrpc.ProgNFS:
		return protosProgram[protoNFS]
	case oncrpc.ProgNFSACL:
		return protosProgram[protoNFSACL]
	case oncrpc.ProgMount:
		return protosProgram[protoMount]
	case oncrpc.ProgPortmap:
		return protosProgram[protoPortmap]
	}
	return protosRPC
}

func rpcTable(F *fields.Table) {
	F.Group("rpcordma", "RPC over RDMA")
	F.Group("rpc", "Remote Procedure Call")
	F.Instances("rpc", func(p *dissect.Packet) int { return len(Records(p)) })
	F.Register(
		rpcordmaField("rpcordma.xid", "XID", fields.FTUint32, fields.BaseHex, true, func(r *RPCRecord, emit func(fields.Value)) {
			emit(u(uint64(r.Common.XID)))
		}),
		rpcordmaField("rpcordma.version", "Version", fields.FTUint32, fields.BaseDec, true, func(r *RPCRecord, emit func(fields.Value)) {
			emit(u(uint64(r.Common.Vers)))
		}),
		rpcordmaField("rpcordma.flow_control", "Flow Control", fields.FTUint32, fields.BaseDec, true, func(r *RPCRecord, emit func(fields.Value)) {
			emit(u(uint64(r.Common.Credit)))
		}),
		rpcordmaField("rpcordma.msg_type", "Message Type", fields.FTUint32, fields.BaseDec, true, func(r *RPCRecord, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(r.Common.Type), Text: ProcName(r.Common.Vers, r.Common.Type)})
		}),
		rpcordmaField("rpcordma.rdma_align", "RDMA align", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if r.Header.Vers == rpcrdma.Version1 && r.Header.V1.Proc == rpcrdma.RDMAMsgp {
				emit(u(uint64(r.Header.V1.Align)))
			}
		}),
		rpcordmaField("rpcordma.rdma_thresh", "RDMA threshold", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if r.Header.Vers == rpcrdma.Version1 && r.Header.V1.Proc == rpcrdma.RDMAMsgp {
				emit(u(uint64(r.Header.V1.Thresh)))
			}
		}),
		rpcordmaField("rpcordma.reads_count", "Read list", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if reads, _, _ := listsOf(r); reads {
				emit(u(uint64(len(r.Header.Chunks().ReadList))))
			}
		}),
		rpcordmaField("rpcordma.writes_count", "Write list", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if _, writes, _ := listsOf(r); writes {
				emit(u(uint64(len(r.Header.Chunks().WriteList))))
			}
		}),
		rpcordmaField("rpcordma.reply_count", "Reply list", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if _, _, reply := listsOf(r); reply {
				emit(boolValue(r.Header.Chunks().HasReplyChunk))
			}
		}),
		rpcordmaField("rpcordma.segment_count", "Write chunk segment count", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if !hasLists(r) {
				return
			}
			c := r.Header.Chunks()
			for _, wc := range c.WriteList {
				emit(u(uint64(len(wc.Segments))))
			}
			if c.HasReplyChunk {
				emit(u(uint64(len(c.ReplyChunk.Segments))))
			}
		}),
		rpcordmaField("rpcordma.position", "Position in XDR", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			if !hasLists(r) {
				return
			}
			if r.Header.Vers == rpcrdma.Version2 {
				for _, rs := range r.Header.V2.CallList {
					emit(u(uint64(rs.Position)))
				}
			}
			for _, rs := range r.Header.Chunks().ReadList {
				emit(u(uint64(rs.Position)))
			}
		}),
		rpcordmaField("rpcordma.rdma_handle", "RDMA handle", fields.FTUint32, fields.BaseHex, false, func(r *RPCRecord, emit func(fields.Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(uint64(sg.Handle))) })
		}),
		rpcordmaField("rpcordma.rdma_length", "RDMA length", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(uint64(sg.Length))) })
		}),
		rpcordmaField("rpcordma.rdma_offset", "RDMA offset", fields.FTUint64, fields.BaseHex, false, func(r *RPCRecord, emit func(fields.Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(sg.Offset)) })
		}),
		rpcordmaField("rpcordma.errcode", "Error code", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			switch {
			case v1Layout(r) && h.V1.Proc == rpcrdma.RDMAError:
				emit(fields.Value{U: uint64(h.V1.Err), Text: h.V1.Err.String()})
			case h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError:
				emit(fields.Value{U: uint64(h.V2.Err), Text: h.V2.Err.String()})
			}
		}),
		rpcordmaField("rpcordma.vers_low", "Version low", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			switch {
			case v1Layout(r) && h.V1.Proc == rpcrdma.RDMAError && h.V1.Err == rpcrdma.ErrVers:
				emit(u(uint64(h.V1.VersLow)))
			case h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError && h.V2.Err == rpcrdma.Err2Vers:
				emit(u(uint64(h.V2.VersLow)))
			}
		}),
		rpcordmaField("rpcordma.vers_high", "Version high", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			switch {
			case v1Layout(r) && h.V1.Proc == rpcrdma.RDMAError && h.V1.Err == rpcrdma.ErrVers:
				emit(u(uint64(h.V1.VersHigh)))
			case h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError && h.V2.Err == rpcrdma.Err2Vers:
				emit(u(uint64(h.V2.VersHigh)))
			}
		}),
		// Version 2 and rdmashark's own: Wireshark 4.0 knows neither.
		v2ErrField("rdmashark.rpcordma.max_chunks", "Maximum chunks (v2 error)", func(h *rpcrdma.Header2) (uint32, bool) {
			return h.MaxChunks, h.Err == rpcrdma.Err2ReadChunks || h.Err == rpcrdma.Err2WriteChunks
		}),
		v2ErrField("rdmashark.rpcordma.max_segments", "Maximum segments (v2 error)", func(h *rpcrdma.Header2) (uint32, bool) {
			return h.MaxSegs, h.Err == rpcrdma.Err2Segments
		}),
		v2ErrField("rdmashark.rpcordma.chunk_index", "Chunk index (v2 error)", func(h *rpcrdma.Header2) (uint32, bool) {
			return h.ChunkIndex, h.Err == rpcrdma.Err2WriteResource
		}),
		v2ErrField("rdmashark.rpcordma.length_needed", "Length needed (v2 error)", func(h *rpcrdma.Header2) (uint32, bool) {
			return h.LengthNeeded, h.Err == rpcrdma.Err2WriteResource || h.Err == rpcrdma.Err2ReplyResource
		}),
		rpcordmaField("rdmashark.rpcordma.inv_handle", "Invalidation handle (v2)", fields.FTUint32, fields.BaseHex, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			if h.Vers == rpcrdma.Version2 && (h.V2.HType == rpcrdma.HTypeCallExternal || h.V2.HType == rpcrdma.HTypeCallInline) {
				emit(u(uint64(h.V2.InvHandle)))
			}
		}),
		rpcordmaField("rdmashark.rpcordma.remaining", "Bytes remaining (v2)", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			if h.Vers == rpcrdma.Version2 && (h.V2.HType == rpcrdma.HTypeCallMiddle || h.V2.HType == rpcrdma.HTypeReplyMiddle) {
				emit(u(uint64(h.V2.Remaining)))
			}
		}),
		rpcordmaField("rdmashark.rpcordma.property", "Transport property (v2)", fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			if h.Vers != rpcrdma.Version2 {
				return
			}
			for _, pr := range h.V2.Props {
				emit(fields.Value{U: uint64(pr.Which), Text: pr.Which.String()})
			}
		}),
		rpcordmaField("rdmashark.rpcordma.property_value", "Transport property value (v2)", fields.FTString, fields.BaseNone, false, func(r *RPCRecord, emit func(fields.Value)) {
			h := &r.Header
			if h.Vers != rpcrdma.Version2 {
				return
			}
			for _, pr := range h.V2.Props {
				emit(fields.Value{S: propertyValue(pr)})
			}
		}),
		rpcordmaField("rdmashark.rpcordma.chunk", "Chunk", fields.FTString, fields.BaseNone, false, func(r *RPCRecord, emit func(fields.Value)) {
			eachChunkText(r, func(s string) { emit(fields.Value{S: s}) })
		}),
		// Also for a Send shorter than the 16-octet prefix (issue 27).
		&fields.Field{Name: "rdmashark.rpcordma.header_error", Label: "Header error", Type: fields.FTString, Base: fields.BaseNone, Parent: "rpcordma", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
				if r := &Records(p)[i]; r.HasHeader && r.HeaderErr != nil {
					emit(fields.Value{S: r.HeaderErr.Error()})
				}
			}},
		rpcordmaField("rdmashark.rpcordma.retransmission", "Retransmitted Send", fields.FTBoolean, fields.BaseNone, true, func(r *RPCRecord, emit func(fields.Value)) {
			if r.Duplicate {
				emit(fields.Value{U: 1})
			}
		}),

		rpcField("rpc.xid", "XID", fields.FTUint32, fields.BaseHex, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			emit(u(uint64(h.XID)))
		}),
		rpcField("rpc.msgtyp", "Message Type", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(h.MsgType), Text: h.MsgType.String()})
		}),
		rpcField("rpc.version", "RPC Version", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call {
				emit(u(uint64(h.RPCVers)))
			}
		}),
		rpcField("rpc.program", "Program", fields.FTUint32, fields.BaseDec, func(r *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(fields.Value{U: uint64(h.Prog), Text: h.Prog.String()})
			case r.HasProgram:
				emit(fields.Value{U: uint64(r.Program), Text: oncrpc.Program(r.Program).String()})
			}
		}),
		rpcField("rpc.programversion", "Program Version", fields.FTUint32, fields.BaseDec, func(r *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(u(uint64(h.Vers)))
			case r.HasProgram:
				emit(u(uint64(r.Version)))
			}
		}),
		rpcField("rpc.procedure", "Procedure", fields.FTUint32, fields.BaseDec, func(r *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(u(uint64(h.Proc)))
			case r.HasProgram:
				emit(u(uint64(r.Procedure)))
			}
		}),
		// Wireshark shows the Call's frame on a Reply as rpc.repframe (and
		// the Reply's on a Call as rpc.reqframe), in its second pass only.
		rpcField("rpc.repframe", "Call In", fields.FTUint32, fields.BaseDec, func(r *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Reply && r.CallPacket > 0 {
				emit(u(uint64(r.CallPacket)))
			}
		}),
		// The time from the Call to this Reply: from the packet where the
		// Call's RPC message was whole to the packet where the Reply's is.
		&fields.Field{Name: "rpc.time", Label: "Time from request", Type: fields.FTRelTime, Parent: "rpc", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
				r := rpcAt(p, i)
				if r != nil && r.RPC.MsgType == oncrpc.Reply && r.CallPacket > 0 && !r.CallTime.IsZero() {
					if d := p.Timestamp.Sub(r.CallTime); d >= 0 {
						emit(u(uint64(d)))
					}
				}
			}},
		rpcField("rpc.replystat", "Reply State", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Reply {
				emit(fields.Value{U: uint64(h.ReplyStat), Text: h.ReplyStat.String()})
			}
		}),
		rpcField("rpc.state_accept", "Accept State", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Reply && h.ReplyStat == oncrpc.MsgAccepted {
				emit(fields.Value{U: uint64(h.AcceptStat), Text: h.AcceptStat.String()})
			}
		}),
		rpcField("rpc.state_reject", "Reject State", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Reply && h.ReplyStat == oncrpc.MsgDenied {
				emit(fields.Value{U: uint64(h.RejectStat), Text: h.RejectStat.String()})
			}
		}),
		rpcField("rpc.auth.flavor", "Flavor", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call {
				emit(fields.Value{U: uint64(h.Cred.Flavor), Text: h.Cred.Flavor.String()})
			}
			if h.MsgType == oncrpc.Call || h.ReplyStat == oncrpc.MsgAccepted {
				emit(fields.Value{U: uint64(h.Verf.Flavor), Text: h.Verf.Flavor.String()})
			}
		}),
		rpcField("rpc.auth.length", "Length", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call {
				emit(u(uint64(len(h.Cred.Body))))
			}
			if h.MsgType == oncrpc.Call || h.ReplyStat == oncrpc.MsgAccepted {
				emit(u(uint64(len(h.Verf.Body))))
			}
		}),
		rpcField("rpc.auth.stamp", "Stamp", fields.FTUint32, fields.BaseHex, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.Stamp)))
			}
		}),
		rpcField("rpc.auth.machinename", "Machine Name", fields.FTString, fields.BaseNone, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(fields.Value{S: machineName(h.AuthSys.MachineName)})
			}
		}),
		rpcField("rpc.auth.uid", "UID", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.UID)))
			}
		}),
		rpcField("rpc.auth.gid", "GID", fields.FTUint32, fields.BaseDec, func(_ *RPCRecord, h *oncrpc.Header, emit func(fields.Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.GID)))
				for _, g := range h.AuthSys.GIDs {
					emit(u(uint64(g)))
				}
			}
		}),
		rpcField("rdmashark.rpc.procedure_name", "Procedure (upper layer)", fields.FTString, fields.BaseNone, func(r *RPCRecord, _ *oncrpc.Header, emit func(fields.Value)) {
			if r.ULP.Procedure != "" {
				emit(fields.Value{S: r.ULP.Protocol + " " + r.ULP.Procedure})
			}
		}),
		rpcField("rdmashark.rpc.operation", "Operation", fields.FTString, fields.BaseNone, func(r *RPCRecord, _ *oncrpc.Header, emit func(fields.Value)) {
			for _, op := range r.ULP.Operations {
				emit(fields.Value{S: op})
			}
		}),
		rpcField("rdmashark.rpc.rebuilt", "Rebuilt from chunks", fields.FTBoolean, fields.BaseNone, func(r *RPCRecord, _ *oncrpc.Header, emit func(fields.Value)) {
			emit(boolValue(r.Rebuilt))
		}),
		rpcField("rdmashark.rpc.length", "RPC message length", fields.FTUint32, fields.BaseDec, func(r *RPCRecord, _ *oncrpc.Header, emit func(fields.Value)) {
			emit(u(uint64(r.RPCLength)))
		}),
		rpcField("rdmashark.rpc.backchannel", "Backchannel", fields.FTBoolean, fields.BaseNone, func(r *RPCRecord, _ *oncrpc.Header, emit func(fields.Value)) {
			emit(boolValue(r.Backchannel))
		}),
		&fields.Field{Name: "rdmashark.rpc.header_error", Label: "RPC header error", Type: fields.FTString, Parent: "rpc", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
				if r := &Records(p)[i]; r.HasRPC && r.RPCErr != nil {
					emit(fields.Value{S: r.RPCErr.Error()})
				}
			}},
	)
}

// v2ErrField is a field of a version 2 RDMA2_ERROR's error arm
// (draft-07 "RDMA2_ERROR"), present for the codes that carry it.
func v2ErrField(name, label string, get func(h *rpcrdma.Header2) (uint32, bool)) *fields.Field {
	return rpcordmaField(name, label, fields.FTUint32, fields.BaseDec, false, func(r *RPCRecord, emit func(fields.Value)) {
		h := &r.Header
		if h.Vers != rpcrdma.Version2 || h.V2.HType != rpcrdma.HTypeError {
			return
		}
		if v, ok := get(&h.V2); ok {
			emit(u(uint64(v)))
		}
	})
}

// propertyValue shows a version 2 transport property's value (draft-07
// "Transport Properties"): a size or count in decimal, the reverse-direction
// support by name, the host authentication message in hex, "(default)" after
// the default value an empty rdma_data stands for, and why a value does not
// decode (no commas: -T fields joins values with them).
func propertyValue(pr rpcrdma.Property) string {
	switch pr.Which {
	case rpcrdma.PropMaxSendSize, rpcrdma.PropRecvBufSize, rpcrdma.PropMaxSegmentSize, rpcrdma.PropMaxSegments, rpcrdma.PropReverseDir:
		v, err := pr.Uint32()
		if err != nil {
			return fmt.Sprintf("bad value: %d bytes (not one XDR uint32)", len(pr.Data))
		}
		s := strconv.FormatUint(uint64(v), 10)
		if pr.Which == rpcrdma.PropReverseDir {
			s = rpcrdma.ReverseDirection(v).String()
		}
		if len(pr.Data) == 0 {
			s += " (default)"
		}
		return s
	case rpcrdma.PropHostAuth:
		b, err := pr.HostAuth()
		if err != nil {
			return fmt.Sprintf("bad value: %d bytes (not an XDR opaque)", len(pr.Data))
		}
		return hex.EncodeToString(b)
	}
	return "unknown property: " + hex.EncodeToString(pr.Data)
}

// eachChunkText describes each chunk of the header on one line, e.g.
// "Read chunk at position 128: 0x00000ca8 131072 bytes at 0xb5ad315dcc414000, ...".
func eachChunkText(r *RPCRecord, f func(string)) {
	if !hasLists(r) {
		return
	}
	segs := func(b *strings.Builder, ss []rpcrdma.Segment) {
		for i, sg := range ss {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "0x%08x %d bytes at 0x%016x", sg.Handle, sg.Length, sg.Offset)
		}
	}
	h := &r.Header
	if h.Vers == rpcrdma.Version2 && len(h.V2.CallList) > 0 {
		var b strings.Builder
		b.WriteString("Call chunk: ")
		for i, rs := range h.V2.CallList {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "0x%08x %d bytes at 0x%016x", rs.Handle, rs.Length, rs.Offset)
		}
		f(b.String())
	}
	c := h.Chunks()
	for _, rc := range c.ReadChunks {
		var b strings.Builder
		fmt.Fprintf(&b, "Read chunk at position %d: ", rc.Position)
		segs(&b, rc.Segments)
		f(b.String())
	}
	for i, wc := range c.WriteList {
		var b strings.Builder
		fmt.Fprintf(&b, "Write chunk %d: ", i+1)
		segs(&b, wc.Segments)
		f(b.String())
	}
	if c.HasReplyChunk {
		var b strings.Builder
		b.WriteString("Reply chunk: ")
		segs(&b, c.ReplyChunk.Segments)
		f(b.String())
	}
}

// lastMachineName is the AUTH_SYS machine name seen last: a capture's
// calls carry the same few names, and converting each to a string would
// allocate on every packet a filter or -T fields looks at.
var lastMachineName atomic.Pointer[string]

// machineName returns b as a string, the one made last time when b is the
// same name.
func machineName(b []byte) string {
	if p := lastMachineName.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	lastMachineName.Store(&s)
	return s
}

// v1Layout tells whether r's header is in V1: version 1, or an
// RDMA_ERROR/ERR_VERS of another version than 2, whose XDR every version
// keeps (rpcrdma.Message).
func v1Layout(r *RPCRecord) bool {
	h := &r.Header
	return h.Vers == rpcrdma.Version1 || h.Vers != rpcrdma.Version2 && r.HeaderErr == nil && r.HasHeader
}
