package html

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/report"
)

// Page is what the template draws. Every string in it may hold capture
// data; the template (html/template) escapes all of them.
type Page struct {
	File        string
	Packets     uint64
	Verdict     Verdict
	Protocols   []KV
	Connections []*ConnView
	Findings    []FindingView
	Rules       []RuleView
	Latency     LatencyChart
	Chunks      ChunkChart
	// Notes say what the page leaves out and why (its bounds).
	Notes  []string
	Errors []string
	// Caveats are the checks' caveats on the whole capture.
	Caveats []string
}

// KV is a label and its value.
type KV struct{ K, V string }

// Verdict is the checks' verdict: FAIL with any error finding (check's
// default --fail-on).
type Verdict struct {
	Pass                     bool
	Errors, Warnings, Infos  int
	NotEvaluated, Passed     int
	ChecksWithFindings       int
	ConnectionsWithFindings  int
	FindingsListed, Omitted  int
	RulesWithFindingsListing string
}

// ConnView is one connection: its negotiation, checks, diagram and chart.
type ConnView struct {
	ID                 int
	Anchor             string
	Transport          string
	Client, Server     string
	Port               string
	State              string
	PrivateClient      string
	PrivateServer      string
	InlineC2S          string
	InlineS2C          string
	RemoteInvalidation string
	InvalidationUsed   string
	MPA                []KV
	CM                 []KV
	RPC                []KV
	TrafficC2S         string
	TrafficS2C         string
	Checks             string
	// Health is the transport-health headline (healthText), "" without
	// transport_health; the counts are the page's data attributes.
	Health                                                   string
	HealthRetxC2S, HealthRetxS2C, HealthNAKs, HealthEpisodes uint64
	Caveats                                                  []string
	// ConnFindings are the findings that name no packet (connection-wide).
	ConnFindings []FindingView
	Ladder       Ladder
	Throughput   ThroughputChart
	Notes        []string
}

// FindingView is a finding in the table and on its diagram.
type FindingView struct {
	Index    int
	Anchor   string // the pin's id on the diagram
	Link     string // where the table links: the pin, or the connection
	Pinned   bool
	Rule     string
	RuleLink string
	Severity string
	Conn     int
	// ConnLink is the connection's section, "" when it has no diagram.
	ConnLink string
	XID      string
	Packets  string
	// AllPackets lists every packet the finding names (Packets the first
	// six).
	AllPackets string
	Message    string
	Reference  string
}

// RuleView explains a rule that found something.
type RuleView struct {
	ID, Anchor, Severity, Reference, Summary, Explanation string
}

// Build makes the page from the Analysis document (report.NewAnalysis
// with AddChecks, as `analyze --format json` writes it) and what the
// collector gathered from the same run.
func Build(a *report.Analysis, c *Collector) *Page {
	p := &Page{File: a.File, Packets: a.Packets, Errors: a.Errors, Caveats: a.CheckCaveats}
	for _, pr := range a.Protocols {
		p.Protocols = append(p.Protocols, KV{pr.Proto, strconv.FormatUint(pr.Packets, 10)})
	}
	p.Verdict = verdict(a)
	p.Findings = make([]FindingView, len(a.Findings))
	byConn := map[int][]int{}
	for i := range a.Findings {
		f := &a.Findings[i]
		p.Findings[i] = findingView(i, f)
		byConn[f.Connection] = append(byConn[f.Connection], i)
	}
	p.Rules = rulesOf(a.Findings)
	for i := range a.Connections {
		ac := &a.Connections[i]
		cd := c.conns[ac.ID]
		if cd == nil {
			continue
		}
		cv := connView(ac)
		p.Connections = append(p.Connections, cv)
		for _, fi := range byConn[ac.ID] {
			if len(a.Findings[fi].Packets) == 0 {
				cv.ConnFindings = append(cv.ConnFindings, p.Findings[fi])
			}
		}
		cv.Ladder, cv.Notes = ladder(ac, cd, a.Findings, byConn[ac.ID], p.Findings, c.opts.MaxDetail)
		cv.Throughput = throughputChart(ac, &cd.tput)
	}
	drawn := map[int]bool{}
	for _, cv := range p.Connections {
		drawn[cv.ID] = true
	}
	for i := range p.Findings {
		f := &p.Findings[i]
		if drawn[f.Conn] {
			f.ConnLink = "#conn-" + strconv.Itoa(f.Conn)
		} else if !f.Pinned {
			// No diagram to link to: the link stays on the table's row.
			f.Link = "#row-" + f.Anchor
		}
	}
	if c.notDrawn || len(p.Connections) < len(a.Connections) {
		p.Notes = append(p.Notes, fmt.Sprintf("%d of %d connections have no diagram: the report draws at most %d (report --max-diagrams); they are in the overview, the charts and the findings.",
			len(a.Connections)-len(p.Connections), len(a.Connections), c.opts.MaxConnections))
	}
	p.Latency = latencyChart(c)
	p.Chunks = chunkChart(c)
	if p.Latency.Sampled {
		p.Notes = append(p.Notes, fmt.Sprintf("Latency distributions and percentiles of procedures with more than %d replies are estimated from a uniform sample of %d.",
			c.opts.LatencySample, c.opts.LatencySample))
	}
	for i := range p.Connections {
		p.Notes = append(p.Notes, p.Connections[i].Notes...)
	}
	return p
}

