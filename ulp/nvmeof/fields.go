package nvmeof

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/layers/roce"
	"github.com/rdmashark/rdmashark/nvme"
)

// FieldTable is NVMe/RDMA's part of the field registry
// (fields.RegisterTable): tshark 4.0's nvme-rdma.* and nvme.* fields, named,
// typed and printed as its packet-nvme-rdma.c and packet-nvme.c do, read
// from the capsule records the session keeps per packet
// (dissect.Packet.ULP) and, for the CM private data, from the connection's
// set-up. They repeat per capsule ("nvme" instances: an iWARP segment can
// complete several). Checked value for value against tshark on
// rxe-nvmeof.pcap (fields_test.go).
func FieldTable() *fields.Table {
	t := &fields.Table{}
	t.Group("nvme-rdma", "NVM Express Fabrics RDMA")
	t.Group("nvme", "NVM Express")
	t.Instances("nvme", capsuleCount)
	u16 := func(v uint16) fields.Value { return fields.Value{U: uint64(v)} }
	cmd := func(name, label string, ft fields.FieldType, b fields.Base, fabrics bool, get func(c *nvme.Command) fields.Value) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if r.Command && r.Err == nil && r.Cmd.IsFabrics() == fabrics {
				emit(get(&r.Cmd))
			}
		})
	}
	// The SGL and the I/O fields of every command but the Fabrics ones
	// with no data (Property Get/Set: SGL1 reserved), as tshark shows them.
	anyCmd := func(name, label string, ft fields.FieldType, b fields.Base, get func(r *Capsule, c *nvme.Command, emit func(fields.Value))) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if r.Command && r.Err == nil && (!r.Cmd.IsFabrics() || r.Cmd.FCTYPE == nvme.FabricsConnect) {
				get(r, &r.Cmd, emit)
			}
		})
	}
	cpl := func(name, label string, ft fields.FieldType, b fields.Base, get func(c *nvme.Completion) fields.Value) *fields.Field {
		return capsuleField(name, label, ft, b, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil {
				emit(get(&r.Cpl))
			}
		})
	}
	// Read and Write (NVM Command Set 1.0) on an I/O queue.
	rw := func(r *Capsule, c *nvme.Command) bool {
		op := nvme.IOOpcode(c.OPC)
		return !c.IsFabrics() && !r.Queue.Admin() && (op == nvme.IORead || op == nvme.IOWrite)
	}
	t.Register(
		cmReq("nvme-rdma.cm.req.recfmt", "Record Format", fields.BaseDec, func(r *nvme.CMRequest) uint16 { return uint16(r.RECFMT) }),
		cmReq("nvme-rdma.cm.req.qid", "Queue Id", fields.BaseDec, func(r *nvme.CMRequest) uint16 { return r.QID }),
		cmReq("nvme-rdma.cm.req.hrqsize", "RDMA QP Host Receive Queue Size", fields.BaseDec, func(r *nvme.CMRequest) uint16 { return r.HRQSIZE }),
		cmReq("nvme-rdma.cm.req.hsqsize", "RDMA QP Host Send Queue Size", fields.BaseDec, func(r *nvme.CMRequest) uint16 { return r.HSQSIZE }),
		cmReq("nvme-rdma.cm.req.cntlid", "Controller ID", fields.BaseHex, func(r *nvme.CMRequest) uint16 { return r.CNTLID }),
		&fields.Field{Name: "nvme-rdma.cm.req.reserved", Label: "Reserved", Type: fields.FTBytes, Base: fields.BaseNone, Parent: "nvme-rdma",
			Get: func(p *dissect.Packet, emit func(fields.Value)) {
				var r nvme.CMRequest
				if pd := setUpOf(p, 0); pd != nil && r.DecodeFromBytes(pd) == nil {
					emit(fields.Value{B: r.Reserved})
				}
			}},
		cmRep("nvme-rdma.cm.rsp.recfmt", "Record Format", func(r *nvme.CMReply) uint16 { return uint16(r.RECFMT) }),
		cmRep("nvme-rdma.cm.rsp.crqsize", "RDMA QP Controller Receive Queue Size", func(r *nvme.CMReply) uint16 { return r.CRQSIZE }),
		&fields.Field{Name: "nvme-rdma.cm.rsp.reserved", Label: "Reserved", Type: fields.FTBytes, Base: fields.BaseNone, Parent: "nvme-rdma",
			Get: func(p *dissect.Packet, emit func(fields.Value)) {
				var r nvme.CMReply
				if pd := setUpOf(p, 1); pd != nil && r.DecodeFromBytes(pd) == nil {
					emit(fields.Value{B: r.Reserved})
				}
			}},
		// On every packet of the queue's RDMA connection but its CM
		// messages and ACKs, as tshark does: capsules and RDMA data.
		&fields.Field{Name: "nvme-rdma.cmd.qid", Label: "Cmd Qid", Type: fields.FTUint16, Base: fields.BaseHex, Parent: "nvme-rdma",
			Get: func(p *dissect.Packet, emit func(fields.Value)) {
				if c := p.Conn; c != nil && c.ULP == Name && p.Has(roce.LayerTypeBTH) && p.CM.Attr == 0 && !p.BTH.OpCode.IsAck() {
					if q, ok := c.ULPData.(*Queue); ok && q.QID != nil {
						emit(u16(*q.QID))
					}
				}
			}},
		cmd("nvme.cmd.opc", "Opcode", fields.FTUint8, fields.BaseHex, false, func(c *nvme.Command) fields.Value { return fields.Value{U: uint64(c.OPC)} }),
		cmd("nvme.cmd.fuse_op", "Fuse Operation", fields.FTUint8, fields.BaseHex, false, func(c *nvme.Command) fields.Value { return fields.Value{U: uint64(c.FUSE)} }),
		cmd("nvme.cmd.psdt", "PRP Or SGL", fields.FTUint8, fields.BaseHex, false, func(c *nvme.Command) fields.Value { return fields.Value{U: uint64(c.PSDT)} }),
		cmd("nvme.cmd.cid", "Command ID", fields.FTUint16, fields.BaseHex, false, func(c *nvme.Command) fields.Value { return u16(c.CID) }),
		cmd("nvme.cmd.nsid", "Namespace Id", fields.FTUint32, fields.BaseHex, false, func(c *nvme.Command) fields.Value { return fields.Value{U: uint64(c.NSID)} }),
		anyCmd("nvme.cmd.sgl.type", "Descriptor Type", fields.FTUint8, fields.BaseHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(c.SGL1.Type)})
		}),
		anyCmd("nvme.cmd.sgl.subtype", "Descriptor Sub Type", fields.FTUint8, fields.BaseHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(c.SGL1.Subtype)})
		}),
		anyCmd("nvme.cmd.sgl1.addr", "Address", fields.FTUint64, fields.BaseHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			emit(fields.Value{U: c.SGL1.Address})
		}),
		anyCmd("nvme.cmd.sgl1.len", "Length", fields.FTUint32, fields.BaseDec, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			emit(fields.Value{U: uint64(c.SGL1.Length)})
		}),
		anyCmd("nvme.cmd.sgl1.key", "Key", fields.FTUint32, fields.BaseHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			if c.SGL1.IsKeyed() {
				emit(fields.Value{U: uint64(c.SGL1.Key)})
			}
		}),
		anyCmd("nvme.cmd.slba", "Start LBA", fields.FTUint64, fields.BaseHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			if rw(r, c) {
				emit(fields.Value{U: c.RW().SLBA})
			}
		}),
		anyCmd("nvme.cmd.nlb", "Absolute Number of Logical Blocks", fields.FTUint16, fields.BaseDecHex, func(r *Capsule, c *nvme.Command, emit func(fields.Value)) {
			if rw(r, c) {
				emit(fields.Value{U: uint64(c.RW().Blocks())}) // tshark's is NLB + 1: KD-NVME-NLB
			}
		}),
		cmd("nvme.fabrics.cmd.cid", "Command Identifier", fields.FTUint16, fields.BaseHex, true, func(c *nvme.Command) fields.Value { return u16(c.CID) }),
		cmd("nvme.fabrics.cmd.fctype", "Fabric Command Type", fields.FTUint8, fields.BaseHex, true, func(c *nvme.Command) fields.Value { return fields.Value{U: uint64(c.FCTYPE)} }),
		// DW0 and DW1 of the completion of a command that is not a
		// Fabrics one (tshark shows a Fabrics response's fields instead).
		capsuleField("nvme.cqe.dword0", "DWORD0", fields.FTUint32, fields.BaseHex, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil && r.Request != nil && r.Request.OPC != nvme.OpcodeFabrics && !setNumberOfQueues(r) {
				emit(fields.Value{U: uint64(r.Cpl.DW0)})
			}
		}),
		capsuleField("nvme.cqe.dword1", "DWORD1", fields.FTUint32, fields.BaseHex, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil && r.Request != nil && r.Request.OPC != nvme.OpcodeFabrics {
				emit(fields.Value{U: uint64(r.Cpl.DW1)})
			}
		}),
		cpl("nvme.cqe.sqhd", "SQ Head Pointer", fields.FTUint16, fields.BaseHex, func(c *nvme.Completion) fields.Value { return u16(c.SQHD) }),
		cpl("nvme.cqe.sqid", "SQ Identifier", fields.FTUint16, fields.BaseHex, func(c *nvme.Completion) fields.Value { return u16(c.SQID) }),
		cpl("nvme.cqe.cid", "Command Identifier", fields.FTUint16, fields.BaseHex, func(c *nvme.Completion) fields.Value { return u16(c.CID) }),
		cpl("nvme.cqe.status", "Status Field", fields.FTUint16, fields.BaseHex, func(c *nvme.Completion) fields.Value { return u16(uint16(c.Status)) }),
		// rdmashark's own, per capsule, where tshark 4.0 has nothing:
		// the QID of the capsule's queue (tshark's nvme-rdma.cmd.qid is
		// per packet, and on the queues it tracks only), the controller
		// the queue belongs to (controller.go), a completion's latency.
		capsuleField("rdmashark.nvme.qid", "Queue ID of the capsule's queue", fields.FTUint16, fields.BaseDec, func(r *Capsule, emit func(fields.Value)) {
			if id, ok := r.Queue.qid(); ok {
				emit(u16(id))
			}
		}),
		capsuleField("rdmashark.nvme.controller", "Controller (rdmashark's number: analyze's controller id)", fields.FTUint32, fields.BaseDec, func(r *Capsule, emit func(fields.Value)) {
			if x := r.Queue.Controller; x != nil {
				emit(fields.Value{U: uint64(x.ID)})
			}
		}),
		capsuleField("rdmashark.nvme.cntlid", "Controller ID (CNTLID) of the capsule's queue", fields.FTUint16, fields.BaseHex, func(r *Capsule, emit func(fields.Value)) {
			if x := r.Queue.Controller; x != nil {
				emit(u16(x.CNTLID))
			}
		}),
		capsuleField("rdmashark.nvme.latency", "Time from the command's capsule", fields.FTRelTime, fields.BaseNone, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil && r.Request != nil && r.Latency >= 0 {
				emit(fields.Value{U: uint64(r.Latency)})
			}
		}),
		capsuleField("rdmashark.nvme.cmd_frame", "Packet of the command this completion answers", fields.FTUint32, fields.BaseDec, func(r *Capsule, emit func(fields.Value)) {
			if !r.Command && r.Err == nil && r.Request != nil {
				emit(fields.Value{U: uint64(r.Request.Packet)})
			}
		}),
	)
	sqeFields(t)         // fields_sqe.go
	connectDataFields(t) // fields_sqe.go
	dataFields(t)        // fields_data.go
	return t
}

