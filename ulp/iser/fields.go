package iser

import (
	"strconv"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/iscsi"
)

// FieldTable is iSER's part of the field registry (fields.RegisterTable):
// tshark 4.0's iser.*, iscsi.* and scsi_sbc.opcode fields, named, typed
// and printed as its packet-iser.c, packet-iscsi.c and packet-scsi.c do,
// read from the PDU records the session keeps per packet
// (dissect.Packet.ULP). They repeat per PDU ("iser" instances: an iWARP
// segment can complete several). tshark shows a PDU on the first packet
// of its Send, rdmashark on the packet that completes it
// (KD-ISER-MULTIPACKET); otherwise checked value for value against tshark
// on rxe-iser.pcap (fields_test.go).
func FieldTable() *fields.Table {
	t := &fields.Table{}
	t.Group("iser", "iSCSI Extensions for RDMA")
	t.Group("iscsi", "iSCSI")
	t.Instances("iser", pduCount)
	u := func(v uint64) fields.Value { return fields.Value{U: v} }
	b := func(v bool) fields.Value {
		if v {
			return fields.Value{U: 1}
		}
		return fields.Value{}
	}
	// ctl: the fields of an iSER control-type header.
	ctl := func(name, label string, ft fields.FieldType, base fields.Base, get func(h *iscsi.ISERHeader) fields.Value) *fields.Field {
		return pduField(name, label, ft, base, func(r *PDU, emit func(fields.Value)) {
			if r.Msg.ISER.Opcode == iscsi.ISERControl && bhsOK(r) {
				emit(get(&r.Msg.ISER))
			}
		})
	}
	// bhs: a BHS field of the PDUs whose opcode ops holds (none: all).
	bhs := func(name, label string, ft fields.FieldType, base fields.Base, ops []iscsi.Opcode, get func(p *iscsi.PDU) fields.Value) *fields.Field {
		return pduField(name, label, ft, base, func(r *PDU, emit func(fields.Value)) {
			if r.Msg.ISER.Opcode != iscsi.ISERControl || !bhsOK(r) {
				return
			}
			if len(ops) > 0 && !hasOp(ops, r.Msg.PDU.Opcode) {
				return
			}
			emit(get(&r.Msg.PDU))
		})
	}
	cmd := []iscsi.Opcode{iscsi.OpSCSICommand}
	rsp := []iscsi.Opcode{iscsi.OpSCSIResponse}
	login := []iscsi.Opcode{iscsi.OpLogin, iscsi.OpLoginResp}
	text := []iscsi.Opcode{iscsi.OpText, iscsi.OpTextResp}
	// Initiator PDUs with CmdSN and ExpStatSN; target PDUs with StatSN,
	// ExpCmdSN and MaxCmdSN (RFC 7143 section 11).
	fromI := []iscsi.Opcode{iscsi.OpNOPOut, iscsi.OpSCSICommand, iscsi.OpTaskMgmt, iscsi.OpLogin, iscsi.OpText, iscsi.OpLogout}
	fromT := []iscsi.Opcode{iscsi.OpNOPIn, iscsi.OpSCSIResponse, iscsi.OpTaskMgmtResp, iscsi.OpLoginResp, iscsi.OpTextResp,
		iscsi.OpLogoutResp, iscsi.OpR2T, iscsi.OpAsyncMessage, iscsi.OpReject}
	t.Register(
		pduField("iser.flags", "Flags", fields.FTUint8, fields.BaseHex, func(r *PDU, emit func(fields.Value)) {
			if r.Err == nil || bhsOK(r) {
				emit(u(uint64(r.Msg.ISER.Flags)))
			}
		}),
		pduField("iser.flags.opcode", "Opcode", fields.FTUint8, fields.BaseHex, func(r *PDU, emit func(fields.Value)) {
			if r.Err == nil || bhsOK(r) {
				emit(fields.Value{U: uint64(r.Msg.ISER.Opcode), Text: r.Msg.ISER.Opcode.String()})
			}
		}),
		ctl("iser.flags.wsv", "WSV", fields.FTBoolean, fields.BaseNone, func(h *iscsi.ISERHeader) fields.Value { return b(h.WSV()) }),
		ctl("iser.flags.rsv", "RSV", fields.FTBoolean, fields.BaseNone, func(h *iscsi.ISERHeader) fields.Value { return b(h.RSV()) }),
		ctl("iser.write_stag", "Write STag", fields.FTUint32, fields.BaseHex, func(h *iscsi.ISERHeader) fields.Value { return u(uint64(h.WriteSTag)) }),
		ctl("iser.write_base_offset", "Write Base Offset", fields.FTUint64, fields.BaseHex, func(h *iscsi.ISERHeader) fields.Value { return u(h.WriteBaseOffset) }),
		ctl("iser.read_stag", "Read STag", fields.FTUint32, fields.BaseHex, func(h *iscsi.ISERHeader) fields.Value { return u(uint64(h.ReadSTag)) }),
		ctl("iser.read_base_offset", "Read Base Offset", fields.FTUint64, fields.BaseHex, func(h *iscsi.ISERHeader) fields.Value { return u(h.ReadBaseOffset) }),
		pduField("iser.ird", "iSER-IRD", fields.FTUint16, fields.BaseHex, func(r *PDU, emit func(fields.Value)) {
			if r.Err == nil && r.Msg.ISER.Opcode == iscsi.ISERHello {
				emit(u(uint64(r.Msg.Hello.IRDORD)))
			}
		}),
		pduField("iser.ord", "iSER-ORD", fields.FTUint16, fields.BaseHex, func(r *PDU, emit func(fields.Value)) {
			if r.Err == nil && r.Msg.ISER.Opcode == iscsi.ISERHelloReply {
				emit(u(uint64(r.Msg.Hello.IRDORD)))
			}
		}),
		bhs("iscsi.opcode", "Opcode", fields.FTUint8, fields.BaseHex, nil, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.Opcode), Text: p.Opcode.String()}
		}),
		bhs("iscsi.I", "I", fields.FTBoolean, fields.BaseNone, []iscsi.Opcode{iscsi.OpSCSICommand, iscsi.OpText, iscsi.OpNOPOut, iscsi.OpTaskMgmt, iscsi.OpLogout},
			func(p *iscsi.PDU) fields.Value { return b(p.Immediate) }),
		bhs("iscsi.flags", "Flags", fields.FTUint8, fields.BaseHex, []iscsi.Opcode{iscsi.OpSCSICommand, iscsi.OpText, iscsi.OpSCSIResponse, iscsi.OpTextResp},
			func(p *iscsi.PDU) fields.Value { return u(uint64(p.Flags())) }),
		bhs("iscsi.totalahslength", "TotalAHSLength", fields.FTUint8, fields.BaseDecHex, nil, func(p *iscsi.PDU) fields.Value { return u(uint64(p.TotalAHSLength)) }),
		bhs("iscsi.datasegmentlength", "DataSegmentLength", fields.FTUint32, fields.BaseDecHex, nil, func(p *iscsi.PDU) fields.Value { return u(uint64(p.DataSegmentLength)) }),
		bhs("iscsi.initiatortasktag", "InitiatorTaskTag", fields.FTUint32, fields.BaseHex, nil, func(p *iscsi.PDU) fields.Value { return u(uint64(p.ITT)) }),
		bhs("iscsi.targettransfertag", "TargetTransferTag", fields.FTUint32, fields.BaseHex,
			[]iscsi.Opcode{iscsi.OpText, iscsi.OpTextResp, iscsi.OpNOPOut, iscsi.OpNOPIn, iscsi.OpDataOut, iscsi.OpDataIn, iscsi.OpR2T},
			func(p *iscsi.PDU) fields.Value { return u(uint64(p.TTT())) }),
		bhs("iscsi.scsicommand.F", "F", fields.FTBoolean, fields.BaseNone, cmd, func(p *iscsi.PDU) fields.Value { return b(p.Final()) }),
		bhs("iscsi.scsicommand.R", "R", fields.FTBoolean, fields.BaseNone, cmd, func(p *iscsi.PDU) fields.Value { return b(p.Read()) }),
		bhs("iscsi.scsicommand.W", "W", fields.FTBoolean, fields.BaseNone, cmd, func(p *iscsi.PDU) fields.Value { return b(p.Write()) }),
		bhs("iscsi.scsicommand.attr", "Attr", fields.FTUint8, fields.BaseHex, cmd, func(p *iscsi.PDU) fields.Value { return u(uint64(p.Attr())) }),
		bhs("iscsi.scsicommand.expecteddatatransferlength", "ExpectedDataTransferLength", fields.FTUint32, fields.BaseDecHex, cmd,
			func(p *iscsi.PDU) fields.Value { return u(uint64(p.ExpectedDataTransferLength())) }),
		bhs("iscsi.cmdsn", "CmdSN", fields.FTUint32, fields.BaseDecHex, fromI, func(p *iscsi.PDU) fields.Value { return u(uint64(p.CmdSN())) }),
		bhs("iscsi.expstatsn", "ExpStatSN", fields.FTUint32, fields.BaseDecHex, fromI, func(p *iscsi.PDU) fields.Value { return u(uint64(p.ExpStatSN())) }),
		bhs("iscsi.statsn", "StatSN", fields.FTUint32, fields.BaseDecHex, fromT, func(p *iscsi.PDU) fields.Value { return u(uint64(p.StatSN())) }),
		bhs("iscsi.expcmdsn", "ExpCmdSN", fields.FTUint32, fields.BaseDecHex, fromT, func(p *iscsi.PDU) fields.Value { return u(uint64(p.ExpCmdSN())) }),
		bhs("iscsi.maxcmdsn", "MaxCmdSN", fields.FTUint32, fields.BaseDecHex, fromT, func(p *iscsi.PDU) fields.Value { return u(uint64(p.MaxCmdSN())) }),
		bhs("iscsi.expdatasn", "ExpDataSN", fields.FTUint32, fields.BaseHex, rsp, func(p *iscsi.PDU) fields.Value { return u(uint64(p.ExpDataSN())) }),
		bhs("iscsi.scsiresponse.o", "o", fields.FTBoolean, fields.BaseNone, rsp, func(p *iscsi.PDU) fields.Value { return b(p.Flags()&0x10 != 0) }),
		bhs("iscsi.scsiresponse.u", "u", fields.FTBoolean, fields.BaseNone, rsp, func(p *iscsi.PDU) fields.Value { return b(p.Flags()&0x08 != 0) }),
		bhs("iscsi.scsiresponse.O", "O", fields.FTBoolean, fields.BaseNone, rsp, func(p *iscsi.PDU) fields.Value { return b(p.Flags()&0x04 != 0) }),
		bhs("iscsi.scsiresponse.U", "U", fields.FTBoolean, fields.BaseNone, rsp, func(p *iscsi.PDU) fields.Value { return b(p.Flags()&0x02 != 0) }),
		bhs("iscsi.scsiresponse.response", "Response", fields.FTUint8, fields.BaseHex, rsp, func(p *iscsi.PDU) fields.Value { return u(uint64(p.Response())) }),
		bhs("iscsi.scsiresponse.status", "Status", fields.FTUint8, fields.BaseHex, rsp, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.Status()), Text: p.Status().String()}
		}),
		bhs("iscsi.scsiresponse.residualcount", "ResidualCount", fields.FTUint32, fields.BaseDecHex, rsp, func(p *iscsi.PDU) fields.Value { return u(uint64(p.ResidualCount())) }),
		bhs("iscsi.scsiresponse.bidireadresidualcount", "BidiReadResidualCount", fields.FTUint32, fields.BaseDecHex, rsp,
			func(p *iscsi.PDU) fields.Value { return u(uint64(p.BidiReadResidualCount())) }),
		bhs("iscsi.login.T", "T", fields.FTBoolean, fields.BaseNone, login, func(p *iscsi.PDU) fields.Value { return b(p.Transit()) }),
		bhs("iscsi.login.C", "C", fields.FTBoolean, fields.BaseNone, login, func(p *iscsi.PDU) fields.Value { return b(p.Continue()) }),
		bhs("iscsi.login.csg", "CSG", fields.FTUint8, fields.BaseHex, login, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.CSG()), Text: p.CSG().String()}
		}),
		bhs("iscsi.login.nsg", "NSG", fields.FTUint8, fields.BaseHex, login, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.NSG()), Text: p.NSG().String()}
		}),
		bhs("iscsi.versionmax", "VersionMax", fields.FTUint8, fields.BaseHex, login, func(p *iscsi.PDU) fields.Value { return u(uint64(p.VersionMax())) }),
		bhs("iscsi.versionmin", "VersionMin", fields.FTUint8, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogin}, func(p *iscsi.PDU) fields.Value { return u(uint64(p.VersionMin())) }),
		bhs("iscsi.versionactive", "VersionActive", fields.FTUint8, fields.BaseHex, []iscsi.Opcode{iscsi.OpLoginResp}, func(p *iscsi.PDU) fields.Value { return u(uint64(p.VersionMin())) }),
		bhs("iscsi.isid", "ISID", fields.FTBytes, fields.BaseNone, login, func(p *iscsi.PDU) fields.Value { return fields.Value{B: p.BHS[8:14]} }),
		bhs("iscsi.tsih", "TSIH", fields.FTUint16, fields.BaseHex, login, func(p *iscsi.PDU) fields.Value { return u(uint64(p.TSIH())) }),
		bhs("iscsi.cid", "CID", fields.FTUint16, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogin, iscsi.OpLogout}, func(p *iscsi.PDU) fields.Value { return u(uint64(p.CID())) }),
		bhs("iscsi.login.status", "Status", fields.FTUint16, fields.BaseHex, []iscsi.Opcode{iscsi.OpLoginResp}, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.LoginStatus()), Text: p.LoginStatus().String()}
		}),
		bhs("iscsi.text.F", "F", fields.FTBoolean, fields.BaseNone, text, func(p *iscsi.PDU) fields.Value { return b(p.Final()) }),
		bhs("iscsi.text.C", "C", fields.FTBoolean, fields.BaseNone, text, func(p *iscsi.PDU) fields.Value { return b(p.Continue()) }),
		bhs("iscsi.logout.reason", "Reason", fields.FTUint8, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogout}, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.ReasonCode()), Text: iscsi.LogoutReason(p.ReasonCode())}
		}),
		bhs("iscsi.logout.response", "Response", fields.FTUint8, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogoutResp}, func(p *iscsi.PDU) fields.Value {
			return fields.Value{U: uint64(p.Response()), Text: iscsi.LogoutResponse(p.Response())}
		}),
		bhs("iscsi.time2wait", "Time2Wait", fields.FTUint16, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogoutResp}, func(p *iscsi.PDU) fields.Value { return u(uint64(p.Time2Wait())) }),
		bhs("iscsi.time2retain", "Time2Retain", fields.FTUint16, fields.BaseHex, []iscsi.Opcode{iscsi.OpLogoutResp}, func(p *iscsi.PDU) fields.Value { return u(uint64(p.Time2Retain())) }),
		// The iSER CM private data of the REQ (side 0) and REP (side 1),
		// which tshark does not decode (KD-ISER-CM): rdmashark's names.
		cmField("rdmashark.iser.cm_req.flags", "iSER CM REQ flags", 0, fields.FTUint8, fields.BaseHex, func(p *iscsi.CMPrivateData) uint64 { return uint64(p.Flags) }),
		cmField("rdmashark.iser.cm_req.zbva_not_supported", "ZBVA not supported", 0, fields.FTBoolean, fields.BaseNone, func(p *iscsi.CMPrivateData) uint64 {
			return b2u(p.ZBVANotSupported())
		}),
		cmField("rdmashark.iser.cm_req.send_with_invalidate", "Send With Invalidate allowed (SIE)", 0, fields.FTBoolean, fields.BaseNone, func(p *iscsi.CMPrivateData) uint64 {
			return b2u(p.SendWithInvalidate())
		}),
		cmField("rdmashark.iser.cm_rep.flags", "iSER CM REP flags", 1, fields.FTUint8, fields.BaseHex, func(p *iscsi.CMPrivateData) uint64 { return uint64(p.Flags) }),
		// The key=value pairs of a Login or Text PDU, one value each.
		pduField("iscsi.keyvalue", "KeyValue", fields.FTString, fields.BaseNone, func(r *PDU, emit func(fields.Value)) {
			if r.Msg.ISER.Opcode != iscsi.ISERControl || !bhsOK(r) {
				return
			}
			for k, v, rest, ok := iscsi.KeyValues(r.Text).Next(); ok; k, v, rest, ok = rest.Next() {
				emit(fields.Value{S: string(k) + "=" + string(v)})
			}
		}),
		// The CDB's operation code, on the command and (as tshark shows
		// it) on the GOOD SCSI Response of its task.
		pduField("scsi_sbc.opcode", "Opcode", fields.FTUint8, fields.BaseHex, func(r *PDU, emit func(fields.Value)) {
			if r.Msg.ISER.Opcode != iscsi.ISERControl || !bhsOK(r) {
				return
			}
			switch r.Msg.PDU.Opcode {
			case iscsi.OpSCSICommand:
				op := r.Msg.PDU.CDB().Opcode()
				emit(fields.Value{U: uint64(op), Text: op.String()})
			case iscsi.OpSCSIResponse:
				// tshark hands the SCSI layer only a GOOD response
				// (rxe-iser.pcap frame 90, CHECK CONDITION, has none).
				if x := r.Task; x != nil && x.Opcode == iscsi.OpSCSICommand && r.Msg.PDU.Response() == 0 && r.Msg.PDU.Status() == iscsi.StatusGood {
					emit(fields.Value{U: uint64(x.CDB), Text: x.CDB.String()})
				}
			}
		}),
	)
	return t
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// cmField is a field of the iSER private data of the CM REQ (side 0) or
// REP (side 1) the packet carried, on an iSER connection.
func cmField(name, label string, side int, ft fields.FieldType, base fields.Base, get func(p *iscsi.CMPrivateData) uint64) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: ft, Base: base, Parent: "iser",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			c := p.Conn
			if c == nil || c.ULP != Name && c.ServicePort != Port {
				return
			}
			pd := &c.PrivateData[side]
			if !pd.Seen || pd.Packet != p.Number {
				return
			}
			var d iscsi.CMPrivateData
			if d.DecodeFromBytes(pd.Consumer()) == nil {
				emit(fields.Value{U: get(&d)})
			}
		}}
}

