// Package report turns the engine's model — connections, counters, findings
// — into tables and machine-readable documents. It reads the model only; it
// neither decodes nor tracks anything.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/fields"
	"github.com/rdmashark/rdmashark/rpcrdma/rfc8797"
)

// Analysis is the document of `rdmashark analyze --format json`. Its keys are
// a contract: later versions add keys and never rename these.
type Analysis struct {
	File        string               `json:"file"`
	Packets     uint64               `json:"packets"`
	Connections []Connection         `json:"connections"`
	Findings    []Finding            `json:"findings"`
	Protocols   []dissect.ProtoCount `json:"protocols"`
	ICRC        CRCCounts            `json:"icrc"`
	// Errors lists what stopped reading early; what was read before it is
	// reported all the same.
	Errors []string `json:"errors,omitempty"`
	// Interrupted: a signal (Ctrl-C, SIGTERM) stopped reading before the
	// end of the input; the report covers the packets read. SkippedRecords
	// counts damaged records skipped without stopping the read. Either
	// makes the analysis incomplete (issue 13).
	Interrupted    bool   `json:"interrupted,omitempty"`
	SkippedRecords uint64 `json:"skipped_records,omitempty"`
	// CheckCaveats are the caveats on every connection's checks (packets
	// the capture lost: check.Result.Caveats).
	CheckCaveats []string `json:"check_caveats,omitempty"`
	// ConnectionsDropped counts connections not tracked because the
	// connection table was full, each once (dissect/dropped.go);
	// ConnectionsDroppedAtLeast says the count is a lower bound, and
	// PacketsNotTracked counts those connections' packets.
	ConnectionsDropped        uint64 `json:"connections_dropped,omitempty"`
	ConnectionsDroppedAtLeast bool   `json:"connections_dropped_at_least,omitempty"`
	PacketsNotTracked         uint64 `json:"packets_not_tracked,omitempty"`
	// ConnectionsForgotten counts closed connections whose summaries were
	// dropped from the full connection table to make room for new ones
	// (they are not in "connections"; dissect/release.go).
	ConnectionsForgotten uint64 `json:"connections_forgotten,omitempty"`
	// Engine holds the engine-wide reassembly and RPC-over-RDMA counters
	// (analyze_engine.go).
	Engine *EngineCounters `json:"engine"`
	// PFC is the capture's link-level flow control (analyze_health.go).
	PFC *PFCSummary `json:"pfc"`
	// UDFlows are the Unreliable Datagram flows (analyze_health.go).
	UDFlows []UDFlow `json:"ud_flows,omitempty"`

	// spill holds the connections released during the read, when
	// analyze took them out of memory (analyze_spill.go): Connections and
	// Findings then hold only the others, and the reports walk both
	// (eachConn, eachFinding).
	spill *ConnSpill
}

// Finding is a conformance finding (the checks' type; its JSON keys rule,
// severity, connection, xid, packets, message and reference are the
// contract). AddChecks (findings.go) fills them.
type Finding = check.Finding

// CRCCounts counts invariant-CRC verdicts.
type CRCCounts struct {
	Good      uint64 `json:"good"`
	Bad       uint64 `json:"bad"`
	Truncated uint64 `json:"not_verifiable"`
}

// Endpoint is one side of a connection.
type Endpoint struct {
	Address string  `json:"address"`
	QPN     *uint32 `json:"qpn,omitempty"`
	Port    *uint16 `json:"port,omitempty"`
}

// PrivateData is one side's RFC 8797 private data.
type PrivateData struct {
	// Seen: the side's CM REQ/REP (MPA Request/Reply) is in the capture.
	Seen bool `json:"seen"`
	// Present: it carried a valid RFC 8797 message.
	Present          bool   `json:"present"`
	Packet           int    `json:"packet,omitempty"`
	Offset           *int   `json:"offset"`
	Version          *int   `json:"version"`
	RemoteInvalidate bool   `json:"remote_invalidate"`
	SendSize         *int   `json:"send_size"`
	ReceiveSize      *int   `json:"receive_size"`
	Note             string `json:"note,omitempty"`
	Length           int    `json:"length"`
}

// Thresholds are the negotiated inline thresholds in bytes.
type Thresholds struct {
	ClientToServer int `json:"client_to_server"`
	ServerToClient int `json:"server_to_client"`
}

