package html

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/report"
)

// Page is what the template draws. Every string in it may hold capture
// data; the template (html/template) escapes all of them.
//
// The page is written as it is drawn (Write): each connection's diagram
// is built just before the template writes it and let go after
// (Sections), the findings are listed as the document's walk reads them
// (Findings), the overview's table lists every connection as the walk
// reads it (Overview), so that what is in memory at once is the summary
// of the connections that get a diagram and one diagram, not every
// diagram, row and finding: with report.ConnSpill the connections released
// during the read come back from its temporary file one at a time.
type Page struct {
	File      string
	Packets   uint64
	Verdict   Verdict
	Protocols []KV
	// Connections are those that get a diagram, in ID order: without
	// their diagram, chart and findings, which Sections adds as it writes
	// each.
	Connections []*ConnView
	// NumConnections is how many connections the document has; Undrawn
	// how many of them get no diagram (--max-diagrams). The overview's
	// table lists them all (Overview).
	NumConnections, Undrawn int
	// NumFindings is how many findings the table lists (Findings).
	NumFindings int
	Rules       []RuleView
	Latency     LatencyChart
	Chunks      ChunkChart
	// ULPs are the tables of the upper-layer protocols other than
	// RPC-over-RDMA (report.ULPTable: NVMe/RDMA's queues with their
	// controllers, iSER's and SMB Direct's connections), one per ULP in
	// the order the capture shows them first.
	ULPs []ULPView
	// Notes say what the page leaves out and why (its bounds).
	Notes  []string
	Errors []string
	// Caveats are the checks' caveats on the whole capture.
	Caveats []string

	a *report.Analysis
	c *Collector
	// drawn are the IDs of Connections; firstFinding gives, for those with
	// findings, the index of their first in the table.
	drawn        map[int]bool
	firstFinding map[int]int
	// links are where the table links the findings Sections pinned to an
	// arrow (by index), filled as it writes the diagrams.
	links map[int]string
	// err is the first error of a walk of the document (a connection not
	// read back from the spill's file); Write returns it.
	err error
}

// ULPView is one ULP's table: a row per connection (its ID first), at
// most MaxULPRows; Omitted counts those left out.
type ULPView struct {
	Name    string
	Anchor  string
	Head    []string
	Rows    []ULPRow
	Omitted int
}

// ULPRow is one connection's row of a ULPView.
type ULPRow struct {
	Conn  int
	Link  string // its section, "" without a diagram
	Cells []string
}

// MaxULPRows bounds the rows of one ULP's table on the page.
const MaxULPRows = 1000

// addULP adds c's row to the table of its ULP.
func (p *Page) addULP(c *report.Connection) { addULP(&p.ULPs, c, p.drawn[c.ID]) }

// addULP adds c's row to the table of its ULP in *ulps; drawn: c has a
// section to link to.
func addULP(ulps *[]ULPView, c *report.Connection, drawn bool) {
	head, row := c.ULPTable()
	if c.ULP == nil || len(row) == 0 {
		return
	}
	var v *ULPView
	for i := range *ulps {
		if (*ulps)[i].Name == *c.ULP {
			v = &(*ulps)[i]
		}
	}
	if v == nil {
		*ulps = append(*ulps, ULPView{Name: *c.ULP, Anchor: "ulp-" + *c.ULP, Head: head})
		v = &(*ulps)[len(*ulps)-1]
	}
	if len(v.Rows) >= MaxULPRows {
		v.Omitted++
		return
	}
	r := ULPRow{Conn: c.ID, Cells: row}
	if drawn {
		r.Link = "#conn-" + strconv.Itoa(c.ID)
	}
	v.Rows = append(v.Rows, r)
}

// KV is a label and its value.
type KV struct{ K, V string }

// Verdict is the checks' verdict: FAIL with any error finding (check's
// default --fail-on).
type Verdict struct {
	// Pass and Status are check's verdict on the capture (SetCheck):
	// "PASS", "FAIL", or "NOTHING TO JUDGE" (check's exit status 3, Pass
	// false); Reason says why when it is not PASS. Without SetCheck,
	// FAIL with any error finding.
	Pass                     bool
	Status, Reason           string
	Errors, Warnings, Infos  int
	NotEvaluated, Passed     int
	ChecksWithFindings       int
	ConnectionsWithFindings  int
	FindingsListed, Omitted  int
	RulesWithFindingsListing string
}

