package srp

import (
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/srp"
)

// FieldTable is SRP's part of the field registry (fields.RegisterTable).
// tshark 4.0 has no SRP dissector (its InfiniBand dissector shows an SRP
// IU as data), so every field is rdmashark's own, rdmashark.srp.*, named
// after the standard's field names, read from the IU records the session
// keeps per packet (dissect.Packet.ULP); they repeat per IU ("srp"
// instances: an iWARP segment can complete several). The login's fields
// are on the packet of the set-up that carried them (CM REQ and REP, MPA
// Request and Reply). Their values were checked against the IUs' octets in
// the real captures (fields_test.go).
func FieldTable() *fields.Table {
	t := &fields.Table{}
	t.Group("rdmashark.srp", "SCSI RDMA Protocol")
	t.Instances("srp", iuCount)
	u := func(v uint64) fields.Value { return fields.Value{U: v} }
	// of: a field of the IUs whose type code ops holds (none: all).
	of := func(name, label string, ft fields.FieldType, base fields.Base, ops []srp.Opcode, get func(r *IU) fields.Value) *fields.Field {
		return iuField(name, label, ft, base, func(r *IU, emit func(fields.Value)) {
			if !srp.FixedOK(r.Err) {
				return
			}
			if len(ops) > 0 && !hasOp(ops, r.Msg.Opcode) {
				return
			}
			emit(get(r))
		})
	}
	cmd := []srp.Opcode{srp.OpCmd}
	rsp := []srp.Opcode{srp.OpRsp}
	tmf := []srp.Opcode{srp.OpTskMgmt}
	delta := []srp.Opcode{srp.OpRsp, srp.OpCredReq, srp.OpAERReq}
	// desc: the fields of a direct data buffer descriptor, one value per
	// descriptor of the SRP_CMD: data-out's first, then data-in's; an
	// indirect descriptor's partial list entries (its table descriptor
	// has fields of its own).
	desc := func(name, label string, ft fields.FieldType, base fields.Base, get func(d srp.Descriptor) uint64) *fields.Field {
		return iuField(name, label, ft, base, func(r *IU, emit func(fields.Value)) {
			if r.Err != nil || r.Msg.Opcode != srp.OpCmd {
				return
			}
			for _, bf := range [2]*srp.Buffer{&r.Msg.Command.DataOut, &r.Msg.Command.DataIn} {
				switch bf.Format {
				case srp.FormatDirect:
					emit(u(get(bf.Direct)))
				case srp.FormatIndirect:
					for _, d := range r.descs {
						if d.out == (bf == &r.Msg.Command.DataOut) {
							emit(u(get(d.d)))
						}
					}
				}
			}
		})
	}
	table := func(name, label string, ft fields.FieldType, base fields.Base, get func(bf *srp.Buffer) uint64) *fields.Field {
		return iuField(name, label, ft, base, func(r *IU, emit func(fields.Value)) {
			if r.Err != nil || r.Msg.Opcode != srp.OpCmd {
				return
			}
			for _, bf := range [2]*srp.Buffer{&r.Msg.Command.DataOut, &r.Msg.Command.DataIn} {
				if bf.Format == srp.FormatIndirect {
					emit(u(get(bf)))
				}
			}
		})
	}
	t.Register(
		iuField("rdmashark.srp.opcode", "Information unit type", fields.FTUint8, fields.BaseHex, func(r *IU, emit func(fields.Value)) {
			if r.Err != srp.ErrTruncated && r.Length > 0 {
				emit(fields.Value{U: uint64(r.Msg.Opcode), Text: r.Msg.Opcode.String()})
			}
		}),
		iuField("rdmashark.srp.tag", "Tag", fields.FTUint64, fields.BaseHex, func(r *IU, emit func(fields.Value)) {
			if r.Length >= 16 && r.Msg.Opcode.Known() {
				emit(u(r.Msg.Tag))
			}
		}),
		of("rdmashark.srp.req_lim_delta", "Request limit delta", fields.FTUint32, fields.BaseDec, delta, func(r *IU) fields.Value {
			return u(uint64(uint32(r.Msg.RequestLimitDelta)))
		}),
		iuField("rdmashark.srp.request_limit", "Initiator's request limit after this IU", fields.FTUint32, fields.BaseDec, func(r *IU, emit func(fields.Value)) {
			if r.LimitKnown && r.RequestLimit >= 0 {
				emit(u(uint64(r.RequestLimit)))
			}
		}),
		of("rdmashark.srp.sol_not", "Solicited notification", fields.FTUint8, fields.BaseHex, []srp.Opcode{srp.OpCmd, srp.OpTskMgmt, srp.OpRsp},
			func(r *IU) fields.Value {
				switch r.Msg.Opcode {
				case srp.OpCmd:
					return u(uint64(r.Msg.Command.SolNot))
				case srp.OpTskMgmt:
					return u(uint64(r.Msg.TaskManagement.SolNot))
				}
				return u(uint64(r.Msg.Response.SolNot))
			}),
		of("rdmashark.srp.data_out_fmt", "Data-out buffer descriptor format", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			f := r.Msg.Command.DataOut.Format
			return fields.Value{U: uint64(f), Text: f.String()}
		}),
		of("rdmashark.srp.data_in_fmt", "Data-in buffer descriptor format", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			f := r.Msg.Command.DataIn.Format
			return fields.Value{U: uint64(f), Text: f.String()}
		}),
		of("rdmashark.srp.data_out_desc_cnt", "Data-out descriptor count", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Command.DataOut.Count))
		}),
		of("rdmashark.srp.data_in_desc_cnt", "Data-in descriptor count", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Command.DataIn.Count))
		}),
		of("rdmashark.srp.lun", "Logical unit number", fields.FTBytes, fields.BaseNone, []srp.Opcode{srp.OpCmd, srp.OpTskMgmt, srp.OpAERReq},
			func(r *IU) fields.Value {
				switch r.Msg.Opcode {
				case srp.OpCmd:
					return fields.Value{B: r.Msg.Command.LUN[:]}
				case srp.OpTskMgmt:
					return fields.Value{B: r.Msg.TaskManagement.LUN[:]}
				}
				return fields.Value{B: r.Msg.AERRequest.LUN[:]}
			}),
		of("rdmashark.srp.task_attr", "Task attribute", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Command.TaskAttribute))
		}),
		of("rdmashark.srp.add_cdb_len", "Additional CDB length", fields.FTUint8, fields.BaseDec, cmd, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Command.AdditionalCDBLength))
		}),
		of("rdmashark.srp.cdb", "CDB", fields.FTBytes, fields.BaseNone, cmd, func(r *IU) fields.Value {
			return fields.Value{B: r.Msg.Command.CDB[:]}
		}),
		// The CDB's operation code, on the command and on its response.
		iuField("rdmashark.srp.cdb_opcode", "SCSI operation code", fields.FTUint8, fields.BaseHex, func(r *IU, emit func(fields.Value)) {
			if t := r.Command; t != nil && t.Opcode == srp.OpCmd && (r.Msg.Opcode == srp.OpCmd || r.Msg.Opcode == srp.OpRsp) {
				emit(fields.Value{U: uint64(t.CDB), Text: t.Name})
			}
		}),
		desc("rdmashark.srp.va", "Virtual address", fields.FTUint64, fields.BaseHex, func(d srp.Descriptor) uint64 { return d.VirtualAddress }),
		desc("rdmashark.srp.handle", "Memory handle (R_Key)", fields.FTUint32, fields.BaseHex, func(d srp.Descriptor) uint64 { return uint64(d.MemoryHandle) }),
		desc("rdmashark.srp.len", "Data length", fields.FTUint32, fields.BaseDec, func(d srp.Descriptor) uint64 { return uint64(d.DataLength) }),
		table("rdmashark.srp.table.va", "Indirect table virtual address", fields.FTUint64, fields.BaseHex, func(bf *srp.Buffer) uint64 { return bf.Table.VirtualAddress }),
		table("rdmashark.srp.table.handle", "Indirect table memory handle", fields.FTUint32, fields.BaseHex, func(bf *srp.Buffer) uint64 { return uint64(bf.Table.MemoryHandle) }),
		table("rdmashark.srp.table.len", "Indirect table length", fields.FTUint32, fields.BaseDec, func(bf *srp.Buffer) uint64 { return uint64(bf.Table.DataLength) }),
		table("rdmashark.srp.total_len", "Indirect total length", fields.FTUint32, fields.BaseDec, func(bf *srp.Buffer) uint64 { return uint64(bf.TotalLength) }),
		iuField("rdmashark.srp.imm_len", "Immediate data length", fields.FTUint32, fields.BaseDec, func(r *IU, emit func(fields.Value)) {
			if r.Err == nil && r.Msg.Opcode == srp.OpCmd && r.Msg.Command.DataOut.Format == srp.FormatImmediate {
				emit(u(uint64(r.Msg.Command.DataOut.ImmediateLength)))
			}
		}),
		of("rdmashark.srp.rsp_flags", "Response flags", fields.FTUint8, fields.BaseHex, rsp, func(r *IU) fields.Value {
			return fields.Value{U: uint64(r.Msg.Response.Flags), Text: r.Msg.Response.Flags.String()}
		}),
		of("rdmashark.srp.status", "SCSI status", fields.FTUint8, fields.BaseHex, rsp, func(r *IU) fields.Value {
			return fields.Value{U: uint64(r.Msg.Response.Status), Text: r.Msg.Response.Status.String()}
		}),
		of("rdmashark.srp.data_out_res_cnt", "Data-out residual count", fields.FTUint32, fields.BaseDec, rsp, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Response.DataOutResidualCount))
		}),
		of("rdmashark.srp.data_in_res_cnt", "Data-in residual count", fields.FTUint32, fields.BaseDec, rsp, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Response.DataInResidualCount))
		}),
		of("rdmashark.srp.sense_data_len", "Sense data list length", fields.FTUint32, fields.BaseDec, []srp.Opcode{srp.OpRsp, srp.OpAERReq}, func(r *IU) fields.Value {
			if r.Msg.Opcode == srp.OpAERReq {
				return u(uint64(r.Msg.AERRequest.SenseDataListLength))
			}
			return u(uint64(r.Msg.Response.SenseDataListLength))
		}),
		of("rdmashark.srp.resp_data_len", "Response data list length", fields.FTUint32, fields.BaseDec, rsp, func(r *IU) fields.Value {
			return u(uint64(r.Msg.Response.ResponseDataListLength))
		}),
		of("rdmashark.srp.tsk_mgmt_func", "Task management function", fields.FTUint8, fields.BaseHex, tmf, func(r *IU) fields.Value {
			f := r.Msg.TaskManagement.Function
			return fields.Value{U: uint64(f), Text: f.String()}
		}),
		of("rdmashark.srp.task_tag", "Tag of task to be managed", fields.FTUint64, fields.BaseHex, tmf, func(r *IU) fields.Value {
			return u(r.Msg.TaskManagement.TaskTag)
		}),
		of("rdmashark.srp.logout_reason", "Target logout reason", fields.FTUint32, fields.BaseHex, []srp.Opcode{srp.OpTLogout}, func(r *IU) fields.Value {
			return fields.Value{U: uint64(r.Msg.Reason), Text: r.Msg.Reason.String()}
		}),
		iuField("rdmashark.srp.latency", "Time from the command", fields.FTRelTime, fields.BaseNone, func(r *IU, emit func(fields.Value)) {
			if r.Response && r.Command != nil && r.Latency >= 0 {
				emit(u(uint64(r.Latency)))
			}
		}),
		iuField("rdmashark.srp.cmd_frame", "Packet of the command this response answers", fields.FTUint32, fields.BaseDec, func(r *IU, emit func(fields.Value)) {
			if r.Response && r.Command != nil {
				emit(u(uint64(r.Command.Packet)))
			}
		}),
		// The login, on the set-up packets that carried it.
		loginField("rdmashark.srp.login.req_it_iu_len", "Requested maximum initiator to target IU length", 0, fields.FTUint32, fields.BaseDec, func(cn *Connection) fields.Value {
			return u(uint64(cn.login.RequestedMaxITIULength))
		}),
		loginField("rdmashark.srp.login.req_buf_fmt", "Required buffer formats", 0, fields.FTUint16, fields.BaseHex, func(cn *Connection) fields.Value {
			return fields.Value{U: uint64(cn.login.RequiredBufferFormats), Text: cn.login.RequiredBufferFormats.String()}
		}),
		loginField("rdmashark.srp.login.req_flags", "Login request flags", 0, fields.FTUint8, fields.BaseHex, func(cn *Connection) fields.Value {
			return fields.Value{U: uint64(cn.login.Flags), Text: cn.login.Flags.String()}
		}),
		loginField("rdmashark.srp.login.imm_data_offset", "Immediate data offset", 0, fields.FTUint16, fields.BaseDec, func(cn *Connection) fields.Value {
			return u(uint64(cn.login.ImmediateDataOffset))
		}),
		loginField("rdmashark.srp.login.initiator_port_id", "Initiator port identifier", 0, fields.FTBytes, fields.BaseNone, func(cn *Connection) fields.Value {
			return fields.Value{B: cn.login.InitiatorPortID[:]}
		}),
		loginField("rdmashark.srp.login.target_port_id", "Target port identifier", 0, fields.FTBytes, fields.BaseNone, func(cn *Connection) fields.Value {
			return fields.Value{B: cn.login.TargetPortID[:]}
		}),
		loginField("rdmashark.srp.login.req_lim_delta", "Initial request limit", 1, fields.FTUint32, fields.BaseDec, func(cn *Connection) fields.Value {
			return u(uint64(uint32(cn.accepted.RequestLimitDelta)))
		}),
		loginField("rdmashark.srp.login.max_it_iu_len", "Maximum initiator to target IU length", 1, fields.FTUint32, fields.BaseDec, func(cn *Connection) fields.Value {
			return u(uint64(cn.accepted.MaxITIULength))
		}),
		loginField("rdmashark.srp.login.max_ti_iu_len", "Maximum target to initiator IU length", 1, fields.FTUint32, fields.BaseDec, func(cn *Connection) fields.Value {
			return u(uint64(cn.accepted.MaxTIIULength))
		}),
		loginField("rdmashark.srp.login.sup_buf_fmt", "Supported buffer formats", 1, fields.FTUint16, fields.BaseHex, func(cn *Connection) fields.Value {
			return fields.Value{U: uint64(cn.accepted.SupportedBufferFormats), Text: cn.accepted.SupportedBufferFormats.String()}
		}),
		loginField("rdmashark.srp.login.rsp_flags", "Login response flags", 1, fields.FTUint8, fields.BaseHex, func(cn *Connection) fields.Value {
			return fields.Value{U: uint64(cn.accepted.Flags), Text: cn.accepted.Flags.String()}
		}),
	)
	return t
}