// Direction counts one direction's traffic.
type Direction struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Connection is one connection of the Analysis document.
type Connection struct {
	ID        int    `json:"id"`
	Transport string `json:"transport"`
	// ULP is the upper-layer protocol the connection carries as the
	// engine decided it ("rpcordma" for RPC-over-RDMA, tshark's name);
	// null when no registered protocol claimed it.
	ULP         *string  `json:"ulp"`
	Client      Endpoint `json:"client"`
	Server      Endpoint `json:"server"`
	ServicePort *uint16  `json:"service_port"`
	ServiceID   string   `json:"service_id,omitempty"`
	State       string   `json:"state"`
	Reject      string   `json:"reject_reason,omitempty"`
	FirstPacket int      `json:"first_packet"`
	LastPacket  int      `json:"last_packet"`
	// Idle: released after --idle-timeout without a packet (its close,
	// if any, came later or was not captured).
	Idle bool `json:"idle,omitempty"`
	// RolesToldBy and RolesGuessed: on a connection whose set-up the
	// capture lacks, the packet whose ULP reading said which side is the
	// client (dissect.Orienter), or that none did and the client is the
	// first packet's sender, a guess (dissect/orient.go).
	RolesToldBy  int  `json:"roles_told_by,omitempty"`
	RolesGuessed bool `json:"roles_guessed,omitempty"`
	PrivateData  struct {
		Client PrivateData `json:"client"`
		Server PrivateData `json:"server"`
	} `json:"private_data"`
	// InlineThreshold is null when the set-up of the connection is not in
	// the capture (nothing was negotiated that we saw).
	InlineThreshold  *Thresholds `json:"inline_threshold"`
	RemoteInvalidate *bool       `json:"remote_invalidation_negotiated"`
	// RPCOverRDMA is false for connections that carried no RPC-over-RDMA
	// message and no RFC 8797 private data (perftest, rping): the
	// threshold and invalidation above are then only RFC 8797's defaults,
	// never in force, and the table says "not RPC-over-RDMA".
	RPCOverRDMA bool `json:"rpc_over_rdma"`
	Traffic     struct {
		ClientToServer Direction `json:"client_to_server"`
		ServerToClient Direction `json:"server_to_client"`
	} `json:"traffic"`
	// IWARP is the MPA negotiation of an iWARP connection (analyze_iwarp.go).
	IWARP *IWARPConnection `json:"iwarp,omitempty"`
	// RPC is the connection's RPC-over-RDMA summary (analyze_rpc.go).
	RPC *RPCConnection `json:"rpc,omitempty"`
	// RemoteInvalidation, Chunks and Checks come from the checks
	// (findings.go, AddChecks): Replies with and without remote
	// invalidation, the chunks used, and which rules ran.
	RemoteInvalidation *check.InvUsage     `json:"remote_invalidation,omitempty"`
	Chunks             *check.ChunkSummary `json:"chunks,omitempty"`
	Checks             []check.CheckResult `json:"checks,omitempty"`
	// CheckCaveats say why its checks may rest on incomplete evidence
	// (check.ConnResult.Caveats).
	CheckCaveats []string `json:"check_caveats,omitempty"`
	// TransportHealth is loss, recovery and congestion per direction
	// (analyze_health.go).
	TransportHealth *TransportHealth `json:"transport_health,omitempty"`
	// GapsAffect says which figures the stretches the capture lacks of
	// this connection bear on (analyze_gaps.go); absent when none.
	GapsAffect []GapEffect `json:"gaps_affect,omitempty"`
	// ulpData is the ULP session's record of the connection
	// (dissect.Connection.ULPData), written under the ULP's name;
	// ulpHead and ulpRow its row of the ULP's text table (ULPTable).
	ulpData         any
	ulpHead, ulpRow []string
}

// ULPTable returns the connection's row of its ULP's text table (the
// ULPData's ULPTable, kept through the spill) and that table's header; nil
// when its ULP has none.
func (c *Connection) ULPTable() (head, row []string) { return c.ulpHead, c.ulpRow }

// NewAnalysis builds the document from the snapshot of an engine that has
// read a capture (Engine.Snapshot).
func NewAnalysis(file string, eng *dissect.Snapshot) *Analysis {
	return newAnalysis(file, eng, nil)
}

