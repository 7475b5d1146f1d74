package nfs

import (
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// NFS's Upper-Layer Binding (RFC 8267) behind rpcrdma.UpperLayerBinding:
// NFSv3, NFSv4.x COMPOUND, MOUNT, NFSACL, and the NFSv4 callback program on
// the backchannel once a SETCLIENTID, CREATE_SESSION or BACKCHANNEL_CTL
// named its number.

// Binding is the NFS Upper-Layer Binding of one stream of RPC messages
// (one engine): it remembers the callback programs the clients named.
type Binding struct {
	info Info
	red  Reduction
	// cbProgs are the callback program numbers seen (a client names one,
	// rarely more).
	cbProgs []uint32
}

// NewBinding returns an NFS binding for one stream of messages.
func NewBinding() *Binding {
	// Room for the values of a typical body up front, so that only the
	// rare large one (a READDIRPLUS reply) grows them.
	b := &Binding{}
	b.info.Values = make([]rpcrdma.ULBValue, 0, 512)
	b.info.Arena = make([]byte, 0, 16<<10)
	return b
}

var _ rpcrdma.UpperLayerBinding = (*Binding)(nil)

// callback tells whether prog is an NFSv4 callback program: Linux's
// 0x40000000 (which xdr/nfs4.x also declares, so Known says yes to it too)
// or one a client named.
func (d *Binding) callback(prog uint32) bool {
	if prog == uint32(oncrpc.ProgNFSCallback) {
		return true
	}
	for _, p := range d.cbProgs {
		if p == prog {
			return true
		}
	}
	return false
}

// Decode implements rpcrdma.UpperLayerBinding.
func (d *Binding) Decode(q *rpcrdma.ULBQuery, out *rpcrdma.ULBInfo) {
	cb := d.callback(q.Program)
	if !cb && !Known(q.Program) {
		return
	}
	var red *Reduction
	if q.Reduced {
		d.red = Reduction{HeaderLen: q.HeaderLen, ReadPositions: append(d.red.ReadPositions[:0], q.ReadPositions...),
			WriteChunks: append(d.red.WriteChunks[:0], q.WriteChunks...)}
		red = &d.red
	}
	in := &d.info
	// Read only the values the caller wants: the handles and names of
	// the object, or none (analyze and check read neither).
	switch {
	case q.Want&rpcrdma.WantValues != 0:
		in.ValueMode = ValuesAll
	case q.Want&rpcrdma.WantObject != 0:
		in.ValueMode = ValuesObject
	default:
		in.ValueMode = ValuesNone
	}
	var err error
	if cb {
		err = in.DecodeCallback(q.Program, q.Version, q.Procedure, !q.Reply, q.Body, red)
	} else {
		err = in.Decode(q.Program, q.Version, q.Procedure, !q.Reply, q.Body, red)
	}
	out.Err = err
	out.Protocol = oncrpc.Program(q.Program).String()
	if cb {
		out.Protocol = "NFS_CB"
	}
	out.Procedure = in.ProcName
	out.Callback = cb
	out.Compound = in.IsCompound()
	out.Status, out.HasStatus = in.Status, in.HasStatus
	for _, op := range in.Ops {
		out.Operations = append(out.Operations, op.Name())
		code := uint32(op.Code)
		if op.CBCode != 0 {
			code = uint32(op.CBCode)
		}
		out.OpCodes = append(out.OpCodes, code)
		if q.Reply {
			out.OpStatus = append(out.OpStatus, uint32(op.Status))
		}
	}
	for _, it := range in.Items {
		out.Items = append(out.Items, rpcrdma.DataItem{Name: it.Kind.String(), Result: it.Kind.IsResult(), Op: it.Op,
			Offset: it.Offset, Length: it.Length, Reduced: it.Reduced})
	}
	// Values and their bytes, after what out holds already (nothing,
	// once Reset).
	base := uint32(len(out.Arena))
	if in.ValueMode == ValuesAll {
		out.Arena = append(out.Arena, in.Arena...)
		for _, v := range in.Values {
			v.Off += base
			out.Values = append(out.Values, v)
		}
		out.ValuesDropped += in.ValuesDropped
	}
	if q.Want&rpcrdma.WantObject != 0 {
		if q.Reply {
			out.Object = in.replyObject()
		} else {
			o := in.Object()
			if in.ValueMode == ValuesAll {
				o.NameOff += base
			} else {
				// Only the name goes to out's arena.
				name := in.Arena[o.NameOff : o.NameOff+o.NameLen]
				o.NameOff = uint32(len(out.Arena))
				out.Arena = append(out.Arena, name...)
			}
			out.Object = o
		}
	}
	// A program this package decodes otherwise (NFS, MOUNT, NFSACL) is
	// not taken as a callback program, whatever a client names.
	if in.HasCBProgram && !d.callback(in.CBProgram) && !Known(in.CBProgram) && len(d.cbProgs) < 16 {
		d.cbProgs = append(d.cbProgs, in.CBProgram)
	}
	if q.Reply && q.Reduced {
		// The Nth Write chunk carries the Nth DDP-eligible result (RFC
		// 8267 sections 3 and 5.4.1); its data goes back where the item's
		// bytes belong.
		n := 0
		for _, it := range in.Items {
			if !it.Kind.IsResult() || n >= len(q.WriteChunks) {
				continue
			}
			off := -1
			if it.Reduced {
				off = it.Offset
			}
			out.WriteChunkOffsets = append(out.WriteChunkOffsets, off)
			n++
		}
	}
}