// loginField is a field of the login request (side 0) or response (side
// 1) on the set-up packet that carried it. The fields of a set-up packet
// are shown before the connection's first Send decides its ULP, so the
// private data is decoded here, and taken for SRP's when the client's is
// a plausible login request (or the connection is SRP's).
func loginField(name, label string, side int, ft fields.FieldType, base fields.Base, get func(cn *Connection) fields.Value) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: ft, Base: base, Parent: "rdmashark.srp",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			c := p.Conn
			if c == nil || !c.PrivateData[side].Seen || c.PrivateData[side].Packet != p.Number {
				return
			}
			var cn Connection
			seen, err := login(c, &cn.login)
			if !(seen && err == nil && cn.login.Plausible() || c.ULP == Name) {
				return
			}
			if side == 0 {
				if seen && err == nil {
					emit(get(&cn))
				}
				return
			}
			if cn.accepted.DecodeFromBytes(c.PrivateData[1].Consumer()) == nil && cn.accepted.Opcode == srp.OpLoginRsp {
				emit(get(&cn))
			}
		}}
}

func hasOp(ops []srp.Opcode, op srp.Opcode) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

func iuAt(p *dissect.Packet, i int) *IU {
	n := 0
	for _, r := range p.ULP {
		if c, ok := r.(*IU); ok {
			if n == i {
				return c
			}
			n++
		}
	}
	return nil
}

