package rpcordma

import (
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/rpcrdma"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
)

// RPC-over-RDMA (RFC 8166, draft-ietf-nfsv4-rpcrdma-version-two-07) on top
// of the reassembled Sends and RDMA operations of both transports: every
// message of an RPC-over-RDMA connection is decoded (a header that does not
// parse is recorded with the reason, on the packet and in the statistics),
// Calls and Replies are paired into Transactions by XID per connection and
// direction, each RDMA Read and Write is attached to the chunk segment it
// targets, and RPC messages are rebuilt from their chunks when the capture
// holds the bytes. The model types are here; the processing is in
// rpc_engine.go, the rebuilding in rpc_rebuild.go.

// RPCDirection tells which way the Calls of a transaction go.
type RPCDirection uint8

const (
	// RPCForward: the client (the side that connected) sends the Call.
	RPCForward RPCDirection = iota + 1
	// RPCBackchannel: the server sends the Call (NFSv4.1 callbacks, RFC
	// 8167).
	RPCBackchannel
)

func (d RPCDirection) String() string {
	switch d {
	case RPCForward:
		return "forward"
	case RPCBackchannel:
		return "backchannel"
	}
	return "unknown"
}

// MarshalText makes an RPCDirection appear by name in JSON.
func (d RPCDirection) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// ChunkKind is what a chunk is for (RFC 8166 section 3.4).
type ChunkKind uint8

const (
	ChunkRead  ChunkKind = iota + 1 // a Read chunk: the Responder pulls it with RDMA Read
	ChunkWrite                      // a Write chunk: the Responder pushes a result into it
	ChunkReply                      // the Reply chunk: the Responder writes a long Reply into it
	ChunkCall                       // version 2 Call chunk: the whole Call, pulled by RDMA Read
)

func (k ChunkKind) String() string {
	switch k {
	case ChunkRead:
		return "read"
	case ChunkWrite:
		return "write"
	case ChunkReply:
		return "reply"
	case ChunkCall:
		return "call"
	}
	return "unknown"
}