// ConnView is one connection: its negotiation, checks, diagram and chart.
type ConnView struct {
	ID int
	// Anchor is the id of the connection's section; Drawn is unset for a
	// connection without one (a row of the overview only), and Anchor
	// then names nothing on the page.
	Anchor             string
	Drawn              bool
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
	// ULPName and ULP are the connection's row of its ULP's table
	// (report.Connection.ULPTable), column by column; none for
	// RPC-over-RDMA, whose figures are RPC.
	ULPName    string
	ULP        []KV
	Ladder     Ladder
	Throughput ThroughputChart
	Notes      []string
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

// Build makes the page from the Analysis document (report.NewAnalysis or
// report.ConnSpill.Analysis, with AddChecks, as `analyze --format json`
// writes it) and what the collector gathered from the same run. It walks
// the document once for what the page says before its diagrams (the
// verdict, the connections drawn, the notes, the rules); Write walks it
// again for the overview's rows (when some connections get no diagram),
// the diagrams and the findings, so the document must stay open until the
// page is written. The error is a connection that could not be
// read back from the spill.
func Build(a *report.Analysis, c *Collector) (*Page, error) {
	p := &Page{File: a.File, Packets: a.Packets, Errors: a.Errors, Caveats: a.CheckCaveats,
		a: a, c: c, drawn: map[int]bool{}, firstFinding: map[int]int{}, links: map[int]string{}}
	for _, pr := range a.Protocols {
		p.Protocols = append(p.Protocols, KV{pr.Proto, strconv.FormatUint(pr.Packets, 10)})
	}
	v := &p.Verdict
	total := 0
	var connNotes []string
	withFindings := map[int]bool{}
	rules := map[string]bool{}
	// One walk for both (one read of the spill's file): each connection
	// comes before its findings, so that drawn says whether it has a
	// diagram when they come.
	err := a.EachConnectionAndFinding(func(ac *report.Connection, _ []report.Finding) error {
		total++
		for _, ch := range ac.Checks {
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
		cd := c.conns[ac.ID]
		if cd == nil {
			p.addULP(ac)
			return nil
		}
		cv := connView(ac)
		cv.Drawn = true
		p.Connections = append(p.Connections, cv)
		p.drawn[ac.ID] = true
		connNotes = append(connNotes, ladderNotes(ac, cd, c.opts.MaxDetail)...)
		p.addULP(ac)
		return nil
	}, func(f *report.Finding) error {
		switch f.Severity {
		case check.Error:
			v.Errors++
		case check.Warning:
			v.Warnings++
		default:
			v.Infos++
		}
		withFindings[f.Connection] = true
		rules[f.Rule] = true
		if _, ok := p.firstFinding[f.Connection]; !ok && p.drawn[f.Connection] {
			p.firstFinding[f.Connection] = p.NumFindings
		}
		p.NumFindings++
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.ConnectionsWithFindings = len(withFindings)
	v.FindingsListed = p.NumFindings
	v.Pass = v.Errors == 0
	v.Status = "PASS"
	if !v.Pass {
		v.Status, v.Reason = "FAIL", fmt.Sprintf("%d error findings", v.Errors)
	}
	p.Rules = rulesOf(rules)
	p.NumConnections, p.Undrawn = total, total-len(p.Connections)
	if c.notDrawn || len(p.Connections) < total {
		p.Notes = append(p.Notes, fmt.Sprintf("%d of %d connections have no diagram: the report draws at most %d (report --max-diagrams); they are in the overview, the charts and the findings.",
			total-len(p.Connections), total, c.opts.MaxConnections))
	}
	p.Latency = latencyChart(c)
	p.Chunks = chunkChart(c)
	if p.Latency.Sampled {
		p.Notes = append(p.Notes, fmt.Sprintf("Latency distributions and percentiles of procedures with more than %d replies are estimated from a uniform sample of %d.",
			c.opts.LatencySample, c.opts.LatencySample))
	}
	p.Notes = append(p.Notes, connNotes...)
	return p, nil
}

// errStop ends a walk of the document when the template stops ranging,
// or when what it reads for is done.
var errStop = errors.New("stop")

// Overview yields every connection of the document in ID order for the
// overview's table, Drawn set on those with a diagram: the connections
// that get one as Build made them, the others as the document's walk reads
// them back (one at a time; the ConnView must not be kept). When every
// connection gets a diagram these are Connections, and the document is
// not read.
func (p *Page) Overview() iter.Seq[*ConnView] {
	return func(yield func(*ConnView) bool) {
		if p.Undrawn == 0 {
			for _, cv := range p.Connections {
				if !yield(cv) {
					return
				}
			}
			return
		}
		k := 0
		err := p.a.EachConnection(func(ac *report.Connection, _ []report.Finding) error {
			var cv *ConnView
			if k < len(p.Connections) && p.Connections[k].ID == ac.ID {
				cv = p.Connections[k]
				k++
			} else {
				cv = connView(ac)
			}
			if !yield(cv) {
				return errStop
			}
			return nil
		})
		p.fail(err)
	}
}

// Sections yields the connections that get a diagram, in ID order, each
// with its diagram, throughput chart and connection-wide findings built
// for the template to write, and let go when it asks for the next one
// (the ConnView must not be kept). It records where the findings table
// links the findings it pinned, so Findings must come after it.
func (p *Page) Sections() iter.Seq[*ConnView] {
	return func(yield func(*ConnView) bool) {
		if len(p.Connections) == 0 {
			return
		}
		k := 0
		var views []FindingView
		var mine []int
		err := p.a.EachConnection(func(ac *report.Connection, fs []report.Finding) error {
			if k >= len(p.Connections) || p.Connections[k].ID != ac.ID {
				return nil
			}
			cv := p.Connections[k]
			k++
			cd := p.c.conns[ac.ID]
			base := p.firstFinding[ac.ID]
			views, mine = views[:0], mine[:0]
			for i := range fs {
				views = append(views, findingView(base+i, &fs[i]))
				mine = append(mine, i)
				if len(fs[i].Packets) == 0 {
					cv.ConnFindings = append(cv.ConnFindings, views[i])
				}
			}
			var err error
			if cv.Ladder, err = ladder(ac, cd, fs, mine, views); err != nil {
				return err
			}
			cv.Throughput = throughputChart(ac, &cd.tput)
			for i := range views {
				if views[i].Pinned {
					p.links[base+i] = views[i].Link
				}
			}
			more := yield(cv)
			cv.ConnFindings, cv.Ladder, cv.Throughput = nil, Ladder{}, ThroughputChart{}
			if !more || k == len(p.Connections) {
				// The last diagram is written: the connections after it
				// need not be read back.
				return errStop
			}
			return nil
		})
		p.fail(err)
	}
}

// Findings yields every finding of the document in its order, linked to
// its pin on a diagram, its connection's section, or (a connection
// without a diagram) its own row. The FindingView must not be kept.
func (p *Page) Findings() iter.Seq[*FindingView] {
	return func(yield func(*FindingView) bool) {
		i := 0
		err := p.a.EachFinding(func(f *report.Finding) error {
			fv := findingView(i, f)
			if p.drawn[f.Connection] {
				fv.ConnLink = "#conn-" + strconv.Itoa(f.Connection)
				if l, ok := p.links[i]; ok {
					fv.Pinned, fv.Link = true, l
				}
			} else {
				// No diagram to link to: the link stays on the table's row.
				fv.Link = "#row-" + fv.Anchor
			}
			i++
			if !yield(&fv) {
				return errStop
			}
			return nil
		})
		p.fail(err)
	}
}

func (p *Page) fail(err error) {
	if err != nil && err != errStop && p.err == nil {
		p.err = err
	}
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

// rulesOf explains the rules that found something, in the order of their
// IDs.
func rulesOf(found map[string]bool) []RuleView {
	ids := slices.Sorted(maps.Keys(found))
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
		return dissect.HostPort(e.Address, *e.Port)
	}
	return e.Address
}

func pdText(p report.PrivateData, rpc bool) string {
	switch {
	case !p.Seen:
		return "set-up not in capture"
	case !p.Present && p.Offset != nil:
		return fmt.Sprintf("invalid RFC 8797 message at offset %d", *p.Offset)
	case !p.Present && rpc:
		return "no RFC 8797 message (defaults: 1024 B, R=0)"
	case !p.Present:
		// RFC 8797's defaults are RPC-over-RDMA's only.
		return "no RFC 8797 message"
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
		PrivateClient: pdText(c.PrivateData.Client, c.RPCOverRDMA), PrivateServer: pdText(c.PrivateData.Server, c.RPCOverRDMA),
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
	} else if !c.RPCOverRDMA {
		// RFC 8797's thresholds and their defaults are RPC-over-RDMA's.
		na := "n/a (not RPC-over-RDMA)"
		if c.ULP != nil {
			na = "n/a (" + *c.ULP + ")"
		}
		cv.InlineC2S, cv.InlineS2C, cv.RemoteInvalidation = na, na, na
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
	if head, row := c.ULPTable(); c.ULP != nil && len(row) > 0 {
		cv.ULPName = *c.ULP
		for i, h := range head {
			if i < len(row) {
				cv.ULP = append(cv.ULP, KV{h, row[i]})
			}
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

// SetCheck makes the page's verdict check's on the same capture (its
// default --fail-on error and gate): failed, and nothing is when the
// capture gave the gate nothing to judge (check exits 3), with check's
// reason.
func (p *Page) SetCheck(failed, nothing bool, reason string) {
	v := &p.Verdict
	switch {
	case nothing:
		v.Pass, v.Status, v.Reason = false, "NOTHING TO JUDGE", reason
	case failed:
		v.Pass, v.Status = false, "FAIL"
		if reason != "" {
			v.Reason = reason
		}
	default:
		v.Pass, v.Status, v.Reason = true, "PASS", ""
	}
}