func verdict(a *report.Analysis) Verdict {
	var v Verdict
	conns := map[int]bool{}
	for _, f := range a.Findings {
		switch f.Severity {
		case check.Error:
			v.Errors++
		case check.Warning:
			v.Warnings++
		default:
			v.Infos++
		}
		conns[f.Connection] = true
	}
	for _, c := range a.Connections {
		for _, ch := range c.Checks {
			switch ch.Status {
			case check.StatusPassed:
				v.Passed++
			case check.StatusNotEvaluated:
				v.NotEvaluated++
			case check.StatusFound:
				v.ChecksWithFindings++
			}
			v.Omitted += ch.Omitted
		}
	}
	v.ConnectionsWithFindings = len(conns)
	v.FindingsListed = len(a.Findings)
	v.Pass = v.Errors == 0
	return v
}

func findingView(i int, f *report.Finding) FindingView {
	fv := FindingView{Index: i, Anchor: "f" + strconv.Itoa(i), Rule: f.Rule, RuleLink: "#rule-" + f.Rule,
		Severity: f.Severity.String(), Conn: f.Connection, Message: f.Message, Reference: f.Reference,
		Link: "#conn-" + strconv.Itoa(f.Connection)}
	if f.XID != nil {
		fv.XID = report.Hex32(*f.XID).String()
	}
	var ps []string
	for _, n := range f.Packets {
		ps = append(ps, strconv.Itoa(n))
	}
	fv.AllPackets = strings.Join(ps, ", ")
	more := f.PacketsOmitted
	if len(ps) > 6 {
		more += len(ps) - 6
		ps = ps[:6]
	}
	fv.Packets = strings.Join(ps, ", ")
	if more > 0 {
		fv.Packets += fmt.Sprintf(" (+%d more)", more)
	}
	return fv
}

func rulesOf(fs []report.Finding) []RuleView {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	sort.Strings(ids)
	var out []RuleView
	for _, id := range ids {
		rv := RuleView{ID: id, Anchor: "rule-" + id}
		if r, ok := check.Lookup(id); ok {
			rv.Severity, rv.Reference, rv.Summary, rv.Explanation = r.Severity.String(), r.Reference, r.Summary, r.Explanation
		}
		out = append(out, rv)
	}
	return out
}

func endpointText(e report.Endpoint) string {
	switch {
	case e.QPN != nil:
		return fmt.Sprintf("%s QP 0x%06x", e.Address, *e.QPN)
	case e.Port != nil:
		return fmt.Sprintf("%s:%d", e.Address, *e.Port)
	}
	return e.Address
}

