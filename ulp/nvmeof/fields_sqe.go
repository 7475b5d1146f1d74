package nvmeof

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/nvme"
)

// The rest of tshark 4.0's nvme.* fields for what a capsule carries: the
// command dwords by command (NVMe Base 2.0 "Identify command", "Get Log
// Page command", "Set Features command"; NVM Command Set 1.0 "Read
// command", "Write command"), the Fabrics commands' own fields (NVMe over
// Fabrics 1.1 "Connect Command", "Property Get Command", "Property Set
// Command") and the completion's status bits and Fabrics responses. Which
// command shows which field, and in which form (a masked field is shown
// shifted, in its type's width), is tshark's: TestFieldsEqualTshark holds
// them to tshark -2 on every frame of rxe-nvmeof.pcap and
// rxe-nvmeof-mix-small.pcap. Where tshark's mask differs from the
// specification (PRINFO bits 29:26, tshark 0x0400 of the upper half;
// DSM Incompressible bit 7, tshark 0x40 as Sequential Request), these follow
// the specification; the captures hold zeros there.
func sqeFields(t *fields.Table) {
	hex := fields.BaseHex
	dec := fields.BaseDec
	u := func(v uint64) fields.Value { return fields.Value{U: v} }
	// A command that is not a Fabrics one, by kind.
	type kind uint8
	const (
		generic kind = iota // no command-specific fields: DWORD10-15 as they are
		identify
		getLogPage
		setFeatures
		getFeatures
		readWrite
	)
	kindOf := func(r *Capsule) (kind, bool) {
		if !r.Command || r.Err != nil || r.Cmd.IsFabrics() {
			return 0, false
		}
		c := &r.Cmd
		if r.Queue.Admin() {
			switch nvme.AdminOpcode(c.OPC) {
			case nvme.AdminIdentify:
				return identify, true
			case nvme.AdminGetLogPage:
				return getLogPage, true
			case nvme.AdminSetFeatures:
				return setFeatures, true
			case nvme.AdminGetFeatures:
				return getFeatures, true
			}
			return generic, true
		}
		if op := nvme.IOOpcode(c.OPC); op == nvme.IORead || op == nvme.IOWrite {
			return readWrite, true
		}
		return generic, true
	}
	// of registers a field of the commands of the given kinds.
	of := func(name, label string, ft fields.FieldType, b fields.Base, kinds []kind, get func(c *nvme.Command) uint64) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if k, ok := kindOf(r); ok {
				for _, w := range kinds {
					if w == k {
						emit(u(get(&r.Cmd)))
						return
					}
				}
			}
		})
	}
	all := []kind{generic, identify, getLogPage, setFeatures, getFeatures, readWrite}
	gen := []kind{generic}
	dw12 := []kind{generic, identify, setFeatures, getFeatures}
	dw13 := []kind{generic, identify, getLogPage, setFeatures, getFeatures}
	rw := []kind{readWrite}
	fabrics := func(name, label string, ft fields.FieldType, b fields.Base, ok func(c *nvme.Command) bool, get func(c *nvme.Command) fields.Value) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if r.Command && r.Err == nil && r.Cmd.IsFabrics() && ok(&r.Cmd) {
				emit(get(&r.Cmd))
			}
		})
	}
	anyFabrics := func(*nvme.Command) bool { return true }
	connect := func(c *nvme.Command) bool { return c.FCTYPE == nvme.FabricsConnect }
	property := func(c *nvme.Command) bool {
		return c.FCTYPE == nvme.FabricsPropertyGet || c.FCTYPE == nvme.FabricsPropertySet
	}
	// A completion, with the command it answers (nil when none).
	cpl := func(name, label string, ft fields.FieldType, b fields.Base, get func(x *Command, c *nvme.Completion, emit func(fields.Value))) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil {
				get(r.Request, &r.Cpl, emit)
			}
		})
	}
	// A property value, named by its offset as tshark names it: a
	// Property Set command's, or the completion's of a Property Get.
	propField := func(name, label string, ft fields.FieldType, match func(o nvme.PropertyOffset, size int) bool) *fields.Field {
		return capsuleField(name, label, ft, hex, func(r *Capsule, emit func(fields.Value)) {
			if r.Err != nil {
				return
			}
			if r.Command {
				c := &r.Cmd
				if p := c.Property(); c.IsFabrics() && c.FCTYPE == nvme.FabricsPropertySet && match(p.OFST, p.Size()) {
					emit(u(p.VALUE))
				}
				return
			}
			if x := r.Request; x != nil && x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsPropertyGet && match(x.Prop.OFST, x.Prop.Size()) {
				v := r.Cpl.Result()
				if x.Prop.Size() == 4 {
					v &= 0xffffffff
				}
				emit(u(v))
			}
		})
	}
	named := func(o nvme.PropertyOffset) bool {
		switch o {
		case nvme.PropertyCAP, nvme.PropertyVS, nvme.PropertyCC, nvme.PropertyCSTS:
			return true
		}
		return false
	}
	t.Register(
		of("nvme.cmd.mptr", "Metadata Pointer", fields.FTUint64, hex, all, func(c *nvme.Command) uint64 { return c.MPTR }),
		of("nvme.cmd.dword10", "DWORD10", fields.FTUint32, hex, gen, func(c *nvme.Command) uint64 { return uint64(c.CDW10) }),
		of("nvme.cmd.dword11", "DWORD11", fields.FTUint32, hex, gen, func(c *nvme.Command) uint64 { return uint64(c.CDW11) }),
		of("nvme.cmd.dword12", "DWORD12", fields.FTUint32, hex, dw12, func(c *nvme.Command) uint64 { return uint64(c.CDW12) }),
		of("nvme.cmd.dword13", "DWORD13", fields.FTUint32, hex, dw13, func(c *nvme.Command) uint64 { return uint64(c.CDW13) }),
		of("nvme.cmd.dword14", "DWORD14", fields.FTUint32, hex, gen, func(c *nvme.Command) uint64 { return uint64(c.CDW14) }),
		of("nvme.cmd.dword15", "DWORD15", fields.FTUint32, hex, dw13, func(c *nvme.Command) uint64 { return uint64(c.CDW15) }),
		// Read and Write: CDW12 bits 31 LR, 30 FUA, 29:26 PRINFO; CDW13
		// bits 7:0 DSM; CDW14 EILBRT; CDW15 ELBAT (15:0) and ELBATM (31:16).
		of("nvme.cmd.prinfo", "Protection info fields", fields.FTUint16, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW12>>26) & 0xf }),
		of("nvme.cmd.fua", "Force Unit Access", fields.FTUint16, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW12>>30) & 1 }),
		of("nvme.cmd.lr", "Limited Retry", fields.FTUint16, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW12 >> 31) }),
		of("nvme.cmd.dsm.access_freq", "Access frequency", fields.FTUint8, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW13) & 0xf }),
		of("nvme.cmd.dsm.access_lat", "Access latency", fields.FTUint8, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW13>>4) & 0x3 }),
		of("nvme.cmd.dsm.seq_req", "Sequential Request", fields.FTUint8, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW13>>6) & 1 }),
		of("nvme.cmd.dsm.incompressible", "Incompressible", fields.FTUint8, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW13>>7) & 1 }),
		of("nvme.cmd.eilbrt", "Expected Initial Logical Block Reference Tag", fields.FTUint32, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW14) }),
		of("nvme.cmd.elbat", "Expected Logical Block Application Tag", fields.FTUint16, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW15 & 0xffff) }),
		of("nvme.cmd.elbatm", "Expected Logical Block Application Tag Mask", fields.FTUint16, hex, rw, func(c *nvme.Command) uint64 { return uint64(c.CDW15 >> 16) }),
		// Identify: CDW10 CNS (7:0), CNTID (31:16); CDW11 NVMSETID
		// (15:0, tshark's field name has its typo "dwrod11"); CDW14 UUID
		// Index (6:0).
		of("nvme.cmd.identify.dword10.cns", "Controller or Namespace Structure (CNS)", fields.FTUint32, hex, []kind{identify}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 & 0xff) }),
		of("nvme.cmd.identify.dword10.cntid", "Controller Identifier (CNTID)", fields.FTUint32, hex, []kind{identify}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 >> 16) }),
		of("nvme.cmd.identify.dwrod11.nvmesetid", "NVM Set Identifier (NVMSETID)", fields.FTUint32, hex, []kind{identify}, func(c *nvme.Command) uint64 { return uint64(c.CDW11 & 0xffff) }),
		of("nvme.cmd.identify.dword14.uuid_index", "UUID Index", fields.FTUint32, hex, []kind{identify}, func(c *nvme.Command) uint64 { return uint64(c.CDW14 & 0x7f) }),
		// Get Log Page: CDW10 LID (7:0), LSP (12:8), RAE (15), NUMDL
		// (31:16); CDW11 NUMDU (15:0), LSI (31:16); CDW12-13 LPO; CDW14
		// UUID Index (tshark's mask 0x3f).
		of("nvme.cmd.get_logpage.dword10.id", "Log Page Identifier (LID)", fields.FTUint32, dec, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 & 0xff) }),
		of("nvme.cmd.get_logpage.dword10.lsp", "Log Specific Field (LSP)", fields.FTUint32, hex, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW10>>8) & 0x1f }),
		of("nvme.cmd.get_logpage.dword10.rae", "Retain Asynchronous Event (RAE)", fields.FTBoolean, fields.BaseNone, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW10>>15) & 1 }),
		of("nvme.cmd.get_logpage.dword10.numdl", "Number of Dwords Lower (NUMDL)", fields.FTUint32, hex, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 >> 16) }),
		of("nvme.cmd.get_logpage.dword11.numdu", "Number of Dwords Upper (NUMDU)", fields.FTUint32, hex, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW11 & 0xffff) }),
		of("nvme.cmd.get_logpage.dword11.lsi", "Log Specific Identifier", fields.FTUint32, hex, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW11 >> 16) }),
		of("nvme.cmd.get_logpage.numd", "Number of Dwords", fields.FTUint32, dec, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.GetLogPage().NUMD) }),
		of("nvme.cmd.get_logpage.lpo", "Log Page Offset (DWORD 12 and DWORD 13)", fields.FTUint64, dec, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW13)<<32 | uint64(c.CDW12) }),
		of("nvme.cmd.identify.get_logpage.dword14.uuid_index", "UUID Index", fields.FTUint32, hex, []kind{getLogPage}, func(c *nvme.Command) uint64 { return uint64(c.CDW14 & 0x3f) }),
		// Set/Get Features: CDW10 FID (7:0); CDW11 by feature: Number of
		// Queues NSQR (15:0), NCQR (31:16), Keep Alive Timer KATO; CDW14
		// UUID Index (6:0).
		of("nvme.cmd.set_features.dword10.fid", "Feature Identifier", fields.FTUint32, hex, []kind{setFeatures}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 & 0xff) }),
		of("nvme.cmd.get_features.dword10.fid", "Feature Identifier", fields.FTUint32, hex, []kind{getFeatures}, func(c *nvme.Command) uint64 { return uint64(c.CDW10 & 0xff) }),
		of("nvme.cmd.set_features.dword14.uuid", "UUID Index", fields.FTUint32, hex, []kind{setFeatures}, func(c *nvme.Command) uint64 { return uint64(c.CDW14 & 0x7f) }),
		feature("nvme.cmd.set_features.dword11.nq.nsqr", "Number of IO Submission Queues Requested", nvme.FeatureNumberOfQueues, func(c *nvme.Command) uint64 { return uint64(c.CDW11 & 0xffff) }),
		feature("nvme.cmd.set_features.dword11.nq.ncqr", "Number of IO Completion Queues Requested", nvme.FeatureNumberOfQueues, func(c *nvme.Command) uint64 { return uint64(c.CDW11 >> 16) }),
		feature("nvme.cmd.set_features.dword11.kat.kato", "Keep Alive Timeout", nvme.FeatureKeepAliveTimer, func(c *nvme.Command) uint64 { return uint64(c.CDW11) }),
		// Fabrics commands.
		fabrics("nvme.fabrics.cmd.opc", "Opcode", fields.FTBytes, fields.BaseNone, anyFabrics, func(c *nvme.Command) fields.Value {
			return fields.Value{B: c.LayerContents()[:1]}
		}),
		fabrics("nvme.fabrics.cmd.connect.recfmt", "Record Format", fields.FTUint16, dec, connect, func(c *nvme.Command) fields.Value { return u(uint64(c.Connect().RECFMT)) }),
		fabrics("nvme.fabrics.cmd.connect.qid", "Queue ID", fields.FTUint16, dec, connect, func(c *nvme.Command) fields.Value { return u(uint64(c.Connect().QID)) }),
		fabrics("nvme.fabrics.cmd.connect.sqsize", "Submission Queue Size", fields.FTUint16, dec, connect, func(c *nvme.Command) fields.Value { return u(uint64(c.Connect().SQSIZE)) }),
		fabrics("nvme.fabrics.cmd.connect.cattr", "Connect Attributes", fields.FTUint8, hex, connect, func(c *nvme.Command) fields.Value { return u(uint64(c.Connect().CATTR)) }),
		fabrics("nvme.fabrics.cmd.connect.kato", "Keep Alive Timeout", fields.FTUint32, dec, connect, func(c *nvme.Command) fields.Value { return u(uint64(c.Connect().KATO)) }),
		fabrics("nvme.fabrics.cmd.prop_get_set.attrib.size", "Property Size", fields.FTUint8, hex, property, func(c *nvme.Command) fields.Value { return u(uint64(c.Property().ATTRIB & 0x7)) }),
		fabrics("nvme.fabrics.cmd.prop_get_set.offset", "Offset", fields.FTUint32, hex, property, func(c *nvme.Command) fields.Value { return u(uint64(c.Property().OFST)) }),
		// Completions: the status bits (Base 2.0 "Completion Queue Entry":
		// P bit 0, SC 8:1, SCT 11:9, CRD 13:12, M 14, DNR 15), shown on
		// every completion but the phase tag, which tshark shows for the
		// completion of a command that is not a Fabrics one.
		cpl("nvme.cqe.status.p", "Phase Tag", fields.FTUint16, hex, func(x *Command, c *nvme.Completion, emit func(fields.Value)) {
			if x != nil && x.OPC != nvme.OpcodeFabrics {
				emit(u(uint64(c.Status) & 1))
			}
		}),
		cpl("nvme.cqe.status.sc", "Status Code", fields.FTUint16, hex, func(_ *Command, c *nvme.Completion, emit func(fields.Value)) {
			emit(u(uint64(c.Status>>1) & 0xff))
		}),
		cpl("nvme.cqe.status.sct", "Status Code Type", fields.FTUint16, hex, func(_ *Command, c *nvme.Completion, emit func(fields.Value)) {
			emit(u(uint64(c.Status>>9) & 0x7))
		}),
		cpl("nvme.cqe.status.crd", "Command Retry Delay", fields.FTUint16, hex, func(_ *Command, c *nvme.Completion, emit func(fields.Value)) {
			emit(u(uint64(c.Status>>12) & 0x3))
		}),
		cpl("nvme.cqe.status.m", "More Information in Log Page", fields.FTBoolean, fields.BaseNone, func(_ *Command, c *nvme.Completion, emit func(fields.Value)) {
			emit(u(uint64(c.Status>>14) & 1))
		}),
		cpl("nvme.cqe.status.dnr", "Do not Retry", fields.FTBoolean, fields.BaseNone, func(_ *Command, c *nvme.Completion, emit func(fields.Value)) {
			emit(u(uint64(c.Status >> 15)))
		}),
		cpl("nvme.fabrics.cqe.connect.cntrlid", "Controller ID", fields.FTUint16, hex, func(x *Command, c *nvme.Completion, emit func(fields.Value)) {
			if x != nil && x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsConnect {
				emit(u(uint64(c.ConnectResponse().CNTLID)))
			}
		}),
		cpl("nvme.fabrics.cqe.connect.authreq", "Authentication Required", fields.FTUint16, hex, func(x *Command, c *nvme.Completion, emit func(fields.Value)) {
			if x != nil && x.OPC == nvme.OpcodeFabrics && x.FCTYPE == nvme.FabricsConnect {
				emit(u(uint64(c.ConnectResponse().AUTHREQ)))
			}
		}),
	)
	t.Register(
		propField("nvme.fabrics.prop_get.ccap", "Controller Capabilities", fields.FTUint64, func(o nvme.PropertyOffset, _ int) bool { return o == nvme.PropertyCAP }),
		propField("nvme.fabrics.prop_get.vs", "Version", fields.FTUint32, func(o nvme.PropertyOffset, _ int) bool { return o == nvme.PropertyVS }),
		propField("nvme.fabrics.prop_get_set.cc", "Controller Configuration", fields.FTUint32, func(o nvme.PropertyOffset, _ int) bool { return o == nvme.PropertyCC }),
		propField("nvme.fabrics.prop_get_set.csts", "Controller Status", fields.FTUint32, func(o nvme.PropertyOffset, _ int) bool { return o == nvme.PropertyCSTS }),
		propField("nvme.fabrics.prop_get_set.data.4B", "Value", fields.FTUint32, func(o nvme.PropertyOffset, size int) bool { return !named(o) && size == 4 }),
		propField("nvme.fabrics.prop_get_set.data.8B", "Value", fields.FTUint64, func(o nvme.PropertyOffset, size int) bool { return !named(o) && size == 8 }),
	)
}

