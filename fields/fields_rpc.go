package fields

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// The RPC-over-RDMA and ONC RPC fields, named, typed and printed as
// Wireshark 4.0's packet-rpcrdma.c and packet-rpc.c name them, from the
// packet's RPC records (Packet.RPC): the transport header on the packet
// that ends its Send, the RPC message on the packet where it is whole.
// Handles, lengths and offsets list the (version 2) Call chunk, the Read
// list, the Write list, then the Reply chunk, as tshark does for version 1.

// headerAt returns record i of p when its transport header decoded (at
// least its four common words when prefixOnly), else nil.
func headerAt(p *dissect.Packet, i int, prefixOnly bool) *rpcordma.RPCRecord {
	r := &rpcordma.Records(p)[i]
	if !r.HasHeader || !r.PrefixOK || (!prefixOnly && r.HeaderErr != nil) {
		return nil
	}
	return r
}

// rpcAt returns record i of p when it holds a whole RPC message whose
// header decoded, else nil.
func rpcAt(p *dissect.Packet, i int) *rpcordma.RPCRecord {
	if r := &rpcordma.Records(p)[i]; r.HasRPC && r.RPCErr == nil {
		return r
	}
	return nil
}

// The RPC-over-RDMA, RPC and NFS fields repeat per record of Packet.RPC
// (an iWARP segment can complete several Sends).
func rpcordmaField(name, label string, t FieldType, b Base, prefixOnly bool, get func(r *rpcordma.RPCRecord, emit func(Value))) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: "rpcordma", Per: "rpc",
		At: func(p *dissect.Packet, i int, emit func(Value)) {
			if r := headerAt(p, i, prefixOnly); r != nil {
				get(r, emit)
			}
		}}
}

func rpcField(name, label string, t FieldType, b Base, get func(r *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value))) *Field {
	return &Field{Name: name, Label: label, Type: t, Base: b, Parent: "rpc", Per: "rpc",
		At: func(p *dissect.Packet, i int, emit func(Value)) {
			if r := rpcAt(p, i); r != nil {
				get(r, &r.RPC, emit)
			}
		}}
}

