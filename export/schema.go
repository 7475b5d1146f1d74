// Package export writes what the engine and the checks find in a capture
// as columnar tables — Parquet (github.com/parquet-go/parquet-go) or
// newline-delimited JSON — for DuckDB, Spark, Trino or ClickHouse to query
// across many captures: connections, rdma_ops, findings, transport_health,
// ud_flows, exchanges and (opt-in) packets, and the tables the upper-layer
// protocols' presentations register as their own (ulp.go: RegisterTable;
// RPC-over-RDMA's transactions, NVMe/RDMA's nvme_commands). docs/export.md
// documents every table and column.
//
// Rows are written as the engine produces them (exchanges and the
// plug-ins' rows as they end,
// RDMA operations as they complete, packets as they are read), buffered in
// row groups of Config.RowGroupRows, so memory does not grow with the
// capture; connections, transport health and findings are written when
// the capture ends, those of the connections released during the read
// read back from a temporary file (spill.go: Capture.SetRunner).
//
// Every row carries the capture's name, the export's label and the stable
// keys the tables join on: connection_id (as analyze numbers connections)
// and xid. Columns are only ever added, never renamed: SchemaVersion counts
// the additions and is written into every Parquet file's key/value metadata
// (rdmashark.schema_version) and into DIR/_rdmashark_export.json.
package export

import "time"

// SchemaVersion is the version of the tables' schema: raised when a column
// or a table is added. Columns are never renamed nor removed.
const SchemaVersion = 6

// MetadataKey is the Parquet key/value metadata key holding SchemaVersion.
const MetadataKey = "rdmashark.schema_version"

// Table names, the directories under the export's root.
const (
	TableConnections = "connections"
	TableRDMAOps     = "rdma_ops"
	TableFindings    = "findings"
	TablePackets     = "packets"
	TableExchanges   = "exchanges"
)

// Tables lists the tables in the order docs/export.md describes them: the
// neutral ones, and those the plug-ins registered (RegisterTable) each
// after the table it names (RPC-over-RDMA's transactions after
// connections, NVMe/RDMA's nvme_commands after exchanges).
var Tables = []string{TableConnections, TableRDMAOps, TableFindings, TablePackets, TableTransportHealth, TableUDFlows, TableExchanges}

// Common are the columns every row starts with.
type Common struct {
	// Capture is the capture's name as given on the command line.
	Capture string `parquet:"capture,dict" json:"capture"`
	// Label is the export's --label (a host, a run).
	Label string `parquet:"label,dict" json:"label"`
}

