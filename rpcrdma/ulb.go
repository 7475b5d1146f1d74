package rpcrdma

// The Upper-Layer Binding seam (RFC 8166 section 6): RPC-over-RDMA moves
// RPC messages without knowing the programs they carry, but which data
// items may move by chunk (DDP-eligibility), and where a Reply's Write
// chunk data belongs, the binding of each program says (RFC 8267 for NFS,
// in package rpcrdma/nfs). A consumer of RPC-over-RDMA messages — the
// engine in package dissect — hands each RPC body it holds to an
// UpperLayerBinding and keeps what the binding reports: names for the
// summaries and transactions, and the DDP-eligible items.
//
// A binding is called on the per-packet path: it must not keep q.Body, and
// should fill out without allocating (reuse out's slices' backing arrays,
// use constant strings). One binding serves one stream of messages: it may
// keep state (the callback programs an NFSv4 client named).

// UpperLayerBinding decodes the arguments or results of RPC messages.
type UpperLayerBinding interface {
	// Decode decodes one RPC message body into out, which the caller has
	// Reset. A binding that does not know the program leaves
	// out.Protocol empty.
	Decode(q *ULBQuery, out *ULBInfo)
}

// ULBQuery is one RPC message body handed to an UpperLayerBinding.
type ULBQuery struct {
	// Reply tells results from arguments.
	Reply bool
	// Program, Version and Procedure are the Call's (for a Reply, those of
	// the Call it answers; Known is false when that Call is not in the
	// capture).
	Program, Version, Procedure uint32
	Known                       bool
	// Body is the procedure's arguments or results: the bytes after the RPC
	// header. When Reduced, the DDP-eligible data items moved by chunks are
	// missing from it (their length words stay, RFC 8166 section 3.4.3):
	// for a Reply WriteChunks holds the bytes each Write chunk actually
	// carried, in Write list order.
	Body        []byte
	Reduced     bool
	WriteChunks []uint32
	// ReadPositions, for a Reduced Call (its Read chunks not pulled yet),
	// are the XDR positions of its Read chunks from the start of the RPC
	// message, and HeaderLen the length of the RPC header before Body.
	ReadPositions []uint32
	HeaderLen     int
}

// ULBInfo is what an UpperLayerBinding reports of one RPC message body.
type ULBInfo struct {
	// Protocol and Procedure name the message, e.g. "NFS", "READ" or
	// "COMPOUND"; Protocol is empty when the binding does not know the
	// program.
	Protocol  string
	Procedure string
	// Operations lists the operations of a compound procedure (NFSv4
	// COMPOUND, CB_COMPOUND), in order; OpCodes holds their numbers
	// (nfs_opnum4, or nfs_cb_opnum4 when Callback) and, for results,
	// OpStatus each one's status (nfsstat4), index for index.
	Operations []string
	OpCodes    []uint32
	OpStatus   []uint32
	// Compound: the procedure is a compound one (Operations says which
	// operations).
	Compound bool
	// Callback: the message belongs to the NFSv4 callback program.
	Callback bool
	// Status is the first word of results that start with a status
	// (nfsstat3 of NFSv3 and NFSACL, a COMPOUND's nfsstat4), when
	// HasStatus.
	Status    uint32
	HasStatus bool
	// Items are the DDP-eligible data items met in the body, in order
	// (RFC 8166 section 3.4.1; RFC 8267 sections 3, 4.2 and 5.1 for NFS).
	Items []DataItem
	// WriteChunkOffsets gives, for a Reduced reply, the offset in Body at
	// which the data of each Write chunk belongs (just after its length
	// word), in Write list order; nil when the binding cannot tell.
	WriteChunkOffsets []int
	// Err is why the body did not decode, when it did not.
	Err error

	// Values are what the binding read of the body besides names and
	// items, in the order met: for NFS the file handles, offsets, counts,
	// names, attributes and state of rpcrdma/nfs's keys (nfs.Key). A
	// value's bytes are in Arena (ValueBytes); the binding copies them
	// there, so they outlive the body. ValuesDropped counts the values
	// past the binding's bounds.
	Values        []ULBValue
	Arena         []byte
	ValuesDropped int
	// Object is what the request acts on, when the binding can tell: for
	// NFS the file handle's hash (the CRC-32 tshark shows as nfs.fh.hash)
	// and the name looked up, created or removed (in Arena). For a
	// Reply, the handle of the object the Call looked up or made (NFS
	// LOOKUP, CREATE, OPEN...), without a name.
	Object ULBObject
}

// ULBValue is one value a binding read from a body. Key is the binding's
// (package nfs: nfs.Key); Op is the index in Operations of the compound
// operation holding it, -1 outside one. U and V are its numbers (a time's
// seconds and nanoseconds), Off and Len its bytes in ULBInfo.Arena.
type ULBValue struct {
	Key      uint16
	Op       int16
	V        uint32
	U        uint64
	Off, Len uint32
}

// ULBObject names what a request acts on.
type ULBObject struct {
	HasFH            bool
	FHHash           uint32
	NameOff, NameLen uint32 // in Arena; NameLen 0: no name
}

// ValueBytes returns v's bytes (a slice of u.Arena).
func (u *ULBInfo) ValueBytes(v ULBValue) []byte {
	end := uint64(v.Off) + uint64(v.Len)
	if end > uint64(len(u.Arena)) {
		return nil
	}
	return u.Arena[v.Off:end:end]
}

// ObjectName returns the name of Object (a slice of u.Arena), or nil.
func (u *ULBInfo) ObjectName() []byte {
	return u.ValueBytes(ULBValue{Off: u.Object.NameOff, Len: u.Object.NameLen})
}

// DataItem is one DDP-eligible data item of an RPC message body.
type DataItem struct {
	// Name names the item as its binding's XDR does ("WRITE3args.data").
	Name string
	// Result: the item is in results (moved by a Write chunk), not in
	// arguments (moved by a Read chunk).
	Result bool
	// Op is the index in Operations of the compound operation holding it;
	// -1 outside a compound.
	Op int
	// Offset is the item's bytes' offset in the body: its XDR position
	// (RFC 8166 section 3.5.3) less the RPC header; Length its length word.
	Offset int
	Length uint32
	// Reduced: the bytes are not in the body; they moved by chunk.
	Reduced bool
}

// Reset clears u for the next message, keeping its slices' capacity. It
// assigns field by field: a composite literal copied over u was ~120
// instructions a message. TestULBInfoResetClearsEveryField fails when a
// field added to ULBInfo is not cleared here.
func (u *ULBInfo) Reset() {
	u.Protocol, u.Procedure = "", ""
	u.Operations, u.OpCodes, u.OpStatus = u.Operations[:0], u.OpCodes[:0], u.OpStatus[:0]
	u.Compound, u.Callback, u.Status, u.HasStatus = false, false, 0, false
	u.Items, u.WriteChunkOffsets, u.Err = u.Items[:0], u.WriteChunkOffsets[:0], nil
	u.Values, u.Arena, u.ValuesDropped, u.Object = u.Values[:0], u.Arena[:0], 0, ULBObject{}
}