// capsules returns the packet's NVMe/RDMA capsule records.
func capsuleAt(p *dissect.Packet, i int) *Capsule {
	n := 0
	for _, r := range p.ULP {
		if c, ok := r.(*Capsule); ok {
			if n == i {
				return c
			}
			n++
		}
	}
	return nil
}

func capsuleCount(p *dissect.Packet) int {
	n := 0
	for _, r := range p.ULP {
		if _, ok := r.(*Capsule); ok {
			n++
		}
	}
	return n
}

func capsuleField(name, label string, ft fields.FieldType, b fields.Base, get func(r *Capsule, emit func(fields.Value))) *fields.Field {
	parent := "nvme"
	if len(name) > 9 && name[:9] == "nvme-rdma" {
		parent = "nvme-rdma"
	}
	return &fields.Field{Name: name, Label: label, Type: ft, Base: b, Parent: parent, Per: "nvme",
		At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := capsuleAt(p, i); r != nil {
				get(r, emit)
			}
		}}
}

// setUpOf returns the consumer private data of the CM REQ (side 0) or REP
// (side 1) the packet carried, on an NVMe/RDMA connection.
func setUpOf(p *dissect.Packet, side int) []byte {
	c := p.Conn
	if c == nil || c.ULP != Name && !nvmePort(c.ServicePort) {
		return nil
	}
	if pd := &c.PrivateData[side]; pd.Seen && pd.Packet == p.Number {
		return pd.Consumer()
	}
	return nil
}

