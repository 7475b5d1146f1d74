package present

import (
	"fmt"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/nvme"
	"github.com/rdmashark/rdmashark/ulp/nvmeof"
)

// TableCommands is NVMe/RDMA's own table of the export: one row per
// command and its completion (docs/export.md). It comes right after
// exchanges in the export's tables.
const TableCommands = "nvme_commands"

// commands is that table, registered by Register.
var commands *export.Table[Command]

// registerExport registers NVMe/RDMA's part of the export: the
// nvme_commands table, whose rows it writes as each exchange ends.
func registerExport() {
	commands = export.RegisterTable[Command](TableCommands, export.TableExchanges)
	export.Register(export.ULP{Exchange: exportExchange})
}

// Command is one row of the nvme_commands table: one NVMe command on an
// NVMe/RDMA queue and what became of it — its exchange of the exchanges
// table (joined on connection_id and key_num, with ulp = 'nvme-rdma'),
// with what the command capsule's SQE and the completion's CQE say. The
// command's columns are NULL for a completion without its command, the
// completion's for a command without its completion.
type Command struct {
	export.Common
	ConnectionID int64 `parquet:"connection_id" json:"connection_id"`
	// QID: the queue's ID as its set-up, else its Connect, said; NULL
	// when the capture holds neither. CID: the command identifier (the
	// completion's CID for a completion without its command). KeyNum:
	// QID<<16 | CID, the exchange's key_num.
	QID    *int64 `parquet:"qid,optional" json:"qid"`
	CID    int64  `parquet:"cid" json:"cid"`
	KeyNum int64  `parquet:"key_num" json:"key_num"`
	// CommandType: admin (an admin command on the admin queue), io (an
	// I/O command), fabrics (a Fabrics command, on either).
	CommandType *string `parquet:"command_type,optional,dict" json:"command_type"`
	// Opcode: OPC (7Fh for a Fabrics command: its FCTYPE says which);
	// Name: the command's name, as the exchange's.
	Opcode *int64  `parquet:"opcode,optional" json:"opcode"`
	FCTYPE *int64  `parquet:"fctype,optional" json:"fctype"`
	Name   *string `parquet:"name,optional,dict" json:"name"`
	// NSID: the namespace (NULL for a Fabrics command, whose octets 4-7
	// are FCTYPE and reserved).
	NSID *int64 `parquet:"nsid,optional" json:"nsid"`
	// SLBA and NLB of a command with an LBA range (Read, Write, Write
	// Uncorrectable, Compare, Write Zeroes, Verify: NVM Command Set 1.0):
	// NLB 0's based as the SQE carries it; Blocks is NLB+1 (tshark's
	// nvme.cmd.nlb). SLBA as a signed 64-bit integer.
	SLBA   *int64 `parquet:"slba,optional" json:"slba"`
	NLB    *int64 `parquet:"nlb,optional" json:"nlb"`
	Blocks *int64 `parquet:"blocks,optional" json:"blocks"`
	// SGL1, the command's data pointer (NVMe over Fabrics carries one
	// SGL descriptor): its length, type, subtype, address (0x%016x) and,
	// for a keyed data block, key.
	DataLength *int64  `parquet:"data_length,optional" json:"data_length"`
	SGLType    *string `parquet:"sgl_type,optional,dict" json:"sgl_type"`
	SGLSubtype *string `parquet:"sgl_subtype,optional,dict" json:"sgl_subtype"`
	SGLAddress *string `parquet:"sgl_address,optional" json:"sgl_address"`
	SGLKey     *int64  `parquet:"sgl_key,optional" json:"sgl_key"`
	// InCapsuleBytes: the data the capsule carried after the SQE.
	InCapsuleBytes *int64 `parquet:"in_capsule_bytes,optional" json:"in_capsule_bytes"`
	// InvalidateRequested: the keyed SGL's subtype is Invalidate Key
	// (NVMe RDMA Transport 1.0); Invalidated: the completion came by Send
	// With Invalidate, of InvalidatedKey.
	InvalidateRequested *bool  `parquet:"invalidate_requested,optional" json:"invalidate_requested"`
	Invalidated         bool   `parquet:"invalidated" json:"invalidated"`
	InvalidatedKey      *int64 `parquet:"invalidated_key,optional" json:"invalidated_key"`

	RequestPacket  *int64     `parquet:"request_packet,optional" json:"request_packet"`
	RequestTime    *time.Time `parquet:"request_time,optional,timestamp(microsecond)" json:"request_time"`
	ResponsePacket *int64     `parquet:"response_packet,optional" json:"response_packet"`
	ResponseTime   *time.Time `parquet:"response_time,optional,timestamp(microsecond)" json:"response_time"`
	LatencyNS      *int64     `parquet:"latency_ns,optional" json:"latency_ns"`
	// The completion's status field (Base 2.0 "Completion Queue Entry:
	// Status Field"): SCT, SC, the status's name (as the exchange's),
	// DNR, M; OK: a success.
	StatusSCT *int64  `parquet:"status_sct,optional" json:"status_sct"`
	StatusSC  *int64  `parquet:"status_sc,optional" json:"status_sc"`
	Status    *string `parquet:"status,optional,dict" json:"status"`
	StatusDNR *bool   `parquet:"status_dnr,optional" json:"status_dnr"`
	StatusM   *bool   `parquet:"status_m,optional" json:"status_m"`
	OK        *bool   `parquet:"ok,optional" json:"ok"`
	// ReadBytes, WriteBytes: what the RDMA Reads (host to controller) and
	// Writes (controller to host) attached to the keyed SGL moved; RDMAOps
	// how many they were.
	ReadBytes  int64 `parquet:"read_bytes" json:"read_bytes"`
	WriteBytes int64 `parquet:"write_bytes" json:"write_bytes"`
	RDMAOps    int64 `parquet:"rdma_ops" json:"rdma_ops"`
	// Outcome: as the exchange's (responded, no-response, evicted,
	// superseded, response-without-request).
	Outcome string `parquet:"outcome,dict" json:"outcome"`
}

