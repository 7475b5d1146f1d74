package export

import (
	"fmt"
	"slices"
	"time"

	"github.com/rdmashark/rdmashark/dissect"
)

// ULP is an upper-layer protocol's part of the export (issue 25): the
// columns of the neutral tables (connections, rdma_ops, packets) that its
// own model fills, and the rows of its own tables (RegisterTable). A
// plug-in's presentation registers one (Register) from the command's
// registration list; export imports no plug-in. Each function may be nil,
// and leaves a row alone when the connection, operation, packet or
// exchange is not its protocol's.
type ULP struct {
	// Connection fills dc's row of connections (rpcordma: rpc_version,
	// calls_forward … rdma_write_bytes).
	Connection func(dc *dissect.Connection, row *Connection)
	// RDMAOp fills op's row of rdma_ops (rpcordma: xid, chunk_kind).
	RDMAOp func(op *dissect.RDMAOp, row *RDMAOp)
	// Packet fills p's row of packets (rpcordma: xid).
	Packet func(p *dissect.Packet, row *Packet)
	// Exchange hears every finished exchange after its row of exchanges
	// was written (x.Detail is the ULP's own record, valid during the
	// call), to write its rows of the ULP's own tables with Table.Add
	// (nvme-rdma: nvme_commands).
	Exchange func(c *Capture, x *dissect.Exchange)
}

var ulps []ULP

// Register adds a ULP's part of the export; call it before any Capture
// is made (the command does, from init).
func Register(u ULP) { ulps = append(ulps, u) }

// Table is a table of an upper-layer protocol's own (RPC-over-RDMA's
// transactions, NVMe/RDMA's nvme_commands), registered by its
// presentation (RegisterTable): its rows, of type T, are written by the
// plug-in's presentation (Add) as the engine produces them — through the
// same writers as the neutral tables (Parquet or NDJSON, partitioned by
// label, one part file per capture, row groups) — and it is closed with
// the tables the engine fills during the read. Every Capture writes every
// registered table, with no rows when its capture holds none of its
// protocol, as it writes every neutral table: a query over any export
// finds each table and its schema.
type Table[T any] struct{ spec *tableSpec }

// tableSpec is what the export knows of a registered table.
type tableSpec struct {
	name string
	// idx is its place in Capture.own.
	idx int
	// schema is a zero row (Schema).
	schema any
	open   func(cfg *Config, part int, capture string) (closer, error)
}

// commoner is a row type that embeds Common.
type commoner interface{ commonRow() *Common }

func (c *Common) commonRow() *Common { return c }

// owned are the registered tables, in the order they were registered.
var owned []*tableSpec

// RegisterTable registers a table of an upper-layer protocol's own, named
// name, whose rows are T, a struct that embeds Common first and tags its
// fields as the neutral rows do (`parquet:"…" json:"…"`). It comes in
// Tables — the manifest's, the documentation's and the command's order —
// right after the table named after (a neutral or registered one). Call
// it from the plug-in presentation's Register, before any Capture is made
// or Reserve called; a name registered twice, or after no table, panics.
func RegisterTable[T any](name, after string) *Table[T] {
	if _, ok := any(new(T)).(commoner); !ok {
		panic(fmt.Sprintf("export: table %s: its row type %T does not embed export.Common", name, *new(T)))
	}
	if slices.Contains(Tables, name) {
		panic("export: table " + name + " registered twice")
	}
	i := slices.Index(Tables, after)
	if i < 0 {
		panic("export: table " + name + " registered after " + after + ", which is no table")
	}
	Tables = slices.Insert(Tables, i+1, name)
	s := &tableSpec{name: name, idx: len(owned), schema: *new(T),
		open: func(cfg *Config, part int, capture string) (closer, error) {
			return newTable[T](cfg, name, part, capture)
		}}
	owned = append(owned, s)
	return &Table[T]{spec: s}
}

// Name is the table's name, the directory of its files.
func (t *Table[T]) Name() string { return t.spec.name }

// Add writes one row to c's part of the table; its Common columns are
// the Capture's (whatever row holds there). A write error is c's (Err),
// as for the neutral tables.
func (t *Table[T]) Add(c *Capture, row *T) {
	if c.err != nil {
		return
	}
	*any(row).(commoner).commonRow() = c.common
	c.note(c.own[t.spec.idx].(*table[T]).add(*row))
}

// Schema returns a zero row of the table named name, neutral or
// registered (nil for no table): what parquet.SchemaOf reads its columns
// from.
func Schema(name string) any {
	switch name {
	case TableConnections:
		return Connection{}
	case TableRDMAOps:
		return RDMAOp{}
	case TableFindings:
		return Finding{}
	case TablePackets:
		return Packet{}
	case TableTransportHealth:
		return TransportHealth{}
	case TableUDFlows:
		return UDFlow{}
	case TableExchanges:
		return Exchange{}
	}
	for _, s := range owned {
		if s.name == name {
			return s.schema
		}
	}
	return nil
}

// Int64, String and Time are a nullable column's value for a row (a
// pointer, nil for NULL): a uint64 as BIGINT, a string, and a time, NULL
// when it is the zero time. The plug-ins' tables build their rows with
// them as export builds its own.
func Int64(v uint64) *int64 { x := int64(v); return &x }

// String is s as a nullable column's value.
func String(s string) *string { return &s }

// Time is t as a nullable column's value, nil for the zero time.
func Time(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
