package fields

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/dissect"
)

// FieldType is the kind of value a field holds. The names follow
// Wireshark's FT_* types because the printed form of a value depends on
// them the same way it does in tshark.
type FieldType uint8

const (
	FTNone FieldType = iota // a protocol or a label: no value of its own
	FTUint8
	FTUint16
	FTUint24
	FTUint32
	FTUint64
	FTBoolean
	FTBytes
	FTIPv4
	FTIPv6
	FTString
	FTTime     // seconds, printed with nine decimals
	FTRelTime  // seconds relative to the first packet
	FTEther    // MAC address
	FTProtocol // a protocol's whole header
)

var fieldTypeNames = [...]string{
	FTNone: "FT_NONE", FTUint8: "FT_UINT8", FTUint16: "FT_UINT16", FTUint24: "FT_UINT24",
	FTUint32: "FT_UINT32", FTUint64: "FT_UINT64", FTBoolean: "FT_BOOLEAN", FTBytes: "FT_BYTES",
	FTIPv4: "FT_IPv4", FTIPv6: "FT_IPv6", FTString: "FT_STRING", FTTime: "FT_ABSOLUTE_TIME",
	FTRelTime: "FT_RELATIVE_TIME", FTEther: "FT_ETHER", FTProtocol: "FT_PROTOCOL",
}

func (t FieldType) String() string {
	if int(t) < len(fieldTypeNames) {
		return fieldTypeNames[t]
	}
	return "FT_?"
}

// hexDigits is the zero-padded width tshark gives a BASE_HEX value.
func (t FieldType) hexDigits() int {
	switch t {
	case FTUint8:
		return 2
	case FTUint16:
		return 4
	case FTUint24:
		return 6
	case FTUint32:
		return 8
	case FTUint64:
		return 16
	}
	return 0
}

// Base is how an integer field is printed.
type Base uint8

const (
	BaseNone Base = iota
	BaseDec
	BaseHex
	BaseDecHex // tshark -T fields prints these as decimal
)

func (b Base) String() string {
	switch b {
	case BaseDec:
		return "BASE_DEC"
	case BaseHex:
		return "BASE_HEX"
	case BaseDecHex:
		return "BASE_DEC_HEX"
	}
	return ""
}

// Value is one occurrence of a field in a packet.
type Value struct {
	U    uint64
	B    []byte
	S    string
	Addr netip.Addr
	// Text, when set, is the human-readable meaning shown by -V next to the
	// raw value (an opcode's name, a reason code's meaning).
	Text string
}

// Field describes one named value a packet can carry. Name is Wireshark's
// display-filter name where Wireshark has the field, else one under
// "rdmashark.".
type Field struct {
	Name   string
	Label  string
	Type   FieldType
	Base   Base
	Parent string // the protocol or header the field belongs to, e.g. "infiniband.bth"
	// Get calls emit once per occurrence of the field in p.
	Get func(p *dissect.Packet, emit func(Value))
	// Per, when set, names the kind of instance the field repeats with
	// in a packet (FieldSet.Instances: "fpdu" for each iWARP FPDU, "rpc"
	// for each RPC-over-RDMA message) and At calls emit for the field's
	// occurrences in instance i. Register then derives Get: every
	// instance in order, so -T fields joins them as tshark does while -V
	// and -T json can show each instance apart.
	Per string
	At  func(p *dissect.Packet, i int, emit func(Value))
	// Hidden fields are printed by -T fields only, not in the -V tree or
	// -T json: tshark's hidden fields (nfs.status repeats nfs.status3 and
	// nfs.nfsstat4 for filtering).
	Hidden bool
	// InTree, when set, limits the -V tree and -T json to the packets it
	// returns true for; -T fields and filters see every value. (tshark
	// fills infiniband.reth.va and r_key from an AtomicETH too, yet a
	// packet without a RETH shows no RETH.)
	InTree func(p *dissect.Packet) bool
	// NoPresence: the field occurs without its protocol, as in Wireshark
	// (NFSACL and MOUNT messages carry nfs.status and nfs's value
	// fields), so its values do not make the protocol present to a
	// display filter.
	NoPresence bool
}

// Format prints v the way tshark -T fields prints a value of this field.
func (f *Field) Format(v Value) string {
	switch f.Type {
	case FTUint8, FTUint16, FTUint24, FTUint32, FTUint64:
		if f.Base == BaseHex {
			return fmt.Sprintf("0x%0*x", f.Type.hexDigits(), v.U)
		}
		return strconv.FormatUint(v.U, 10)
	case FTBoolean:
		if v.U != 0 {
			return "1"
		}
		return "0"
	case FTBytes, FTProtocol:
		return hex.EncodeToString(v.B)
	case FTIPv4, FTIPv6:
		if v.Addr.IsValid() {
			return v.Addr.String()
		}
		return ""
	case FTEther:
		return formatMAC(v.B)
	case FTTime, FTRelTime:
		return formatSeconds(v.U)
	case FTString:
		return v.S
	}
	return v.S
}

