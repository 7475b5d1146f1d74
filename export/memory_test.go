package export_test

import (
	"path/filepath"
	"testing"

	"github.com/rdmashark/rdmashark/export"
	"github.com/rdmashark/rdmashark/internal/longstream"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
	rpcpresent "github.com/rdmashark/rdmashark/ulp/rpcordma/present"
)

// What export holds while it reads, checked where it is decided rather than
// by timing or by the heap's size (BenchmarkExport reports that):
//
//   - of a connection the engine released, nothing but its identity and
//     counters (the spill took its rows: spill.go), however many the
//     capture closes;
//   - of every column of a Parquet table, one page of at most
//     export.PageBufferSize bytes before encoding (parquet-go's default,
//     256 KiB, held 4 times as much).

// Past the first 64 released connections, a released connection keeps no
// detail in the engine (transport health, RPC-over-RDMA statistics): the
// spill has its rows. rxe-nfs3 repeated 60 times closes 120 connections.
func TestReleasedConnectionsLetGo(t *testing.T) {
	c, err := longstream.Load(pcaps + "rxe-nfs3.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := export.Config{Dir: dir, Label: "mem", Format: export.NDJSON}
	if _, err := export.Reserve(cfg, 1); err != nil {
		t.Fatal(err)
	}
	r, err := source.NewReader(c.Reader(60), "longstream")
	if err != nil {
		t.Fatal(err)
	}
	var spilled int
	eng := exportWith(t, cfg, "longstream", r, 0, func(xc *export.Capture) { spilled, _ = xc.Spilled() })
	released, detail := 0, 0
	for _, dc := range eng.Conns.Connections() {
		if !dc.Released() {
			continue
		}
		released++
		if dc.Health != nil || rpcordma.Stats(dc) != nil {
			detail++
		}
	}
	if released < 100 {
		t.Fatalf("only %d connections released", released)
	}
	// The first 64 stay whole; the others are the spill's.
	if spilled != released-64 || detail != 64 {
		t.Errorf("%d connections released, %d spilled, %d keep their detail; want %d spilled, 64 with detail",
			released, spilled, detail, released-64)
	}
}

// Every data page of a Parquet table is at most export.PageBufferSize
// bytes before compression (what the writer buffered of its column): the
// transactions of rxe-nfs3 repeated 20 times (12,360 rows, one row group)
// fill columns of 97 KiB of INT64 and more, one page each at parquet-go's
// default.
func TestParquetPagesBounded(t *testing.T) {
	c, err := longstream.Load(pcaps + "rxe-nfs3.pcap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := export.Config{Dir: dir, Label: "mem"}
	if _, err := export.Reserve(cfg, 1); err != nil {
		t.Fatal(err)
	}
	r, err := source.NewReader(c.Reader(20), "longstream")
	if err != nil {
		t.Fatal(err)
	}
	exportWith(t, cfg, "longstream", r, 0, nil)
	pf := openParquet(t, filepath.Join(export.PartitionDir(dir, rpcpresent.TableTransactions, "mem"), "part-0.parquet"))
	if n := pf.NumRows(); n < 12000 {
		t.Fatalf("%d transactions", n)
	}
	var pages, big int
	for _, rg := range pf.RowGroups() {
		for _, cc := range rg.ColumnChunks() {
			ps := cc.Pages()
			for {
				p, err := ps.ReadPage()
				if err != nil {
					break
				}
				pages++
				if p.Dictionary() == nil && p.Size() > export.PageBufferSize+export.PageBufferSize/8 {
					big++
					t.Logf("column %d: page of %d bytes, %d values", cc.Column(), p.Size(), p.NumValues())
				}
			}
			ps.Close()
		}
	}
	if pages < 36 || big > 0 {
		t.Errorf("%d pages, %d larger than %d bytes", pages, big, export.PageBufferSize)
	}
}
