package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
)

// TransactionList is the document of `rdmashark transactions --format json`:
// one entry per RPC transaction, in the order of their Calls. Its keys are a
// contract: later versions add keys and never rename these.
type TransactionList struct {
	File         string        `json:"file"`
	Transactions []Transaction `json:"transactions"`
	// Omitted counts transactions that matched the filters but were not
	// kept because the list was full (the --max limit).
	Omitted uint64 `json:"omitted,omitempty"`
	// Counters are the engine's: what reassembly and the RPC layer saw
	// and what their limits cut.
	Counters TxnCounters `json:"counters"`
	// Errors lists what stopped reading early.
	Errors []string `json:"errors,omitempty"`

	max     int
	filter  TxnFilter
	spill   *txnSpill // runs sorted on disk (transactions_spill.go)
	noSpill bool      // no temporary file could be made: all in memory
}

// Transaction is one RPC Call and its Reply.
type Transaction struct {
	// XID, handles, offsets and STags are hexadecimal strings ("0x3cfb4714",
	// offsets with 16 digits) as the dissector prints them: 64-bit offsets
	// do not survive JSON readers that hold numbers as doubles.
	XID        Hex32 `json:"xid"`
	Connection int   `json:"connection"`
	// Direction: "forward" (the client calls) or "backchannel" (the
	// server calls, NFSv4.1 callbacks).
	Direction string `json:"direction"`
	// Program, Version and Procedure are the Call's; null when its RPC
	// header is not in the capture.
	Program       *uint32 `json:"program"`
	ProgramName   string  `json:"program_name,omitempty"`
	Version       *uint32 `json:"version"`
	Procedure     *uint32 `json:"procedure"`
	ProcedureName string  `json:"procedure_name,omitempty"`
	// Operations are the NFSv4 COMPOUND operations, in order.
	Operations []string `json:"operations"`
	// FHHash is the hash of the file handle the Call acts on, as tshark
	// shows it in nfs.fh.hash (the CRC-32 of the handle, "0x%08x"): NFSv3
	// the first handle of the arguments, NFSv4 the last PUTFH's. Name is
	// the name the Call looks up, creates or removes (NFSv3 diropargs3,
	// NFSv4 component4). Both are absent when the Call has none, so
	// `jq 'group_by(.fh_hash)'` answers "which file was slow".
	FHHash *Hex32 `json:"fh_hash,omitempty"`
	Name   string `json:"name,omitempty"`
	// ReplyFHHash is the hash of the handle the Reply returned for what
	// the Call looked up or made (NFSv3 LOOKUP, CREATE, MKDIR, SYMLINK,
	// MKNOD; NFSv4 the last GETFH): with Name, it names a handle that
	// later Calls give as fh_hash.
	ReplyFHHash *Hex32 `json:"reply_fh_hash,omitempty"`
	// Call is null for a Reply whose Call is not in the capture; Reply is
	// null for a Call without a Reply in the capture.
	Call  *TxnSide `json:"call"`
	Reply *TxnSide `json:"reply"`
	// RDMA: the bytes moved by the RDMA Reads and Writes attached to the
	// Call's chunks.
	RDMA struct {
		ReadBytes  uint64 `json:"read_bytes"`
		WriteBytes uint64 `json:"write_bytes"`
	} `json:"rdma"`
	// InvalidatedSTag is the STag the Reply's Send With Invalidate
	// invalidated; null for a plain Send.
	InvalidatedSTag *Hex32 `json:"invalidated_stag"`
	// LatencyUS is the time from the Call's last packet to the Reply's, in
	// microseconds; null without both.
	LatencyUS *float64 `json:"latency_us"`
	// Outcome: "replied", "no-reply" (the capture ended first), "evicted"
	// (the engine's outstanding-Call limit), "superseded" (a new Call with
	// the same XID), "reply-without-call".
	Outcome string `json:"outcome"`
}