// Display prints v for the -V tree: the tshark form plus the meaning,
// strings escaped (escape.go).
func (f *Field) Display(v Value) string {
	s := Escape(f.Format(v)) // only strings have anything to escape
	if v.Text != "" {
		if s == "" {
			return Escape(v.Text)
		}
		return s + " (" + Escape(v.Text) + ")"
	}
	return s
}

func formatMAC(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	return sb.String()
}

// formatSeconds prints nanoseconds as seconds with nine decimals, as tshark
// prints frame.time_relative and frame.time_epoch.
func formatSeconds(ns uint64) string {
	return fmt.Sprintf("%d.%09d", ns/1e9, ns%1e9)
}

// FieldSet is the table of every field rdmashark knows, in display order.
type FieldSet struct {
	fields    []*Field
	byName    map[string]*Field
	titles    map[string]string
	instances map[string]func(p *dissect.Packet) int
}

// ulpMessages are the plug-ins' Messages (RegisterTable), in registration
// order.
var ulpMessages []*Messages

// messagesOf returns the Messages of the ULP whose messages p completed,
// and how many; nil when p completed none. (A packet is of one
// connection, whose ULP is one.)
func messagesOf(p *dissect.Packet) (*Messages, int) {
	for _, m := range ulpMessages {
		if n := m.Count(p); n > 0 {
			return m, n
		}
	}
	return nil, 0
}

// Table is one protocol's part of the field registry: the groups its
// fields belong to (with their -V titles), the kinds of instance its fields
// repeat with, and its fields in display order. Each fields_*.go file builds
// its own; NewFieldSet joins them once.
type Table struct {
	groups    [][2]string
	instances []instanceKind
	fields    []*Field
	messages  *Messages
}

type instanceKind struct {
	kind  string
	count func(p *dissect.Packet) int
}

// Group names a protocol or header that fields belong to (Field.Parent),
// with the title -V shows for it.
func (t *Table) Group(name, title string) { t.groups = append(t.groups, [2]string{name, title}) }

// Instances names a kind of instance that fields repeat with (Field.Per)
// and how many a packet holds.
func (t *Table) Instances(kind string, count func(p *dissect.Packet) int) {
	t.instances = append(t.instances, instanceKind{kind, count})
}

// Messages is how a plug-in's table tells the protocol-neutral parts of
// the presentation about the ULP messages a packet completed (its records
// in dissect.Packet.ULP): frame.protocols lists what each holds, and
// InfoLines (one summary line per iWARP FPDU) puts each on the line of the
// FPDU that completed it.
type Messages struct {
	// Count returns how many messages of the ULP p completed.
	Count func(p *dissect.Packet) int
	// Info appends message i's part of the summary line (without the
	// " | " in front of it).
	Info func(p *dissect.Packet, i int, dst []byte) []byte
	// ProtocolNames are the protocol filter names the ULP's messages
	// hold, as tshark lists them in frame.protocols (RPC-over-RDMA:
	// "rpcordma", "rpc", "nfs", ...); Protocols returns the indexes in
	// ProtocolNames of those message i holds, outermost first, in a slice
	// the plug-in keeps (it is only read: no allocation per packet).
	ProtocolNames []string
	Protocols     func(p *dissect.Packet, i int) []int
	// ByRead tells whether message i was completed by the last segment
	// of an RDMA Read Response (a message rebuilt from the memory its peer
	// read) rather than by a Send's (nil: never).
	ByRead func(p *dissect.Packet, i int) bool

	protoBase protocol // ProtocolNames[0]'s protocol
}

// Messages sets the table's Messages.
func (t *Table) Messages(m Messages) { t.messages = &m }

// Register adds fields to the table, in display order.
func (t *Table) Register(fs ...*Field) { t.fields = append(t.fields, fs...) }

// fieldTables are the protocols' tables in registry (display) order.
var fieldTables = []func() *Table{
	analysisTable, columnTable, compatTable, ibTable, iwarpTable, linkTable,
	netTable, streamTable, commentTable, protocolsTable, maccTable,
	wordsTable, // fields_words.go
}

// Registry is the field table every per-packet output uses, built once from the
// protocols' tables.
var Registry = NewFieldSet(fieldTables...)

// RegisterTable adds a plug-in's table (an upper-layer protocol's fields,
// read from its records in dissect.Packet.ULP) to Registry, before any
// output or display filter is made: the command's list of plug-ins
// (cmd/rdmashark/ulps.go) calls it. A field name already taken panics.
func RegisterTable(mk func() *Table) {
	if m := Registry.addTable(mk).messages; m != nil {
		m.protoBase = registerProtocols(m.ProtocolNames)
		ulpMessages = append(ulpMessages, m)
	}
}

