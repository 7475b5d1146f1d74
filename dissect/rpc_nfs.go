package dissect

import (
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// The NFS upper layer (package rpcrdma/nfs) behind the ULP seam: NFSv3,
// NFSv4.x COMPOUND, MOUNT, NFSACL, and the NFSv4 callback program on the
// backchannel once a SETCLIENTID, CREATE_SESSION or BACKCHANNEL_CTL named
// its number.

func init() { DefaultULP = newNFSDecoder }

// nfsDecoder is one engine's NFS decoder.
type nfsDecoder struct {
	info nfs.Info
	red  nfs.Reduction
	// cbProgs are the callback program numbers seen (a client names one,
	// rarely more).
	cbProgs []uint32
}

func newNFSDecoder() ULPDecoder {
	d := &nfsDecoder{}
	return d.decode
}

func (d *nfsDecoder) callback(prog uint32) bool {
	for _, p := range d.cbProgs {
		if p == prog {
			return true
		}
	}
	return prog == uint32(oncrpc.ProgNFSCallback)
}

func (d *nfsDecoder) decode(q *ULPQuery, out *ULPInfo) {
	cb := !nfs.Known(q.Program) && d.callback(q.Program)
	if !nfs.Known(q.Program) && !cb {
		return
	}
	var red *nfs.Reduction
	if q.Reduced {
		d.red = nfs.Reduction{HeaderLen: q.HeaderLen, ReadPositions: append(d.red.ReadPositions[:0], q.ReadPositions...),
			WriteChunks: append(d.red.WriteChunks[:0], q.WriteChunks...)}
		red = &d.red
	}
	in := &d.info
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
	if in.HasCBProgram && !d.callback(in.CBProgram) && len(d.cbProgs) < 16 {
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
