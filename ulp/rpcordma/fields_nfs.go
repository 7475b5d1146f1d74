package rpcordma

import (
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// The NFS, MOUNT and NFSACL fields, named, typed and printed as Wireshark
// 4.0's packet-nfs.c, packet-mount.c and packet-nfsacl.c name them, from
// what the NFS decoder (rpc_nfs.go, package rpcrdma/nfs) said of each RPC
// message whole at the packet (RPCRecord.ULP). Like the rpc.* fields they
// are on the packet where the RPC message is whole; a Reply is named by
// the Call it answers.
//
// tshark adds the procedure of a program it knows on Calls and Replies
// (NULL included), every NFSv4 operation of a COMPOUND as nfs.opcode, the
// most significant of them as nfs.main_opcode, and each status word twice:
// under its version's name (nfs.status3, nfs.nfsstat4) and under the
// hidden nfs.status. NFSACL's status has only nfs.status.

// rpcProgram returns the program, version and procedure of r's RPC
// message: a Call's own, a Reply's Call's (ok is false when that Call is
// not in the capture).
func rpcProgram(r *RPCRecord, h *oncrpc.Header) (prog, vers, proc uint32, ok bool) {
	if h.MsgType == oncrpc.Call {
		return uint32(h.Prog), h.Vers, h.Proc, true
	}
	return r.Program, r.Version, r.Procedure, r.HasProgram
}

// procedureField is one program version's procedure field, e.g.
// nfs.procedure_v3: the procedure number with its name.
func procedureField(name, parent string, prog nfs.Program, vers uint32) *fields.Field {
	return &fields.Field{Name: name, Label: "V" + string(rune('0'+vers)) + " Procedure", Type: fields.FTUint32, Base: fields.BaseDec, Parent: parent,
		Per: "rpc", At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			r := rpcAt(p, i)
			if r == nil {
				return
			}
			pg, v, pc, ok := rpcProgram(r, &r.RPC)
			if ok && pg == uint32(prog) && v == vers && !r.ULP.Callback {
				emit(fields.Value{U: uint64(pc), Text: nfs.ProcName(pg, v, pc)})
			}
		}}
}

// nfsField is a field of the results or arguments the NFS decoder walked.
func nfsField(name, label string, get func(r *RPCRecord, prog, vers, proc uint32, emit func(fields.Value))) *fields.Field {
	return &fields.Field{Name: name, Label: label, Type: fields.FTUint32, Base: fields.BaseDec, Parent: "nfs",
		Per: "rpc", At: func(p *dissect.Packet, i int, emit func(fields.Value)) {
			if r := rpcAt(p, i); r != nil {
				if pg, v, pc, ok := rpcProgram(r, &r.RPC); ok {
					get(r, pg, v, pc, emit)
				}
			}
		}}
}

// isCompound tells whether r is an NFSv4 COMPOUND (not the callback
// program's CB_COMPOUND).
func isCompound(r *RPCRecord, prog, vers, proc uint32) bool {
	return !r.ULP.Callback && prog == uint32(nfs.ProgNFS) && vers == 4 && proc == 1
}

// eachStatus calls f with every status word tshark shows as nfs.status:
// the first word of NFSv3 and NFSACL results, and of a COMPOUND's (or
// CB_COMPOUND's) results followed by each operation's status.
func eachStatus(r *RPCRecord, prog, vers uint32, f func(st uint32, v4 bool)) {
	u := &r.ULP
	if !r.Reply || !u.HasStatus {
		return
	}
	switch {
	case u.Callback || prog == uint32(nfs.ProgNFS) && vers == 4:
		f(u.Status, true)
		for _, st := range u.OpStatus {
			f(st, true)
		}
	case prog == uint32(nfs.ProgNFS) && vers == 3, prog == uint32(nfs.ProgNFSACL):
		f(u.Status, false)
	}
}

// nfs4OpTier ranks an NFSv4 operation's significance in a COMPOUND as
// Wireshark 4.0 does for nfs.main_opcode, 0 (most) to 5 (least): the main
// operations are those of the most significant rank present. Wireshark's
// table is not in any RFC; it was read off tshark 4.0.17 by dissecting a
// COMPOUND of each operation after CLOSE, ACCESS, GETATTR and PUTFH
// (operations 3 to 75 and ILLEGAL). Every operation not listed is rank 1.
func nfs4OpTier(op uint32) int {
	switch nfs.Opnum4(op) {
	case nfs.OP_ILLEGAL:
		return 0
	case nfs.OP_ACCESS, nfs.OP_NVERIFY:
		return 2
	case nfs.OP_GETATTR, nfs.OP_PUTPUBFH, nfs.OP_PUTROOTFH:
		return 3
	case nfs.OP_GETFH, nfs.OP_PUTFH, nfs.OP_RESTOREFH, nfs.OP_SAVEFH, nfs.OP_SEQUENCE:
		return 4
	case nfs.OP_GET_DIR_DELEGATION, nfs.OP_SET_SSV, nfs.OP_WANT_DELEGATION:
		return 5
	}
	return 1
}

