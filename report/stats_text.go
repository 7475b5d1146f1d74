package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the statistics for a terminal, each table in the
// layout of its tshark -z counterpart and within 80 columns but for long
// names.
// The statistics fit 80 columns whatever the layout.
func (s *Stats) WriteText(w io.Writer, _ Layout) error {
	bw := bufio.NewWriter(w)
	rule := strings.Repeat("=", 72)
	fmt.Fprintf(bw, "%s: %s, %s in %.6f s\n", s.File, Plural(int(s.Packets), "packet"), Plural(int(s.Bytes), "byte"), s.DurationS)
	if c := s.Conversations; c != nil {
		fmt.Fprintf(bw, "\n%s\nRDMA Conversations (conv): %s\n", rule, Plural(len(c.Connections), "connection"))
		for _, cn := range c.Connections {
			ulp := cn.ULP
			if ulp == "" {
				ulp = "-"
			}
			fmt.Fprintf(bw, "Connection %d  %s %s  %s <-> %s\n", cn.ID, cn.Transport, ulp, cn.Client, cn.Server)
			fmt.Fprintf(bw, "  %-26s %9s %12s %10s %10s %12s\n", "", "Packets", "Bytes", "Start s", "Duration s", "bits/s")
			fmt.Fprintf(bw, "  %-26s %9d %12d %10.6f %10.6f %12.0f\n", "total", cn.Packets, cn.Bytes, cn.StartS, cn.DurationS, cn.BitsPerSecond)
			for _, q := range cn.QPs {
				to := "to " + q.Dst
				if q.QPN != nil {
					to = fmt.Sprintf("to QP 0x%06x", *q.QPN)
				}
				fmt.Fprintf(bw, "  %-26s %9d %12d %10.6f %10.6f %12.0f\n", to, q.Packets, q.Bytes, q.StartS, q.DurationS, q.BitsPerSecond)
			}
		}
		fmt.Fprintf(bw, "Not in a connection: %s, %s\n", Plural(int(c.Unattached.Packets), "packet"), Plural(int(c.Unattached.Bytes), "byte"))
		if c.Cut > 0 {
			fmt.Fprintf(bw, "Not counted (past %d connections): %s\n", MaxStatsConnections, Plural(int(c.Cut), "packet"))
		}
		fmt.Fprintln(bw, rule)
	}
	if o := s.IO; o != nil {
		fmt.Fprintf(bw, "\n%s\n| IO Statistics (io,stat)\n| Interval size: %g secs\n| Duration: %.6f secs\n", rule, o.IntervalS, s.DurationS)
		fmt.Fprintf(bw, "|%-23s|%10s|%14s|%16s|\n", " Interval", "Frames ", "Bytes ", "bits/s ")
		for _, iv := range o.Intervals {
			fmt.Fprintf(bw, "| %9.3f <> %9.3f |%9d |%13d |%15.0f |\n", iv.StartS, iv.StartS+o.IntervalS, iv.Frames, iv.Bytes, iv.BitsPerSecond)
		}
		if o.Cut > 0 {
			fmt.Fprintf(bw, "| past %d intervals, not counted: %s\n", MaxStatsIntervals, Plural(int(o.Cut), "packet"))
		}
		fmt.Fprintln(bw, rule)
	}
	if e := s.Expert; e != nil {
		fmt.Fprintf(bw, "\n%s\nExpert (findings of check, by severity)\n", rule)
		for _, sec := range []struct {
			title string
			rows  []ExpertRule
		}{{"Errors", e.Errors}, {"Warnings", e.Warnings}, {"Infos", e.Infos}} {
			n := 0
			for _, r := range sec.rows {
				n += r.Count
			}
			fmt.Fprintf(bw, "\n%s (%d)\n%s\n", sec.title, n, strings.Repeat("=", len(sec.title)+len(fmt.Sprint(n))+3))
			if len(sec.rows) == 0 {
				continue
			}
			fmt.Fprintf(bw, "   Frequency  %-28s %-9s %s\n", "Rule", "ULP", "Summary")
			for _, r := range sec.rows {
				ulp := r.ULP
				if ulp == "" {
					ulp = "-"
				}
				// The summary wrapped so that lines stay within 100
				// columns (the first 53 are the counts, rule and ULP).
				for i, l := range wrapWords(r.Summary, 100-53) {
					if i == 0 {
						fmt.Fprintf(bw, "  %10d  %-28s %-9s %s\n", r.Count, r.Rule, ulp, l)
					} else {
						fmt.Fprintf(bw, "%53s%s\n", "", l)
					}
				}
			}
		}
		if e.Omitted > 0 {
			fmt.Fprintf(bw, "\nFindings not kept (the check bounds): %d\n", e.Omitted)
		}
		fmt.Fprintln(bw, rule)
	}
	if t := s.SRT; t != nil {
		fmt.Fprintf(bw, "\n%s\nService Response Time (srt), seconds\n", rule)
		group := "\x00"
		for _, r := range t.Procedures {
			if g := r.ULP + " " + r.Program; g != group {
				group = g
				fmt.Fprintf(bw, "\n%s\n", strings.TrimSpace(g))
				fmt.Fprintf(bw, "%5s  %-18s %6s %9s %9s %9s %9s %9s %9s\n", "Index", "Procedure", "Calls", "Min SRT", "Max SRT", "Avg SRT", "p50", "p99", "Sum SRT")
			}
			idx := "-"
			if r.Procedure != nil {
				idx = fmt.Sprint(*r.Procedure)
			}
			fmt.Fprintf(bw, "%5s  %-18s %6d %9.6f %9.6f %9.6f %9.6f %9.6f %9.6f\n", idx, r.Name, r.Count, r.Min, r.Max, r.Avg, r.P50, r.P99, r.Sum)
		}
		group = "\x00"
		for _, r := range t.Operations {
			if g := r.ULP + " " + r.Program; g != group {
				group = g
				fmt.Fprintf(bw, "\n%s COMPOUND by main operation\n", strings.TrimSpace(g))
				fmt.Fprintf(bw, "%5s  %-18s %6s %9s %9s %9s %9s %9s %9s\n", "", "Operation", "Calls", "Min SRT", "Max SRT", "Avg SRT", "p50", "p99", "Sum SRT")
			}
			fmt.Fprintf(bw, "%5s  %-18s %6d %9.6f %9.6f %9.6f %9.6f %9.6f %9.6f\n", "", r.Name, r.Count, r.Min, r.Max, r.Avg, r.P50, r.P99, r.Sum)
		}
		fmt.Fprintf(bw, "\nRequests without a response: %d\n", t.NoResponse)
		if t.Cut > 0 {
			fmt.Fprintf(bw, "Not counted (past %d names): %d\n", MaxStatsSRTNames, t.Cut)
		}
		fmt.Fprintln(bw, "p50, p99: within 3.2% of the exact value (docs/statistics.md)")
		fmt.Fprintln(bw, rule)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(bw, "error: %s\n", e)
	}
	return bw.Flush()
}

// WriteTable is WriteText (cmd's document interface).
func (s *Stats) WriteTable(w io.Writer) error { return s.WriteText(w, Layout{}) }

// WriteJSON writes the document, indented.
func (s *Stats) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// wrapWords cuts s into lines of at most width bytes at spaces (a longer
// word stays whole on its line).
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