// connectDataFields are the Connect data's fields (NVMe over Fabrics 1.1
// "Connect Command Data"), on the packet that carried the data: the RDMA
// Read Response that answered the controller's fetch of a keyed SGL
// (ConnectDataRecord), or the command capsule that carried it in-capsule.
func connectDataFields(t *fields.Table) {
	f := func(name, label string, ft fields.FieldType, b fields.Base, get func(d *nvme.ConnectData) fields.Value) *fields.Field {
		return &fields.Field{Name: name, Label: label, Type: ft, Base: b, Parent: "nvme",
			Get: func(p *dissect.Packet, emit func(fields.Value)) {
				for _, r := range p.ULP {
					switch r := r.(type) {
					case *ConnectDataRecord:
						emit(get(&r.Data))
					case *Capsule:
						var d nvme.ConnectData
						if r.Command && r.Err == nil && r.Cmd.IsFabrics() && r.Cmd.FCTYPE == nvme.FabricsConnect &&
							d.DecodeFromBytes(r.Cmd.InCapsule) == nil {
							emit(get(&d))
						}
					}
				}
			}}
	}
	t.Register(
		f("nvme.fabrics.cmd.connect.data.hostid", "Host Identifier", fields.FTBytes, fields.BaseNone, func(d *nvme.ConnectData) fields.Value { return fields.Value{B: d.HOSTID[:]} }),
		f("nvme.fabrics.cmd.connect.data.cntrlid", "Controller ID", fields.FTUint16, fields.BaseHex, func(d *nvme.ConnectData) fields.Value { return fields.Value{U: uint64(d.CNTLID)} }),
		f("nvme.fabrics.cmd.connect.data.subnqn", "Subsystem NQN", fields.FTString, fields.BaseNone, func(d *nvme.ConnectData) fields.Value { return fields.Value{S: string(d.SUBNQN)} }),
		f("nvme.fabrics.cmd.connect.data.hostnqn", "Host NQN", fields.FTString, fields.BaseNone, func(d *nvme.ConnectData) fields.Value { return fields.Value{S: string(d.HOSTNQN)} }),
	)
}

// feature is a Set Features field of CDW11 for one feature.
func feature(name, label string, fid nvme.FeatureID, get func(c *nvme.Command) uint64) *fields.Field {
	return capsuleField(name, label, fields.FTUint32, fields.BaseDec, func(r *Capsule, emit func(fields.Value)) {
		c := &r.Cmd
		if r.Command && r.Err == nil && !c.IsFabrics() && r.Queue.Admin() &&
			nvme.AdminOpcode(c.OPC) == nvme.AdminSetFeatures && nvme.FeatureID(c.CDW10&0xff) == fid {
			emit(fields.Value{U: get(c)})
		}
	})
}