// hasLists tells whether the header carries the three chunk lists (tshark
// shows the counts only then).
func hasLists(r *rpcordma.RPCRecord) bool {
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
func listsOf(r *rpcordma.RPCRecord) (reads, writes, reply bool) {
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
func eachSegment(r *rpcordma.RPCRecord, f func(sg rpcrdma.Segment)) {
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

func rpcTable() *Table {
	F := new(Table)
	F.Group("rpcordma", "RPC over RDMA")
	F.Group("rpc", "Remote Procedure Call")
	F.Instances("rpc", func(p *dissect.Packet) int { return len(rpcordma.Records(p)) })
	F.Register(
		rpcordmaField("rpcordma.xid", "XID", FTUint32, BaseHex, true, func(r *rpcordma.RPCRecord, emit func(Value)) {
			emit(u(uint64(r.Common.XID)))
		}),
		rpcordmaField("rpcordma.version", "Version", FTUint32, BaseDec, true, func(r *rpcordma.RPCRecord, emit func(Value)) {
			emit(u(uint64(r.Common.Vers)))
		}),
		rpcordmaField("rpcordma.flow_control", "Flow Control", FTUint32, BaseDec, true, func(r *rpcordma.RPCRecord, emit func(Value)) {
			emit(u(uint64(r.Common.Credit)))
		}),
		rpcordmaField("rpcordma.msg_type", "Message Type", FTUint32, BaseDec, true, func(r *rpcordma.RPCRecord, emit func(Value)) {
			emit(Value{U: uint64(r.Common.Type), Text: rpcordma.ProcName(r.Common.Vers, r.Common.Type)})
		}),
		rpcordmaField("rpcordma.rdma_align", "RDMA align", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if r.Header.Vers == rpcrdma.Version1 && r.Header.V1.Proc == rpcrdma.RDMAMsgp {
				emit(u(uint64(r.Header.V1.Align)))
			}
		}),
		rpcordmaField("rpcordma.rdma_thresh", "RDMA threshold", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if r.Header.Vers == rpcrdma.Version1 && r.Header.V1.Proc == rpcrdma.RDMAMsgp {
				emit(u(uint64(r.Header.V1.Thresh)))
			}
		}),
		rpcordmaField("rpcordma.reads_count", "Read list", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if reads, _, _ := listsOf(r); reads {
				emit(u(uint64(len(r.Header.Chunks().ReadList))))
			}
		}),
		rpcordmaField("rpcordma.writes_count", "Write list", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if _, writes, _ := listsOf(r); writes {
				emit(u(uint64(len(r.Header.Chunks().WriteList))))
			}
		}),
		rpcordmaField("rpcordma.reply_count", "Reply list", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if _, _, reply := listsOf(r); reply {
				emit(boolValue(r.Header.Chunks().HasReplyChunk))
			}
		}),
		rpcordmaField("rpcordma.segment_count", "Write chunk segment count", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
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
		rpcordmaField("rpcordma.position", "Position in XDR", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
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
		rpcordmaField("rpcordma.rdma_handle", "RDMA handle", FTUint32, BaseHex, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(uint64(sg.Handle))) })
		}),
		rpcordmaField("rpcordma.rdma_length", "RDMA length", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(uint64(sg.Length))) })
		}),
		rpcordmaField("rpcordma.rdma_offset", "RDMA offset", FTUint64, BaseHex, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			eachSegment(r, func(sg rpcrdma.Segment) { emit(u(sg.Offset)) })
		}),
		rpcordmaField("rpcordma.errcode", "Error code", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			switch {
			case v1Layout(r) && h.V1.Proc == rpcrdma.RDMAError:
				emit(Value{U: uint64(h.V1.Err), Text: h.V1.Err.String()})
			case h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError:
				emit(Value{U: uint64(h.V2.Err), Text: h.V2.Err.String()})
			}
		}),
		rpcordmaField("rpcordma.vers_low", "Version low", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			switch {
			case v1Layout(r) && h.V1.Proc == rpcrdma.RDMAError && h.V1.Err == rpcrdma.ErrVers:
				emit(u(uint64(h.V1.VersLow)))
			case h.Vers == rpcrdma.Version2 && h.V2.HType == rpcrdma.HTypeError && h.V2.Err == rpcrdma.Err2Vers:
				emit(u(uint64(h.V2.VersLow)))
			}
		}),
		rpcordmaField("rpcordma.vers_high", "Version high", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
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
		rpcordmaField("rdmashark.rpcordma.inv_handle", "Invalidation handle (v2)", FTUint32, BaseHex, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			if h.Vers == rpcrdma.Version2 && (h.V2.HType == rpcrdma.HTypeCallExternal || h.V2.HType == rpcrdma.HTypeCallInline) {
				emit(u(uint64(h.V2.InvHandle)))
			}
		}),
		rpcordmaField("rdmashark.rpcordma.remaining", "Bytes remaining (v2)", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			if h.Vers == rpcrdma.Version2 && (h.V2.HType == rpcrdma.HTypeCallMiddle || h.V2.HType == rpcrdma.HTypeReplyMiddle) {
				emit(u(uint64(h.V2.Remaining)))
			}
		}),
		rpcordmaField("rdmashark.rpcordma.property", "Transport property (v2)", FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			if h.Vers != rpcrdma.Version2 {
				return
			}
			for _, pr := range h.V2.Props {
				emit(Value{U: uint64(pr.Which), Text: pr.Which.String()})
			}
		}),
		rpcordmaField("rdmashark.rpcordma.property_value", "Transport property value (v2)", FTString, BaseNone, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			h := &r.Header
			if h.Vers != rpcrdma.Version2 {
				return
			}
			for _, pr := range h.V2.Props {
				emit(Value{S: propertyValue(pr)})
			}
		}),
		rpcordmaField("rdmashark.rpcordma.chunk", "Chunk", FTString, BaseNone, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
			eachChunkText(r, func(s string) { emit(Value{S: s}) })
		}),
		// Also for a Send shorter than the 16-octet prefix (issue 27).
		&Field{Name: "rdmashark.rpcordma.header_error", Label: "Header error", Type: FTString, Base: BaseNone, Parent: "rpcordma", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(Value)) {
				if r := &rpcordma.Records(p)[i]; r.HasHeader && r.HeaderErr != nil {
					emit(Value{S: r.HeaderErr.Error()})
				}
			}},
		rpcordmaField("rdmashark.rpcordma.retransmission", "Retransmitted Send", FTBoolean, BaseNone, true, func(r *rpcordma.RPCRecord, emit func(Value)) {
			if r.Duplicate {
				emit(Value{U: 1})
			}
		}),

		rpcField("rpc.xid", "XID", FTUint32, BaseHex, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			emit(u(uint64(h.XID)))
		}),
		rpcField("rpc.msgtyp", "Message Type", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			emit(Value{U: uint64(h.MsgType), Text: h.MsgType.String()})
		}),
		rpcField("rpc.version", "RPC Version", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call {
				emit(u(uint64(h.RPCVers)))
			}
		}),
		rpcField("rpc.program", "Program", FTUint32, BaseDec, func(r *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(Value{U: uint64(h.Prog), Text: h.Prog.String()})
			case r.HasProgram:
				emit(Value{U: uint64(r.Program), Text: oncrpc.Program(r.Program).String()})
			}
		}),
		rpcField("rpc.programversion", "Program Version", FTUint32, BaseDec, func(r *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(u(uint64(h.Vers)))
			case r.HasProgram:
				emit(u(uint64(r.Version)))
			}
		}),
		rpcField("rpc.procedure", "Procedure", FTUint32, BaseDec, func(r *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			switch {
			case h.MsgType == oncrpc.Call:
				emit(u(uint64(h.Proc)))
			case r.HasProgram:
				emit(u(uint64(r.Procedure)))
			}
		}),
		// Wireshark shows the Call's frame on a Reply as rpc.repframe (and
		// the Reply's on a Call as rpc.reqframe), in its second pass only.
		rpcField("rpc.repframe", "Call In", FTUint32, BaseDec, func(r *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Reply && r.CallPacket > 0 {
				emit(u(uint64(r.CallPacket)))
			}
		}),
		// The time from the Call to this Reply: from the packet where the
		// Call's RPC message was whole to the packet where the Reply's is.
		&Field{Name: "rpc.time", Label: "Time from request", Type: FTRelTime, Parent: "rpc", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(Value)) {
				r := rpcAt(p, i)
				if r != nil && r.RPC.MsgType == oncrpc.Reply && r.CallPacket > 0 && !r.CallTime.IsZero() {
					if d := p.Timestamp.Sub(r.CallTime); d >= 0 {
						emit(u(uint64(d)))
					}
				}
			}},
		rpcField("rpc.replystat", "Reply State", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Reply {
				emit(Value{U: uint64(h.ReplyStat), Text: h.ReplyStat.String()})
			}
		}),
		rpcField("rpc.state_accept", "Accept State", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Reply && h.ReplyStat == oncrpc.MsgAccepted {
				emit(Value{U: uint64(h.AcceptStat), Text: h.AcceptStat.String()})
			}
		}),
		rpcField("rpc.state_reject", "Reject State", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Reply && h.ReplyStat == oncrpc.MsgDenied {
				emit(Value{U: uint64(h.RejectStat), Text: h.RejectStat.String()})
			}
		}),
		rpcField("rpc.auth.flavor", "Flavor", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call {
				emit(Value{U: uint64(h.Cred.Flavor), Text: h.Cred.Flavor.String()})
			}
			if h.MsgType == oncrpc.Call || h.ReplyStat == oncrpc.MsgAccepted {
				emit(Value{U: uint64(h.Verf.Flavor), Text: h.Verf.Flavor.String()})
			}
		}),
		rpcField("rpc.auth.length", "Length", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call {
				emit(u(uint64(len(h.Cred.Body))))
			}
			if h.MsgType == oncrpc.Call || h.ReplyStat == oncrpc.MsgAccepted {
				emit(u(uint64(len(h.Verf.Body))))
			}
		}),
		rpcField("rpc.auth.stamp", "Stamp", FTUint32, BaseHex, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.Stamp)))
			}
		}),
		rpcField("rpc.auth.machinename", "Machine Name", FTString, BaseNone, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(Value{S: machineName(h.AuthSys.MachineName)})
			}
		}),
		rpcField("rpc.auth.uid", "UID", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.UID)))
			}
		}),
		rpcField("rpc.auth.gid", "GID", FTUint32, BaseDec, func(_ *rpcordma.RPCRecord, h *oncrpc.Header, emit func(Value)) {
			if h.MsgType == oncrpc.Call && h.Cred.Flavor == oncrpc.AuthSysFlav {
				emit(u(uint64(h.AuthSys.GID)))
				for _, g := range h.AuthSys.GIDs {
					emit(u(uint64(g)))
				}
			}
		}),
		rpcField("rdmashark.rpc.procedure_name", "Procedure (upper layer)", FTString, BaseNone, func(r *rpcordma.RPCRecord, _ *oncrpc.Header, emit func(Value)) {
			if r.ULP.Procedure != "" {
				emit(Value{S: r.ULP.Protocol + " " + r.ULP.Procedure})
			}
		}),
		rpcField("rdmashark.rpc.operation", "Operation", FTString, BaseNone, func(r *rpcordma.RPCRecord, _ *oncrpc.Header, emit func(Value)) {
			for _, op := range r.ULP.Operations {
				emit(Value{S: op})
			}
		}),
		rpcField("rdmashark.rpc.rebuilt", "Rebuilt from chunks", FTBoolean, BaseNone, func(r *rpcordma.RPCRecord, _ *oncrpc.Header, emit func(Value)) {
			emit(boolValue(r.Rebuilt))
		}),
		rpcField("rdmashark.rpc.length", "RPC message length", FTUint32, BaseDec, func(r *rpcordma.RPCRecord, _ *oncrpc.Header, emit func(Value)) {
			emit(u(uint64(r.RPCLength)))
		}),
		rpcField("rdmashark.rpc.backchannel", "Backchannel", FTBoolean, BaseNone, func(r *rpcordma.RPCRecord, _ *oncrpc.Header, emit func(Value)) {
			emit(boolValue(r.Backchannel))
		}),
		&Field{Name: "rdmashark.rpc.header_error", Label: "RPC header error", Type: FTString, Parent: "rpc", Per: "rpc",
			At: func(p *dissect.Packet, i int, emit func(Value)) {
				if r := &rpcordma.Records(p)[i]; r.HasRPC && r.RPCErr != nil {
					emit(Value{S: r.RPCErr.Error()})
				}
			}},
	)
	return F
}

// v2ErrField is a field of a version 2 RDMA2_ERROR's error arm
// (draft-07 "RDMA2_ERROR"), present for the codes that carry it.
func v2ErrField(name, label string, get func(h *rpcrdma.Header2) (uint32, bool)) *Field {
	return rpcordmaField(name, label, FTUint32, BaseDec, false, func(r *rpcordma.RPCRecord, emit func(Value)) {
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
func eachChunkText(r *rpcordma.RPCRecord, f func(string)) {
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
func v1Layout(r *rpcordma.RPCRecord) bool {
	h := &r.Header
	return h.Vers == rpcrdma.Version1 || h.Vers != rpcrdma.Version2 && r.HeaderErr == nil && r.HasHeader
}