// Connection is one row of the connections table: one RDMA connection,
// as analyze reports it.
type Connection struct {
	Common
	ConnectionID int64   `parquet:"connection_id" json:"connection_id"`
	Transport    string  `parquet:"transport,dict" json:"transport"`
	State        string  `parquet:"state,dict" json:"state"`
	RejectReason *string `parquet:"reject_reason,optional" json:"reject_reason"`
	Idle         bool    `parquet:"idle" json:"idle"`

	ClientAddress string  `parquet:"client_address" json:"client_address"`
	ClientQPN     *int64  `parquet:"client_qpn,optional" json:"client_qpn"`
	ClientPort    *int32  `parquet:"client_port,optional" json:"client_port"`
	ServerAddress string  `parquet:"server_address" json:"server_address"`
	ServerQPN     *int64  `parquet:"server_qpn,optional" json:"server_qpn"`
	ServerPort    *int32  `parquet:"server_port,optional" json:"server_port"`
	ServicePort   *int32  `parquet:"service_port,optional" json:"service_port"`
	ServiceID     *string `parquet:"service_id,optional" json:"service_id"`

	FirstPacket int64 `parquet:"first_packet" json:"first_packet"`
	LastPacket  int64 `parquet:"last_packet" json:"last_packet"`

	// RFC 8797 private data of each side: present when a valid message
	// was carried; the fields are null otherwise.
	ClientPDPresent          bool   `parquet:"client_pd_present" json:"client_pd_present"`
	ClientRemoteInvalidate   *bool  `parquet:"client_remote_invalidate,optional" json:"client_remote_invalidate"`
	ClientSendSize           *int64 `parquet:"client_send_size,optional" json:"client_send_size"`
	ClientReceiveSize        *int64 `parquet:"client_receive_size,optional" json:"client_receive_size"`
	ServerPDPresent          bool   `parquet:"server_pd_present" json:"server_pd_present"`
	ServerRemoteInvalidate   *bool  `parquet:"server_remote_invalidate,optional" json:"server_remote_invalidate"`
	ServerSendSize           *int64 `parquet:"server_send_size,optional" json:"server_send_size"`
	ServerReceiveSize        *int64 `parquet:"server_receive_size,optional" json:"server_receive_size"`
	InlineThresholdC2S       *int64 `parquet:"inline_threshold_c2s,optional" json:"inline_threshold_c2s"`
	InlineThresholdS2C       *int64 `parquet:"inline_threshold_s2c,optional" json:"inline_threshold_s2c"`
	RemoteInvalidationNegotd *bool  `parquet:"remote_invalidation_negotiated,optional" json:"remote_invalidation_negotiated"`

	PacketsC2S int64 `parquet:"packets_c2s" json:"packets_c2s"`
	PacketsS2C int64 `parquet:"packets_s2c" json:"packets_s2c"`
	BytesC2S   int64 `parquet:"bytes_c2s" json:"bytes_c2s"`
	BytesS2C   int64 `parquet:"bytes_s2c" json:"bytes_s2c"`

	// RPC-over-RDMA counts (null without RPC-over-RDMA), as analyze's
	// "rpc" object.
	RPCVersion               *int64 `parquet:"rpc_version,optional" json:"rpc_version"`
	CallsForward             *int64 `parquet:"calls_forward,optional" json:"calls_forward"`
	CallsBackchannel         *int64 `parquet:"calls_backchannel,optional" json:"calls_backchannel"`
	RepliesForward           *int64 `parquet:"replies_forward,optional" json:"replies_forward"`
	RepliesBackchannel       *int64 `parquet:"replies_backchannel,optional" json:"replies_backchannel"`
	RepliesWithInvalidate    *int64 `parquet:"replies_with_invalidate,optional" json:"replies_with_invalidate"`
	RepliesWithoutInvalidate *int64 `parquet:"replies_without_invalidate,optional" json:"replies_without_invalidate"`
	CallsWithoutReply        *int64 `parquet:"calls_without_reply,optional" json:"calls_without_reply"`
	RepliesWithoutCall       *int64 `parquet:"replies_without_call,optional" json:"replies_without_call"`
	RDMAReadBytes            *int64 `parquet:"rdma_read_bytes,optional" json:"rdma_read_bytes"`
	RDMAWriteBytes           *int64 `parquet:"rdma_write_bytes,optional" json:"rdma_write_bytes"`

	// Findings counts the connection's findings (the findings table lists
	// them).
	Findings int64 `parquet:"findings" json:"findings"`
}

// RDMAOp is one row of the rdma_ops table: one RDMA Read or Write.
type RDMAOp struct {
	Common
	ConnectionID int64 `parquet:"connection_id" json:"connection_id"`
	// XID is the transaction whose chunk the operation served; null when
	// it served none (no RPC-over-RDMA, or no outstanding Call's segment).
	XID *int64 `parquet:"xid,optional" json:"xid"`
	// ChunkKind is that chunk's kind: read, write, reply, call.
	ChunkKind *string `parquet:"chunk_kind,optional,dict" json:"chunk_kind"`
	// Kind: read or write. Direction: of the request (for a Read the Read
	// Request's: the data flows back).
	Kind        string    `parquet:"kind,dict" json:"kind"`
	Direction   string    `parquet:"direction,dict" json:"direction"`
	STag        int64     `parquet:"stag" json:"stag"`
	Offset      string    `parquet:"offset" json:"offset"`
	Length      int64     `parquet:"length" json:"length"`
	Complete    bool      `parquet:"complete" json:"complete"`
	Packets     int64     `parquet:"packets" json:"packets"`
	FirstPacket int64     `parquet:"first_packet" json:"first_packet"`
	LastPacket  int64     `parquet:"last_packet" json:"last_packet"`
	StartTime   time.Time `parquet:"start_time,timestamp(microsecond)" json:"start_time"`
	EndTime     time.Time `parquet:"end_time,timestamp(microsecond)" json:"end_time"`
}

// Finding is one row of the findings table: one conformance finding.
type Finding struct {
	Common
	// ConnectionID is 0 for packets of no connection.
	ConnectionID int64   `parquet:"connection_id" json:"connection_id"`
	Rule         string  `parquet:"rule,dict" json:"rule"`
	Severity     string  `parquet:"severity,dict" json:"severity"`
	XID          *int64  `parquet:"xid,optional" json:"xid"`
	FirstPacket  *int64  `parquet:"first_packet,optional" json:"first_packet"`
	Packets      []int64 `parquet:"packets,list" json:"packets"`
	Message      string  `parquet:"message" json:"message"`
	Reference    string  `parquet:"reference,dict" json:"reference"`
}

