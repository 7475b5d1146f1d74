package dissect

// The seam for the upper-layer protocols carried in RPC (NFS, in package
// rpcrdma/nfs): the RPC-over-RDMA layer hands each RPC message whose body it
// holds to a ULPDecoder and keeps what it reports — names for the summary
// and the transactions, and where the DDP-eligible data items sit, so that
// a Reply's Write chunks can be put back (RFC 8166 section 3.4.6 leaves
// where to the Upper-Layer Binding; RFC 8267 sections 3, 5.1 and 5.4.1 say
// it for NFS).
//
// A decoder is called on the per-packet path: it must not keep q.Body, and
// should fill out without allocating (reuse out.Operations' backing array,
// use constant strings).

// ULPQuery is one RPC message body handed to a ULPDecoder.
type ULPQuery struct {
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

// ULPInfo is what a ULPDecoder reports. The RPC-over-RDMA layer resets it
// (keeping Operations' backing array) before each call.
type ULPInfo struct {
	// Protocol and Procedure name the message, e.g. "NFS", "READ" or
	// "COMPOUND"; empty when the decoder does not know the program.
	Protocol  string
	Procedure string
	// Operations lists the operations of an NFSv4 COMPOUND (or callback
	// CB_COMPOUND), in order; OpCodes holds their numbers (nfs_opnum4, or
	// nfs_cb_opnum4 when Callback) and, for results, OpStatus each one's
	// status (nfsstat4), index for index.
	Operations []string
	OpCodes    []uint32
	OpStatus   []uint32
	// Callback: the message belongs to the NFSv4 callback program.
	Callback bool
	// Status is the first word of results that start with a status
	// (nfsstat3 of NFSv3 and NFSACL, a COMPOUND's nfsstat4), when
	// HasStatus.
	Status    uint32
	HasStatus bool
	// WriteChunkOffsets gives, for a Reduced reply, the offset in Body at
	// which the data of each Write chunk belongs (just after its length
	// word), in Write list order; nil when the decoder cannot tell.
	WriteChunkOffsets []int
	// Err is why the body did not decode, when it did not.
	Err error
}

func (u *ULPInfo) reset() {
	ops, offs := u.Operations[:0], u.WriteChunkOffsets[:0]
	codes, stats := u.OpCodes[:0], u.OpStatus[:0]
	*u = ULPInfo{Operations: ops, WriteChunkOffsets: offs, OpCodes: codes, OpStatus: stats}
}

// ULPDecoder decodes the arguments or results of one RPC message into out.
type ULPDecoder func(q *ULPQuery, out *ULPInfo)

// DefaultULP, when set, makes the decoder an engine uses when Options.ULP
// is nil — one per engine, so that a decoder may keep state (reused
// buffers, the callback programs it learned). rpc_nfs.go sets it to the NFS
// decoder of package rpcrdma/nfs; nil decodes nothing.
var DefaultULP func() ULPDecoder
