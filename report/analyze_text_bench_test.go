package report

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/check"
	"github.com/rdmashark/rdmashark/dissect"
)

// manyConnAnalysis is an analysis of n connections made of the
// connections of real NFS captures (RoCE and iWARP, clean and lossy, with
// every check), repeated under new IDs with their findings: the shape of
// a large capture's analyze report.
func manyConnAnalysis(tb testing.TB, n int) *Analysis {
	tb.Helper()
	var conns []Connection
	var byConn [][]Finding
	out := &Analysis{File: "many.pcap"}
	for _, name := range []string{"rxe-nfs3.pcap", "siw-nfs3.pcap", "lossy/rxe-nfs3-lossy.pcap", "lossy/siw-nfs3-lossy.pcap"} {
		eng, run, err := runChecked(tb, filepath.Join("..", "testdata", "pcaps", name), dissect.Options{}, check.Config{}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		a := NewAnalysis(name, eng.Snapshot())
		a.AddChecks(run.Finish(eng.Conns.Connections()))
		fs := findingsByConn(a.Findings)
		for _, c := range a.Connections {
			conns = append(conns, c)
			byConn = append(byConn, fs[c.ID])
		}
		if out.Packets == 0 {
			out.Packets, out.Protocols, out.ICRC, out.Engine = a.Packets, a.Protocols, a.ICRC, a.Engine
			out.CheckCaveats = a.CheckCaveats
		}
	}
	for id := 1; id <= n; id++ {
		c := conns[(id-1)%len(conns)]
		c.ID = id
		out.Connections = append(out.Connections, c)
		for _, f := range byConn[(id-1)%len(conns)] {
			f.Connection = id
			out.Findings = append(out.Findings, f)
		}
	}
	return out
}

// BenchmarkAnalyzeText writes analyze's text report of 1,000 connections
// at the default width, and coloured: its cost should be the connections'
// text, not width look-ups or allocations per item.
func BenchmarkAnalyzeText(b *testing.B) {
	a := manyConnAnalysis(b, 1000)
	for _, tc := range []struct {
		name string
		lay  Layout
	}{{"width80", Layout{}}, {"color", Layout{Width: 100, Color: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := a.WriteText(io.Discard, tc.lay); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
