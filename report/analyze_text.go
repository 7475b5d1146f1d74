package report

import (
	"bufio"
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
	// The lines go out in large writes rather than one each (w is often
	// standard output, unbuffered): nothing is written before the
	// connections are all read anyway.
	out := bufio.NewWriterSize(w, 64<<10)
	err := a.writeText(out, lay)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// writeText is WriteText's text layout.
func (a *Analysis) writeText(w io.Writer, lay Layout) error {
	width := lay.width()
	// The blocks are written after the summary, which counts what they
	// hold: they wait in a table that goes to a temporary file past its
	// limit, as analyze's tables do (table_stream.go).
	blocks := newRowTable("block")
	defer blocks.close()
	sev := map[check.Severity]int{}
	bw := blockWriter{width: width, color: lay.Color, rules: ruleFindings{}}
	nconn := 0
	anyChecks := false
	if err := a.eachConn(func(c *Connection, fs []Finding) error {
		nconn++
		anyChecks = anyChecks || len(c.Checks) > 0
		for i := range fs {
			sev[fs[i].Severity]++
		}
		blocks.addText(bw.block(a, c, fs))
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
	if len(a.Protocols) > 0 {
		names := make([]string, len(a.Protocols))
		counts := make([]string, len(a.Protocols))
		for i, p := range a.Protocols {
			names[i], counts[i] = p.Proto, strconv.FormatUint(p.Packets, 10)
		}
		ww.Write(appendItems([]byte("Protocols: "), 0, names, counts, ", ", width, 2))
	}
	a.writeCaptureLines(ww)
	for _, note := range a.CheckCaveats {
		fmt.Fprintf(ww, "caveat on every connection's checks: %s\n", note)
	}
	for i := range none {
		b := append(bw.b[:0], "  "...)
		b = appendFinding(b, lay.Color, none[i].Severity.String(), none[i].Rule, 0, &none[i])
		bw.b = append(b, '\n')
		ww.Write(bw.b)
	}
	if err := blocks.each(false, func(cells []string) error {
		fmt.Fprintln(ww)
		_, err := ww.WriteString(cells[0])
		return err
	}); err != nil {
		return err
	}
	if len(a.UDFlows) > 0 {
		fmt.Fprintln(ww, "\nUD flows (no connection; IBA 9.8):")
		for _, f := range a.UDFlows {
			fmt.Fprintf(ww, "  0x%06x %s → %s QP 0x%06x\n", f.SourceQPN, f.Source, f.Destination, f.DestQPN)
			ww.Write(appendItems([]byte("    "), 0, nil, []string{
				"Q_Keys " + strings.Join(f.QKeys, " "),
				Plural(int(f.Health.Packets), "packet"),
				strconv.FormatUint(f.Health.Bytes, 10) + " bytes",
				fmt.Sprintf("PSN gaps %d (%d missing)", f.Health.PSNGaps, f.Health.PSNsMissing),
				fmt.Sprintf("out of order %d", f.Health.OutOfOrderPackets),
				fmt.Sprintf("CE %d", f.Health.ECNCEPackets),
			}, ", ", width, 6))
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

// blockWriter writes the connections' blocks, its buffers kept from one
// connection to the next.
type blockWriter struct {
	width int
	color bool
	b     []byte // the block
	tcp   []byte // its iWARP health sections, which come after the others
	rules ruleFindings
}

// block returns connection c's block: what it is and its endpoints, its
// traffic, then one line (wrapped) per section that WriteTable has a
// table for, then its findings, one line per rule. It holds the block
// until the next call.
func (w *blockWriter) block(a *Analysis, c *Connection, fs []Finding) []byte {
	b := append(w.b[:0], "Connection "...)
	b = strconv.AppendInt(b, int64(c.ID), 10)
	b = append(b, ": "...)
	b = append(b, c.Transport...)
	if c.ULP != nil {
		b = append(b, ", "...)
		b = append(b, *c.ULP...)
	}
	b = append(b, ", "...)
	b = appendState(b, c)
	b = append(b, "\n  "...)
	b = appendEndpoint(b, c.Client)
	b = append(b, " → "...)
	b = appendEndpoint(b, c.Server)
	if c.ServicePort != nil {
		b = append(b, ", port "...)
		b = strconv.AppendUint(b, uint64(*c.ServicePort), 10)
	}
	t := &c.Traffic
	b = append(b, "\n  packets "...)
	b = strconv.AppendUint(b, t.ClientToServer.Packets, 10)
	b = append(b, " C→S, "...)
	b = strconv.AppendUint(b, t.ServerToClient.Packets, 10)
	b = append(b, " S→C; bytes "...)
	b = strconv.AppendUint(b, t.ClientToServer.Bytes, 10)
	b = append(b, " C→S, "...)
	b = strconv.AppendUint(b, t.ServerToClient.Bytes, 10)
	b = append(b, " S→C\n"...)
	if row := v2Row(c); row != nil {
		// Version 2: RFC 8797's private data says nothing of its
		// thresholds (its Transport Properties do) nor of remote
		// invalidation (solicited per Call).
		b = w.section(b, []string{"client", "server"}, []string{pdText(c.PrivateData.Client), pdText(c.PrivateData.Server)}, "RFC 8797")
		b = w.section(b, []string{"C→S", "S→C", "from", "client", "server"}, row[1:], "RPC-over-RDMA v2 inline thresholds")
	} else if (c.ULP == nil || rfc8797ULP(*c.ULP)) && !notRPCOverRDMA(*c) {
		b = w.section(b, []string{"client", "server", "inline C→S", "S→C", "remote invalidation"}, []string{
			pdText(c.PrivateData.Client), pdText(c.PrivateData.Server),
			thresholdText(c.InlineThreshold, true), thresholdText(c.InlineThreshold, false),
			boolText(c.RemoteInvalidate)}, "RFC 8797")
	}
	if len(c.ulpRow) > 0 {
		b = w.section(b, c.ulpHead, c.ulpRow, *c.ULP)
	}
	if row := iwarpRow(c); row != nil {
		b = w.section(b, iwarpHeader[1:], row[1:], "MPA (C→S / S→C)")
	}
	if row := rpcRow(c); row != nil {
		b = w.section(b, rpcHeader[1:], row[1:], "RPC-over-RDMA (C→S / S→C)")
	}
	// The health rows of RDMA directions, then those of TCP, as WriteTable
	// has them in two tables.
	w.b, w.tcp = b, w.tcp[:0]
	addHealthRows(healthSections{w, false}, healthSections{w, true}, c)
	b = append(w.b, w.tcp...)
	w.rules.reset(fs)
	for _, ch := range c.Checks {
		if ch.Findings == 0 {
			continue
		}
		var first *Finding
		if is := w.rules.of(ch.Rule); len(is) > 0 {
			first = &fs[is[0]]
		}
		b = append(b, "  "...)
		b = appendFinding(b, w.color, ch.Worst.String(), ch.Rule, ch.Findings, first)
		b = append(b, '\n')
	}
	if len(c.Checks) > 0 {
		passed, found, notEval := check.Tally(c.Checks)
		b = append(b, "  checks: "...)
		b = strconv.AppendInt(b, int64(passed), 10)
		b = append(b, " passed, "...)
		b = strconv.AppendInt(b, int64(found), 10)
		b = append(b, " found something, "...)
		b = strconv.AppendInt(b, int64(notEval), 10)
		b = append(b, " not evaluated"...)
		if u := c.RemoteInvalidation; u != nil {
			b = fmt.Appendf(b, "; %d of %d Replies With Invalidate", u.RepliesWithInvalidate, u.Replies)
		}
		b = append(b, '\n')
		for _, note := range c.CheckCaveats {
			if !slices.Contains(a.CheckCaveats, note) {
				b = append(b, "  caveat: "...)
				b = append(b, note...)
				b = append(b, '\n')
			}
		}
	}
	if g := gapEffectsText(c.GapsAffect); g != "" {
		b = append(b, "  "...)
		b = append(b, g...)
		b = append(b, '\n')
	}
	w.b = b
	return b
}

// section appends a section's line: "  title: header value; …", laid out
// to the width (title the concatenation of its parts).
func (w *blockWriter) section(b []byte, header, row []string, title ...string) []byte {
	start := len(b)
	b = append(b, "  "...)
	for _, t := range title {
		b = append(b, t...)
	}
	b = append(b, ": "...)
	return appendItems(b, start, header, row, "; ", w.width, 4)
}

// healthSections takes addHealthRows' rows as sections of the block:
// those of RDMA directions (their figures' labels healthLabels), or of
// TCP ones (tcp, which wait in blockWriter.tcp).
type healthSections struct {
	w   *blockWriter
	tcp bool
}

func (h healthSections) add(cells ...string) {
	row := cells[2:] // after the connection and the direction
	if h.w.color && !strings.HasPrefix(row[1], "0 ") {
		row[1] = paint(true, colorYellow, row[1]) // retransmissions
	}
	if h.tcp {
		h.w.tcp = h.w.section(h.w.tcp, tcpHealthHeader[2:], row, "health ", cells[1])
	} else {
		h.w.b = h.w.section(h.w.b, healthLabels, row, "health ", cells[1])
	}
}

// healthLabels name the transport health's figures in a connection's
// block, shorter than healthHeader's (the same figures, in its order).
var healthLabels = []string{"packets", "retrans. (bytes)", "episodes", "NAKs", "dup / OOO",
	"PSNs missing (filled / lost by capture / unknown)", "ACK latency p50/p99/max", "Read latency", "CE / CNP"}

// appendFinding appends a finding's line (its indentation aside): its
// severity, its rule, its count when positive ("×7"), then f's text
// (where, message) cut to findingPreview columns, when f is not nil.
func appendFinding(b []byte, color bool, severity, rule string, count int, f *Finding) []byte {
	b = append(b, paintSeverity(color, severity)...)
	b = append(b, ' ')
	b = append(b, rule...)
	if count > 0 {
		b = append(b, " ×"...)
		b = strconv.AppendInt(b, int64(count), 10)
	}
	if f == nil {
		return b
	}
	b = append(b, ": "...)
	start := len(b)
	b = appendWhere(b, f)
	b = append(b, f.Message...)
	if textWidth(b[start:]) > findingPreview {
		b = append(b[:start+fitPrefix(b[start:], findingPreview-1)], "…"...)
	}
	return b
}

// paintCount is "N noun(s)", in the noun's severity colour when N > 0.
func paintCount(on bool, n int, noun string) string {
	s := Plural(n, noun)
	if n == 0 {
		return s
	}
	return paint(on, severityColor(noun), s)
}