// mainOps calls f with the operations of the most significant rank, in
// order.
func mainOps(codes []uint32, f func(op uint32)) {
	best := 6
	for _, c := range codes {
		if t := nfs4OpTier(c); t < best {
			best = t
		}
	}
	for _, c := range codes {
		if nfs4OpTier(c) == best {
			f(c)
		}
	}
}

// hidden makes f one of tshark's hidden fields that occur without their
// protocol (nfs.status on NFSACL replies): -T fields and filters see it,
// and it does not make its protocol present.
func hidden(f *fields.Field) *fields.Field {
	f.Hidden = true
	f.NoPresence = true
	return f
}

func opValue(u *ULPInfo, i int) fields.Value {
	v := fields.Value{U: uint64(u.OpCodes[i])}
	if i < len(u.Operations) {
		v.Text = u.Operations[i]
	}
	return v
}

func nfsTable(F *fields.Table) {
	F.Group("nfs", "Network File System")
	F.Group("mount", "Mount Service")
	F.Group("nfsacl", "NFSACL")
	F.Register(
		procedureField("nfs.procedure_v2", "nfs", nfs.ProgNFS, 2),
		procedureField("nfs.procedure_v3", "nfs", nfs.ProgNFS, 3),
		procedureField("nfs.procedure_v4", "nfs", nfs.ProgNFS, 4),
		nfsField("nfs.cb_procedure", "CB Procedure", func(r *RPCRecord, _, _, proc uint32, emit func(fields.Value)) {
			if r.ULP.Callback {
				emit(fields.Value{U: uint64(proc), Text: r.ULP.Procedure})
			}
		}),
		nfsField("nfs.main_opcode", "Main Opcode", func(r *RPCRecord, prog, vers, proc uint32, emit func(fields.Value)) {
			if !isCompound(r, prog, vers, proc) {
				return
			}
			mainOps(r.ULP.OpCodes, func(op uint32) { emit(fields.Value{U: uint64(op), Text: nfs.Opnum4(op).String()}) })
		}),
		nfsField("nfs.opcode", "Opcode", func(r *RPCRecord, prog, vers, proc uint32, emit func(fields.Value)) {
			if !isCompound(r, prog, vers, proc) {
				return
			}
			for i := range r.ULP.OpCodes {
				emit(opValue(&r.ULP, i))
			}
		}),
		nfsField("nfs.cb.operation", "Opcode", func(r *RPCRecord, _, _, _ uint32, emit func(fields.Value)) {
			if !r.ULP.Callback {
				return
			}
			for i := range r.ULP.OpCodes {
				emit(opValue(&r.ULP, i))
			}
		}),
		hidden(nfsField("nfs.status", "Status", func(r *RPCRecord, prog, vers, _ uint32, emit func(fields.Value)) {
			eachStatus(r, prog, vers, func(st uint32, v4 bool) {
				if v4 {
					emit(fields.Value{U: uint64(st), Text: nfs.Nfsstat4(st).String()})
				} else {
					emit(fields.Value{U: uint64(st), Text: nfs.Nfsstat3(st).String()})
				}
			})
		})),
		nfsField("nfs.status3", "Status", func(r *RPCRecord, prog, vers, _ uint32, emit func(fields.Value)) {
			if prog == uint32(nfs.ProgNFS) && vers == 3 {
				eachStatus(r, prog, vers, func(st uint32, _ bool) { emit(fields.Value{U: uint64(st), Text: nfs.Nfsstat3(st).String()}) })
			}
		}),
		nfsField("nfs.nfsstat4", "Status", func(r *RPCRecord, prog, vers, _ uint32, emit func(fields.Value)) {
			eachStatus(r, prog, vers, func(st uint32, v4 bool) {
				if v4 {
					emit(fields.Value{U: uint64(st), Text: nfs.Nfsstat4(st).String()})
				}
			})
		}),
		procedureField("mount.procedure_v1", "mount", nfs.ProgMount, 1),
		procedureField("mount.procedure_v2", "mount", nfs.ProgMount, 2),
		procedureField("mount.procedure_v3", "mount", nfs.ProgMount, 3),
		procedureField("nfsacl.procedure_v2", "nfsacl", nfs.ProgNFSACL, 2),
		procedureField("nfsacl.procedure_v3", "nfsacl", nfs.ProgNFSACL, 3),
	)
}