// TxnSide is a Call or a Reply as it went on the wire.
type TxnSide struct {
	// Packets are the packets of the Send carrying the transport header.
	Packets []int `json:"packets"`
	// RDMAProc is rdma_proc (RDMA_MSG, RDMA_NOMSG, ...; version 2: the
	// header type); RDMAVers rdma_vers.
	RDMAProc string `json:"rdma_proc"`
	RDMAVers uint32 `json:"rdma_vers"`
	// Credits: rdma_credit, requested by a Call, granted by a Reply.
	Credits uint32     `json:"credits"`
	Chunks  []TxnChunk `json:"chunks"`
	// InlineBytes: RPC message bytes in the Send; RPCBytes the whole RPC
	// message when known (0 otherwise); Rebuilt: put together from chunks.
	InlineBytes int  `json:"inline_bytes"`
	RPCBytes    int  `json:"rpc_bytes"`
	Rebuilt     bool `json:"rebuilt"`
	// Status is a Reply's accept_stat or reply_stat (RFC 5531), when its
	// RPC header was decoded.
	Status string `json:"status,omitempty"`
}

// TxnChunk is one chunk: "read" (with its position), "write", "reply", or
// "call" (version 2).
type TxnChunk struct {
	Kind     string       `json:"kind"`
	Position *uint32      `json:"position,omitempty"`
	Segments []TxnSegment `json:"segments"`
}

// TxnSegment is one segment; in a Reply its length is what was written.
type TxnSegment struct {
	Handle Hex32  `json:"handle"`
	Length uint32 `json:"length"`
	Offset Hex64  `json:"offset"`
	// RDMAOps are the RDMA operations that targeted the segment (Call
	// side).
	RDMAOps []TxnRDMAOp `json:"rdma_ops,omitempty"`
}

// TxnRDMAOp is an RDMA Read or Write attached to a segment.
type TxnRDMAOp struct {
	Kind        string `json:"kind"` // "read" or "write"
	FirstPacket int    `json:"first_packet"`
	LastPacket  int    `json:"last_packet"`
	Offset      Hex64  `json:"offset"`
	Length      uint32 `json:"length"`
	Complete    bool   `json:"complete"`
}

// TxnCounters sum up a capture's RPC-over-RDMA processing (the plug-in's
// RPCCounters, filled by its presentation through ULP.TxnCounters; the roce_* ones dissect.ReassemblyStats, whose
// iWARP counterparts are in analyze's iwarp section).
type TxnCounters struct {
	Sends                uint64 `json:"sends"`
	RDMAReads            uint64 `json:"rdma_reads"`
	RDMAWrites           uint64 `json:"rdma_writes"`
	RDMAOpsIncomplete    uint64 `json:"rdma_ops_incomplete"`
	RoCESendsTruncated   uint64 `json:"roce_sends_truncated"`
	RoCESendsTooLong     uint64 `json:"roce_sends_too_long"`
	RoCEOrphanPackets    uint64 `json:"roce_orphan_packets"`
	RoCEDuplicates       uint64 `json:"roce_duplicate_packets"`
	RoCEPSNGaps          uint64 `json:"roce_psn_gaps"`
	RoCEOpDataCut        uint64 `json:"roce_rdma_op_data_cut"`
	RoCEReadsEvicted     uint64 `json:"roce_reads_evicted"`
	RoCEUnmatchedReplies uint64 `json:"roce_unmatched_read_responses"`
	RPCMessages          uint64 `json:"rpc_messages"`
	BadHeaders           uint64 `json:"bad_headers"`
	Retransmissions      uint64 `json:"retransmitted_sends"`
	TransactionsEvicted  uint64 `json:"transactions_evicted"`
	UnattachedRDMAOps    uint64 `json:"unattached_rdma_ops"`
	Rebuilt              uint64 `json:"rebuilt"`
	RebuiltBad           uint64 `json:"rebuilt_bad"`
	RebuildSkipped       uint64 `json:"rebuild_skipped"`
	MaxRebuildBytesHeld  int    `json:"max_rebuild_bytes_held"`
}

// SetCounters copies the counters of the engine's snapshot into the
// document: the engine's own, and the registered ULPs' (ULP.TxnCounters).
func (l *TransactionList) SetCounters(e *dissect.Snapshot) {
	r, o := &e.Reassembly, &e.Ops
	l.Counters = TxnCounters{
		Sends: o.Sends, RDMAReads: o.RDMAReads, RDMAWrites: o.RDMAWrites, RDMAOpsIncomplete: o.RDMAOpsIncomplete,
		RoCESendsTruncated: r.Truncated, RoCESendsTooLong: r.TooLong, RoCEOrphanPackets: r.Orphans,
		RoCEDuplicates: r.Duplicates, RoCEPSNGaps: r.Gaps, RoCEOpDataCut: r.OpDataCut, RoCEReadsEvicted: r.ReadsEvicted,
		RoCEUnmatchedReplies: r.UnmatchedResponses,
	}
	for i := range ulps {
		if f := ulps[i].TxnCounters; f != nil {
			f(e, &l.Counters)
		}
	}
}