func newAnalysis(file string, eng *dissect.Snapshot, spill *ConnSpill) *Analysis {
	a := &Analysis{
		spill:                     spill,
		File:                      file,
		Packets:                   eng.Stats.Packets,
		Findings:                  []Finding{},
		Connections:               []Connection{},
		Protocols:                 eng.Stats.Protocols(),
		ConnectionsDropped:        eng.ConnectionsDropped,
		PacketsNotTracked:         eng.PacketsNotTracked,
		ConnectionsDroppedAtLeast: eng.ConnectionsDroppedAtLeast,
		ConnectionsForgotten:      eng.ConnectionsForgotten,
		SkippedRecords:            eng.Stats.Skipped,
		Engine:                    engineCounters(eng),
		PFC:                       pfcSummary(&eng.PFC),
		UDFlows:                   udFlows(eng),
	}
	a.ICRC = CRCCounts{
		Good:      eng.Stats.ICRC[dissect.CRCGood],
		Bad:       eng.Stats.ICRC[dissect.CRCBad],
		Truncated: eng.Stats.ICRC[dissect.CRCTruncated],
	}
	for _, c := range eng.Connections {
		if spill != nil && spill.Has(c) {
			continue // read back by the reports (analyze_spill.go)
		}
		a.Connections = append(a.Connections, connection(c))
	}
	return a
}

func connection(c *dissect.Connection) Connection {
	out := Connection{
		ID:           c.ID,
		Transport:    c.Transport.String(),
		Client:       endpoint(c.Transport, c.Client),
		Server:       endpoint(c.Transport, c.Server),
		State:        c.State.String(),
		Reject:       c.RejectReason,
		FirstPacket:  c.FirstPacket,
		LastPacket:   c.LastPacket,
		Idle:         c.Idle,
		RolesToldBy:  c.RolesToldBy,
		RolesGuessed: c.RolesGuessed,
	}
	if c.ServicePort != 0 {
		p := c.ServicePort
		out.ServicePort = &p
	}
	if c.ServiceID != 0 {
		out.ServiceID = fmt.Sprintf("0x%016x", c.ServiceID)
	}
	out.PrivateData.Client = privateData(summary(&c.PrivateData[0]))
	out.PrivateData.Server = privateData(summary(&c.PrivateData[1]))
	if c.Negotiated && rfc8797Applies(c) {
		th := thresholds(c)
		out.InlineThreshold = &Thresholds{th.ClientToServer, th.ServerToClient}
		r := th.RemoteInvalidation
		out.RemoteInvalidate = &r
	}
	out.Traffic.ClientToServer = Direction{c.Dir[0].Packets, c.Dir[0].Bytes}
	out.Traffic.ServerToClient = Direction{c.Dir[1].Packets, c.Dir[1].Bytes}
	out.IWARP = iwarpConnection(c)
	// The registered ULPs' sections (RPC-over-RDMA's "rpc", ulp.go).
	own := ulpConnection(c, &out)
	useV2Thresholds(&out, c)
	out.RPCOverRDMA = !notRPCOverRDMA(out)
	if c.ULP != "" {
		u := c.ULP
		out.ULP = &u
		if !own {
			// A registered ULP's own sections (RPC-over-RDMA's "rpc"
			// object) present its data already.
			out.ulpData = c.ULPData
		}
		if t, ok := c.ULPData.(ULPTable); ok {
			out.ulpHead, out.ulpRow = t.ULPTableHeader(), t.ULPTableRow()
		}
	}
	out.TransportHealth = transportHealth(c)
	out.GapsAffect = gapEffects(c)
	return out
}

func endpoint(t dissect.Transport, e dissect.Endpoint) Endpoint {
	out := Endpoint{Address: e.Address}
	if t == dissect.TransportIWARP {
		p := e.Port
		out.Port = &p
	} else if e.QPN != 0 {
		q := e.QPN
		out.QPN = &q
	}
	return out
}

func privateData(s rfc8797.Summary) PrivateData {
	out := PrivateData{Seen: s.Seen, Present: s.Present, Packet: s.Packet, Note: s.Note, Length: s.Length}
	if s.Present || s.Found {
		off, ver := s.Offset, s.Version
		out.Offset, out.Version = &off, &ver
	}
	if s.Present {
		ss, rs := s.SendSize, s.ReceiveSize
		out.SendSize, out.ReceiveSize = &ss, &rs
		out.RemoteInvalidate = s.RemoteInvalidate
	}
	return out
}

// WriteJSON writes the document, indented.
func (a *Analysis) WriteJSON(w io.Writer) error { return a.writeJSON(w, nil) }

// WriteJSONWith writes the document as WriteJSON does, with one more
// member after the others, key: extra: what encoding/json writes, indented,
// of a struct that embeds *Analysis and then has that field (capture's
// document: the analysis, and the capture's facts under "capture"), but
// streamed as WriteJSON streams, and with no HTML escaping.
func (a *Analysis) WriteJSONWith(w io.Writer, key string, extra any) error {
	return a.writeJSON(w, []jsonMember{{key, extra}})
}

