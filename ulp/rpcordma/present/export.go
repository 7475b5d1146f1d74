package present

import (
	"fmt"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/rpcrdma/oncrpc"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// exportULP is RPC-over-RDMA's part of export's neutral tables.
var exportULP = export.ULP{Connection: exportConnection, RDMAOp: exportRDMAOp, Packet: exportPacket}

// TableTransactions is RPC-over-RDMA's own table of the export: one row
// per RPC transaction (docs/export.md). It comes right after connections
// in the export's tables.
const TableTransactions = "transactions"

// transactions is that table, registered by Register.
var transactions *export.Table[Transaction]

// registerExport registers RPC-over-RDMA's parts of the export: its
// columns of the neutral tables and its transactions table.
func registerExport() {
	export.Register(exportULP)
	transactions = export.RegisterTable[Transaction](TableTransactions, export.TableConnections)
}

// Transaction is one row of the transactions table: one RPC transaction,
// as `rdmashark transactions` lists it.
type Transaction struct {
	export.Common
	ConnectionID int64  `parquet:"connection_id" json:"connection_id"`
	XID          int64  `parquet:"xid" json:"xid"`
	XIDHex       string `parquet:"xid_hex" json:"xid_hex"`
	// Direction: forward or backchannel.
	Direction string `parquet:"direction,dict" json:"direction"`
	// Outcome: replied, no-reply, evicted, superseded, reply-without-call.
	Outcome       string   `parquet:"outcome,dict" json:"outcome"`
	Program       *int64   `parquet:"program,optional" json:"program"`
	Version       *int64   `parquet:"version,optional" json:"version"`
	Procedure     *int64   `parquet:"procedure,optional" json:"procedure"`
	ProcedureName *string  `parquet:"procedure_name,optional,dict" json:"procedure_name"`
	Operations    []string `parquet:"operations,list" json:"operations"`

	HasCall         bool       `parquet:"has_call" json:"has_call"`
	CallPacket      *int64     `parquet:"call_packet,optional" json:"call_packet"`
	CallTime        *time.Time `parquet:"call_time,optional,timestamp(microsecond)" json:"call_time"`
	CallRDMAProc    *string    `parquet:"call_rdma_proc,optional,dict" json:"call_rdma_proc"`
	CallCredits     *int64     `parquet:"call_credits,optional" json:"call_credits"`
	CallReadChunks  int64      `parquet:"call_read_chunks" json:"call_read_chunks"`
	CallWriteChunks int64      `parquet:"call_write_chunks" json:"call_write_chunks"`
	CallReplyChunk  bool       `parquet:"call_reply_chunk" json:"call_reply_chunk"`
	CallRPCBytes    *int64     `parquet:"call_rpc_bytes,optional" json:"call_rpc_bytes"`

	HasReply            bool       `parquet:"has_reply" json:"has_reply"`
	ReplyPacket         *int64     `parquet:"reply_packet,optional" json:"reply_packet"`
	ReplyTime           *time.Time `parquet:"reply_time,optional,timestamp(microsecond)" json:"reply_time"`
	ReplyRDMAProc       *string    `parquet:"reply_rdma_proc,optional,dict" json:"reply_rdma_proc"`
	ReplyCredits        *int64     `parquet:"reply_credits,optional" json:"reply_credits"`
	ReplyWithInvalidate bool       `parquet:"reply_with_invalidate" json:"reply_with_invalidate"`
	InvalidatedSTag     *int64     `parquet:"invalidated_stag,optional" json:"invalidated_stag"`
	ReplyStatus         *string    `parquet:"reply_status,optional,dict" json:"reply_status"`
	ReplyRPCBytes       *int64     `parquet:"reply_rpc_bytes,optional" json:"reply_rpc_bytes"`
	RDMAReadBytes       int64      `parquet:"rdma_read_bytes" json:"rdma_read_bytes"`
	RDMAWriteBytes      int64      `parquet:"rdma_write_bytes" json:"rdma_write_bytes"`
	LatencyMicroseconds *float64   `parquet:"latency_us,optional" json:"latency_us"`
}

// exportRDMAOp fills an rdma_ops row's xid and chunk_kind: the
// transaction and chunk the operation served.
func exportRDMAOp(op *dissect.RDMAOp, row *export.RDMAOp) {
	if t := rpcordma.Txn(&op.Attach); t != nil {
		row.XID = export.Int64(uint64(t.XID))
		if t.Call != nil && op.Attach.I < len(t.Call.Chunks) {
			row.ChunkKind = export.String(t.Call.Chunks[op.Attach.I].Kind.String())
		}
	}
}

// exportPacket fills a packets row's xid: the first RPC-over-RDMA message
// the packet completed.
func exportPacket(p *dissect.Packet, row *export.Packet) {
	for i := range rpcordma.Records(p) {
		if r := &rpcordma.Records(p)[i]; r.PrefixOK {
			row.XID = export.Int64(uint64(r.Common.XID))
			break
		}
	}
}

// exportConnection fills a connections row's RPC-over-RDMA figures.
func exportConnection(dc *dissect.Connection, row *export.Connection) {
	if s := rpcordma.Stats(dc); s != nil {
		row.RPCVersion = export.Int64(uint64(s.Version))
		row.CallsForward, row.CallsBackchannel = export.Int64(s.Calls[0]), export.Int64(s.Calls[1])
		// A forward Reply goes server to client (report's rpcConnection).
		row.RepliesForward, row.RepliesBackchannel = export.Int64(s.Replies[1]), export.Int64(s.Replies[0])
		row.RepliesWithInvalidate = export.Int64(s.RepliesWithInvalidate)
		row.RepliesWithoutInvalidate = export.Int64(s.RepliesWithoutInvalidate)
		row.CallsWithoutReply = export.Int64(s.CallsWithoutReply)
		row.RepliesWithoutCall = export.Int64(s.RepliesWithoutCall)
		row.RDMAReadBytes = export.Int64(s.ReadBytes[0] + s.ReadBytes[1])
		row.RDMAWriteBytes = export.Int64(s.WriteBytes[0] + s.WriteBytes[1])
	}
}

// ExportTransactions returns the function that writes each finished RPC
// transaction to c's transactions table (for rpcordma.OnTransaction).
func ExportTransactions(c *export.Capture) func(*rpcordma.Transaction) {
	var row Transaction
	return func(t *rpcordma.Transaction) {
		if t.Conn == nil {
			return
		}
		row = Transaction{}
		TransactionRow(t, &row)
		transactions.Add(c, &row)
	}
}

// TransactionRow fills the transactions row of t (all but its Common
// columns).
func TransactionRow(t *rpcordma.Transaction, row *Transaction) {
	row.ConnectionID = int64(t.Conn.ID)
	row.XID = int64(t.XID)
	row.XIDHex = fmt.Sprintf("0x%08x", t.XID)
	row.Direction = t.Direction.String()
	row.Outcome = t.Outcome.String()
	row.RDMAReadBytes = int64(t.ReadBytes)
	row.RDMAWriteBytes = int64(t.WriteBytes)
	if t.HasProgram {
		row.Program, row.Version, row.Procedure = export.Int64(uint64(t.Program)), export.Int64(uint64(t.Version)), export.Int64(uint64(t.Procedure))
	}
	if t.ProcedureName != "" {
		row.ProcedureName = export.String(t.ProcedureName)
	}
	row.Operations = append(make([]string, 0, len(t.Operations)), t.Operations...)
	if s := t.Call; s != nil {
		row.HasCall = true
		row.CallPacket = lastPacket(s.Packets)
		row.CallTime = export.Time(s.Time)
		row.CallRDMAProc = export.String(s.ProcName())
		row.CallCredits = export.Int64(uint64(s.Credits))
		for _, ch := range s.Chunks {
			switch ch.Kind {
			case rpcordma.ChunkRead, rpcordma.ChunkCall:
				row.CallReadChunks++
			case rpcordma.ChunkWrite:
				row.CallWriteChunks++
			case rpcordma.ChunkReply:
				row.CallReplyChunk = true
			}
		}
		if s.RPCBytes > 0 {
			row.CallRPCBytes = export.Int64(uint64(s.RPCBytes))
		}
	}
	if s := t.Reply; s != nil {
		row.HasReply = true
		row.ReplyPacket = lastPacket(s.Packets)
		row.ReplyTime = export.Time(s.Time)
		row.ReplyRDMAProc = export.String(s.ProcName())
		row.ReplyCredits = export.Int64(uint64(s.Credits))
		row.ReplyWithInvalidate = s.Invalidate
		if s.Invalidate {
			row.InvalidatedSTag = export.Int64(uint64(s.InvalidatedSTag))
		}
		if s.HasStatus {
			if s.ReplyStat != oncrpc.MsgAccepted {
				row.ReplyStatus = export.String(s.ReplyStat.String())
			} else {
				row.ReplyStatus = export.String(s.AcceptStat.String())
			}
		}
		if s.RPCBytes > 0 {
			row.ReplyRPCBytes = export.Int64(uint64(s.RPCBytes))
		}
		if t.Call != nil {
			us := float64(t.Latency.Nanoseconds()) / 1e3
			row.LatencyMicroseconds = &us
		}
	}
}

func lastPacket(pk []int) *int64 {
	if len(pk) == 0 {
		return nil
	}
	return export.Int64(uint64(pk[len(pk)-1]))
}
