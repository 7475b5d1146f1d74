package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/fields"
)

// findingPreview caps a finding's message in analyze's connection blocks
// (display columns): the first finding of each rule is a preview, `check`
// prints them whole.
const findingPreview = 160

// WriteText writes the analysis for a terminal of lay's width: the
// summary first (packets, connections, findings by severity, protocols,
// the capture-wide counters), then one block per connection, every line
// within the width (docs/terminal.md). With lay.Wide it writes
// WriteTable's tables, every column of every connection side by side.
func (a *Analysis) WriteText(w io.Writer, lay Layout) error {
	if lay.Wide {
		return a.WriteTable(w)
	}
	width := lay.width()
	// The blocks are written after the summary, which counts what they
	// hold: they wait in a table that goes to a temporary file past its
	// limit, as analyze's tables do (table_stream.go).
	blocks := newRowTable("block")
	defer blocks.close()
	sev := map[check.Severity]int{}
	rules := ruleFindings{}
	nconn := 0
	anyChecks := false
	if err := a.eachConn(func(c *Connection, fs []Finding) error {
		nconn++
		anyChecks = anyChecks || len(c.Checks) > 0
		for i := range fs {
			sev[fs[i].Severity]++
		}
		var b strings.Builder
		connBlock(&b, a, c, fs, rules, lay)
		blocks.add(b.String())
		return nil
	}); err != nil {
		return err
	}
	var none []Finding // findings of no connection: first in Findings
	for i := range a.Findings {
		if a.Findings[i].Connection != 0 {
			break
		}
		none = a.Findings[: i+1 : i+1]
		sev[a.Findings[i].Severity]++
	}

	ww := NewWrapWriter(w, width)
	ww.Indent = 2
	fmt.Fprintf(ww, "%s: %s, %s", fields.Escape(a.File), Plural(int(a.Packets), "packet"), Plural(nconn, "connection"))
	if n := len(a.UDFlows); n > 0 {
		fmt.Fprintf(ww, ", %d UD flows", n)
	}
	fmt.Fprintln(ww)
	if anyChecks || len(none) > 0 {
		fmt.Fprintf(ww, "Findings: %s, %s, %d info",
			paintCount(lay.Color, sev[check.Error], "error"), paintCount(lay.Color, sev[check.Warning], "warning"), sev[check.Info])
		if sev[check.Error]+sev[check.Warning]+sev[check.Info] > 0 {
			fmt.Fprint(ww, " (rdmashark check lists every one; rdmashark rules ID explains a rule)")
		}
		fmt.Fprintln(ww)
	}
	var sb strings.Builder
	items := make([]string, 0, len(a.Protocols))
	for _, p := range a.Protocols {
		items = append(items, p.Proto+" "+strconv.FormatUint(p.Packets, 10))
	}
	if len(items) > 0 {
		wrapItems(&sb, "", "Protocols: ", items, ", ", width, 2)
		io.WriteString(ww, sb.String())
	}
	a.writeCaptureLines(ww)
	for _, note := range a.CheckCaveats {
		fmt.Fprintf(ww, "caveat on every connection's checks: %s\n", note)
	}
	for _, f := range none {
		fmt.Fprintf(ww, "  %s %s: %s\n", paintSeverity(lay.Color, f.Severity.String()), f.Rule, preview(where(&f)+f.Message))
	}
	if err := blocks.each(false, func(cells []string) error {
		fmt.Fprintln(ww)
		_, err := io.WriteString(ww, cells[0])
		return err
	}); err != nil {
		return err
	}
	if len(a.UDFlows) > 0 {
		fmt.Fprintln(ww, "\nUD flows (no connection; IBA 9.8):")
		for _, f := range a.UDFlows {
			fmt.Fprintf(ww, "  0x%06x %s → %s QP 0x%06x\n", f.SourceQPN, f.Source, f.Destination, f.DestQPN)
			sb.Reset()
			wrapItems(&sb, "    ", "", []string{
				"Q_Keys " + strings.Join(f.QKeys, " "),
				Plural(int(f.Health.Packets), "packet"),
				strconv.FormatUint(f.Health.Bytes, 10) + " bytes",
				fmt.Sprintf("PSN gaps %d (%d missing)", f.Health.PSNGaps, f.Health.PSNsMissing),
				fmt.Sprintf("out of order %d", f.Health.OutOfOrderPackets),
				fmt.Sprintf("CE %d", f.Health.ECNCEPackets),
			}, ", ", width, 6)
			io.WriteString(ww, sb.String())
		}
	}
	return ww.Flush()
}

// writeCaptureLines writes the lines about the whole capture that follow
// the protocol counts (as WriteTable writes them after its tables).
func (a *Analysis) writeCaptureLines(w io.Writer) {
	if a.ICRC.Good+a.ICRC.Bad+a.ICRC.Truncated > 0 {
		fmt.Fprintf(w, "ICRC: %d good, %d bad, %d not verifiable (truncated)\n", a.ICRC.Good, a.ICRC.Bad, a.ICRC.Truncated)
	}
	if a.ConnectionsDropped > 0 {
		atLeast := ""
		if a.ConnectionsDroppedAtLeast {
			atLeast = "at least "
		}
		fmt.Fprintf(w, "%s%d connections not tracked (%d packets): connection table full\n", atLeast, a.ConnectionsDropped, a.PacketsNotTracked)
	}
	if a.ConnectionsForgotten > 0 {
		fmt.Fprintf(w, "%d closed connections not listed: connection table full\n", a.ConnectionsForgotten)
	}
	writePFCLine(w, a.PFC)
	writeEngineLines(w, a.Engine)
	for _, e := range a.Errors {
		fmt.Fprintf(w, "reading stopped early: %s\n", fields.Escape(e))
	}
	if line := incompleteText(a.Interrupted, a.SkippedRecords, a.Packets); line != "" {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", line)
	}
}