func (a *Analysis) writeJSON(w io.Writer, more []jsonMember) error {
	// Written as it is encoded, not built whole first (jsonstream.go);
	// "<stdin>" and "a < b" as they are: this is no HTML.
	if a.spill == nil || a.spill.Len() == 0 {
		return writeJSONStreamMore(w, a, nil, nil, more)
	}
	// The connections and the findings are read back from the spill as
	// they are written (analyze_spill.go).
	return writeJSONStreamMore(w, a, reflect.TypeFor[Analysis](), map[string]jsonList{
		"Connections": func(reflect.Value) func(func(reflect.Value)) error { return walkList(a.eachConnection) },
		"Findings":    func(reflect.Value) func(func(reflect.Value)) error { return walkList(a.eachFinding) },
	}, more)
}

// WriteTable writes the connections table, then the protocol counts.
func (a *Analysis) WriteTable(w io.Writer) error {
	// Every table's rows are taken in one walk over the connections: a
	// connection the spill took is read back once (analyze_spill.go).
	rows := newAnalysisRows()
	defer rows.close()
	if err := a.eachConn(func(c *Connection, fs []Finding) error {
		rows.add(a, c, fs)
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s, %s", fields.Escape(a.File), Plural(int(a.Packets), "packet"), Plural(rows.conns.len(), "connection"))
	if n := len(a.UDFlows); n > 0 {
		fmt.Fprintf(w, ", %d UD flows", n)
	}
	fmt.Fprintln(w)
	if rows.conns.len() > 0 {
		if err := rows.conns.render(w, houseStyle...); err != nil {
			return err
		}
		if rows.negotiated.len() > 0 {
			fmt.Fprintln(w, "\nNegotiated at connection set-up (RFC 8797):")
			if err := rows.negotiated.render(w, houseStyle...); err != nil {
				return err
			}
		}
		for _, name := range rows.ulpOrder {
			fmt.Fprintf(w, "\n%s, per connection:\n", name)
			if err := rows.ulp[name].render(w, houseStyle...); err != nil {
				return err
			}
		}
		if err := writeIWARPTable(w, rows.iwarp); err != nil {
			return err
		}
		if err := writeRPCTable(w, rows.rpc); err != nil {
			return err
		}
		if err := writeV2Table(w, rows.v2); err != nil {
			return err
		}
		if err := writeHealthTable(w, rows.health, rows.tcpHealth); err != nil {
			return err
		}
		if err := writeFindingsTable(w, a, rows); err != nil {
			return err
		}
	}
	if err := writeUDTable(w, a); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := newTable(w)
	t.Header("Protocol", "Packets")
	for _, p := range a.Protocols {
		_ = t.Append([]string{p.Proto, strconv.FormatUint(p.Packets, 10)})
	}
	if err := t.Render(); err != nil {
		return err
	}
	a.writeCaptureLines(w)
	return nil
}

// analysisRows are the rows of analyze's tables.
type analysisRows struct {
	conns, negotiated, iwarp, rpc, health, tcpHealth, findings *rowTable
	v2                                                         *rowTable // analyze_rpc_v2.go
	// ulp are the tables of the other ULPs (ULPTable), by name, in the
	// order their first connection came.
	ulp      map[string]*rowTable
	ulpOrder []string
	// checks are the lines under the findings table: each connection's
	// checks, and its own caveats.
	checks strings.Builder
	// anyChecks: a connection has check results; anyFindings: one has
	// findings.
	anyChecks, anyFindings bool
	rules                  ruleFindings // scratch of findingRows
}

func newAnalysisRows() *analysisRows {
	return &analysisRows{
		conns:      newRowTable("ID", "Transport", "Client", "Server", "Port", "State", "Packets C→S / S→C", "Bytes C→S / S→C"),
		negotiated: newRowTable("ID", "Client private data", "Server private data", "C→S inline", "S→C inline", "Remote invalidation"),
		iwarp:      newRowTable(iwarpHeader...),
		rpc:        newRowTable(rpcHeader...),
		v2:         newRowTable(v2Header...),
		health:     newRowTable(healthHeader...),
		tcpHealth:  newRowTable(tcpHealthHeader...),
		findings:   newRowTable("Conn", "Severity", "Rule", "Count", "First finding"),
	}
}

// close removes the tables' temporary files.
func (r *analysisRows) close() {
	for _, t := range []*rowTable{r.conns, r.negotiated, r.iwarp, r.rpc, r.v2, r.health, r.tcpHealth, r.findings} {
		t.close()
	}
	for _, t := range r.ulp {
		t.close()
	}
}

// add takes connection c's rows; fs are its findings.
func (r *analysisRows) add(a *Analysis, c *Connection, fs []Finding) {
	r.conns.add(
		strconv.Itoa(c.ID), c.Transport,
		endpointText(c.Client), endpointText(c.Server),
		optU16(c.ServicePort), stateText(*c),
		fmt.Sprintf("%d / %d", c.Traffic.ClientToServer.Packets, c.Traffic.ServerToClient.Packets),
		fmt.Sprintf("%d / %d", c.Traffic.ClientToServer.Bytes, c.Traffic.ServerToClient.Bytes),
	)
	if len(c.ulpRow) > 0 {
		t := r.ulp[*c.ULP]
		if t == nil {
			if r.ulp == nil {
				r.ulp = map[string]*rowTable{}
			}
			t = newRowTable(append([]string{"ID"}, c.ulpHead...)...)
			r.ulp[*c.ULP] = t
			r.ulpOrder = append(r.ulpOrder, *c.ULP)
		}
		t.add(append([]string{strconv.Itoa(c.ID)}, c.ulpRow...)...)
	}
	switch {
	case c.ULP != nil && !rfc8797ULP(*c.ULP):
		// Another ULP's negotiation is in its own table.
	case notRPCOverRDMA(*c):
		// perftest, rping, NCCL: no RFC 8797 negotiation to show.
		const no = "not RPC-over-RDMA"
		r.negotiated.add(strconv.Itoa(c.ID), no, no, "-", "-", "-")
	default:
		r.negotiated.add(
			strconv.Itoa(c.ID),
			pdText(c.PrivateData.Client), pdText(c.PrivateData.Server),
			thresholdText(c.InlineThreshold, true), thresholdText(c.InlineThreshold, false),
			boolText(c.RemoteInvalidate),
		)
	}
	if row := iwarpRow(c); row != nil {
		r.iwarp.add(row...)
	}
	if row := rpcRow(c); row != nil {
		r.rpc.add(row...)
	}
	if row := v2Row(c); row != nil {
		r.v2.add(row...)
	}
	addHealthRows(r.health, r.tcpHealth, c)
	r.findingRows(a, c, fs)
}

// incompleteText says why a report covers less than the whole input, or "".
func incompleteText(interrupted bool, skipped, packets uint64) string {
	var parts []string
	if interrupted {
		parts = append(parts, fmt.Sprintf("reading was interrupted by a signal after %s; the input was not read to its end", Plural(int(packets), "packet")))
	}
	if skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d damaged records were skipped", skipped))
	}
	return strings.Join(parts, "; ")
}

func endpointText(e Endpoint) string { return string(appendEndpoint(nil, e)) }

// appendEndpoint appends an endpoint: its address and QP, its address and
// port, or its address.
func appendEndpoint(b []byte, e Endpoint) []byte {
	switch {
	case e.QPN != nil:
		b = append(b, e.Address...)
		b = append(b, " QP 0x"...)
		return appendHex(b, uint64(*e.QPN), 6)
	case e.Port != nil:
		return append(b, dissect.HostPort(e.Address, *e.Port)...)
	}
	return append(b, e.Address...)
}

func stateText(c Connection) string { return string(appendState(nil, &c)) }

// appendState appends c's state, its reject reason and what it was told
// by.
func appendState(b []byte, c *Connection) []byte {
	b = append(b, c.State...)
	if c.Reject != "" {
		b = append(b, " ("...)
		b = append(b, c.Reject...)
		b = append(b, ')')
	}
	if c.Idle {
		b = append(b, " (idle)"...)
	}
	if c.RolesGuessed {
		b = append(b, " (roles guessed)"...)
	}
	return b
}

// houseStyle is the house table style: headers as written, no wrapping.
var houseStyle = []tablewriter.Option{tablewriter.WithRowAutoWrap(tw.WrapNone), tablewriter.WithHeaderAutoFormat(tw.Off)}

// newTable is a table of the house style.
func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, houseStyle...)
}