func pdText(p report.PrivateData) string {
	switch {
	case !p.Seen:
		return "set-up not in capture"
	case !p.Present && p.Offset != nil:
		return fmt.Sprintf("invalid RFC 8797 message at offset %d", *p.Offset)
	case !p.Present:
		return "no RFC 8797 message (defaults: 1024 B, R=0)"
	}
	r := "R=0"
	if p.RemoteInvalidate {
		r = "R=1"
	}
	s := fmt.Sprintf("RFC 8797 v%d %s send %d B recv %d B", *p.Version, r, *p.SendSize, *p.ReceiveSize)
	if p.Packet > 0 {
		s += fmt.Sprintf(" (packet %d)", p.Packet)
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func connView(c *report.Connection) *ConnView {
	cv := &ConnView{ID: c.ID, Anchor: "conn-" + strconv.Itoa(c.ID), Transport: c.Transport,
		Client: endpointText(c.Client), Server: endpointText(c.Server), State: c.State, Port: "-",
		PrivateClient: pdText(c.PrivateData.Client), PrivateServer: pdText(c.PrivateData.Server),
		InlineC2S: "unknown (set-up not in capture)", InlineS2C: "unknown (set-up not in capture)",
		RemoteInvalidation: "unknown (set-up not in capture)", Caveats: c.CheckCaveats,
		TrafficC2S: fmt.Sprintf("%d packets, %d bytes", c.Traffic.ClientToServer.Packets, c.Traffic.ClientToServer.Bytes),
		TrafficS2C: fmt.Sprintf("%d packets, %d bytes", c.Traffic.ServerToClient.Packets, c.Traffic.ServerToClient.Bytes),
	}
	if h := c.TransportHealth; h != nil {
		cv.Health = healthText(h)
		cv.HealthRetxC2S, cv.HealthRetxS2C = h.ClientToServer.RetransmittedPackets, h.ServerToClient.RetransmittedPackets
		cv.HealthNAKs, cv.HealthEpisodes = naks(h), h.ClientToServer.Episodes+h.ServerToClient.Episodes
	}
	if c.Reject != "" {
		cv.State += " (" + c.Reject + ")"
	}
	if c.Idle {
		cv.State += " (idle)"
	}
	if c.ServicePort != nil {
		cv.Port = strconv.Itoa(int(*c.ServicePort))
	}
	if c.ServiceID != "" {
		cv.CM = append(cv.CM, KV{"Service ID", c.ServiceID})
	}
	cv.CM = append(cv.CM, KV{"Packets", fmt.Sprintf("%d to %d", c.FirstPacket, c.LastPacket)})
	if t := c.InlineThreshold; t != nil {
		cv.InlineC2S, cv.InlineS2C = strconv.Itoa(t.ClientToServer)+" B", strconv.Itoa(t.ServerToClient)+" B"
	}
	if c.RemoteInvalidate != nil {
		cv.RemoteInvalidation = yesNo(*c.RemoteInvalidate)
	}
	if u := c.RemoteInvalidation; u != nil {
		cv.InvalidationUsed = fmt.Sprintf("%d of %d Replies", u.RepliesWithInvalidate, u.Replies)
	}
	if iw := c.IWARP; iw != nil {
		cv.MPA = mpaKV(iw)
	}
	if r := c.RPC; r != nil {
		cv.RPC = []KV{
			{"RPC-over-RDMA version", strconv.FormatUint(uint64(r.Version), 10)},
			{"Calls (forward / backchannel)", fmt.Sprintf("%d / %d", r.Calls.Forward, r.Calls.Backchannel)},
			{"Replies (forward / backchannel)", fmt.Sprintf("%d / %d", r.Replies.Forward, r.Replies.Backchannel)},
			{"Credits requested / granted (max)", fmt.Sprintf("%d / %d", r.Credits.MaxRequested.ClientToServer, r.Credits.MaxGranted.ServerToClient)},
			{"RDMA Read bytes C→S / S→C", fmt.Sprintf("%d / %d", r.Bytes.RDMARead.ClientToServer, r.Bytes.RDMARead.ServerToClient)},
			{"RDMA Write bytes C→S / S→C", fmt.Sprintf("%d / %d", r.Bytes.RDMAWrite.ClientToServer, r.Bytes.RDMAWrite.ServerToClient)},
			{"Problems", r.Problems()},
		}
	}
	passed, found, ne := check.Tally(c.Checks)
	cv.Checks = fmt.Sprintf("%d passed, %d with findings, %d not evaluated", passed, found, ne)
	return cv
}

func mpaKV(iw *report.IWARPConnection) []KV {
	opt := func(p *int) string {
		if p == nil {
			return "-"
		}
		return strconv.Itoa(*p)
	}
	db := func(d *report.DirBool) string {
		if d == nil {
			return "not negotiated in capture"
		}
		return yesNo(d.ClientToServer) + " / " + yesNo(d.ServerToClient)
	}
	io := func(x *report.IRDORD) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%d / %d", x.IRD, x.ORD)
	}
	return []KV{
		{"MPA revision C / S", opt(iw.Revision.Client) + " / " + opt(iw.Revision.Server)},
		{"Markers C→S / S→C", db(iw.Markers)},
		{"CRC32c C→S / S→C", db(iw.CRC)},
		{"IRD/ORD client", io(iw.IRDORD.Client)},
		{"IRD/ORD server", io(iw.IRDORD.Server)},
		{"FPDUs C→S / S→C", fmt.Sprintf("%d / %d", iw.FPDUs.ClientToServer, iw.FPDUs.ServerToClient)},
		{"CRC errors C→S / S→C", fmt.Sprintf("%d / %d", iw.CRCErrors.ClientToServer, iw.CRCErrors.ServerToClient)},
	}
}