// addTable adds one table's groups, instance kinds and fields.
func (s *FieldSet) addTable(mk func() *Table) *Table {
	t := mk()
	for _, g := range t.groups {
		s.titles[g[0]] = g[1]
	}
	for _, k := range t.instances {
		s.instances[k.kind] = k.count
	}
	s.register(t.fields...)
	return t
}

// NewFieldSet builds a registry from tables, in their order. A field name
// registered twice is a programming error and panics at start-up, where a
// test catches it.
func NewFieldSet(tables ...func() *Table) *FieldSet {
	s := &FieldSet{byName: map[string]*Field{}, titles: map[string]string{},
		instances: map[string]func(p *dissect.Packet) int{}}
	for _, mk := range tables {
		s.addTable(mk)
	}
	return s
}

// Count returns how many instances of kind p holds (0 for a kind not
// registered).
func (s *FieldSet) Count(kind string, p *dissect.Packet) int {
	if c := s.instances[kind]; c != nil {
		return c(p)
	}
	return 0
}

// groupRanks orders the groups of -V and -T json from the outermost
// protocol to the innermost, whatever order the fields were registered in.
// The first prefix that matches a group's name gives its rank.
var groupRanks = []struct {
	prefix string
	rank   int
}{
	{"frame", 0}, {"erf", 1}, {"eth", 2}, {"vlan", 3}, {"sll", 4}, {"ipoib", 5},
	{"ipv6", 7}, {"ip", 6}, {"udp", 8}, {"tcp", 9},
	{"infiniband.lrh", 20}, {"infiniband.grh", 21}, {"infiniband.bth", 22},
	{"infiniband.rdeth", 23}, {"infiniband.deth", 24}, {"infiniband.xrceth", 25},
	{"infiniband.reth", 26}, {"infiniband.atomiceth", 27}, {"infiniband.aeth", 28},
	{"infiniband.atomicacketh", 29}, {"infiniband.immdt", 30}, {"infiniband.ieth", 31},
	{"infiniband.mad", 40}, {"infiniband.cm", 41}, {"infiniband", 42},
	{"iwarp_mpa", 50}, {"iwarp_ddp", 51}, {"iwarp_rdma", 52}, {"iwarp", 53},
	{"rpcordma", 60}, {"rpc", 61}, {"nfs", 62}, {"mount", 63},
	{"nvme-rdma", 64}, {"nvme", 65},
	{"infiniband.crc", 90}, {"rdmashark", 95},
}

// Rank is a group's place in the -V tree: lower is outer.
func (s *FieldSet) Rank(group string) int {
	if group == "infiniband.crc" {
		return 90 // the CRCs trail the packet, as they do on the wire
	}
	for _, g := range groupRanks {
		if strings.HasPrefix(group, g.prefix) {
			return g.rank
		}
	}
	return 100
}

// Title returns a group's title, or its name when it has none.
func (s *FieldSet) Title(name string) string {
	if t, ok := s.titles[name]; ok {
		return t
	}
	return name
}

// register adds fields to the set; NewFieldSet says why a duplicate panics.
func (s *FieldSet) register(fs ...*Field) {
	for _, f := range fs {
		if _, dup := s.byName[f.Name]; dup {
			panic("dissect: field registered twice: " + f.Name)
		}
		if f.At != nil && f.Get == nil {
			f.Get = s.allInstances(f)
		}
		s.byName[f.Name] = f
		s.fields = append(s.fields, f)
	}
}

// allInstances is the Get of a per-instance field: its occurrences in
// every instance, in order.
func (s *FieldSet) allInstances(f *Field) func(p *dissect.Packet, emit func(Value)) {
	return func(p *dissect.Packet, emit func(Value)) {
		for i, n := 0, s.Count(f.Per, p); i < n; i++ {
			f.At(p, i, emit)
		}
	}
}

// Lookup returns the field of that name.
func (s *FieldSet) Lookup(name string) (*Field, bool) {
	f, ok := s.byName[name]
	return f, ok
}

// All returns every field in registration order.
func (s *FieldSet) All() []*Field { return s.fields }

// Sorted returns every field sorted by name (for -G fields).
func (s *FieldSet) Sorted() []*Field {
	out := append([]*Field(nil), s.fields...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Values appends the formatted occurrences of f in p to dst.
func (f *Field) Values(p *dissect.Packet, dst []string) []string {
	if f.Get == nil {
		return dst
	}
	f.Get(p, func(v Value) { dst = append(dst, f.Format(v)) })
	return dst
}