// connBlock writes connection c's block: what it is and its endpoints,
// its traffic, then one line (wrapped) per section that WriteTable has a
// table for, then its findings, one line per rule.
func connBlock(b *strings.Builder, a *Analysis, c *Connection, fs []Finding, rules ruleFindings, lay Layout) {
	width := lay.width()
	fmt.Fprintf(b, "Connection %d: %s", c.ID, c.Transport)
	if c.ULP != nil {
		b.WriteString(", " + *c.ULP)
	}
	b.WriteString(", " + stateText(*c) + "\n")
	fmt.Fprintf(b, "  %s → %s", endpointText(c.Client), endpointText(c.Server))
	if c.ServicePort != nil {
		fmt.Fprintf(b, ", port %d", *c.ServicePort)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "  packets %d C→S, %d S→C; bytes %d C→S, %d S→C\n",
		c.Traffic.ClientToServer.Packets, c.Traffic.ServerToClient.Packets,
		c.Traffic.ClientToServer.Bytes, c.Traffic.ServerToClient.Bytes)
	section := func(title string, header, row []string) {
		items := make([]string, 0, len(row))
		for i, v := range row {
			items = append(items, header[i]+" "+v)
		}
		wrapItems(b, "  ", title+": ", items, "; ", width, 4)
	}
	if row := v2Row(c); row != nil {
		// Version 2: RFC 8797's private data says nothing of its
		// thresholds (its Transport Properties do) nor of remote
		// invalidation (solicited per Call).
		section("RFC 8797", []string{"client", "server"}, []string{pdText(c.PrivateData.Client), pdText(c.PrivateData.Server)})
		section("RPC-over-RDMA v2 inline thresholds", []string{"C→S", "S→C", "from", "client", "server"}, row[1:])
	} else if (c.ULP == nil || rfc8797ULP(*c.ULP)) && !notRPCOverRDMA(*c) {
		section("RFC 8797", []string{"client", "server", "inline C→S", "S→C", "remote invalidation"}, []string{
			pdText(c.PrivateData.Client), pdText(c.PrivateData.Server),
			thresholdText(c.InlineThreshold, true), thresholdText(c.InlineThreshold, false),
			boolText(c.RemoteInvalidate)})
	}
	if len(c.ulpRow) > 0 {
		section(*c.ULP, c.ulpHead, c.ulpRow)
	}
	if row := iwarpRow(c); row != nil {
		section("MPA (C→S / S→C)", iwarpHeader[1:], row[1:])
	}
	if row := rpcRow(c); row != nil {
		section("RPC-over-RDMA (C→S / S→C)", rpcHeader[1:], row[1:])
	}
	health, tcpHealth := newRowTable(healthHeader...), newRowTable(tcpHealthHeader...)
	addHealthRows(health, tcpHealth, c)
	for _, t := range []*rowTable{health, tcpHealth} {
		_ = t.each(false, func(cells []string) error {
			row := slices.Clone(cells[2:])
			if lay.Color && !strings.HasPrefix(row[1], "0 ") {
				row[1] = paint(true, colorYellow, row[1]) // retransmissions
			}
			header := t.header[2:]
			if t == health {
				header = healthLabels
			}
			section("health "+cells[1], header, row)
			return nil
		})
		t.close()
	}
	rules.reset(fs)
	for _, ch := range c.Checks {
		if ch.Findings == 0 {
			continue
		}
		first := ""
		if is := rules.of(ch.Rule); len(is) > 0 {
			f := &fs[is[0]]
			first = ": " + preview(where(f)+f.Message)
		}
		fmt.Fprintf(b, "  %s %s ×%d%s\n", paintSeverity(lay.Color, ch.Worst.String()), ch.Rule, ch.Findings, first)
	}
	if len(c.Checks) > 0 {
		passed, found, notEval := check.Tally(c.Checks)
		fmt.Fprintf(b, "  checks: %d passed, %d found something, %d not evaluated", passed, found, notEval)
		if u := c.RemoteInvalidation; u != nil {
			fmt.Fprintf(b, "; %d of %d Replies With Invalidate", u.RepliesWithInvalidate, u.Replies)
		}
		b.WriteString("\n")
		for _, note := range c.CheckCaveats {
			if !slices.Contains(a.CheckCaveats, note) {
				fmt.Fprintf(b, "  caveat: %s\n", note)
			}
		}
	}
	if g := gapEffectsText(c.GapsAffect); g != "" {
		fmt.Fprintf(b, "  %s\n", g)
	}
}

// healthLabels name the transport health's figures in a connection's
// block, shorter than healthHeader's (the same figures, in its order).
var healthLabels = []string{"packets", "retrans. (bytes)", "episodes", "NAKs", "dup / OOO",
	"PSNs missing (filled / lost by capture / unknown)", "ACK latency p50/p99/max", "Read latency", "CE / CNP"}

// preview cuts a finding's text to findingPreview columns.
func preview(s string) string {
	if TextWidth(s) <= findingPreview {
		return s
	}
	return s[:fitPrefix([]byte(s), findingPreview-1)] + "…"
}

// paintCount is "N noun(s)", in the noun's severity colour when N > 0.
func paintCount(on bool, n int, noun string) string {
	s := Plural(n, noun)
	if n == 0 {
		return s
	}
	return paint(on, severityColor(noun), s)
}