// nvmePort reports whether p is a port of NVMe/RDMA: a well-known one or
// one given to New (the field table is the process's, so the ports of
// every ULP value made count).
func nvmePort(p uint16) bool {
	if p == Port || p == DiscoveryPort {
		return true
	}
	if ps := extraPorts.Load(); ps != nil {
		for _, q := range *ps {
			if p == q {
				return true
			}
		}
	}
	return false
}

// extraPorts are the ports given to New, each once.
var (
	extraPorts   atomic.Pointer[[]uint16]
	extraPortsMu sync.Mutex
)

func addPorts(ports []uint16) {
	extraPortsMu.Lock()
	defer extraPortsMu.Unlock()
	var ps []uint16
	if old := extraPorts.Load(); old != nil {
		ps = append(ps, *old...)
	}
	n := len(ps)
	for _, p := range ports {
		if !nvmePort(p) && !slices.Contains(ps[n:], p) {
			ps = append(ps, p)
		}
	}
	if len(ps) > n {
		extraPorts.Store(&ps)
	}
}

func cmReq(name, label string, b fields.Base, get func(r *nvme.CMRequest) uint16) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: fields.FTUint16, Base: b, Parent: "nvme-rdma",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			var r nvme.CMRequest
			if pd := setUpOf(p, 0); pd != nil && r.DecodeFromBytes(pd) == nil {
				emit(fields.Value{U: uint64(get(&r))})
			}
		}}
}