// TxnFilter selects transactions; zero values select everything.
type TxnFilter struct {
	Connection int     // connection ID
	XID        *uint32 // exact XID
	// Procedure matches the procedure number, its name, or any of the
	// NFSv4 operations (names compare without case).
	Procedure string
	// Tally, when set, hears which procedures the transactions had and
	// how many matched Procedure, so that a command can tell a name no
	// transaction has (a typo) from a filter that selected nothing else.
	Tally *ProcedureTally
}

// ProcedureTally counts what a TxnFilter with a Procedure saw.
type ProcedureTally struct {
	// Matched counts the transactions Procedure selected among those of
	// the Connection and XID asked.
	Matched int
	// Names are the procedure names seen, at most MaxTallyNames of them.
	Names []string
}

// MaxTallyNames bounds ProcedureTally.Names.
const MaxTallyNames = 64

func (pt *ProcedureTally) note(name string) {
	if name == "" || len(pt.Names) >= MaxTallyNames || slices.Contains(pt.Names, name) {
		return
	}
	pt.Names = append(pt.Names, name)
}

// DefaultMaxTransactions bounds a TransactionList unless told otherwise.
const DefaultMaxTransactions = 1000000

// NewTransactionList returns an empty list that keeps at most max
// transactions (DefaultMaxTransactions when max <= 0) matching f.
func NewTransactionList(file string, max int, f TxnFilter) *TransactionList {
	if max <= 0 {
		max = DefaultMaxTransactions
	}
	return &TransactionList{File: file, Transactions: []Transaction{}, max: max, filter: f}
}

// Offer tells whether the list takes the finished transaction whose head
// is h: it matches the filter and the list has room (a match past the
// room counts in Omitted). The plug-in's presentation then converts the
// transaction and hands it to Keep (ulp/rpcordma/present's
// ListTransactions, the rpcordma.OnTransaction callback).
func (l *TransactionList) Offer(h *TxnHead) bool {
	if !l.filter.matches(h) {
		return false
	}
	if l.Len() >= l.max {
		l.Omitted++
		return false
	}
	return true
}

// Keep adds a transaction Offer took.
func (l *TransactionList) Keep(t Transaction) { l.keep(t) }

func (l *TransactionList) keep(t Transaction) {
	l.Transactions = append(l.Transactions, t)
	l.maybeSpill()
}

func (f *TxnFilter) matches(t *TxnHead) bool {
	if f.Connection != 0 && t.Connection != f.Connection {
		return false
	}
	if f.XID != nil && t.XID != *f.XID {
		return false
	}
	if f.Procedure == "" {
		return true
	}
	ok := f.procedureMatches(t)
	if f.Tally != nil {
		f.Tally.note(t.ProcedureName)
		if ok {
			f.Tally.Matched++
		}
	}
	return ok
}

func (f *TxnFilter) procedureMatches(t *TxnHead) bool {
	if n, err := strconv.ParseUint(f.Procedure, 10, 32); err == nil {
		return t.HasProgram && uint64(t.Procedure) == n
	}
	if strings.EqualFold(f.Procedure, t.ProcedureName) {
		return true
	}
	for _, op := range t.Operations {
		if strings.EqualFold(f.Procedure, op) {
			return true
		}
	}
	return false
}

// Sort orders the list by the first packet of each Call (of the Reply for
// a Reply without its Call).
func (l *TransactionList) Sort() {
	sort.SliceStable(l.Transactions, func(i, j int) bool {
		return firstPacket(&l.Transactions[i]) < firstPacket(&l.Transactions[j])
	})
}

