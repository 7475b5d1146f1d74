package report

import (
	"fmt"
	"io"
	"testing"

	"github.com/rdmashark/rdmashark/check"
)

// manyFindings is a check file of n connections with, like rxe-nfs3's
// (2 connections, 21 findings), four rules that found something on each,
// ten findings in all per connection.
func manyFindings(n int) CheckFile {
	rules := []string{"INV-NOT-NEGOTIATED", "PSN-GAP", "INV-USAGE", "CHUNK-UNNEEDED"}
	var f CheckFile
	f.File = "many.pcap"
	for id := 1; id <= n; id++ {
		c := CheckConnection{ID: id, Transport: "roce", name: fmt.Sprintf("connection %d", id)}
		for r, rule := range rules {
			k := []int{7, 1, 1, 1}[r]
			c.Checks = append(c.Checks, check.CheckResult{Rule: rule, Status: check.StatusFound, Worst: check.Error, Findings: k})
			for i := 0; i < k; i++ {
				f.Findings = append(f.Findings, check.Finding{Rule: rule, Severity: check.Error, Connection: id,
					Packets: []int{id*1000 + i}, Message: "Send With Invalidate carrying a Reply from the server, but the server's private data has R=0"})
			}
		}
		f.Connections = append(f.Connections, c)
	}
	return f
}

// BenchmarkCheckReportManyConnections writes check's text, JSON and JUnit
// reports and analyze's findings table for 4,096 connections (40,960
// findings): each should grow with the findings, not with connections ×
// findings (before findingIndex, JUnit took 47 s of a 53 s check of such a
// capture).
func BenchmarkCheckReportManyConnections(b *testing.B) {
	f := manyFindings(4096)
	a := &Analysis{Findings: f.Findings}
	for _, c := range f.Connections {
		a.Connections = append(a.Connections, Connection{ID: c.ID, Checks: c.Checks})
	}
	b.Run("text", func(b *testing.B) {
		for range b.N {
			var r CheckReport
			r.Add(f)
			if err := r.WriteText(io.Discard, TextOptions{MaxPerRule: 3}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("junit", func(b *testing.B) {
		for range b.N {
			var r CheckReport
			r.Add(f)
			if err := r.WriteJUnit(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("analyze-findings-table", func(b *testing.B) {
		for range b.N {
			rows := newAnalysisRows()
			if err := a.eachConn(func(c *Connection, fs []Finding) error {
				rows.findingRows(a, c, fs)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			if err := writeFindingsTable(io.Discard, a, rows); err != nil {
				b.Fatal(err)
			}
		}
	})
}