// MarshalText makes a ChunkKind appear by name in JSON.
func (k ChunkKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// AttachedOp is an RDMA operation that moved bytes of a segment.
type AttachedOp struct {
	Kind dissect.RDMAOpKind
	// FirstPacket and LastPacket: for a Read the Read Request and its last
	// response, for a Write its first and last packets.
	FirstPacket, LastPacket int
	Offset                  uint64 // the operation's remote address
	Length                  uint32
	Complete                bool
}

// Segment is one RDMA segment of a chunk (RFC 8166 section 3.4.3): a
// Requester memory region named by handle (STag / R_Key), length and
// offset (its address).
type Segment struct {
	Handle uint32
	// Length is what the Requester advertised in the Call, or, in a
	// Reply's Write list and Reply chunk, the bytes actually written
	// (RFC 8166 section 3.4.6).
	Length   uint32
	Offset   uint64
	Position uint32 // Read segments: the XDR position of their chunk
	// Ops are the RDMA operations that targeted the segment (Call side).
	Ops []AttachedOp
	// Moved counts the bytes those operations moved.
	Moved uint64
}

// Chunk is one chunk with its segments.
type Chunk struct {
	Kind     ChunkKind
	Position uint32 // Read and Call chunks
	Segments []Segment
}

// Length returns the sum of the chunk's segment lengths.
func (c *Chunk) Length() uint64 {
	var n uint64
	for i := range c.Segments {
		n += uint64(c.Segments[i].Length)
	}
	return n
}

// RPCSide is one half of a transaction: the Call or the Reply as it went.
type RPCSide struct {
	// Packets are the packets of the Send that carried the transport
	// header, the last one completing it.
	Packets []int
	Time    time.Time
	Vers    uint32 // rdma_vers
	// Proc is rdma_proc (version 1) or rdma_htype (version 2).
	Proc    uint32
	Credits uint32 // rdma_credit: requested in a Call, granted in a Reply
	// InvHandle is a version 2 Call's rdma_inv_handle: the handle the
	// Responder may invalidate with Send With Invalidate, 0 for none
	// (draft-07 "Remote Invalidation").
	InvHandle uint32
	Chunks    []Chunk
	// InlineBytes is the part of the RPC message carried in the Send after
	// the transport header; RPCBytes the whole RPC message's length when
	// known (inline, or rebuilt), 0 otherwise.
	InlineBytes int
	RPCBytes    int
	// Rebuilt: the whole RPC message was put together from the inline part
	// and chunk data (RFC 8166 section 3.4).
	Rebuilt bool
	// RPCPacket is the packet on which the RPC message was decoded: the
	// Send's last packet, or the packet that completed its chunk data;
	// RPCTime is that packet's time.
	RPCPacket int
	RPCTime   time.Time
	// Invalidate is set for a Send With Invalidate; InvalidatedSTag is the
	// STag it invalidated.
	Invalidate      bool
	InvalidatedSTag uint32
	// Accepted, for a Reply whose RPC header decoded: reply_stat and
	// accept_stat (RFC 5531).
	HasStatus  bool
	ReplyStat  oncrpc.ReplyStat
	AcceptStat oncrpc.AcceptStat
}

// ProcName names Proc: "RDMA_MSG", "RDMA2_CALL_INLINE", ...
func (s *RPCSide) ProcName() string { return procName(s.Vers, s.Proc) }

// ProcName names an RPC-over-RDMA procedure of version vers (RFC 8166
// section 4.2.4 msg_type, RFC 8167 section 5 htype).
func ProcName(vers, proc uint32) string { return procName(vers, proc) }

func procName(vers, proc uint32) string {
	if vers == rpcrdma.Version2 {
		return rpcrdma.HType(proc).String()
	}
	return rpcrdma.MsgType(proc).String()
}

// TxnOutcome is how a transaction ended.
type TxnOutcome uint8

const (
	TxnReplied     TxnOutcome = iota + 1 // its Reply was processed
	TxnNoReply                           // the capture (or the connection) ended before a Reply
	TxnEvicted                           // given up at Options.MaxTransactions
	TxnSuperseded                        // a new Call with the same XID came before a Reply
	TxnReplyNoCall                       // a Reply whose Call is not in the capture
)

func (o TxnOutcome) String() string {
	switch o {
	case TxnReplied:
		return "replied"
	case TxnNoReply:
		return "no-reply"
	case TxnEvicted:
		return "evicted"
	case TxnSuperseded:
		return "superseded"
	case TxnReplyNoCall:
		return "reply-without-call"
	}
	return "unknown"
}

// MarshalText makes a TxnOutcome appear by name in JSON.
func (o TxnOutcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Transaction is one RPC Call and its Reply on an RPC-over-RDMA connection.
// The engine hands it to Options.Transaction when it is over and then
// reuses it: a callback copies what it keeps.
type Transaction struct {
	XID       uint32
	Conn      *dissect.Connection
	Direction RPCDirection
	// HasProgram is set once the Call's RPC header was decoded.
	HasProgram                  bool
	Program, Version, Procedure uint32
	// ProcedureName and Operations come from the ULP decoder (NFS
	// procedure name, NFSv4 COMPOUND operations).
	ProcedureName string
	Operations    []string
	// HasFH, FHHash and Name say what the Call acts on, when the ULP
	// decoder can tell (rpcrdma.ULBObject; NFS: the hash tshark shows as
	// nfs.fh.hash and the name looked up, created or removed).
	HasFH  bool
	FHHash uint32
	Name   []byte
	// ReplyHasFH and ReplyFHHash: the handle the Reply returned for the
	// object looked up or made (NFS LOOKUP, CREATE, OPEN's GETFH).
	ReplyHasFH  bool
	ReplyFHHash uint32
	// Call is nil for a Reply whose Call is not in the capture; Reply is
	// nil until a Reply is processed.
	Call, Reply *RPCSide
	// ReadBytes and WriteBytes are the bytes the RDMA Reads and Writes
	// attached to the Call's chunks moved.
	ReadBytes, WriteBytes uint64
	// Latency is the time from the Call's last packet to the Reply's.
	Latency time.Duration
	Outcome TxnOutcome

	call, reply RPCSide
	callDir     dissect.Direction // direction the Call went
	callRPC     []byte            // the Call's inline RPC part, kept to rebuild it
	chunkData   [][]byte          // per Call chunk, the bytes the RDMA operations moved
	filled      []uint64          // per Call chunk, bytes placed
	// clean is, per Call chunk, how far its buffer holds only bytes placed
	// or cleared: a reused buffer is cleared lazily (placeChunkData clears
	// the gap before what it places, chunkBytes the rest before the
	// buffer is read), not whole when it is taken.
	clean      []uint64
	rebuilt    []byte
	replyParts []byte // version 2 *_MIDDLE continuations
	callDone   bool   // the Call's chunks were rebuilt (or found incomplete)
	seq        uint64 // creation order
}

// RPCStats counts a connection's RPC-over-RDMA traffic. Arrays of two are
// indexed by Direction.Index() of the direction the messages (or, for
// RDMA bytes, the data) went: [0] client to server, [1] server to client.
type RPCStats struct {
	// Version is the rdma_vers the connection settled on: the first
	// header's, or, after an ERR_VERS refused it, the version the peers
	// used next (draft-07 "Server Does Not Support RPC-over-RDMA Version
	// 2": the client continues with a version in the offered range);
	// Versions counts headers by version (index 1 and 2; 0 for any other).
	Version  uint32
	Versions [3]uint64
	// versRefused: an ERR_VERS came after the first header.
	versRefused bool
	Messages    [2]uint64 // transport headers
	// BadHeaders counts headers that did not decode; FirstBadHeader says
	// where and why the first one did not.
	BadHeaders     [2]uint64
	FirstBadHeader string
	// Calls and Replies by the direction they were sent: Calls[0] are
	// forward Calls, Calls[1] backchannel Calls.
	Calls   [2]uint64
	Replies [2]uint64
	Errors  [2]uint64 // RDMA_ERROR, RDMA2_ERROR
	Control [2]uint64 // version 2 GRANT and CONNPROP
	// Short: RDMA_MSG (v2 *_INLINE) with no Read or Write chunks (a Reply
	// chunk only provisions the Reply); Chunked: RDMA_MSG with Read or Write
	// chunks; Long: RDMA_NOMSG (v2 *_EXTERNAL), the message moved by RDMA.
	Short, Chunked, Long [2]uint64
	// Credits: the last rdma_credit of the Calls (requested) and Replies
	// (granted) sent each way, and the largest.
	// Version 1 messages only; Grants counts the Replies and RDMA_ERRORs
	// that granted.
	CreditsRequested, MaxCreditsRequested [2]uint32
	CreditsGranted, MaxCreditsGranted     [2]uint32
	Grants                                [2]uint64
	// CreditLimits: version 2, where each peer grants the other a running
	// credit limit in every message (draft-07 "Flow Control": rdma_credit
	// is the sender's sent message count plus its advertised credits), the
	// last rdma_credit each way and the largest; V2Sent counts the version
	// 2 messages sent each way, the count the peer's limit bounds.
	CreditLimits, MaxCreditLimits [2]uint32
	V2Sent                        [2]uint64
	// V2Props is the version 2 Transport Properties exchange, nil before
	// a CONNPROP message (rpc_v2props.go).
	V2Props *V2Props
	// Bytes moved each way: by Send (transport header and inline RPC), by
	// RDMA Read and by RDMA Write attached to chunks, indexed by the
	// direction the data went.
	SendBytes, ReadBytes, WriteBytes [2]uint64
	// Replies sent With Invalidate, and without.
	RepliesWithInvalidate, RepliesWithoutInvalidate uint64
	// Outstanding is the number of Calls awaiting their Reply now;
	// OutstandingCalls counts them by the direction the Calls went.
	Outstanding      int
	OutstandingCalls [2]int
	// CallsWithoutReply counts Calls the capture ended on, or that were
	// evicted or superseded; RepliesWithoutCall Replies with no Call.
	CallsWithoutReply, RepliesWithoutCall uint64
	// Evicted counts transactions given up at MaxTransactions.
	Evicted uint64
	// UnattachedOps counts RDMA operations that targeted no segment of a
	// Call outstanding on the connection.
	UnattachedOps uint64
	// Rebuilt counts RPC messages rebuilt from chunks; RebuildIncomplete
	// those whose chunk data the capture lacks in part.
	Rebuilt, RebuildIncomplete uint64
}

// RPCCounters are the engine-wide RPC-over-RDMA counters.
type RPCCounters struct {
	Messages    uint64 // messages on RPC-over-RDMA connections
	BadHeaders  uint64
	Duplicates  uint64 // retransmitted Sends decoded for display only
	Calls       uint64
	Replies     uint64
	Finished    uint64 // transactions handed out
	Evicted     uint64 // at MaxTransactions
	Superseded  uint64
	NoReply     uint64 // Calls without a Reply at the end of the capture
	ReplyNoCall uint64
	Unattached  uint64 // RDMA operations attached to no segment
	// UnattachedOps describes the first MaxUnattachedRecorded of them.
	UnattachedOps []UnattachedOp
	Rebuilt       uint64
	// RebuiltBad counts rebuilt messages that did not decode as RPC.
	RebuiltBad uint64
	// RebuildSkipped counts chunk data not kept because MaxRebuildBytes
	// were held already, or a chunk was longer than MaxMessageBytes.
	RebuildSkipped uint64
	// RebuildBytes is the chunk data held now; MaxRebuildBytesHeld the most
	// ever held.
	RebuildBytes, MaxRebuildBytesHeld int
}

// MaxUnattachedRecorded bounds RPCCounters.UnattachedOps.
const MaxUnattachedRecorded = 100

// UnattachedOp is an RDMA operation no advertised segment explains.
type UnattachedOp struct {
	Conn        int
	Kind        dissect.RDMAOpKind
	Dir         dissect.Direction // of the request (the Read Request's, the Write's)
	FirstPacket int
	LastPacket  int
	STag        uint32
	Offset      uint64
	Length      uint32
	// Reason: "no segment" or "after reply" (its Call is already over).
	Reason string
}

// RPCRecord is an RPC-over-RDMA message completed by a packet: the
// transport header of a Send the packet ended, and the RPC message when it
// is whole here (carried inline, or rebuilt from chunk data this packet
// completed). Records are reused: nothing in them outlives the packet.
type RPCRecord struct {
	Dir dissect.Direction
	// HasHeader: the packet ended a Send on an RPC-over-RDMA connection.
	// Header is its transport header, HeaderErr why it did not decode
	// (a *rpcrdma.DecodeError); PrefixOK tells whether at least the four
	// common words were there, and Common holds them.
	HasHeader bool
	PrefixOK  bool
	Common    rpcrdma.Common
	Header    rpcrdma.Message
	HeaderErr error
	// Length is the Send's length; Truncated is set when the capture
	// lacks part of it. Send is the Send's payload as reassembled from its
	// SendPackets packets.
	Length      int
	Truncated   bool
	Send        []byte
	SendPackets int
	// Duplicate marks a retransmitted Send (a PSN already consumed),
	// decoded for display but not counted again.
	Duplicate       bool
	Invalidate      bool
	InvalidatedSTag uint32

	// ReducedRPC: the Send carried the inline part of a Call whose Read
	// chunks follow by RDMA Read; RPC holds that part's header, and the
	// whole Call is decoded on the packet that completes the chunks.
	ReducedRPC bool
	// HasRPC: an RPC message is whole at this packet and RPC holds its
	// header (RPCErr: why it did not decode). Rebuilt tells it was put
	// together from chunks (Source names which: the Read or Call chunk of
	// a Call, the Reply chunk of a Long Reply, the Write chunks of a
	// Reply's results).
	HasRPC    bool
	RPC       oncrpc.Header
	RPCErr    error
	Rebuilt   bool
	Source    ChunkKind
	RPCLength int
	// Message is the whole RPC message: the inline part, or the message
	// rebuilt from it and the chunks (for a Reply with Write chunks, with
	// the results reinserted; RPC is decoded from the inline part then).
	Message []byte
	// XID, Backchannel and, for a Reply, the Call it answers: CallPacket
	// is the packet where the Call's RPC message was decoded (0 when the
	// Call is not in the capture), CallTime that packet's time, and
	// Program/Version/Procedure the Call's.
	XID                         uint32
	Reply                       bool
	Backchannel                 bool
	CallPacket                  int
	CallTime                    time.Time
	HasProgram                  bool
	Program, Version, Procedure uint32
	// ULP is what the upper-layer decoder said of the RPC body.
	ULP ULPInfo

	// Kind is what the message conveys, decided once here for everyone
	// (rpc_view.go). Txn is the transaction the message opened, continued
	// or ended (nil for control messages and headers that did not
	// decode); for a Reply whose Call is not in the capture Txn.Call is
	// nil. Valid only during the Observer call.
	Kind RPCKind
	Txn  *Transaction
	// Outstanding, for a Call, is the number of Calls awaiting a Reply in
	// its channel with it (RFC 8166 section 3.3.1 credits).
	Outstanding int
	// CallUndecoded, for a Reply or RDMA_ERROR without its Call: a
	// message with its XID went the other way, but its transport header
	// did not decode.
	CallUndecoded bool
	// InvalidatedOwner, for a Send With Invalidate Reply: another Call
	// outstanding in the channel that advertised the invalidated STag.
	InvalidatedOwner *Transaction
	// Continued: a later piece of a version 2 message continued over
	// several Sends (draft-07 "Message Continuation"): the RPC octets it
	// carries start mid-message.
	Continued bool
	// inlineRPC: RPC was decoded from the message carried inline.
	inlineRPC bool
}

// newRecord appends a cleared record to p's records, reusing a slot.
func (rs *recordSet) newRecord(p *dissect.Packet) *RPCRecord {
	if rs.packet != p.Number {
		rs.packet, rs.recs = p.Number, rs.recs[:0]
		p.ULP = append(p.ULP, rs)
	}
	n := len(rs.recs)
	if n < cap(rs.recs) {
		rs.recs = rs.recs[:n+1]
	} else {
		rs.recs = append(rs.recs, RPCRecord{})
	}
	r := &rs.recs[n]
	r.clearKeep()
	r.ULP.Reset()
	return r
}

// clearKeep zeroes r but for Header, RPC and ULP, whose storage is reused
// (their decoders reset them). It assigns field by field: copying the
// three out and a whole new record back with them was ~830 instructions a
// message. TestClearKeepClearsEveryField fails when a field added to
// RPCRecord is not cleared here.
func (r *RPCRecord) clearKeep() {
	r.Dir, r.HasHeader, r.PrefixOK, r.Common, r.HeaderErr = 0, false, false, rpcrdma.Common{}, nil
	r.Length, r.Truncated, r.Send, r.SendPackets = 0, false, nil, 0
	r.Duplicate, r.Invalidate, r.InvalidatedSTag = false, false, 0
	r.ReducedRPC, r.HasRPC, r.RPCErr, r.Rebuilt, r.Source, r.RPCLength = false, false, nil, false, 0, 0
	r.Message, r.XID, r.Reply, r.Backchannel, r.CallPacket, r.CallTime = nil, 0, false, false, 0, time.Time{}
	r.HasProgram, r.Program, r.Version, r.Procedure = false, 0, 0, 0
	r.Kind, r.Txn, r.Outstanding, r.CallUndecoded, r.InvalidatedOwner, r.inlineRPC = 0, nil, 0, false, nil, false
	r.Continued = false
}

// Clone returns a deep copy of t that the engine will not reuse, for an
// Options.Transaction callback that keeps transactions.
func (t *Transaction) Clone() *Transaction {
	out := &Transaction{XID: t.XID, Conn: t.Conn, Direction: t.Direction, HasProgram: t.HasProgram,
		Program: t.Program, Version: t.Version, Procedure: t.Procedure, ProcedureName: t.ProcedureName,
		Operations: append([]string(nil), t.Operations...), ReadBytes: t.ReadBytes, WriteBytes: t.WriteBytes,
		Latency: t.Latency, Outcome: t.Outcome, callDir: t.callDir,
		HasFH: t.HasFH, FHHash: t.FHHash, Name: append([]byte(nil), t.Name...),
		ReplyHasFH: t.ReplyHasFH, ReplyFHHash: t.ReplyFHHash}
	if t.Call != nil {
		out.call = t.call.clone()
		out.Call = &out.call
	}
	if t.Reply != nil {
		out.reply = t.reply.clone()
		out.Reply = &out.reply
	}
	return out
}

func (sd *RPCSide) clone() RPCSide {
	out := *sd
	out.Packets = append([]int(nil), sd.Packets...)
	out.Chunks = make([]Chunk, len(sd.Chunks))
	for i, ch := range sd.Chunks {
		out.Chunks[i] = ch
		out.Chunks[i].Segments = make([]Segment, len(ch.Segments))
		for j, sg := range ch.Segments {
			sg.Ops = append([]AttachedOp(nil), sg.Ops...)
			out.Chunks[i].Segments[j] = sg
		}
	}
	return out
}