func cmRep(name, label string, get func(r *nvme.CMReply) uint16) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: fields.FTUint16, Base: fields.BaseDec, Parent: "nvme-rdma",
		Get: func(p *dissect.Packet, emit func(fields.Value)) {
			var r nvme.CMReply
			if pd := setUpOf(p, 1); pd != nil && r.DecodeFromBytes(pd) == nil {
				emit(fields.Value{U: uint64(get(&r))})
			}
		}}
}

// setNumberOfQueues reports whether r completes a Set Features of Number
// of Queues (FID 07h), whose DW0 tshark shows as its own fields
// (nvme.cqe.dword0.set_features.nq) rather than nvme.cqe.dword0.
func setNumberOfQueues(r *Capsule) bool {
	x := r.Request
	return r.Queue.Admin() && nvme.AdminOpcode(x.OPC) == nvme.AdminSetFeatures && nvme.FeatureID(x.CDW10) == nvme.FeatureNumberOfQueues
}

// AppendInfo appends what the packet's capsules are to its summary line,
// as tshark's Info column names them: "NVMe Read", "NVMeOF Connect", "NVMe
// CQE for Read", with a completion's status when it is not a success
// (fields.RegisterInfo).
func AppendInfo(p *dissect.Packet, dst []byte) []byte {
	n := 0
	for _, rr := range p.ULP {
		r, ok := rr.(*Capsule)
		if !ok {
			continue
		}
		if n > 0 {
			dst = append(dst, " | "...)
		}
		n++
		var x *Command
		switch {
		case r.Err != nil:
			dst = append(dst, "NVMe ["...)
			dst = append(dst, r.Err.Error()...)
			dst = append(dst, ']')
			continue
		case r.Command:
			x = r.Request
		default:
			x = r.Request
		}
		fabrics := r.Command && r.Cmd.IsFabrics() || x != nil && x.OPC == nvme.OpcodeFabrics
		if fabrics {
			dst = append(dst, "NVMeOF "...)
		} else {
			dst = append(dst, "NVMe "...)
		}
		if !r.Command {
			dst = append(dst, "CQE"...)
			if x != nil {
				dst = append(dst, " for "...)
				dst = append(dst, x.Name...)
			}
			if !r.Cpl.Status.Success() {
				dst = append(dst, " ["...)
				op, fct := uint8(0), nvme.FabricsType(0)
				if x != nil {
					op, fct = x.OPC, x.FCTYPE
				}
				dst = append(dst, r.Cpl.Status.Describe(op, r.Queue.Admin(), fct)...)
				dst = append(dst, ']')
			}
			continue
		}
		if x != nil {
			dst = append(dst, x.Name...)
		}
	}
	return dst
}