// exportExchange writes the nvme_commands row of an NVMe/RDMA exchange.
func exportExchange(c *export.Capture, x *dissect.Exchange) {
	cmd, ok := x.Detail.(*nvmeof.Command)
	if x.ULP != nvmeof.Name || !ok || x.Conn == nil {
		return
	}
	var row Command
	CommandRow(x, cmd, &row)
	commands.Add(c, &row)
}

// lbaRange: the I/O opcodes whose CDW10-12 are SLBA and NLB (NVM Command
// Set 1.0: Read, Write, Write Uncorrectable, Compare, Write Zeroes,
// Verify).
func lbaRange(opc nvme.IOOpcode) bool {
	switch opc {
	case nvme.IORead, nvme.IOWrite, nvme.IOWriteUncorrectable, nvme.IOCompare, nvme.IOWriteZeroes, nvme.IOVerify:
		return true
	}
	return false
}

// CommandRow fills the nvme_commands row of exchange x, whose Detail is
// cmd (all but its Common columns).
func CommandRow(x *dissect.Exchange, cmd *nvmeof.Command, row *Command) {
	row.ConnectionID = int64(x.Conn.ID)
	row.KeyNum = int64(x.Key)
	row.CID = int64(cmd.CID)
	q, _ := x.Conn.ULPData.(*nvmeof.Queue)
	admin := false
	if q != nil {
		if id, ok := q.ID(); ok {
			row.QID = export.Int64(uint64(id))
		}
		admin = q.Admin()
	}
	row.Outcome = x.Outcome.String()
	row.ReadBytes, row.WriteBytes = int64(x.ReadBytes), int64(x.WriteBytes)
	row.RDMAOps = int64(cmd.Ops)
	if x.Outcome != dissect.ResponseWithoutRequest {
		kind := "io"
		switch {
		case cmd.OPC == nvme.OpcodeFabrics:
			kind = "fabrics"
			row.FCTYPE = export.Int64(uint64(cmd.FCTYPE))
		case admin:
			kind = "admin"
		}
		row.CommandType = export.String(kind)
		row.Opcode = export.Int64(uint64(cmd.OPC))
		row.Name = export.String(cmd.Name)
		if cmd.OPC != nvme.OpcodeFabrics {
			row.NSID = export.Int64(uint64(cmd.NSID))
		}
		if kind == "io" && lbaRange(nvme.IOOpcode(cmd.OPC)) {
			rw := cmd.RW()
			row.SLBA, row.NLB, row.Blocks = export.Int64(rw.SLBA), export.Int64(uint64(rw.NLB)), export.Int64(uint64(rw.Blocks()))
		}
		sgl := &cmd.SGL
		row.DataLength = export.Int64(uint64(sgl.Length))
		row.SGLType, row.SGLSubtype = export.String(sgl.Type.String()), export.String(sgl.Subtype.String())
		row.SGLAddress = export.String(fmt.Sprintf("0x%016x", sgl.Address))
		inv := false
		if sgl.IsKeyed() {
			row.SGLKey = export.Int64(uint64(sgl.Key))
			inv = sgl.InvalidateKey()
		}
		row.InvalidateRequested = &inv
		row.InCapsuleBytes = export.Int64(uint64(cmd.InCapsule))
		row.RequestPacket, row.RequestTime = export.Int64(uint64(x.RequestPacket)), export.Time(x.RequestTime)
	}
	if x.Invalidated {
		row.Invalidated, row.InvalidatedKey = true, export.Int64(uint64(x.InvalidatedSTag))
	}
	if cmd.Completed {
		st := cmd.Status
		row.ResponsePacket, row.ResponseTime = export.Int64(uint64(x.ResponsePacket)), export.Time(x.ResponseTime)
		row.StatusSCT, row.StatusSC = export.Int64(uint64(st.SCT())), export.Int64(uint64(st.SC()))
		dnr, m, ok := st.DNR(), st.M(), x.OK
		row.Status, row.StatusDNR, row.StatusM, row.OK = export.String(x.Status), &dnr, &m, &ok
	}
	if x.RequestPacket != 0 && x.ResponsePacket != 0 {
		ns := x.Latency.Nanoseconds()
		row.LatencyNS = &ns
	}
}
