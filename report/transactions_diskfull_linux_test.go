package report

import (
	"os"
	"testing"

	"github.com/rdmashark/rdmashark/dissect"
	"github.com/rdmashark/rdmashark/internal/mountnstest"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
	"github.com/rdmashark/rdmashark/source"
	"github.com/rdmashark/rdmashark/ulp/rpcordma"
)

// TestTransactionsTmpdirFull (issue 29 point 5): a full $TMPDIR made
// transactions exit 2 past 4096 transactions, where analyze, check and
// report fall back to memory. The list now keeps the runs written whole
// and the rest in memory, and writes the same table and JSON as a list
// that never spilled. $TMPDIR is a 16 KiB tmpfs in a mount namespace of
// its own; runs of 7 transactions fill it part-way through rxe-nfs3.
func TestTransactionsTmpdirFull(t *testing.T) {
	dir, inside := mountnstest.Tmpfs(t, "size=16k")
	if !inside {
		return
	}
	t.Setenv("TMPDIR", dir)
	r, err := source.Open("../testdata/pcaps/rxe-nfs3.pcap")
	if err != nil {
		t.Fatal(err)
	}
	whole := NewTransactionList("rxe-nfs3.pcap", 0, TxnFilter{})
	var order []Transaction
	e := dissect.NewEngine(rpcordma.With(dissect.Options{}, nfs.NewBinding(), func(x *rpcordma.Transaction) {
		n := len(whole.Transactions)
		whole.addTxn(x)
		if len(whole.Transactions) > n {
			order = append(order, whole.Transactions[n])
		}
	}))
	if err := e.Run(r, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	whole.SetCounters(e.Snapshot())
	whole.Sort()
	wantTable, wantJSON := writeBoth(t, whole)

	l := spilled(t, whole, order, 7)
	defer l.Close()
	if !l.noSpill {
		t.Fatalf("%d transactions in runs of 7 never filled a 16 KiB $TMPDIR", len(order))
	}
	fi, err := l.spill.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d transactions: %d in %d runs on disk (%d bytes), %d in memory", len(order), l.spill.n, len(l.spill.runs), fi.Size(), len(l.Transactions))
	gotTable, gotJSON := writeBoth(t, l)
	if gotTable != wantTable {
		t.Errorf("table differs\n%s\nwant\n%s", head(gotTable), head(wantTable))
	}
	if gotJSON != wantJSON {
		t.Error("JSON differs")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