// bhsOK reports whether the record's BHS decoded (its data segment may be
// cut short).
func bhsOK(r *PDU) bool {
	return r.Err == nil || r.Err == iscsi.ErrDataSegment || r.Err == iscsi.ErrAHS
}

func hasOp(ops []iscsi.Opcode, op iscsi.Opcode) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

func pduAt(p *dissect.Packet, i int) *PDU {
	n := 0
	for _, r := range p.ULP {
		if c, ok := r.(*PDU); ok {
			if n == i {
				return c
			}
			n++
		}
	}
	return nil
}

func pduCount(p *dissect.Packet) int {
	n := 0
	for _, r := range p.ULP {
		if _, ok := r.(*PDU); ok {
			n++
		}
	}
	return n
}

func pduField(name, label string, ft fields.FieldType, b fields.Base, get func(r *PDU, emit func(fields.Value))) *fields.Field {
	parent := "iscsi"
	if len(name) > 5 && name[:5] == "iser." {
		parent = "iser"
	}
	return &fields.Field{Name: name, Label: label, Type: ft, Base: b, Parent: parent, Per: "iser",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := pduAt(p, i); r != nil {
				get(r, emit)
			}
		}}
}

// AppendInfo appends what the packet's iSER messages are to its summary
// line, as tshark's Info column names them: "Login Command", "Login
// Response (Success)", "SCSI: Read(10) LUN: 0x00 (LBA: 0x00000000, Len:
// 8)", "SCSI: Response LUN: 0x00 (Read(10)) (Good)", "SCSI Response (Check
// Condition) LUN:0x00", "iSER Hello" (fields.RegisterInfo).
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	n := 0
	for _, rr := range p.ULP {
		r, ok := rr.(*PDU)
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, " | "...)
		}
		n++
		switch {
		case r.Msg.ISER.Opcode == iscsi.ISERHello && r.Err == nil:
			dst = append(dst, "iSER Hello"...)
			continue
		case r.Msg.ISER.Opcode == iscsi.ISERHelloReply && r.Err == nil:
			dst = append(dst, "iSER HelloRply"...)
			continue
		case !bhsOK(r):
			dst = append(dst, "iSER ["...)
			dst = append(dst, r.Err.Error()...)
			dst = append(dst, ']')
			continue
		}
		dst = appendPDUInfo(dst, r)
	}
	return dst
}