// pdText is one side's private data in a table cell; the reasons for an
// absent or invalid message are in the JSON's "note".
func pdText(p PrivateData) string {
	switch {
	case !p.Seen:
		return "not in capture"
	case !p.Present && p.Offset != nil:
		return fmt.Sprintf("invalid RFC 8797 message at offset %d", *p.Offset)
	case !p.Present:
		return "no RFC 8797 message: defaults"
	}
	var buf [64]byte
	b := append(buf[:0], 'v')
	b = strconv.AppendInt(b, int64(*p.Version), 10)
	if p.RemoteInvalidate {
		b = append(b, " R=1 send "...)
	} else {
		b = append(b, " R=0 send "...)
	}
	b = strconv.AppendInt(b, int64(*p.SendSize), 10)
	b = append(b, " recv "...)
	return string(strconv.AppendInt(b, int64(*p.ReceiveSize), 10))
}

// notRPCOverRDMA: the connection carried no RPC-over-RDMA message and
// neither side's set-up carried an RFC 8797 message, so the RFC 8797
// defaults its columns would show were never in force.
func notRPCOverRDMA(c Connection) bool {
	return c.RPC == nil && !c.PrivateData.Client.Present && !c.PrivateData.Server.Present &&
		(c.PrivateData.Client.Offset == nil && c.PrivateData.Server.Offset == nil)
}