// Packet is one row of the packets table (opt-in): a packet's summary line.
type Packet struct {
	Common
	Number       int64     `parquet:"number" json:"number"`
	Time         time.Time `parquet:"time,timestamp(microsecond)" json:"time"`
	RelTime      float64   `parquet:"rel_time" json:"rel_time"`
	Length       int64     `parquet:"length" json:"length"`
	CapLength    int64     `parquet:"cap_length" json:"cap_length"`
	Source       string    `parquet:"source" json:"source"`
	Destination  string    `parquet:"destination" json:"destination"`
	Protocol     string    `parquet:"protocol,dict" json:"protocol"`
	Info         string    `parquet:"info" json:"info"`
	ConnectionID *int64    `parquet:"connection_id,optional" json:"connection_id"`
	Direction    *string   `parquet:"direction,optional,dict" json:"direction"`
	// XID is the first RPC-over-RDMA message the packet completed.
	XID *int64 `parquet:"xid,optional" json:"xid"`
}

// Exchange is one row of the exchanges table: one request and its
// response of any upper-layer protocol (an RPC Call and its Reply), as
// `rdmashark exchanges` lists it. The transactions table is
// RPC-over-RDMA's own, more detailed view of the same exchanges.
type Exchange struct {
	Common
	ConnectionID int64 `parquet:"connection_id" json:"connection_id"`
	// ULP is the upper-layer protocol's name (rpcordma).
	ULP string `parquet:"ulp,dict" json:"ulp"`
	// Key identifies the exchange on its connection as its ULP writes it
	// (the XID as 0x%08x for rpcordma); KeyNum is its value (for rpcordma
	// the transactions table's xid).
	Key    string `parquet:"key" json:"key"`
	KeyNum int64  `parquet:"key_num" json:"key_num"`
	// Initiator: the direction of the request.
	Initiator string `parquet:"initiator,dict" json:"initiator"`
	// Name: what the request asked for; NULL without the request.
	Name *string `parquet:"name,optional,dict" json:"name"`
	// Status names the response's status; OK whether it is a success.
	Status *string `parquet:"status,optional,dict" json:"status"`
	OK     *bool   `parquet:"ok,optional" json:"ok"`
	// Outcome: responded, no-response, evicted, superseded,
	// response-without-request.
	Outcome         string     `parquet:"outcome,dict" json:"outcome"`
	RequestPacket   *int64     `parquet:"request_packet,optional" json:"request_packet"`
	RequestTime     *time.Time `parquet:"request_time,optional,timestamp(microsecond)" json:"request_time"`
	ResponsePacket  *int64     `parquet:"response_packet,optional" json:"response_packet"`
	ResponseTime    *time.Time `parquet:"response_time,optional,timestamp(microsecond)" json:"response_time"`
	LatencyNS       *int64     `parquet:"latency_ns,optional" json:"latency_ns"`
	ReadBytes       int64      `parquet:"read_bytes" json:"read_bytes"`
	WriteBytes      int64      `parquet:"write_bytes" json:"write_bytes"`
	InvalidatedSTag *int64     `parquet:"invalidated_stag,optional" json:"invalidated_stag"`
	// The association of connections the exchange belongs to, when its
	// ULP has one and the capture names it (NVMe/RDMA: the controller:
	// host NQN, subsystem NQN, CNTLID); NULL otherwise (schema 4).
	AssociationInitiator *string `parquet:"association_initiator,optional,dict" json:"association_initiator"`
	AssociationTarget    *string `parquet:"association_target,optional,dict" json:"association_target"`
	AssociationID        *int64  `parquet:"association_id,optional" json:"association_id"`
	// What the request acts on, when its ULP can tell (schema 5):
	// FHHash the hash of its handle (rpcordma: tshark's nfs.fh.hash),
	// ObjectName the name it looks up, creates or removes, ReplyFHHash
	// the hash of the handle the response returned for that name; NULL
	// otherwise (dissect.ExchangeObject).
	FHHash      *int64  `parquet:"fh_hash,optional" json:"fh_hash"`
	ObjectName  *string `parquet:"object_name,optional" json:"object_name"`
	ReplyFHHash *int64  `parquet:"reply_fh_hash,optional" json:"reply_fh_hash"`
}