func iuCount(p *dissect.Packet) int {
	n := 0
	for _, r := range p.ULP {
		if _, ok := r.(*IU); ok {
			n++
		}
	}
	return n
}

func iuField(name, label string, ft fields.FieldType, b fields.Base, get func(r *IU, emit func(fields.Value))) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: ft, Base: b, Parent: "rdmashark.srp", Per: "srp",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := iuAt(p, i); r != nil {
				get(r, emit)
			}
		}}
}

// AppendInfo appends what the packet's SRP IUs are to its summary line
// (fields.RegisterInfo): "SRP_CMD Read(10) tag 0x1800000000000000",
// "SRP_RSP Good tag 0x1800000000000000 (Read(10))", "SRP_CRED_REQ +1".
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	n := 0
	for _, rr := range p.ULP {
		r, ok := rr.(*IU)
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, " | "...)
		}
		n++
		if !srp.FixedOK(r.Err) {
			dst = append(dst, "SRP ["...)
			dst = append(dst, r.Err.Error()...)
			dst = append(dst, ']')
			continue
		}
		dst = append(dst, r.Msg.Opcode.String()...)
		switch r.Msg.Opcode {
		case srp.OpCmd:
			if r.Command != nil {
				dst = append(dst, ' ')
				dst = append(dst, r.Command.Name...)
			}
		case srp.OpTskMgmt:
			dst = append(dst, ' ')
			dst = append(dst, r.Msg.TaskManagement.Function.String()...)
		case srp.OpRsp:
			dst = append(dst, ' ')
			dst = append(dst, r.Msg.Response.Status.String()...)
		case srp.OpTLogout:
			dst = append(dst, " ("...)
			dst = append(dst, r.Msg.Reason.String()...)
			dst = append(dst, ')')
		}
		dst = append(dst, " tag 0x"...)
		dst = appendHex64(dst, r.Msg.Tag)
		if r.Msg.Opcode == srp.OpRsp && r.Command != nil {
			dst = append(dst, " ("...)
			dst = append(dst, r.Command.Name...)
			dst = append(dst, ')')
		}
		if r.Msg.HasDelta && r.Msg.RequestLimitDelta != 0 {
			dst = append(dst, ' ')
			if r.Msg.RequestLimitDelta > 0 {
				dst = append(dst, '+')
			}
			dst = strconv.AppendInt(dst, int64(r.Msg.RequestLimitDelta), 10)
		}
	}
	return dst
}

func appendHex64(dst []byte, v uint64) []byte {
	const hexd = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, hexd[v>>uint(i)&0xf])
	}
	return dst
}