func thresholdText(t *Thresholds, c2s bool) string {
	switch {
	case t == nil:
		return "unknown"
	case c2s:
		return strconv.Itoa(t.ClientToServer)
	}
	return strconv.Itoa(t.ServerToClient)
}

func boolText(b *bool) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return "yes"
	}
	return "no"
}

func optU16(p *uint16) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(int(*p))
}

// ULPTable is what a plug-in's dissect.Connection.ULPData implements to
// have a row in analyze's text output: one table per ULP, after the RFC
// 8797 one, with the connection's ID in front.
type ULPTable interface {
	ULPTableHeader() []string
	ULPTableRow() []string
}

// ULPKey is the JSON key of a ULP's section of a connection: its name with
// '-' as '_' ("nvme-rdma" → "nvme_rdma").
func ULPKey(name string) string { return strings.ReplaceAll(name, "-", "_") }

// connectionJSON is Connection without its methods.
type connectionJSON Connection

// MarshalJSON writes the connection with, after its own keys, the section
// of the ULP that carries it, when its session kept one (a plug-in's own
// type, under ULPKey of its name): analyze's document grows with each
// plug-in without a field of its own here.
func (c Connection) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(connectionJSON(c))
	if err != nil || c.ulpData == nil || c.ULP == nil || len(b) < 2 {
		return b, err
	}
	v, err := marshalNoEscape(c.ulpData)
	if err != nil {
		return nil, err
	}
	key, _ := marshalNoEscape(ULPKey(*c.ULP))
	out := make([]byte, 0, len(b)+len(key)+len(v)+2)
	out = append(out, b[:len(b)-1]...)
	out = append(out, ',')
	out = append(out, key...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, '}'), nil
}

// marshalNoEscape is json.Marshal without HTML escaping, as the document's
// encoder writes (<, > and & as they are).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rfc8797Applies reports whether RFC 8797's negotiation (and its defaults:
// 1024-octet inline thresholds, no remote invalidation, when a peer sends
// no private data) applies to c: it carries RPC-over-RDMA, or no
// registered protocol claimed it and a side's set-up holds the RFC 8797
// Format Identifier. Another protocol's connection (NVMe/RDMA, SMB
// Direct, iSER) or one that is nothing known (rping, perftest) negotiates
// no inline threshold (issue 28: "a default applies only where its
// protocol does").
func rfc8797Applies(c *dissect.Connection) bool {
	if rfc8797ULP(c.ULP) {
		return true
	}
	if c.ULP != "" {
		return false
	}
	for i := range c.PrivateData {
		if pd := &c.PrivateData[i]; pd.Seen && rfc8797.ParseFramed(pd.Bytes, pd.Framing).Offset >= 0 {
			return true
		}
	}
	return false
}

// summary is one side's RFC 8797 private data as the reports show it.
func summary(pd *dissect.PrivateData) rfc8797.Summary {
	return rfc8797.Summarize(pd.Seen, pd.Packet, pd.Bytes, pd.Framing)
}

// thresholds are c's inline thresholds and remote invalidation as RFC 8797
// negotiates them (zero until both sides' set-up was seen).
func thresholds(c *dissect.Connection) rfc8797.Thresholds {
	if !c.Negotiated {
		return rfc8797.Thresholds{}
	}
	cl, sv := &c.PrivateData[0], &c.PrivateData[1]
	return rfc8797.NegotiateFramed(cl.Bytes, cl.Framing, sv.Bytes, sv.Framing)
}