// WriteJSON writes the document, indented, one transaction at a time: the
// bytes are json.Encoder's with SetIndent("", "  ") of the whole list, but
// the document is never held whole in memory (on a 1 GB capture it was
// twice the size of the list itself).
func (l *TransactionList) WriteJSON(w io.Writer) error {
	// Written as it is encoded, not built whole first (jsonstream.go);
	// "<stdin>" and "a < b" as they are: this is no HTML.
	if l.spill != nil && l.spill.err != nil {
		return l.spill.err
	}
	return writeJSONStream(w, &txnDoc{File: l.File, Transactions: txnSeq{l}, Omitted: l.Omitted,
		Counters: l.Counters, Errors: l.Errors})
}

// WriteTable writes one row per transaction.
func (l *TransactionList) WriteTable(w io.Writer) error {
	if l.spill != nil && l.spill.err != nil {
		return l.spill.err
	}
	fmt.Fprintf(w, "%s: %s\n", fields.Escape(l.File), Plural(l.Len(), "transaction"))
	if l.spill != nil && len(l.spill.runs) > 0 {
		if err := l.writeTableSpilled(w); err != nil {
			return err
		}
	} else if len(l.Transactions) > 0 {
		t := newTable(w)
		t.Header(txnHeader[:])
		for i := range l.Transactions {
			_ = t.Append(txnRow(&l.Transactions[i]))
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return l.writeTableTail(w)
}

// writeTableTail writes what follows the table: the transactions not kept,
// the counters, the limits that cut and the errors.
func (l *TransactionList) writeTableTail(w io.Writer) error {
	if l.Omitted > 0 {
		fmt.Fprintf(w, "%d more transactions matched but were not kept (--max)\n", l.Omitted)
	}
	c := &l.Counters
	fmt.Fprintf(w, "%d Sends, %d RDMA Reads, %d RDMA Writes (%d incomplete, %d unattached), %d RPC messages rebuilt from chunks",
		c.Sends, c.RDMAReads, c.RDMAWrites, c.RDMAOpsIncomplete, c.UnattachedRDMAOps, c.Rebuilt)
	if c.RoCEDuplicates+c.RoCEPSNGaps+c.RoCESendsTruncated > 0 {
		fmt.Fprintf(w, "; RoCE: %d duplicate packets, %d PSN gaps, %d Sends truncated", c.RoCEDuplicates, c.RoCEPSNGaps, c.RoCESendsTruncated)
	}
	fmt.Fprintln(w)
	if cut := c.RoCESendsTooLong + c.RoCEOpDataCut + c.RoCEReadsEvicted + c.TransactionsEvicted + c.RebuildSkipped; cut > 0 {
		fmt.Fprintf(w, "limits cut: %d Sends too long, %d RDMA operations' data, %d Read Requests, %d transactions, %d chunks not kept for rebuilding\n",
			c.RoCESendsTooLong, c.RoCEOpDataCut, c.RoCEReadsEvicted, c.TransactionsEvicted, c.RebuildSkipped)
	}
	for _, e := range l.Errors {
		fmt.Fprintf(w, "reading stopped early: %s\n", fields.Escape(e))
	}
	return nil
}

// txnCells is one table row built without fmt: its cells appended to one
// reused buffer, ends[i] where cell i ends.
type txnCells struct {
	b    []byte
	ends [txnColumns]int
}

func (c *txnCells) cell(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.b[start:c.ends[i]]
}

// build fills the row of x: XID, connection, direction, program (name or
// number, " v" and the version), procedure (name or number, then the NFSv4
// operations), the Call and the Reply (sideCell), the Call's chunks
// (chunksCell), the RDMA bytes read and written, the invalidated STag and
// the latency with one decimal; "?" or "-" where there is nothing.
func (c *txnCells) build(x *Transaction) {
	b := c.b[:0]
	end := func(i int) { c.ends[i] = len(b) }
	b = fields.AppendHex(b, uint64(x.XID), 8)
	end(0)
	b = strconv.AppendInt(b, int64(x.Connection), 10)
	end(1)
	b = append(b, x.Direction...)
	end(2)
	if x.Program == nil {
		b = append(b, '?')
	} else {
		b = appendNameOr(b, x.ProgramName, *x.Program)
		b = append(b, " v"...)
		b = strconv.AppendUint(b, uint64(*x.Version), 10)
	}
	end(3)
	if x.Procedure == nil {
		b = append(b, '?')
	} else {
		b = appendNameOr(b, x.ProcedureName, *x.Procedure)
		for i, op := range x.Operations {
			if i == 0 {
				b = append(b, ' ')
			} else {
				b = append(b, ',')
			}
			b = append(b, op...)
		}
	}
	end(4)
	b = appendSideCell(b, x.Call)
	end(5)
	b = appendSideCell(b, x.Reply)
	end(6)
	b = appendChunksCell(b, x)
	end(7)
	b = strconv.AppendUint(b, x.RDMA.ReadBytes, 10)
	end(8)
	b = strconv.AppendUint(b, x.RDMA.WriteBytes, 10)
	end(9)
	if x.InvalidatedSTag == nil {
		b = append(b, '-')
	} else {
		b = fields.AppendHex(b, uint64(*x.InvalidatedSTag), 8)
	}
	end(10)
	if x.LatencyUS == nil {
		b = append(b, '-')
	} else {
		b = strconv.AppendFloat(b, *x.LatencyUS, 'f', 1, 64)
	}
	end(11)
	c.b = b
}

// appendNameOr appends name, or n in decimal when there is no name.
func appendNameOr(b []byte, name string, n uint32) []byte {
	if name != "" {
		return append(b, name...)
	}
	return strconv.AppendUint(b, uint64(n), 10)
}

// appendSideCell: "-" without the side; else its packets ("?", one, or
// first-last), rdma_proc without "RDMA_", "cr=" and the credits, and a
// Reply's status unless SUCCESS.
func appendSideCell(b []byte, s *TxnSide) []byte {
	if s == nil {
		return append(b, '-')
	}
	switch n := len(s.Packets); {
	case n == 0:
		b = append(b, '?')
	case n == 1:
		b = strconv.AppendInt(b, int64(s.Packets[0]), 10)
	default:
		b = strconv.AppendInt(b, int64(s.Packets[0]), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(s.Packets[n-1]), 10)
	}
	b = append(b, ' ')
	b = append(b, strings.TrimPrefix(s.RDMAProc, "RDMA_")...)
	b = append(b, " cr="...)
	b = strconv.AppendUint(b, uint64(s.Credits), 10)
	if s.Status != "" && s.Status != "SUCCESS" {
		b = append(b, ' ')
		b = append(b, s.Status...)
	}
	return b
}

// appendChunksCell summarises the Call's chunks: R (Read, with position), W
// (Write), Rp (Reply), C (v2 Call), with their segment counts; "?" without
// the Call, "-" without chunks.
func appendChunksCell(b []byte, x *Transaction) []byte {
	if x.Call == nil {
		return append(b, '?')
	}
	start := len(b)
	for _, c := range x.Call.Chunks {
		var kind string
		switch c.Kind {
		case "read":
			kind = "R@"
		case "write":
			kind = "W"
		case "reply":
			kind = "Rp"
		case "call":
			kind = "C"
		default:
			continue
		}
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, kind...)
		if c.Kind == "read" {
			b = strconv.AppendUint(b, uint64(*c.Position), 10)
		}
		b = append(b, "×"...)
		b = strconv.AppendInt(b, int64(len(c.Segments)), 10)
	}
	if len(b) == start {
		b = append(b, '-')
	}
	return b
}

// Hex32 is a 32-bit value shown as "0x%08x" (in JSON, a string).
type Hex32 uint32

func (h Hex32) String() string { return string(fields.AppendHex(nil, uint64(h), 8)) }

// MarshalText implements encoding.TextMarshaler.
func (h Hex32) MarshalText() ([]byte, error) { return fields.AppendHex(nil, uint64(h), 8), nil }

// UnmarshalText reads what MarshalText writes.
func (h *Hex32) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(string(b), "0x"), 16, 32)
	*h = Hex32(v)
	return err
}

// Hex64 is a 64-bit value shown as "0x%016x" (in JSON, a string).
type Hex64 uint64

func (h Hex64) String() string { return string(fields.AppendHex(nil, uint64(h), 16)) }

// MarshalText implements encoding.TextMarshaler.
func (h Hex64) MarshalText() ([]byte, error) { return fields.AppendHex(nil, uint64(h), 16), nil }

// UnmarshalText reads what MarshalText writes.
func (h *Hex64) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(string(b), "0x"), 16, 64)
	*h = Hex64(v)
	return err
}