func appendLUN(dst []byte, pdu *iscsi.PDU, sep string) []byte {
	dst = append(dst, sep...)
	// Simple (peripheral) addressing: the LUN is octet 1 (SAM-5 4.7).
	const hexd = "0123456789abcdef"
	v := pdu.BHS[9]
	return append(dst, '0', 'x', hexd[v>>4], hexd[v&0xf])
}

func appendPDUInfo(dst []byte, r *PDU) []byte {
	pdu := &r.Msg.PDU
	switch pdu.Opcode {
	case iscsi.OpSCSICommand:
		cdb := pdu.CDB()
		dst = append(dst, "SCSI: "...)
		dst = append(dst, cdb.Opcode().String()...)
		dst = appendLUN(dst, pdu, " LUN: ")
		if lba, blocks, ok := cdb.LBA(); ok {
			dst = append(dst, " (LBA: 0x"...)
			s := strconv.FormatUint(lba, 16)
			for i := len(s); i < 8; i++ {
				dst = append(dst, '0')
			}
			dst = append(dst, s...)
			dst = append(dst, ", Len: "...)
			dst = strconv.AppendUint(dst, uint64(blocks), 10)
			dst = append(dst, ')')
		}
	case iscsi.OpSCSIResponse:
		if pdu.Response() == 0 && pdu.Status() == iscsi.StatusGood {
			dst = append(dst, "SCSI: Response"...)
			dst = appendLUN(dst, pdu, " LUN: ")
			if x := r.Task; x != nil && x.Opcode == iscsi.OpSCSICommand {
				dst = append(dst, " ("...)
				dst = append(dst, x.CDB.String()...)
				dst = append(dst, ')')
			}
			dst = append(dst, " (Good)"...)
			break
		}
		dst = append(dst, "SCSI Response ("...)
		if pdu.Response() != 0 {
			dst = append(dst, "Target Failure"...)
		} else {
			dst = append(dst, pdu.Status().String()...)
		}
		dst = append(dst, ')')
		dst = appendLUN(dst, pdu, " LUN:")
	case iscsi.OpLoginResp:
		dst = append(dst, "Login Response ("...)
		dst = append(dst, pdu.LoginStatus().String()...)
		dst = append(dst, ')')
	case iscsi.OpLogout:
		dst = append(dst, "Logout Command ("...)
		dst = append(dst, iscsi.LogoutReason(pdu.ReasonCode())...)
		dst = append(dst, ')')
	default:
		dst = append(dst, pdu.Opcode.String()...)
	}
	return dst
}
